"""Pure functions, no gradio import: Answer -> HTML for the chat window and the side panel.

All corpus and model text goes through :mod:`ui.text` (escaped once, Markdown neutralised, math for
KaTeX), so ``<script>``, Markdown images and raw links inside an abstract render as inert text; only our
own anchors are emitted as links: to the papers' ``url`` (http/https from papers.jsonl, new tab) and, for
each ``[n]`` marker, to its reference card in the same message. Every piece is one HTML block without
blank lines inside, so the chat's Markdown renderer passes it through untouched.
"""

from __future__ import annotations

import html
import string
from collections.abc import Iterable, Sequence
from urllib.parse import parse_qs, urlsplit

from assistant.answer.render import listing_line, model_credit, notice_in_view, short_credit, text_sentences
from assistant.types import Answer, AnswerSentence, Citation, Paper, PaperHit
from assistant.understand.intents import NOT_STATED
from ui.text import highlight_html, html_text

#: Authors shown before "et al." on a reference card.
MAX_AUTHORS = 6
#: Papers listed under "Papers found" while an answer is in progress.
MAX_FOUND = 8
_SITES = {
    "openreview.net": "OpenReview",
    "arxiv.org": "arXiv",
    "iclr.cc": "ICLR",
    "proceedings.iclr.cc": "ICLR proceedings",
    "scholar.google.com": "Google Scholar",
    "www.semanticscholar.org": "Semantic Scholar",
}
_SEARCH_PARAMS = {"term", "q", "query", "search", "search_query"}


def safe_text(text: str) -> str:
    """Corpus or model text as inert HTML, math for the chat's KaTeX (see :func:`ui.text.html_text`)."""
    return html_text(text)


def site_name(url: str) -> str:
    """``"OpenReview"`` for an openreview.net link; other known sites by name, else the host."""
    host = urlsplit(url).hostname or ""
    return _SITES.get(host) or _SITES.get(host.removeprefix("www."), host.removeprefix("www."))


def is_search_link(url: str) -> bool:
    """True when ``url`` is a search page, not the paper itself (``openreview.net/search?term=…``)."""
    parts = urlsplit(url)
    return "/search" in parts.path.lower() or bool(_SEARCH_PARAMS & set(parse_qs(parts.query)))


def paper_link(title: str, url: str, *, katex: bool = True) -> str:
    """An anchor opening ``url`` in a new tab (a search page says so: "search on OpenReview"), or the bare
    title when there is no http(s) link."""
    label = html_text(title, katex=katex)
    if not url.startswith(("https://", "http://")):
        return f"<span class='title'>{label}</span>"
    attrs = f'href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer"'
    if is_search_link(url):
        site = html.escape(site_name(url))
        return f"<span class='title'>{label}</span> <a {attrs} class='search-link'>(search on {site})</a>"
    return f"<a {attrs} class='title'>{label}</a>"


def card_id(anchor: str, n: int) -> str:
    """The element id of reference ``[n]``'s card in the message rendered with ``anchor``."""
    return f"{anchor}-ref-{n}"


def _marks(citations: Iterable[int], anchor: str) -> str:
    return "".join(f"<sup class='cite'><a href='#{card_id(anchor, n)}'>[{n}]</a></sup>" for n in citations)


def _sentence(s: AnswerSentence, anchor: str) -> str:
    """The sentence and its markers; its hover text says what vouches for it (:func:`check_text`): a sentence the
    model wrote is styled ``checked`` only when a check passed, a quote is styled ``quote``, a sentence written from
    the paper's record ``record``."""
    if s.check == "quote":
        body = f"<q>{html_text(s.text)}</q>{_marks(s.citations, anchor)}"
        return f"<span class='quote' title='{html.escape(check_text(s), quote=True)}'>{body}</span>"
    if s.check == "record":  # written by code from the paper's record: neither a quote nor the model's
        body = f"{html_text(s.text)}{_marks(s.citations, anchor)}"
        return f"<span class='record' title='{html.escape(check_text(s), quote=True)}'>{body}</span>"
    body = f"{html_text(s.text)}{_marks(s.citations, anchor)}"
    return f"<span class='checked' title='{html.escape(check_text(s), quote=True)}'>{body}</span>"


