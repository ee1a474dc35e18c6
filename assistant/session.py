"""ChatSession: one conversation. Resolves follow-ups against papers already cited, keeps each paper's
[n] stable for the whole conversation, and can be saved to / loaded from a JSON file (CLI ``--session``).
One object per chat window, never a module global."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from assistant.answer.answerer import AnswerEvent, final_answer
from assistant.errors import AssistantError
from assistant.lang.citations import CITATION_LABEL
from assistant.lang.text import content_tokens, split_sentences
from assistant.tuning import (
    CLARIFY_MAX_CONTENT_WORDS,
    DESCRIBED_MARGIN,
    ELLIPTIC_MAX_WORDS,
    FOCUS_PREFERENCE_MARGIN,
)
from assistant.types import (
    INTENTS,
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    Comparison,
    ComparisonRow,
    Intent,
    Listing,
    Page,
    Paper,
    relabel,
)
from assistant.understand.intents import detect_intent, next_intent
from assistant.understand.question import analyze, clean_question

if TYPE_CHECKING:
    from assistant.answer.answerer import Answerer

_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
# Closed-class words that point at a position or a referent: exact, like [2] labels (nothing fitted to examples).
_ORDINAL_REF = re.compile(r"\bthe (first|1st|second|2nd|third|3rd|fourth|4th)(?: one| paper| abstract| work)?\b", re.I)
_LABEL_REF = re.compile(rf"(?:{CITATION_LABEL.pattern}|\b(?:paper|source|reference) #?(\d+)\b)", re.I)
_FORMER_LATTER = re.compile(r"\bthe (former|latter)\b", re.I)
_OTHER = re.compile(r"\bthe other(?: one| paper| abstract| work)?\b", re.I)
_PLURAL_REF = re.compile(
    r"\b(they|them|their|theirs|these|those|both|each|either|the two|the three|all of them|"
    r"which of them|these papers|those papers|the papers)\b",
    re.I,
)
#: Quantifiers over two or more papers ("both", "either of them"): the question means a set, like "those two".
_SET_REF = re.compile(r"\b(both|either|neither|each of them|the two|all of them)\b", re.I)
_SINGULAR_REF = re.compile(
    r"\b(it|its|it's|this paper|that paper|the paper|this work|the method|the model|"
    r"the approach|the authors|this one|that one|the other|he|she|his|her)\b",
    re.I,
)
#: Pronouns and phrases that point back to a paper already discussed.
_BACK_REF = re.compile(
    r"\b(it|its|they|them|their|this paper|that paper|the paper|this work|these papers|those papers|"
    r"the authors|both|the two|the three|this one|that one|the other)\b",
    re.I,
)
_CLARIFY = (
    "Which paper do you mean? Nothing earlier in this conversation is cited for it to refer to. "
    "Name the paper by its title, its method or an author, or ask about a topic."
)


#: "show more", "more", "next page", "more please", "show the next 10": the next page of the last listing.
_MORE = re.compile(
    r"^\s*(?:(?:please\s+)?(?:show|list|give me)\s+)?(?:me\s+)?(?:the\s+)?(?:more|next(?:\s+(?:page|\d+|ones?))?|"
    r"rest)(?:\s+(?:papers|ones|results|please))*\s*[.!?]*\s*$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Turn:
    """One exchange: the question, the query actually searched, papers it referred to, and the answer
    (with conversation-stable labels)."""

    question: str
    resolved_query: str
    focus_ids: tuple[str, ...]
    answer: Answer

    @property
    def shown(self) -> tuple[str, ...]:
        """The papers this turn's answer showed, in the order the user saw them (:func:`shown_order`)."""
        return shown_order(self.answer)


