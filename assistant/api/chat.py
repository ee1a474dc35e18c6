"""A chat turn for other programs: the answer as Markdown text with its ``[n]`` markers located (for
OpenAI-style ``url_citation`` annotations), and a conversation rebuilt from the messages a client sends.

The text a client receives is what it sends back as history, so :func:`render_answer` writes each cited
paper's id into the references block and :func:`cited_in` reads it back (or, when the client kept them, the
``answer`` field and the annotations): a conversation is rebuilt per request, with no state on the server.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant.answer.builder import PART_COLUMN
from assistant.answer.render import listing_line
from assistant.errors import AssistantError
from assistant.lang.citations import format_citations
from assistant.lang.markup import plain_text

if TYPE_CHECKING:
    from assistant.conversation.session import ChatSession
    from assistant.service import Assistant
    from assistant.types import Answer, Paper

logger = logging.getLogger(__name__)

#: Follow-up resolution is redone for at most this many of the latest earlier turns when a conversation is
#: rebuilt (only the latest one's search query is ever reused; each costs a retrieval), and not for a turn whose
#: next turn is not elliptic (``conversation.resolve.inherits_query``: then nothing reads its resolution).
RESOLVE_LAST_TURNS = 2
REFERENCES_HEADING = "References:"
#: A references line: ``- [n] [Title](url) — authors `id: <paper id>```.
_REF_ID = re.compile(r"^- \[(\d+)\] .*`id: ([^`\n]+)`\s*$", re.M)
_REF_URL = re.compile(r"^- \[(\d+)\] .*?\]\((https?://[^)\s]+)\)", re.M)
_MARKER = re.compile(r"^\[(\d+)\]$")


@dataclass(frozen=True, slots=True)
class Marker:
    """One ``[n]`` in the rendered text: characters ``start:end`` of the text; the cited paper."""

    n: int
    start: int
    end: int
    paper: Paper


@dataclass(frozen=True, slots=True)
class RenderedAnswer:
    """The text shown to a client and where each citation marker is in it."""

    text: str
    markers: tuple[Marker, ...]

    def url_citations(self) -> list[dict[str, Any]]:
        """OpenAI chat-completion ``annotations``: one ``url_citation`` per ``[n]`` marker of a paper with a
        link (``start_index``/``end_index`` = the marker's character offsets in the text)."""
        return [
            {
                "type": "url_citation",
                "url_citation": {
                    "url": m.paper.url,
                    "title": m.paper.title,
                    "start_index": m.start,
                    "end_index": m.end,
                },
            }
            for m in self.markers
            if m.paper.url
        ]


class _Writer:
    def __init__(self, papers: Mapping[int, Paper]) -> None:
        self.text = ""
        self.markers: list[Marker] = []
        self._papers = papers

    def add(self, text: str) -> None:
        self.text += text

    def cite(self, labels: Sequence[int]) -> None:
        for n in labels:
            start = len(self.text)
            self.text += format_citations([n])
            if n in self._papers:
                self.markers.append(Marker(n, start, len(self.text), self._papers[n]))


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _authors(paper: Paper) -> str:
    names = list(paper.authors)
    return ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")


def _link(paper: Paper) -> str:
    title = plain_text(paper.title).replace("[", "(").replace("]", ")")
    return f"[{title}]({paper.url})" if paper.url else title


def render_answer(answer: Answer, *, final: bool = True) -> RenderedAnswer:
    """The answer as Markdown: a comparison table (if any; its abstract columns, each paper's part being the text), the
    answer text with its ``[n]`` markers
    (``answer.text`` with the abstracts' LaTeX and Markdown as plain text, :func:`~assistant.lang.markup.plain_text`),
    then, when ``final``, the notice and the references (``- [n] [title](url) — authors `id: …```) or, for an
    abstained answer, the closest papers. A partial answer renders to a prefix of its final rendering (sentences
    are only appended), so a stream can send the difference."""
    papers = {c.n: c.paper for c in answer.citations}
    w = _Writer(papers)
    comp = answer.comparison
    # the table built from the abstracts; each paper's part (the "on the question" column, added once every part is
    # checked) is the answer text below it, streamed as it passes, so what was sent stays a prefix of the final text
    shown = [i for i, c in enumerate(comp.columns) if c != PART_COLUMN] if comp is not None else []
    if comp is not None and comp.rows and shown:
        w.add("| paper | " + " | ".join(_cell(comp.columns[i]) for i in shown) + " |")
        w.add("\n|---|" + "---|" * len(shown))
        for row in comp.rows:
            paper = papers.get(row.n)
            w.add(f"\n| {_cell(plain_text(paper.title)) if paper else ''} ")
            w.cite([row.n])
            for cell in (row.cells[i] for i in shown):
                w.add(" | ")
                if cell is None:
                    w.add("not stated in the abstract")
                else:
                    w.add(_cell(plain_text(cell.text)) + " ")
                    w.cite(cell.citations or (row.n,))
            w.add(" |")
    if answer.abstained:
        if final:
            w.add(("\n\n" if w.text else "") + plain_text(answer.notice))
    else:
        if answer.sentences and w.text:
            w.add("\n\n")
        if answer.listing is not None and answer.listing.total == 0 and answer.sentences:
            # an empty list: its sentences are the near papers it left out, and the reader is told so first
            w.add(listing_line(answer) + "\n\n")
        for i, s in enumerate(answer.sentences):
            w.add((" " if i else "") + plain_text(s.text) + (" " if s.citations else ""))
            w.cite(s.citations)
    if not final:
        return RenderedAnswer(w.text, tuple(w.markers))
    if answer.notice and not answer.abstained:
        w.add(f"\n\nNote: {plain_text(answer.notice)}")
    if answer.citations:
        w.add(f"\n\n{REFERENCES_HEADING}")
        for c in answer.citations:
            by = f" — {_authors(c.paper)}" if c.paper.authors else ""
            w.add(f"\n- [{c.n}] {_link(c.paper)}{by} `id: {c.paper.id}`")
    elif answer.abstained and answer.sources:
        w.add("\n\nClosest papers (not matching):")
        for h in answer.sources[:3]:
            w.add(f"\n- {_link(h.paper)} `id: {h.paper.id}`")
    return RenderedAnswer(w.text, tuple(w.markers))


def cited_in(text: str, annotations: Sequence[Any] = (), answer: Mapping[str, Any] | None = None) -> dict[int, str]:
    """``{n: paper id}`` of an earlier assistant message, from (best first) its ``answer`` field (the answer
    JSON this API sent), its references block (``id: …``), or its ``url_citation`` annotations and reference
    links (``url`` values, resolved to ids by the caller: returned as ``"url:<url>"``)."""
    if answer and isinstance(answer.get("citations"), list):
        found = {}
        for c in answer["citations"]:
            if isinstance(c, Mapping) and isinstance(c.get("n"), int) and isinstance(c.get("paper_id"), str):
                found[c["n"]] = c["paper_id"]
        if found:
            return found
    found = {int(m.group(1)): m.group(2).strip() for m in _REF_ID.finditer(text)}
    if found:
        return found
    for m in _REF_URL.finditer(text):
        found.setdefault(int(m.group(1)), f"url:{m.group(2)}")
    for a in annotations:
        cite = a.get("url_citation") if isinstance(a, Mapping) else None
        if not isinstance(cite, Mapping):
            continue
        start, end, url = cite.get("start_index"), cite.get("end_index"), cite.get("url")
        if isinstance(start, int) and isinstance(end, int) and isinstance(url, str) and url:
            marker = _MARKER.match(text[start:end])
            if marker:
                found.setdefault(int(marker.group(1)), f"url:{url}")
    return found


@dataclass(frozen=True, slots=True)
class PriorTurn:
    """An earlier exchange of a conversation as a client sent it: the question and the papers its answer cited."""

    question: str
    cited: Mapping[int, str]


def rebuild_session(assistant: Assistant, turns: Sequence[PriorTurn]) -> ChatSession:
    """A :class:`ChatSession` in the state the chat would be in after ``turns``: the same ``[n]`` per paper
    (from the answers' references), follow-ups of the next question resolved against the papers cited
    last. Cited papers no longer indexed, and ``url:`` references no paper has, are left out.

    Raises:
        StoreNotReadyError: the index cannot be read.
    """
    from assistant.conversation.resolve import inherits_query
    from assistant.understand.question import EmptyQuestionError, clean_question

    def cleaned(text: str) -> str | None:
        try:
            return clean_question(text)
        except (EmptyQuestionError, AssistantError):
            return None

    session = assistant.new_session()
    known = assistant.retriever.papers
    catalog = assistant.retriever.catalog
    urls = [pid[4:] for t in turns for pid in t.cited.values() if pid.startswith("url:")]
    by_url = catalog.ids_by_url(urls) if urls else {}
    labels: dict[str, int] = {}
    data: dict[str, Any] = {"labels": labels, "turns": []}
    questions = [cleaned(t.question) for t in turns]
    for i, turn in enumerate(turns):
        question = questions[i]
        if question is None:
            continue
        resolved = question
        focus: tuple[str, ...] = ()
        # a turn's resolution is read only by the last turn's (when that one is elliptic) and by the next
        # question: when the next turn is kept and not elliptic, this one's is never read (not resolved)
        following = questions[i + 1] if i + 1 < len(turns) else None
        unread = following is not None and not inherits_query(following)
        if i >= len(turns) - RESOLVE_LAST_TURNS and data["turns"] and not (i < len(turns) - 1 and unread):
            session.restore(data)
            res = session.resolve(question)
            resolved, focus = res.query, res.focus_ids
        cited = []
        for n, ref in sorted(turn.cited.items()):
            pid = ref
            if ref.startswith("url:"):
                ids = by_url.get(ref[4:], [])
                pid = ids[0] if len(ids) == 1 else ""
            if not pid or pid not in known:
                continue
            if pid not in labels and n not in labels.values():
                labels[pid] = n
            cited.append(pid)
        data["turns"].append(
            {"question": question, "resolved_query": resolved, "focus_ids": list(focus), "cited": cited}
        )
    session.restore(data)
    return session