def check_text(s: AnswerSentence) -> str:
    """What vouches for ``s``, in words: which check passed and with what probability (``"Written by the model;
    its numbers and names are in [1], and asked whether [1] states every fact of it, the model said yes
    (probability 0.93)."``)."""
    cited = ", ".join(f"[{n}]" for n in s.citations)
    p = f", support probability {s.probability:.2f}" if s.probability is not None else ""
    if s.check == "self_check":
        yes = f" (probability {s.probability:.2f})" if s.probability is not None else ""
        return (
            f"Written by the model; its numbers and names are in {cited}, and asked whether {cited} states every "
            f"fact of it, the model said yes{yes}."
        )
    if s.check == "entailment":
        return f"Written by the model; the entailment check read it against {cited}: supported{p}."
    if s.check == "rules":
        return f"Written by the model; aligned to {cited} and passed the exact and meaning rules{p}."
    if s.check == "title":
        return f"Written by the model; it names the title of {cited} exactly."
    if s.check == "record":
        return f"Written from the record of {cited} (its title, authors, venue or link), not quoted from the abstract."
    return f"Quoted from {cited}." if cited else "From the paper records."


def authors_line(authors: Sequence[str], limit: int = MAX_AUTHORS, *, katex: bool = True) -> str:
    """``"A, B, C et al."`` (escaped), empty when there are no authors."""
    shown = ", ".join(authors[:limit]) + (" et al." if len(authors) > limit else "")
    return html_text(shown, katex=katex)


def _topic_list(answer: Answer, anchor: str) -> str:
    """One line per listed paper: ``[n]`` linked title, then the cited sentence that puts it in the topic."""
    papers = {c.n: c.paper for c in answer.citations}
    items = []
    for s in answer.sentences:
        n = s.citations[0] if s.citations else 0
        paper = papers.get(n)
        head = (
            f"<a href='#{card_id(anchor, n)}' class='ref-n'>[{n}]</a> {paper_link(paper.title, paper.url)}"
            if paper
            else ""
        )
        items.append(f"<li>{head}<br><span class='reason'>{_sentence(s, anchor)}</span></li>")
    head, tail = listing_html(answer)
    return f"{head}<ol class='topic-list'>{''.join(items)}</ol>{tail}"


def listing_html(answer: Answer) -> tuple[str, str]:
    """For a topic list: the count line above it ("37 papers match; showing the 10 closest.") and, when more
    papers match, the line below it that says how to see them (the "Show more" button or typing "show more"
    asks the conversation for the next page, session.py). ``("", "")`` for other answers."""
    line = listing_line(answer)
    if not line or answer.listing is None:
        return "", ""
    head = f"<p class='listing-count'>{html_text(line)}</p>"
    li = answer.listing
    if not li.has_more:
        return head, ""
    left = li.total - li.offset - li.shown
    tail = (
        f"<p class='listing-more'><small>{left} more: press “Show more” or type “show more” "
        f"for the next {min(li.limit, left)}.</small></p>"
    )
    return head, tail


def answer_body(answer: Answer, anchor: str = "a") -> str:
    """The answer sentences with clickable ``[n]`` markers (no references); a topic answer is a list,
    one line per paper."""
    if answer.abstained:
        return f"<p class='notice'>{html_text(answer.notice)}</p>"
    if answer.intent == "topic" and answer.comparison is None and answer.sentences:
        return _topic_list(answer, anchor)
    sentences = text_sentences(answer)  # a comparison's parts are its table's cells, not repeated here
    if not sentences:
        return ""
    return f"<p class='answer'>{' '.join(_sentence(s, anchor) for s in sentences)}</p>"


#: The longest "Searched for" line shown, in characters (a longer search is cut at a word, with "…").
SEARCHED_FOR_CHARS = 160


def searched_for(answer: Answer) -> str:
    """What the search used when it added words to the question (a follow-up resolved: "Compare it with YNet."
    searched as "… (XNet)"), cut to :data:`SEARCHED_FOR_CHARS`; ``""`` when every word of the search is the
    question's own (the question itself, a long paste cleaned), which says nothing new."""
    query = " ".join(answer.resolved_query.split())
    asked = {w.strip(string.punctuation) for w in answer.question.casefold().split()}
    if not query or {w.strip(string.punctuation) for w in query.casefold().split()} <= asked:
        return ""
    if len(query) > SEARCHED_FOR_CHARS:
        query = query[:SEARCHED_FOR_CHARS].rsplit(" ", 1)[0] + "…"
    return query


def answer_meta(answer: Answer) -> str:
    """``Searched for: …`` when the search added words to the question (:func:`searched_for`), else ``""``."""
    query = searched_for(answer)
    return f"<p class='meta'><small>Searched for: {html_text(query)}</small></p>" if query else ""


