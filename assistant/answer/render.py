"""Answer -> plain text (CLI) and -> JSON-ready dict (``assistant ask --json``). No UI imports."""

from __future__ import annotations

import textwrap
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assistant.answer.builder import PART_COLUMN
from assistant.lang.citations import format_citations
from assistant.lang.markup import plain_text
from assistant.types import Answer, AnswerMode, AnswerSentence, Intent, SentenceCheck
from assistant.understand.intents import NOT_STATED


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CitationJSON(_Strict):
    """One numbered reference of an answer."""

    n: int = Field(description="The [n] used in `answer`; stable for a whole --session conversation.")
    paper_id: str = Field(description="`<file name>#<position>` (seed files) or `<file name>#<id or line>` (exports).")
    title: str = Field(description="The title as a reader sees it (plain text; see `raw_title`).")
    raw_title: str = Field(description="The title as written in the input, LaTeX and Markdown kept.")
    url: str = Field(description="http(s) link to the paper, or \"\" when the input gave none.")
    authors: list[str]
    evidence: list[str] = Field(
        description="The abstract sentences that support the answer's sentences citing [n] (plain text)."
    )


class SourceJSON(_Strict):
    """A retrieved paper, cited or not, in rank order."""

    paper_id: str
    title: str
    url: str
    score: float = Field(description="Fused retrieval score (reciprocal rank fusion; only the order means something).")
    similarity: float = Field(description="Best dense cosine similarity of the paper's windows to the question.")


class CellJSON(_Strict):
    """One comparison cell: a sentence of the row paper's abstract and its [n]; in the "on the question" column, the
    row paper's part of the answer (written by the model from that paper alone and checked, else quoted)."""

    text: str = Field(description="The cell as a reader sees it (plain text).")
    n: int


class ComparisonRowJSON(_Strict):
    """One paper of a comparison table."""

    paper_id: str
    n: int
    cells: list[CellJSON | None] = Field(
        description="One per column, in column order; null where the abstract states nothing for that column."
    )


class ComparisonJSON(_Strict):
    """Papers x aspects table of a compare answer."""

    columns: list[str]
    rows: list[ComparisonRowJSON]


class TimingsJSON(_Strict):
    """Milliseconds, measured in this process (a CLI `ask` also pays for loading models, not counted here)."""

    retrieve: float = Field(description="Retrieval and evidence selection.")
    first_token: float | None = Field(
        description="From the start until the model's first token; null when no model was asked or it sent nothing."
    )
    generate: float | None = Field(description="Time spent in the model's answer; null when no model was asked.")
    check_after_stream: float | None = Field(
        description="Of `generate`, the time the model's self-check of its sentences took after its last token; null "
        "when no model was asked."
    )
    total: float = Field(description="The whole answer.")


class ListingJSON(_Strict):
    """Where a topic answer's papers sit in the whole list of matching papers."""

    total: int = Field(description="How many papers match the topic (after the question's narrowing).")
    offset: int = Field(description="Matching papers skipped before this page (best first).")
    shown: int = Field(description="Papers listed in this answer.")
    limit: int = Field(description="The page size asked for (`ask --limit`).")
    next_offset: int | None = Field(description="The `--offset` of the next page; null on the last page.")
    venue: str = Field(description='The venue words the question narrowed to ("ICLR 2024", "oral"), or "".')
    author: str = Field(description='The author the question narrowed to ("by <author>"), or "".')
    links_code: bool = Field(
        description='The list is of the papers whose abstract links their code or project page ("papers that '
        'release code").'
    )


class SentenceJSON(_Strict):
    text: str = Field(
        description="One shown sentence of the answer, without its [n] markers, as a reader sees it: plain text, "
        "the abstracts' LaTeX and Markdown rendered as text ($\\underline{Le}$arning: Learning; **A**: A; 10\\%: 10%)."
    )
    raw_text: str = Field(description="The same sentence as written (abstract or model), LaTeX and Markdown kept.")
    citations: list[int] = Field(description="The [n] of the references that support it.")
    written_by: Literal["model", "abstract"] = Field(
        description="`model`: the language model wrote this sentence and the citation verifier kept it; `abstract`: "
        "quoted from the cited abstract (or written from the paper records) by code."
    )
    check: SentenceCheck = Field(
        description="What vouches for it: `self_check` (the model wrote it; its numbers and names are in the cited "
        "paper, and asked whether every fact of it is stated in the cited abstract, the model said yes), `title` (the "
        "model wrote it and it only names a cited paper's title, matched exactly), `quote` (quoted from the cited "
        "abstract, or written from the paper records, by code). `rules` and `entailment` only in answers saved "
        "before the self-check replaced those verifiers."
    )
    support_probability: float | None = Field(
        description="The model's probability of yes when asked whether the cited abstract states every fact of this "
        "sentence (check `self_check`; the old checks' entailment probability); null for the other checks."
    )