def shown_order(answer: Answer) -> tuple[str, ...]:
    """Paper ids of ``answer`` in the order the user saw them: the rows of its comparison table, then the order
    in which its sentences first cite each paper (a topic list's items, a multi-paper summary), then any other
    cited paper by label. "The second one" is the second of these."""
    by_n = {c.n: c.paper.id for c in answer.citations}
    order = [by_n[r.n] for r in answer.comparison.rows if r.n in by_n] if answer.comparison is not None else []
    order += [by_n[n] for sent in answer.sentences for n in sent.citations if n in by_n]
    order += [by_n[n] for n in sorted(by_n)]
    return tuple(dict.fromkeys(order))


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a question is run: ``query`` to search, ``focus_ids`` papers it points back to (may be empty);
    ``clarify``: a question to ask back instead of answering (nothing to refer to); ``switched_from``: the
    paper a pronoun pointed to when the question clearly matched another one (the answer says so); ``intent``:
    the intent the question's references imply ("" = detect it from the wording): a question that names two
    or more papers and would otherwise be a one-paper lookup compares them."""

    query: str
    focus_ids: tuple[str, ...]
    clarify: str = ""
    switched_from: str = ""
    intent: str = ""


class ChatSession:
    """The turns of one conversation and its citation labels.

    Args:
        answerer: the shared, stateless answering pipeline.
        papers: every indexed paper by id (to restore a saved conversation's papers).
    """

    def __init__(self, answerer: Answerer, papers: Mapping[str, Paper]) -> None:
        self._answerer = answerer
        self._known = papers
        self.turns: list[Turn] = []
        self.labels: dict[str, int] = {}  # paper id -> [n], stable for the conversation
        self.papers: dict[str, Paper] = {}

    # --- follow-ups --------------------------------------------------------------------------
    def _shown(self) -> list[tuple[str, ...]]:
        """The papers each turn showed (:attr:`Turn.shown`), latest turn first; turns that showed none skipped."""
        return [shown for shown in (t.shown for t in reversed(self.turns)) if shown]

    def _recent(self) -> list[str]:
        """Every paper the conversation showed, most recently shown first (within a turn, in shown order)."""
        return list(dict.fromkeys(pid for shown in self._shown() for pid in shown))

    def _by_label(self, n: int) -> str | None:
        return next((pid for pid, label in self.labels.items() if label == n), None)

    def resolve(self, question: str, forced: str | None = None) -> Resolution:
        """Which papers ``question`` is about, and what to search for; ``forced``: the intent the user chose
        (no intent is implied then).

        The candidates are the papers in focus (those the latest answer showed, and before them the ones
        shown earlier, most recent first), the papers the question names (references.py: an author, a title
        name, title words, "the paper about X") or describes (how well it matches each paper's title and
        abstract as a whole, retrieval.describes), and positions as the user saw them (:func:`shown_order`:
        table rows, list items). Exact references decide first: ``[2]`` / "paper 2", "the second one" (of
        the latest answer that showed that many), "the former/latter", "the other one" (the paper shown most
        recently that is not in focus now); then named papers ("compare it with X": the paper in focus and
        X). Otherwise the papers are ranked (:meth:`_ranked`): "which of them" / "both" take every paper in
        focus; a question that describes another paper well enough moves to it (``switched_from`` says so);
        else the paper in focus the question matches best. Short or "and ..." questions with nothing in focus
        inherit the previous query. A back-reference with nothing to refer to ("What did they evaluate it
        on?" as a first question) gets ``clarify``: a question back, no answer.
        """
        shown = self._shown()
        current = list(shown[0]) if shown else []
        refs = self._answerer.references(question)
        named = list(refs.named)
        explicit = bool(named or refs.unresolved or refs.unknown_author)  # the question says which paper it means
        intent = ""
        detected = forced or detect_intent(question)
        by_name = self._named_by_name(question)
        if not forced and detected == "lookup" and len(by_name) >= 2:
            intent = detected = "compare"  # "What do the ControlAR and LucidPPN papers propose?": both, side by side
        # "Tell me about HyperFace and A-Bench": two papers named each by a name of its own are both the answer's
        several_named = len(named) >= 2 and (
            detected in ("compare", "choice") or (len(by_name) >= 2 and detected != "topic")
        )
        if named and not current and not several_named:
            named = []  # a first question: the search ranks named papers first (metadata fusion), nothing more
        plural = bool(_PLURAL_REF.search(question))
        refers = plural or bool(_SINGULAR_REF.search(question))
        focus = self._positions(question, shown)
        switched_from = ""
        if not focus and named:
            if detected == "compare" and current and refers and len(named) == 1 and named[0] not in current:
                focus = (current if plural and len(current) >= 2 else current[:1]) + named  # "compare it with X"
            else:
                focus = named
        elif not focus and current and not explicit:
            focus, switched_from = self._ranked(question, detected, current, plural, refers)
        focus = list(dict.fromkeys(focus))
        if not focus and not current and not explicit and self._refers_back(question):
            return Resolution(question, (), _CLARIFY)
        if not forced and detected == "compare" and len(focus) == 1 and not explicit:
            intent = "lookup"  # "what architectures does it compare transformers against?" asks about one paper
        elif not forced and detected == "lookup" and len(focus) >= 2 and not explicit:
            intent = "choice"  # "of those two, which one links its code?": a detail asked of several papers
        elif not forced and detected == "choice" and len(focus) < 2 and len(named) < 2:
            # a choice needs papers to choose among: with none in focus or named, the classifier's next intent
            # ("Which study gets a mechanical hand to ...?" as a first question is a lookup)
            intent = next_intent(question, exclude=("choice", "metadata"))
        query = question
        if focus:
            query = f"{question} ({'; '.join(self._title(p) for p in focus)})"
        elif (
            self.turns
            and detected != "topic"  # "papers on video?" names its own topic: a new search, not the last one's
            and (
                len(question.split()) <= ELLIPTIC_MAX_WORDS
                or question.lower().startswith(("and ", "what about", "how about"))
            )
        ):
            query = f"{question} ({self.turns[-1].resolved_query})"
        return Resolution(query, tuple(focus), switched_from=switched_from, intent=intent)

    def _positions(self, question: str, shown: list[tuple[str, ...]]) -> list[str]:
        """Papers ``question`` points at exactly: ``[2]`` / "paper 2" (the conversation's labels), "the second
        one" (the second paper of the latest answer that showed at least two, in the order shown), "the
        former/latter", "the other one" (the most recently shown paper not shown by the latest answer)."""
        focus: list[str] = []
        for m in _LABEL_REF.finditer(question):
            pid = self._by_label(int(m.group(1) or m.group(2)))
            if pid:
                focus.append(pid)
        for m in _ORDINAL_REF.finditer(question):
            i = _ORDINALS[m.group(1).lower()] - 1
            listed = next((s for s in shown if len(s) >= max(2, i + 1)), ())
            if i < len(listed):
                focus.append(listed[i])
        for m in _FORMER_LATTER.finditer(question):
            pair = next((s for s in shown if len(s) >= 2), ())
            if pair:
                focus.append(pair[0] if m.group(1).lower() == "former" else pair[-1])
        if _OTHER.search(question) and shown:
            rest = [pid for pid in self._recent() if pid not in shown[0]]
            if rest:
                focus.append(rest[0])
        return focus

    def _ranked(
        self, question: str, detected: str, current: list[str], plural: bool, refers: bool
    ) -> tuple[list[str], str]:
        """The papers a question without an exact reference is about, ranked by score, and the paper in focus
        it moved away from ("" when none).

        1. "Which of them ...", "both", "they" with several papers in focus: all of them (the latest answer's
           papers when it showed several, else the most recent ``papers_wanted`` or 2 papers shown: "of those
           two" after two one-paper turns).
        2. A question (or one of its sentences: "There's also a paper on how sensitive transformers are to
           random token perturbations. Does it say anything about grokking?") that describes a paper not in
           focus (profile cosine s1 with (s1 - s_focus) + (s1 - s2) >= ``DESCRIBED_MARGIN``, s2 the
           runner-up's, :meth:`description_strength`): that paper when the question refers back ("there's
           also a robot grasping one ..., how long does it take to train?"), else a new search.
        3. A topic list without a back-reference, or a question that neither refers back nor matches the paper
           in focus (its cosine below ``min_similarity`` or ``FOCUS_PREFERENCE_MARGIN`` under the best): a new
           search.
        4. Else the paper in focus the question describes best, when it leads the first one shown by
           ``FOCUS_PREFERENCE_MARGIN``; else the first one shown.
        """
        recent = self._recent()
        # "of those two", "both": the question says how many papers it means
        said = analyze(question).papers_wanted or (2 if _SET_REF.search(question) else None)
        group = current if len(current) >= 2 else recent[: said or 2]
        if len(group) >= 2 and (detected == "choice" or (plural and (len(current) >= 2 or (said or 0) >= 2))):
            return group, ""
        described, strength = "", float("-inf")
        sims: dict[str, float] = {}
        parts = split_sentences(question)
        for part in [question, *parts] if len(parts) > 1 else [question]:  # a description may be one sentence
            part_sims = self._answerer.describes(part, recent)
            best, part_strength = self.description_strength(part_sims, current)
            sims = sims or part_sims  # the whole question's
            if part_strength > strength:
                described, strength = best, part_strength
        if described and strength >= DESCRIBED_MARGIN:
            return ([described], current[0]) if refers else ([], "")
        s_focus = max((sims.get(pid, 0.0) for pid in current), default=0.0)
        top = max((s for pid, s in sims.items() if pid not in current), default=0.0)
        if detected == "topic" and not refers:
            return [], ""
        min_similarity = self._answerer.settings.min_similarity
        if not refers and (s_focus < min_similarity or s_focus < top - FOCUS_PREFERENCE_MARGIN):
            return [], ""
        first = current[0]
        best_own = max(current, key=lambda pid: sims.get(pid, 0.0))
        pick = best_own if sims.get(best_own, 0.0) >= sims.get(first, 0.0) + FOCUS_PREFERENCE_MARGIN else first
        return [pick], ""

    def description_strength(self, sims: Mapping[str, float], current: list[str]) -> tuple[str, float]:
        """The paper not in ``current`` that ``sims`` (profile cosines) rank first, and how clearly the text
        describes it: (s1 - s_focus) + (s1 - s2), s_focus the best cosine of a paper in ``current`` and s2 the
        runner-up's; ("", -inf) when no other paper was scored or s1 is below ``min_similarity``."""
        others = sorted(((s, pid) for pid, s in sims.items() if pid not in current), reverse=True)
        if not others or others[0][0] < self._answerer.settings.min_similarity:
            return "", float("-inf")
        s_focus = max((sims.get(pid, 0.0) for pid in current), default=0.0)
        s1, best = others[0]
        s2 = others[1][0] if len(others) > 1 else s_focus
        return best, (s1 - s_focus) + (s1 - s2)

    def _named_by_name(self, question: str) -> set[str]:
        """Papers the question names each by a name of its own (``ControlAR``, ``LucidPPN``): a name that only
        one indexed paper has (a word shared by titles, like ``Multi-Objective``, names none)."""
        found = set()
        for entity in analyze(question).entities:
            ids = self._answerer.papers_named(entity)
            if len(ids) == 1:
                found.add(ids[0])
        return found

    def _title(self, pid: str) -> str:
        paper = self.papers.get(pid) or self._known.get(pid)
        return paper.title if paper else pid

    @staticmethod
    def _refers_back(question: str) -> bool:
        """True when ``question`` points back to a paper ("it", "they", "the paper", "the second one")
        and says almost nothing else that could identify one (at most ``CLARIFY_MAX_CONTENT_WORDS`` content
        words, no name): a first question like that cannot be answered, only asked back."""
        if not (_BACK_REF.search(question) or _ORDINAL_REF.search(question) or _FORMER_LATTER.search(question)):
            return False
        if analyze(question).entities or detect_intent(question) == "topic":  # "which papers ...? List all of them."
            return False
        return len(content_tokens(_BACK_REF.sub(" ", question))) <= CLARIFY_MAX_CONTENT_WORDS

    # --- asking ------------------------------------------------------------------------------
    def _stable(self, answer: Answer) -> Answer:
        mapping = {}
        for c in answer.citations:
            if c.paper.id not in self.labels:
                self.labels[c.paper.id] = len(self.labels) + 1
                self.papers[c.paper.id] = c.paper
            mapping[c.n] = self.labels[c.paper.id]
        return relabel(answer, mapping)

    def stream(self, question: str, intent: Intent | None = None, page: Page | None = None) -> Iterator[AnswerEvent]:
        """Stream the answer to ``question`` with stable labels; the turn is recorded at the end. ``page``:
        which papers of a topic listing to show (default the first 10; "show more" after a listing asks
        for its next page).

        Raises:
            EmptyQuestionError: nothing to answer (before any model call).
            QuestionTooLongError: longer than ``Settings.max_question_chars`` (before any search).
        """
        question = clean_question(question, self._answerer.settings.max_question_chars)
        more = self._next_page(question) if page is None else None
        if more is not None:  # "show more" after a listing: the same listing, next page
            previous, page = more
            listed = previous.answer.intent  # a topic list, or an author's papers ("metadata")
            for event in self._answerer.stream(
                previous.question,
                query=previous.resolved_query,
                intent=listed if listed in self._answerer.intents else "topic",
                focus_ids=previous.focus_ids,
                page=page,
            ):
                if event.answer is not None:
                    answer = self._stable(event.answer)
                    if event.kind == "final":  # recorded as the listing's question, so "more" again goes on
                        self.turns.append(Turn(previous.question, previous.resolved_query, previous.focus_ids, answer))
                    event = AnswerEvent(event.kind, event.message, answer, event.hits)
                yield event
            return
        res = self.resolve(question, intent)
        if res.clarify:
            for event in self._answerer.clarification(question, res.clarify, intent):
                if event.kind == "final" and event.answer is not None:
                    self.turns.append(Turn(question, res.query, (), event.answer))
                yield event
            return
        implied = res.intent
        if implied and self._answerer.asks_records(question):  # "Who wrote HyperFace and EM-LLM?": records of
            implied = ""  # both papers, not a comparison of their abstracts
        for event in self._answerer.stream(
            question, query=res.query, intent=intent or implied or None, focus_ids=res.focus_ids, page=page
        ):
            if event.answer is None:
                yield event
                continue
            if event.kind == "final":
                answer = self._stable(event.answer)
                if res.switched_from and answer.citations:  # say which paper is answered, and that it changed
                    first = min(answer.citations, key=lambda c: c.n)
                    about = (
                        f"About “{first.paper.title}” [{first.n}], which the question describes, not "
                        f"“{self._title(res.switched_from)}” from before."
                    )
                    answer = replace(answer, notice=f"{about} {answer.notice}".strip())
                self.turns.append(Turn(question, res.query, res.focus_ids, answer))
            else:  # partial: preview labels without committing new ones
                saved = dict(self.labels), dict(self.papers)
                answer = self._stable(event.answer)
                self.labels, self.papers = saved
            yield AnswerEvent(event.kind, event.message, answer, event.hits)

    def ask(self, question: str, intent: Intent | None = None, page: Page | None = None) -> Answer:
        """The final answer to ``question`` in this conversation."""
        return final_answer(self.stream(question, intent, page))

    def _next_page(self, question: str) -> tuple[Turn, Page] | None:
        """For "show more" / "more" / "next page" right after a topic listing with more papers: that turn
        and the page after the one it showed; else None."""
        if not self.turns or not _MORE.match(question):
            return None
        last = self.turns[-1]
        li = last.answer.listing
        if li is None or not li.has_more:
            return None
        return last, Page(li.offset + li.shown, li.limit)

    def cited_papers(self) -> list[tuple[int, Paper]]:
        """Every paper cited so far, as ``(n, paper)`` in label order."""
        return sorted(((n, self.papers[pid]) for pid, n in self.labels.items()), key=lambda x: x[0])

    def reset(self) -> None:
        """Forget the conversation."""
        self.turns.clear()
        self.labels.clear()
        self.papers.clear()

    # --- persistence (CLI --session FILE) ----------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the conversation as JSON (format version :data:`SESSION_VERSION`): the labels, and per turn the
        question, the resolved query, the papers it referred to, and the answer as shown (text, sentences with
        their ``[n]`` and support, citations with their evidence, mode, intent, notice, comparison table, model).
        Written to ``<path>.tmp`` first and renamed, so a failed save leaves the old file whole."""
        data = {
            "version": SESSION_VERSION,
            "labels": self.labels,
            "turns": [
                {
                    "question": t.question,
                    "resolved_query": t.resolved_query,
                    "focus_ids": list(t.focus_ids),
                    **answer_record(t.answer),
                }
                for t in self.turns
            ],
        }
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)

    def load(self, path: Path) -> None:
        """Restore a conversation saved by :meth:`save` (papers looked up in the current index).

        Raises:
            AssistantError: the file is not a saved session.
        """
        self.restore(read_saved_session(path))

    def restore(self, data: dict[str, Any]) -> None:
        """Restore a conversation from :func:`read_saved_session`'s result: every turn's answer as it was shown
        (text, citations, mode, ...); citations of papers no longer indexed are left out."""
        labels, turns = data["labels"], data["turns"]
        known = self._known
        self.labels = {pid: n for pid, n in labels.items() if pid in known}
        self.papers = {pid: known[pid] for pid in self.labels}
        self.turns = []
        for t in turns:
            answer = answer_from_record(t, known, self.labels)
            self.turns.append(
                Turn(t.get("question", ""), t.get("resolved_query", ""), tuple(t.get("focus_ids", [])), answer)
            )


#: Version of the file :meth:`ChatSession.save` writes. 1: answer text and cited ids only (read as one uncited
#: block of text); 2: the whole answer as shown.
SESSION_VERSION = 2


def _sentence_record(s: AnswerSentence) -> dict[str, Any]:
    return {"text": s.text, "citations": list(s.citations), "support": round(float(s.support), 4)}


def _sentence_from(rec: Any, labels: set[int]) -> AnswerSentence:
    return AnswerSentence(
        str(rec.get("text", "")),
        tuple(int(n) for n in rec.get("citations", []) if int(n) in labels),
        float(rec.get("support", 0.0)),
    )


def answer_record(answer: Answer) -> dict[str, Any]:
    """An :class:`Answer` as JSON-ready fields for a session file: ``answer`` (its text, as shown), ``mode``,
    ``intent``, ``notice``, ``model``, ``model_used``, ``dropped``, ``sentences`` ([{text, citations, support}]),
    ``citations`` ([{n, paper_id, evidence}]), ``cited`` (paper ids, as version 1 had), ``comparison``
    (``{columns, rows: [{n, cells: [sentence | null]}]}`` or null) and ``listing`` (a topic list's place, or
    null). Retrieved-but-uncited sources are not kept."""
    comparison = None
    if answer.comparison is not None:
        comparison = {
            "columns": list(answer.comparison.columns),
            "rows": [
                {"n": r.n, "cells": [_sentence_record(c) if c is not None else None for c in r.cells]}
                for r in answer.comparison.rows
            ],
        }
    return {
        "answer": answer.text,
        "mode": answer.mode,
        "intent": answer.intent,
        "notice": answer.notice,
        "model": answer.model,
        "model_used": answer.model_used,
        "dropped": list(answer.dropped),
        "sentences": [_sentence_record(s) for s in answer.sentences],
        "citations": [{"n": c.n, "paper_id": c.paper.id, "evidence": list(c.evidence)} for c in answer.citations],
        "cited": [c.paper.id for c in answer.citations],
        "comparison": comparison,
        "listing": asdict(answer.listing) if answer.listing is not None else None,
    }


def answer_from_record(rec: Mapping[str, Any], known: Mapping[str, Paper], labels: Mapping[str, int]) -> Answer:
    """The :class:`Answer` a turn record of :func:`answer_record` describes; ``known``: the indexed papers,
    ``labels``: the conversation's restored labels (citations of papers not in both are left out). A version-1
    record (text and cited ids only) becomes one uncited sentence holding the saved text."""
    question = str(rec.get("question", ""))
    if "citations" in rec:
        citations = tuple(
            Citation(labels[c["paper_id"]], known[c["paper_id"]], tuple(str(e) for e in c.get("evidence", [])))
            for c in rec["citations"]
            if c.get("paper_id") in known and c.get("paper_id") in labels
        )
    else:
        cited = [known[p] for p in rec.get("cited", []) if p in known and p in labels]
        citations = tuple(Citation(labels[p.id], p, ()) for p in cited)
    shown = {c.n for c in citations}
    mode = rec.get("mode", "generated")
    if mode not in get_args(AnswerMode):
        mode = "generated"
    notice = str(rec.get("notice", ""))
    if "sentences" in rec:
        sentences = tuple(_sentence_from(x, shown) for x in rec["sentences"])
    else:
        text = str(rec.get("answer", ""))
        sentences = (AnswerSentence(text, (), 0.0),) if text else ()
        if mode in ("abstained", "not_stated", "clarify") and not notice:
            notice = text
    comparison = None
    table = rec.get("comparison")
    if isinstance(table, Mapping):
        rows = tuple(
            ComparisonRow(int(r["n"]), tuple(_sentence_from(c, shown) if c else None for c in r.get("cells", [])))
            for r in table.get("rows", [])
            if int(r.get("n", 0)) in shown
        )
        comparison = Comparison(tuple(str(c) for c in table.get("columns", [])), rows)
    intent = rec.get("intent", "lookup")
    return Answer(
        question,
        sentences,
        tuple(sorted(citations, key=lambda c: c.n)),
        (),
        mode,
        str(rec.get("model", "")),
        dropped=tuple(str(d) for d in rec.get("dropped", [])),
        notice=notice,
        intent=intent if intent in INTENTS else "lookup",
        resolved_query=str(rec.get("resolved_query", "")),
        comparison=comparison,
        model_used=bool(rec.get("model_used", False)),
        listing=_listing(rec.get("listing")),
    )


def _listing(saved: object) -> Listing | None:
    """A saved topic listing's place (``{total, offset, shown, limit, venue, author}``), or None when absent
    or not of that shape (an older file: "show more" then asks the listing again from its start)."""
    if not isinstance(saved, dict):
        return None
    try:
        return Listing(**{k: saved[k] for k in ("total", "offset", "shown", "limit", "venue", "author")})
    except (KeyError, TypeError):
        return None


def read_saved_session(path: Path) -> dict[str, Any]:
    """Read and check a file written by :meth:`ChatSession.save` (no model or index needed, so the CLI
    checks it before anything loads).

    Returns:
        ``{"labels": {paper_id: n}, "turns": [{question, resolved_query, focus_ids, answer, ...}, ...]}``.

    Raises:
        AssistantError: unreadable, not JSON, or not shaped like a saved conversation. The message names the
            file, says it is left as it is, and asks for another file name (the file may be the user's own
            data, e.g. a CSV: it is never to be deleted or overwritten on our advice).
    """
    keep = "it is left as it is. Pass another file name for --session, e.g. chat.json"
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise AssistantError(f"--session {path}: cannot be read ({e.strerror or e}). Pass another file name.") from e
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        kind = "not JSON" if raw.strip() else "empty"
        raise AssistantError(f"--session {path}: not a saved conversation (the file is {kind}); {keep}.") from e
    try:
        if not isinstance(data, dict) or "turns" not in data or "labels" not in data:
            raise KeyError("it holds other JSON, without 'labels' and 'turns'")
        labels = {str(k): int(v) for k, v in data["labels"].items()}
        turns = data["turns"]
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise TypeError("'turns' must be a list of objects")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        reason = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise AssistantError(f"--session {path}: not a saved conversation ({reason}); {keep}.") from e
    return {"labels": labels, "turns": turns}