def comparison_html(answer: Answer, anchor: str = "a") -> str:
    """The comparison as a table: one row per paper (``[n]`` + title link), one column per aspect; each
    cell is an abstract sentence with its ``[n]``. Empty when the answer has no comparison."""
    comp = answer.comparison
    if comp is None or not comp.rows:
        return ""
    papers = {c.n: c.paper for c in answer.citations}
    head = "".join(f"<th>{html_text(col)}</th>" for col in comp.columns)
    rows = []
    for row in comp.rows:
        paper = papers.get(row.n)
        label = f"<a href='#{card_id(anchor, row.n)}' class='ref-n'>[{row.n}]</a> " + (
            paper_link(paper.title, paper.url) if paper else ""
        )
        cells = "".join(
            f"<td>{_col_label(col)}{_sentence(c, anchor)}</td>"
            if c is not None
            else f"<td class='not-stated'>{_col_label(col)}<em>{NOT_STATED}</em></td>"
            for col, c in zip(comp.columns, row.cells)
        )
        rows.append(f"<tr data-n='{row.n}'><th scope='row'>{label}</th>{cells}</tr>")
    table = f"<table class='compare'><thead><tr><th>paper</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f"<div class='table-scroll'>{table}</div>"  # scrolls inside its bubble; a phone reflows it to cards


def _col_label(column: str) -> str:
    """A cell's column name, shown only when a narrow screen lays the table out as one card per paper."""
    return f"<span class='col-label'>{html_text(column)}: </span>"


#: A question longer than this (characters) is shown collapsed in the chat: its start, and the whole text
#: in a box of bounded height on demand.
COLLAPSE_CHARS = 400
#: Characters of a collapsed question shown before "…".
PREVIEW_CHARS = 160


def question_html(question: str, collapse_over: int = COLLAPSE_CHARS) -> str:
    """The user's message as inert HTML (:func:`safe_text`); one longer than ``collapse_over`` characters is
    collapsed (``<details>``: its first :data:`PREVIEW_CHARS` characters and its length; opened, the whole
    text scrolls inside a box of bounded height), so a pasted page never becomes a page-long bubble."""
    text = " ".join(question.split())
    if len(text) <= collapse_over:
        return safe_text(question)
    preview = text[:PREVIEW_CHARS].rsplit(" ", 1)[0] if " " in text[:PREVIEW_CHARS] else text[:PREVIEW_CHARS]
    return (
        f"<details class='long-message'><summary>{html_text(preview, katex=False)}… "
        f"<small>({len(text):,} characters; show all)</small></summary>"
        f"<div class='long-message-text'>{html_text(text, katex=False)}</div></details>"
    )


def highlight(text: str, phrases: Iterable[str]) -> str:
    """``text`` escaped, with every occurrence of each phrase wrapped in ``<mark>`` (overlaps merged)."""
    return highlight_html(text, phrases)


def paper_card(citation: Citation, extra_evidence: Sequence[str] = (), anchor: str = "a") -> str:
    """One reference: ``[n]`` + title link, authors, and the abstract (collapsed) with the supporting
    sentences highlighted in place, so each is shown once."""
    paper = citation.paper
    evidence = list(dict.fromkeys([*citation.evidence, *extra_evidence]))
    item = (
        f"<li value='{citation.n}' class='card' id='{card_id(anchor, citation.n)}'>"
        f"<span class='ref-n'>[{citation.n}]</span> {paper_link(paper.title, paper.url)}"
    )
    if paper.authors:
        item += f"<br><small class='authors'>{authors_line(paper.authors)}</small>"
    if paper.text:
        shown = [e for e in evidence if e and e in paper.text]
        k = len(shown)
        summary = f"Abstract ({k} supporting sentence{'s' if k != 1 else ''} highlighted)" if k else "Abstract"
        item += (
            f"<details><summary>{summary}</summary>"
            f"<p class='abstract'>{highlight_html(paper.text, shown)}</p>{withheld_html(paper)}</details>"
        )
    return item + "</li>"


def withheld_html(paper: Paper) -> str:
    """The parts of ``paper``'s record withheld from answers (``Paper.withheld``), shown escaped and marked as text
    that addresses the assistant, never highlighted; "" when there are none."""
    if not paper.withheld:
        return ""
    quoted = "".join(f"<li><q>{html.escape(part)}</q></li>" for part in paper.withheld)
    return (
        "<div class='withheld' role='note'><strong>Withheld from answers: this text is written as an instruction "
        f"to the assistant, so it is shown here only, as data.</strong><ul>{quoted}</ul></div>"
    )


def _cell_texts(answer: Answer) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    if answer.comparison is not None:
        for row in answer.comparison.rows:
            out[row.n] = [c.text for c in row.cells if c is not None]
    return out


def found_html(hits: Sequence[PaperHit], limit: int = MAX_FOUND) -> str:
    """The papers retrieval found (titles with links), shown while the answer is being checked."""
    if not hits:
        return ""
    items = "".join(f"<li>{paper_link(h.paper.title, h.paper.url)}</li>" for h in hits[:limit])
    return f"<div class='found'><small>Papers found:</small><ul class='found-list'>{items}</ul></div>"


