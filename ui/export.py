"""Pure functions, no gradio import: a conversation -> Markdown, cited papers -> BibTeX.

Inputs are the core's objects (``ChatSession.turns`` and ``ChatSession.cited_papers()``), so the files
carry the same conversation-stable ``[n]`` labels as the chat.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

from assistant.answer.render import text_sentences
from assistant.lang.numbers import YEAR
from assistant.lang.words import BIBTEX_KEY_STOPWORDS, VENUE_TRACK_SUFFIX
from assistant.types import Answer, Paper
from ui.render import is_search_link, searched_for, site_name
from ui.text import markdown_text, split_math

#: Conferences known by their short name in a venue string ("ICLR 2025 Poster", "NeurIPS 2024"): the
#: ``booktitle`` their proceedings are cited with.
VENUES = {
    "iclr": "International Conference on Learning Representations",
    "neurips": "Advances in Neural Information Processing Systems",
    "nips": "Advances in Neural Information Processing Systems",
    "icml": "International Conference on Machine Learning",
}
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))


class TurnLike(Protocol):
    """What the Markdown export reads of a turn (``assistant.conversation.state.Turn`` fits)."""

    @property
    def question(self) -> str: ...
    @property
    def resolved_query(self) -> str: ...
    @property
    def answer(self) -> Answer: ...


# --- Markdown --------------------------------------------------------------------------------------
def _md_inline(text: str) -> str:
    """Corpus text as one line of Markdown (``ui.text.markdown_text``): newlines collapsed, Markdown
    characters (table pipes and link brackets included) escaped, math kept as ``$…$``."""
    return markdown_text(text)


def _md_link(title: str, url: str) -> str:
    label = _md_inline(title)
    if url.startswith(("https://", "http://")):
        return f"[{label}](<{url.replace('>', '%3E').replace(' ', '%20')}>)"
    return label


def _md_table(answer: Answer) -> list[str]:
    comp = answer.comparison
    if comp is None or not comp.rows:
        return []
    titles = {c.n: c.paper.title for c in answer.citations}
    lines = [
        "| paper | " + " | ".join(_md_inline(c) for c in comp.columns) + " |",
        "|---" * (len(comp.columns) + 1) + "|",
    ]
    for row in comp.rows:
        cells = [f"{_md_inline(c.text)} [{row.n}]" if c is not None else "—" for c in row.cells]
        lines.append(f"| [{row.n}] {_md_inline(titles.get(row.n, ''))} | " + " | ".join(cells) + " |")
    return lines + [""]


def _md_marks(citations: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in citations)


def _md_topic_list(answer: Answer) -> str:
    """A topic answer as the chat shows it: one list item per paper, ``[n]`` and its linked title, then the
    cited sentence that puts it in the topic on the item's second line."""
    papers = {c.n: c.paper for c in answer.citations}
    items = []
    for s in answer.sentences:
        n = s.citations[0] if s.citations else 0
        paper = papers.get(n)
        head = f"[{n}] {_md_link(paper.title, paper.url)}" if paper else ""
        sentence = f"{_md_inline(s.text)} {_md_marks(s.citations)}".strip()
        items.append(f"- {head}  \n  {sentence}" if head else f"- {sentence}")
    return "\n".join(items)


def _md_answer(answer: Answer) -> str:
    """The answer's sentences (or its notice) as Markdown, each followed by its ``[n]`` markers; a topic
    list stays a list (one item per paper, with its title)."""
    if answer.abstained:
        return _md_inline(answer.notice)
    if answer.intent == "topic" and answer.comparison is None and answer.sentences:
        return _md_topic_list(answer)
    return " ".join(f"{_md_inline(s.text)} {_md_marks(s.citations)}".strip() for s in text_sentences(answer))


def conversation_markdown(
    turns: Sequence[TurnLike],
    cited: Sequence[tuple[int, Paper]],
    *,
    title: str = "Conversation with the paper assistant",
) -> str:
    """The conversation as Markdown: each question as a heading, the answer with its ``[n]`` markers
    (comparison table; a topic answer as a list of titled papers), then every cited paper as ``[n] title``
    with authors and link (a link that only searches a site says so). No internal paper ids."""
    lines = [f"# {_md_inline(title)}", ""]
    for i, turn in enumerate(turns, start=1):
        answer = turn.answer
        lines += [f"## {i}. {_md_inline(turn.question)}", ""]
        query = searched_for(answer)
        if query:
            lines += [f"*Searched for: {_md_inline(query)}*", ""]
        lines += _md_table(answer)
        lines += [_md_answer(answer) or "(no answer)", ""]
        if answer.notice and not answer.abstained:
            lines += [f"> {_md_inline(answer.notice)}", ""]
        if answer.citations:
            lines += ["Cited: " + ", ".join(f"[{c.n}]" for c in answer.citations), ""]
    lines += ["## References", ""]
    if not cited:
        lines += ["(none)", ""]
    for n, paper in cited:
        entry = f"- [{n}] {_md_link(paper.title, paper.url)}"
        if paper.authors:
            entry += f" — {_md_inline(', '.join(paper.authors))}"
        entry += f"  \n  {_md_url_line(paper.url)}"
        lines.append(entry)
    return "\n".join(lines).rstrip() + "\n"