class AnswerJSON(_Strict):
    """What `assistant ask --json` prints (one object). The JSON Schema in docs/answer.schema.json is generated
    from this model and a test keeps them equal."""

    question: str
    answer: str = Field(
        description="The answer text, each sentence followed by its [n] markers; for abstained answers the reason."
    )
    abstained: bool = Field(
        description="True when the abstracts do not answer the question (mode abstained, not_stated or clarify); "
        "nothing is cited."
    )
    mode: AnswerMode = Field(
        description="generated: sentences written by the model and verified; extractive: abstract sentences chosen "
        "by code; abstained / not_stated: no answer; clarify: the question is asked back."
    )
    notice: str = Field(description="Why the answer looks the way it does (e.g. the model failed), or \"\".")
    sentences: list[SentenceJSON] = Field(description="The answer's shown sentences in order, each with its support.")
    citations: list[CitationJSON]
    sources: list[SourceJSON]
    dropped_sentences: list[str] = Field(
        description="Model sentences removed because the abstracts do not support them."
    )
    intent: Intent
    resolved_query: str = Field(
        description="What was searched: the question, or for a follow-up the question with the papers it refers to."
    )
    comparison: ComparisonJSON | None = Field(description="The table of a compare answer; null otherwise.")
    listing: ListingJSON | None = Field(
        description="For a topic answer: how many papers match and which page of them is listed; null otherwise."
    )
    model: str = Field(description="The configured model's name (whether or not it was asked).")
    model_used: bool = Field(
        description="Whether the model was asked for this answer. It may have failed: then `notice` says so and "
        "`mode` is extractive."
    )
    timings_ms: TimingsJSON


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    """The ``--json`` shape, checked against :class:`AnswerJSON` (see that model and docs/answer.schema.json).

    Raises:
        pydantic.ValidationError: the answer does not fit the documented shape (a bug, never bad input).
    """
    t = answer.timings_ms
    data = {
        "question": answer.question,
        "answer": plain_text(answer.text),
        "abstained": answer.abstained,
        "mode": answer.mode,
        "notice": plain_text(answer.notice),
        "sentences": [
            {
                "text": plain_text(s.text),
                "raw_text": s.text,
                "citations": list(s.citations),
                "written_by": "model" if s.by_model else "abstract",
                "check": s.check,
                "support_probability": s.probability,
            }
            for s in answer.sentences
        ],
        "citations": [
            {
                "n": c.n,
                "paper_id": c.paper.id,
                "title": plain_text(c.paper.title),
                "raw_title": c.paper.title,
                "url": c.paper.url,
                "authors": list(c.paper.authors),
                "evidence": [plain_text(e) for e in c.evidence],
            }
            for c in answer.citations
        ],
        "sources": [
            {
                "paper_id": h.paper.id,
                "title": plain_text(h.paper.title),
                "url": h.paper.url,
                "score": round(float(h.score), 5),
                "similarity": round(float(h.dense_similarity), 4),
            }
            for h in answer.sources
        ],
        "dropped_sentences": list(answer.dropped),
        "intent": answer.intent,
        "resolved_query": answer.resolved_query or answer.question,
        "comparison": comparison_to_dict(answer),
        "listing": listing_to_dict(answer),
        "model": answer.model,
        "model_used": answer.model_used,
        "timings_ms": {
            "retrieve": _ms(t.get("retrieve", 0.0)),
            "first_token": _ms(t.get("first_token")),
            "generate": _ms(t.get("generate")) if answer.model_used else None,
            "check_after_stream": _ms(t.get("check_after_stream")) if answer.model_used else None,
            "total": _ms(t.get("total", 0.0)),
        },
    }
    AnswerJSON.model_validate(data)  # the documented contract, checked on every answer
    return data


def _ms(value: float | None) -> float | None:
    return None if value is None else round(float(value), 1)


def listing_to_dict(answer: Answer) -> dict[str, Any] | None:
    """``{total, offset, shown, limit, next_offset, venue, author, links_code}`` of a listing answer, or None."""
    li = answer.listing
    if li is None:
        return None
    return {
        "total": li.total,
        "offset": li.offset,
        "shown": li.shown,
        "limit": li.limit,
        "next_offset": li.offset + li.shown if li.has_more else None,
        "venue": li.venue,
        "author": li.author,
        "links_code": li.links_code,
    }