def progress_markdown(
    message: str, hits: Sequence[PaperHit] = (), answer: Answer | None = None, anchor: str = "a"
) -> str:
    """What the chat shows while an answer is in progress: the status line, then the papers found until something
    verified can be shown, then only what is verified so far (comparison table, sentences, their cards): the
    list of papers found is replaced, not left under the answer. Quotes shown while the model writes are marked
    as interim (``<div class='interim'>``)."""
    out = [f"<p class='status'><em>{html_text(message)}</em></p>"]
    if answer is None:
        out.append(found_html(hits))
    else:
        body = answer_markdown(answer, final=False, anchor=anchor)
        out.append(body if answer.mode == "generated" else f"<div class='interim'>{body}</div>")
    return "\n\n".join(o for o in out if o)


def answer_markdown(answer: Answer, *, final: bool = True, anchor: str = "a") -> str:
    """What the reader sees is the answer (issue 59): the comparison table (compare answers), a notice only when it
    changes how the answer reads (the model failed, nothing it wrote passed and quotes are shown, the abstracts do
    not state it), the answer (a list for topics), the reference cards (title link, authors, highlighted abstract),
    and, once final, one short line saying who answered in how long. The rest is under a closed "Details" toggle
    (:func:`answer_details`): the notice of a written answer ("About X, not Y from the last answer", the English
    reading of a question), what was searched for, how many sentences were removed, and which checks passed.
    ``anchor`` makes the cards' ids unique on the page (one per message)."""
    out = []
    table = comparison_html(answer, anchor)
    if table:
        out.append(table)
    if answer.notice and not answer.abstained and notice_in_view(answer):  # above the passages it explains
        out.append(f"<p class='notice'><em>{html_text(answer.notice)}</em></p>")
    out.append(answer_body(answer, anchor))
    if answer.citations:
        cells = _cell_texts(answer)
        refs = ["<p class='refs-head'><b>References</b></p>", "<ol class='refs'>"]
        refs += [paper_card(c, cells.get(c.n, ()), anchor) for c in answer.citations]
        refs.append("</ol>")
        out.append("\n".join(refs))
    elif answer.mode == "not_stated" and answer.sources:
        out.append(
            f"<p>The question is about: {paper_link(answer.sources[0].paper.title, answer.sources[0].paper.url)}</p>"
        )
    elif answer.abstained and answer.sources:
        near = ", ".join(paper_link(h.paper.title, h.paper.url) for h in answer.sources[:3])
        out.append(f"<p class='near'>Closest papers (not matching): {near}</p>")
    if final:
        secs = answer.timings_ms.get("total", 0.0) / 1000
        by = short_credit(answer)
        out.append(f"<p class='model'><small>answered by {html_text(by)} in {secs:.1f} s</small></p>")
    out.append(answer_details(answer, final=final))
    return "\n\n".join(o for o in out if o)


def answer_details(answer: Answer, *, final: bool = True) -> str:
    """The closed "Details" toggle under an answer (``<details class='answer-details'>``): a written answer's notice,
    what was searched for (:func:`answer_meta`), how many of the model's sentences were removed, and, once final,
    which checks its kept sentences passed (:func:`~assistant.answer.render.model_credit`). "" when there is nothing
    to show."""
    parts = []
    if answer.notice and not answer.abstained and not notice_in_view(answer):
        parts.append(f"<p class='notice'><em>{html_text(answer.notice)}</em></p>")
    parts.append(answer_meta(answer))
    if answer.dropped and answer.model_used:
        n = len(answer.dropped)
        parts.append(
            f"<p class='dropped'><small>{n} sentence{'s' if n != 1 else ''} removed: "
            "not supported by the abstracts</small></p>"
        )
    if final and answer.model_used and answer.mode == "generated" and any(s.by_model for s in answer.sentences):
        parts.append(f"<p class='checks'><small>{html_text(model_credit(answer))}</small></p>")
    shown = [p for p in parts if p]
    if not shown:
        return ""
    return f"<details class='answer-details'><summary>Details</summary>{''.join(shown)}</details>"


def references_panel(cited: Sequence[tuple[int, Paper]]) -> str:
    """The "References so far" list: every paper cited in the conversation with its stable ``[n]``
    (a plain HTML panel without KaTeX: math shows as its ``$…$`` source)."""
    if not cited:
        return "<p class='refs-empty'>No papers cited yet.</p>"
    items = []
    for n, paper in cited:
        link = paper_link(paper.title, paper.url, katex=False)
        item = f"<li value='{n}' data-n='{n}'><span class='ref-n'>[{n}]</span> {link}"
        if paper.authors:
            item += f"<br><small>{authors_line(paper.authors, 3, katex=False)}</small>"
        items.append(item + "</li>")
    return f"<ol class='refs-so-far'>{''.join(items)}</ol>"


def error_markdown(message: str) -> str:
    """A user-facing error message."""
    return f"<p class='error'>⚠️ {html_text(message)}</p>"