def _md_url_line(url: str) -> str:
    if not url.startswith(("https://", "http://")):
        return "(no link)"
    if is_search_link(url):
        return f"(no link to the paper; search on {site_name(url)}: <{url}>)"
    return f"<{url}>"


# --- BibTeX ----------------------------------------------------------------------------------------
def latex_escape(text: str) -> str:
    """Escape LaTeX/BibTeX special characters (``{ } % & $ # _ ~ ^ \\``) outside math; math found by
    ``ui.text.split_math`` (``$\\ell_1$``) is kept as ``$…$``; whitespace collapsed."""
    return "".join(
        f"${seg.text}$" if seg.math else _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], seg.text)
        for seg in split_math(text)
    )


def _url_field(url: str) -> str:
    """URLs stay verbatim except characters that would break a braced BibTeX field."""
    return url.strip().replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D").replace(" ", "%20")


def _ascii_word(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower())


def venue_year(venue: str) -> str:
    """The year in a venue name (``"ICLR 2025 Papers"`` -> ``"2025"``), else ``""``."""
    m = YEAR.search(venue)
    return m.group(0) if m else ""


def bibtex_key(paper: Paper, n: int, taken: set[str]) -> str:
    """``<first author's last name><year><first title word>``, ASCII letters/digits only, unique within
    ``taken`` (suffix ``a``, ``b``, … on collision; ``paper<n>`` when nothing usable is left)."""
    last = _ascii_word(paper.authors[0].split()[-1]) if paper.authors and paper.authors[0].split() else ""
    words = [_ascii_word(w) for w in re.split(r"[\s:/]+", paper.title)]
    first = next((w for w in words if w and w not in BIBTEX_KEY_STOPWORDS), "")
    base = f"{last}{venue_year(paper.venue)}{first}" if last or first else f"paper{n}"
    if not base[0].isalpha():
        base = f"p{base}"
    key, i = base, 0
    while key in taken:
        key = f"{base}{chr(ord('a') + i)}" if i < 26 else f"{base}{i}"
        i += 1
    taken.add(key)
    return key


def venue_booktitle(venue: str) -> str:
    """The proceedings a venue string names, for ``booktitle``: a known conference (:data:`VENUES`) by its
    full name (``"ICLR 2025 Poster"`` -> ``"International Conference on Learning Representations"``), any
    other venue without its year and track words (``"CoLLAs 2024 Papers"`` -> ``"CoLLAs"``); ``""`` for none."""
    words = VENUE_TRACK_SUFFIX.sub("", YEAR.sub(" ", venue)).split()
    for word in words:
        full = VENUES.get(word.lower().strip("'’"))
        if full:
            return full
    return " ".join(words)


def paper_url(paper: Paper) -> str:
    """The link to the paper itself for a citation: its http(s) ``url``, or ``""`` when there is none or it
    only searches a site (``openreview.net/search?term=…``)."""
    url = paper.url.strip()
    if not url.startswith(("https://", "http://")) or is_search_link(url):
        return ""
    return url


def bibtex_entry(paper: Paper, key: str) -> str:
    """One entry. A venue with a year is ``@inproceedings`` with ``booktitle`` (:func:`venue_booktitle`:
    "International Conference on Learning Representations" for ICLR) and ``year``; otherwise ``@misc``
    with ``howpublished``. ``url`` is the paper's own page (:func:`paper_url`), omitted for a search page;
    the entry carries no internal id."""
    year = venue_year(paper.venue)
    booktitle = venue_booktitle(paper.venue)
    fields = [("title", "{" + latex_escape(paper.title) + "}")]
    if paper.authors:
        fields.append(("author", " and ".join(latex_escape(a) for a in paper.authors)))
    if year and booktitle:
        fields += [("booktitle", latex_escape(booktitle)), ("year", year)]
    elif booktitle:
        fields.append(("howpublished", latex_escape(booktitle)))
    elif year:
        fields.append(("year", year))
    url = paper_url(paper)
    if url:
        fields.append(("url", _url_field(url)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    kind = "inproceedings" if year and booktitle else "misc"
    return f"@{kind}{{{key},\n{body}\n}}\n"


def bibtex(cited: Sequence[tuple[int, Paper]]) -> str:
    """BibTeX for the cited papers, in ``[n]`` order, each entry preceded by a ``% [n]`` comment."""
    taken: set[str] = set()
    entries = [f"% [{n}]\n" + bibtex_entry(paper, bibtex_key(paper, n, taken)) for n, paper in cited]
    return "\n".join(entries)