def listing_line(answer: Answer) -> str:
    """One line saying how many papers match and which are shown ("37 papers match; showing the 10 closest
    (1-10)."), or "" when the answer is not a listing."""
    li = answer.listing
    if li is None:
        return ""
    if li.total == 0:
        n = len(answer.sentences)
        return f"No paper matches closely enough to list; the {n} nearest considered, left out:" if n else ""
    parts = (li.venue, f"by {li.author}" if li.author else "", "linking their code" if li.links_code else "")
    narrowed = " and ".join(x for x in parts if x)
    head = f"{li.total} paper{'s' if li.total != 1 else ''}{f' ({narrowed})' if narrowed else ''} match"
    head += "es" if li.total == 1 else ""
    if li.shown >= li.total:
        return f"{head}; all shown."
    if answer.intent == "metadata":  # an author's papers, in index order: not ranked by closeness
        return f"{head}; showing {li.offset + 1}–{li.offset + li.shown}."
    if li.offset == 0:
        return f"{head}; showing the {li.shown} closest."
    return f"{head}; showing {li.offset + 1}–{li.offset + li.shown}, by closeness."


def comparison_to_dict(answer: Answer) -> dict[str, Any] | None:
    """``{columns, rows: [{paper_id, n, cells: [{text, n} | None]}]}`` or None when not a comparison."""
    comp = answer.comparison
    if comp is None:
        return None
    ids = {c.n: c.paper.id for c in answer.citations}
    return {
        "columns": list(comp.columns),
        "rows": [
            {
                "paper_id": ids.get(r.n, ""),
                "n": r.n,
                "cells": [{"text": plain_text(c.text), "n": c.citations[0]} if c else None for c in r.cells],
            }
            for r in comp.rows
        ],
    }


def answer_schema() -> dict[str, Any]:
    """The JSON Schema of ``ask --json`` output (what docs/answer.schema.json holds)."""
    return AnswerJSON.model_json_schema()


def text_sentences(answer: Answer) -> tuple[AnswerSentence, ...]:
    """The sentences shown as the answer's text, under its table: ``answer.sentences`` less each paper's part that the
    comparison's "on the question" column already shows (:data:`assistant.answer.builder.PART_COLUMN`): a sentence
    citing that paper alone whose text is in the paper's cell. What stays is the rest: a choice's verdict, and an
    abstract sentence quoted before a part that leans on it (the cell holds the model's words; the quote may hold facts
    they leave out). Without that column (a lookup, a summary, a comparison still being written): every sentence.
    ``--json`` keeps them all."""
    comp = answer.comparison
    if comp is None or not comp.columns or comp.columns[0] != PART_COLUMN:
        return answer.sentences
    cells = {row.n: row.cells[0] for row in comp.rows if row.cells and row.cells[0] is not None}

    def in_cell(sentence: AnswerSentence) -> bool:
        cell = cells.get(sentence.citations[0]) if len(sentence.citations) == 1 else None
        return cell is not None and sentence.text in cell.text

    return tuple(s for s in answer.sentences if not in_cell(s))


def answer_to_text(answer: Answer, width: int = 100, *, details: bool = False) -> str:
    """Answer (and comparison table; a topic list one paper per line, ``[n] title`` over its sentence), then
    numbered references (title, authors, link, supporting sentences), then ``answered by M in N s``
    (:func:`short_credit`). Corpus and model text is shown as plain text (:func:`assistant.lang.markup.plain_text`:
    ``377\\%`` -> ``377%``, ``$\\underline{Le}$`` -> ``Le``, ``**S**elective`` -> ``Selective``).

    What explains an answer but is not the answer, as the chat's closed "Details" toggle holds it, only with
    ``details`` (``assistant ask -v``): a written answer's notice (:func:`notice_in_view`), how many of the model's
    sentences were removed, what was searched for, and which checks the kept sentences passed (:func:`model_credit`).
    """
    pt = plain_text
    lines = []
    titles = {c.n: pt(c.paper.title) for c in answer.citations}
    if answer.comparison is not None:
        for row in answer.comparison.rows:
            lines.append(f"[{row.n}] {titles.get(row.n, '')}")
            for col, cell in zip(answer.comparison.columns, row.cells):
                text = f"{pt(cell.text)} [{row.n}]" if cell is not None else NOT_STATED
                lines.append(textwrap.fill(f"{col}: {text}", width, initial_indent="    ", subsequent_indent="      "))
        lines.append("")
    if answer.listing is not None and listing_line(answer):
        lines.append(listing_line(answer))
    if answer.intent == "topic" and answer.comparison is None and answer.sentences and not answer.abstained:
        for sentence in answer.sentences:  # one paper per line, as the chat shows it
            n = sentence.citations[0] if sentence.citations else 0
            lines.append(f"[{n}] {titles.get(n, '')}" if n else "")
            lines.append(
                textwrap.fill(
                    f"{pt(sentence.text)} [{n}]" if n else pt(sentence.text),
                    width,
                    initial_indent="    ",
                    subsequent_indent="    ",
                )
            )
    else:
        text = (
            pt(answer.notice)
            if answer.abstained
            else " ".join(f"{pt(s.text)} {format_citations(s.citations)}".strip() for s in text_sentences(answer))
        )
        lines.append(textwrap.fill(text, width) if text else "")
    if answer.notice and not answer.abstained and (details or notice_in_view(answer)):
        lines += ["", f"Note: {pt(answer.notice)}"]
    if answer.listing is not None and answer.listing.has_more:
        li = answer.listing
        lines += ["", f"More: add --offset {li.offset + li.shown} (and --limit N) for the next papers."]
    if details and answer.dropped and answer.model_used:
        n = len(answer.dropped)
        lines += ["", f"({n} sentence{'s' if n != 1 else ''} removed: not supported by the abstracts)"]
    if answer.citations:
        lines += ["", "References:"]
        for c in answer.citations:
            authors = ", ".join(c.paper.authors[:4]) + (" et al." if len(c.paper.authors) > 4 else "")
            lines.append(f"[{c.n}] {titles[c.n]}" + (f" — {pt(authors)}" if authors else ""))
            lines.append(f"    {c.paper.url or '(no link)'}   id: {c.paper.id}")
            for ev in c.evidence:
                lines.append(textwrap.fill(f"“{pt(ev)}”", width, initial_indent="    > ", subsequent_indent="      "))
    elif answer.mode == "not_stated" and answer.sources:
        h = answer.sources[0]
        lines += ["", f"The question is about: {pt(h.paper.title)} ({h.paper.url or h.paper.id})"]
    elif answer.abstained and answer.sources:
        lines += ["", "Closest papers (not matching):"]
        lines += [f"  - {pt(h.paper.title)} ({h.paper.url or h.paper.id})" for h in answer.sources[:3]]
    if details and answer.resolved_query and answer.resolved_query != answer.question:
        lines += ["", f"searched for: {answer.resolved_query}"]
    t = answer.timings_ms
    written = details and answer.model_used and answer.mode == "generated"
    by = model_credit(answer) if written else short_credit(answer)
    lines += ["", f"answered by {by} in {t.get('total', 0) / 1000:.1f} s"]
    return "\n".join(lines)


