"""Pure functions, no gradio import: Answer -> Markdown/HTML for the chat window and the side panel.

All text from abstracts and from the model is HTML-escaped (so ``<script>``, Markdown images and
raw links inside an abstract render as inert text); only our own anchors to the papers' ``url``
(http/https from papers.jsonl) are emitted as links, opening in a new tab. Every HTML block is kept on
lines without blank lines between them, so the chat's Markdown renderer passes it through untouched.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from assistant.types import Answer, AnswerSentence, Citation, Paper

_MD_SPECIAL = str.maketrans({"[": "&#91;", "]": "&#93;", "!": "&#33;", "*": "&#42;", "_": "&#95;", "`": "&#96;", "#": "&#35;", "|": "&#124;"})
#: Authors shown before "et al." on a reference card.
MAX_AUTHORS = 6


_EMPHASIS = [
    (re.compile(r"\*\*(\S(?:.*?\S)?)\*\*"), r"\1"),  # **bold**
    (re.compile(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])"), r"\1"),  # *italic*
    (re.compile(r"\\(?:emph|textit|textbf|texttt|mathrm|text)\{([^{}]*)\}"), r"\1"),  # \emph{x}
    (re.compile(r"\\([%&$#_])"), r"\1"),  # \% -> %
]


def safe_text(text: str) -> str:
    """Escape HTML and Markdown control characters so text renders literally; emphasis markup that
    abstracts carry (``**A-Bench**``, ``\\emph{x}``, ``\\%``) is dropped for display first."""
    for pattern, repl in _EMPHASIS:
        text = pattern.sub(repl, text)
    return html.escape(text, quote=True).translate(_MD_SPECIAL)


def paper_link(title: str, url: str) -> str:
    """An anchor opening ``url`` in a new tab, or the bare title when there is no http(s) link."""
    if url.startswith(("https://", "http://")):
        return f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">{safe_text(title)}</a>'
    return safe_text(title)


def _marks(citations: Iterable[int]) -> str:
    return "".join(f"<sup>[{n}]</sup>" for n in citations)


def _sentence(s: AnswerSentence) -> str:
    return f"{safe_text(s.text)}{_marks(s.citations)}"


def authors_line(authors: Sequence[str], limit: int = MAX_AUTHORS) -> str:
    """``"A, B, C et al."`` (escaped), empty when there are no authors."""
    shown = ", ".join(authors[:limit]) + (" et al." if len(authors) > limit else "")
    return safe_text(shown)


def answer_body(answer: Answer) -> str:
    """The answer sentences with ``[n]`` markers (no references)."""
    if answer.abstained:
        return safe_text(answer.notice)
    return " ".join(_sentence(s) for s in answer.sentences)


def answer_meta(answer: Answer) -> str:
    """``intent: compare · searched for: …`` — the query only when it differs from the question."""
    parts = [f"intent: {safe_text(answer.intent)}"]
    query = answer.resolved_query.strip()
    if query and query != answer.question.strip():
        parts.append(f"searched for: {safe_text(query)}")
    return f"<small class='meta'>{' · '.join(parts)}</small>"


def comparison_html(answer: Answer) -> str:
    """The comparison as a table: one row per paper (``[n]`` + title link), one column per aspect; each
    cell is an abstract sentence with its ``[n]``. Empty when the answer has no comparison."""
    comp = answer.comparison
    if comp is None or not comp.rows:
        return ""
    papers = {c.n: c.paper for c in answer.citations}
    head = "".join(f"<th>{safe_text(col)}</th>" for col in comp.columns)
    rows = []
    for row in comp.rows:
        paper = papers.get(row.n)
        label = f"[{row.n}] " + (paper_link(paper.title, paper.url) if paper else "")
        cells = "".join(f"<td>{_sentence(c)}</td>" if c is not None else "<td>—</td>" for c in row.cells)
        rows.append(f"<tr data-n='{row.n}'><th scope='row'>{label}</th>{cells}</tr>")
    return f"<table class='compare'><thead><tr><th>paper</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def highlight(text: str, phrases: Iterable[str]) -> str:
    """``text`` escaped, with every occurrence of each phrase wrapped in ``<mark>`` (overlaps merged)."""
    spans: list[tuple[int, int]] = []
    for phrase in phrases:
        phrase = phrase.strip()
        if not phrase:
            continue
        start = text.find(phrase)
        while start >= 0:
            spans.append((start, start + len(phrase)))
            start = text.find(phrase, start + len(phrase))
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out, pos = [], 0
    for a, b in merged:
        out += [safe_text(text[pos:a]), f"<mark>{safe_text(text[a:b])}</mark>"]
        pos = b
    out.append(safe_text(text[pos:]))
    return "".join(out)


def paper_card(citation: Citation, extra_evidence: Sequence[str] = ()) -> str:
    """One reference: ``[n]`` + title link, authors, the supporting sentences, and the abstract (collapsed)
    with those sentences highlighted."""
    paper = citation.paper
    evidence = list(dict.fromkeys([*citation.evidence, *extra_evidence]))
    item = f"<li value='{citation.n}' class='card'><span class='ref-n'>[{citation.n}]</span> {paper_link(paper.title, paper.url)}"
    if paper.authors:
        item += f"<br><small>{authors_line(paper.authors)}</small>"
    for ev in citation.evidence:
        item += f"<blockquote>{safe_text(ev)}</blockquote>"
    if paper.text:
        item += f"<details><summary>Abstract</summary><p class='abstract'>{highlight(paper.text, evidence)}</p></details>"
    return item + "</li>"


def _cell_texts(answer: Answer) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    if answer.comparison is not None:
        for row in answer.comparison.rows:
            out[row.n] = [c.text for c in row.cells if c is not None]
    return out


def answer_markdown(answer: Answer, *, final: bool = True) -> str:
    """Comparison table (compare answers), answer + notice, intent / searched-for line, reference cards
    (title link, authors, supporting sentences, highlighted abstract), and the model line."""
    out = []
    table = comparison_html(answer)
    if table:
        out.append(table)
    if answer.notice and not answer.abstained:  # above the passages it explains
        out.append(f"<em>{safe_text(answer.notice)}</em>")
    out.append(answer_body(answer))
    if answer.dropped and answer.model_used:
        n = len(answer.dropped)
        out.append(f"<small class='dropped'>{n} sentence{'s' if n != 1 else ''} removed: not supported by the abstracts</small>")
    out.append(answer_meta(answer))
    if answer.citations:
        cells = _cell_texts(answer)
        refs = ["<b>References</b>", "<ol class='refs'>"]
        refs += [paper_card(c, cells.get(c.n, ())) for c in answer.citations]
        refs.append("</ol>")
        out.append("\n".join(refs))
    elif answer.mode == "not_stated" and answer.sources:
        out.append(f"The question is about: {paper_link(answer.sources[0].paper.title, answer.sources[0].paper.url)}")
    elif answer.abstained and answer.sources:
        near = ", ".join(paper_link(h.paper.title, h.paper.url) for h in answer.sources[:3])
        out.append(f"Closest papers (not matching): {near}")
    if final:
        secs = answer.timings_ms.get("total", 0.0) / 1000
        if not answer.model_used:  # decided by retrieval and code alone
            out.append(f"<small>answered by retrieval alone (no language model) in {secs:.1f} s</small>")
        else:
            out.append(f"<small>answered by {safe_text(answer.model)} in {secs:.1f} s</small>")
    return "\n\n".join(out)


def references_panel(cited: Sequence[tuple[int, Paper]]) -> str:
    """The "References so far" list: every paper cited in the conversation with its stable ``[n]``."""
    if not cited:
        return "<p class='refs-empty'>No papers cited yet.</p>"
    items = []
    for n, paper in cited:
        item = f"<li value='{n}' data-n='{n}'><span class='ref-n'>[{n}]</span> {paper_link(paper.title, paper.url)}"
        if paper.authors:
            item += f"<br><small>{authors_line(paper.authors, 3)}</small>"
        items.append(item + "</li>")
    return f"<ol class='refs-so-far'>{''.join(items)}</ol>"


def error_markdown(message: str) -> str:
    """A user-facing error message."""
    return f"⚠️ {safe_text(message)}"