def notice_in_view(answer: Answer) -> bool:
    """Whether an answer's notice changes how it reads, so it is shown with the answer rather than under "Details":
    the answer is not the model's checked writing (quotes, "not stated", a refusal), the model broke off while
    writing it (:data:`~assistant.answer.answerer.INCOMPLETE`), or part of a cited abstract was withheld from it
    (:data:`~assistant.answer.builder.WITHHELD_MARK`: text addressed to the assistant, never shown)."""
    from assistant.answer.answerer import INCOMPLETE
    from assistant.answer.builder import WITHHELD_MARK

    return answer.mode != "generated" or INCOMPLETE in answer.notice or WITHHELD_MARK in answer.notice


def short_credit(answer: Answer) -> str:
    """Who answered, in a few words (the footer under every answer): the model's name when its checked sentences are
    the answer; ``"retrieval alone (no language model)"`` when no model was asked; else ``"retrieval and code alone
    (M's answer was not used)"``."""
    if not answer.model_used:
        return "retrieval alone (no language model)"
    if answer.mode == "generated" and any(s.by_model for s in answer.sentences):
        return answer.model
    return f"retrieval and code alone ({answer.model}'s answer was not used)"


def model_credit(answer: Answer) -> str:
    """Who wrote a generated answer and which check passed, truthfully: ``"qwen1.5b (2 of 3 sentences, checked
    against their evidence: numbers and names found, and the model, asked again, said the abstract states each
    (probability of yes 0.88-0.97); the rest quoted from the abstracts)"``;
    ``"retrieval and code alone (M's answer was not used)"`` when none of its sentences was kept."""
    written = [s for s in answer.sentences if s.by_model]
    if not written:
        return f"retrieval and code alone ({answer.model}'s answer was not used)"
    checks = []
    for kind, label, prob in (
        (
            "self_check",
            "numbers and names found, and the model, asked again, said the abstract states each",
            "probability of yes",
        ),
        ("entailment", "supported by the entailment check", "support probability"),  # sessions saved before issue 40
        ("rules", "passed the alignment and rules", "support probability"),
    ):
        probs = sorted(s.probability for s in written if s.check == kind and s.probability is not None)
        if probs:
            span = f"{probs[0]:.2f}" if probs[0] == probs[-1] else f"{probs[0]:.2f}-{probs[-1]:.2f}"
            checks.append(f"{label} ({prob} {span})")
    if any(s.check == "title" for s in written):
        checks.append("a cited title, matched exactly")
    if len(written) == len(answer.sentences):
        return f"{answer.model} (every sentence checked against its evidence: {'; '.join(checks)})"
    return (
        f"{answer.model} ({len(written)} of {len(answer.sentences)} sentences, checked against their evidence: "
        f"{'; '.join(checks)}; the rest quoted from the abstracts)"
    )
