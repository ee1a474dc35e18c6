"""Answer -> plain text (CLI) and -> JSON-ready dict (``assistant ask --json``). No UI imports."""

from __future__ import annotations

import textwrap
from typing import Any

from assistant.intents import NOT_STATED
from assistant.types import Answer


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    """The ``--json`` shape: ``{question, answer, abstained, mode, notice, citations: [{n, paper_id, title,
    url, authors, evidence}], sources: [{paper_id, title, url, score, similarity}], model, timings_ms}``."""
    return {
        "question": answer.question,
        "answer": answer.text,
        "abstained": answer.abstained,
        "mode": answer.mode,
        "notice": answer.notice,
        "citations": [
            {"n": c.n, "paper_id": c.paper.id, "title": c.paper.title, "url": c.paper.url,
             "authors": list(c.paper.authors), "evidence": list(c.evidence)}
            for c in answer.citations
        ],
        "sources": [
            {"paper_id": h.paper.id, "title": h.paper.title, "url": h.paper.url, "score": round(h.score, 5),
             "similarity": round(h.dense_similarity, 4)}
            for h in answer.sources
        ],
        "dropped_sentences": list(answer.dropped),
        "intent": answer.intent,
        "resolved_query": answer.resolved_query or answer.question,
        "comparison": comparison_to_dict(answer),
        "model": answer.model,
        "model_used": answer.model_used,
        "timings_ms": {"retrieve": 0.0, "generate": 0.0, "total": 0.0,
                       **{k: round(v, 1) for k, v in answer.timings_ms.items()}},
    }


def comparison_to_dict(answer: Answer) -> dict[str, Any] | None:
    """``{columns, rows: [{paper_id, n, cells: [{text, n} | None]}]}`` or None when not a comparison."""
    comp = answer.comparison
    if comp is None:
        return None
    ids = {c.n: c.paper.id for c in answer.citations}
    return {
        "columns": list(comp.columns),
        "rows": [
            {"paper_id": ids.get(r.n, ""), "n": r.n,
             "cells": [{"text": c.text, "n": c.citations[0]} if c else None for c in r.cells]}
            for r in comp.rows
        ],
    }


def answer_to_text(answer: Answer, width: int = 100) -> str:
    """Answer (and comparison table), then numbered references (title, authors, link, supporting sentences)."""
    lines = []
    if answer.comparison is not None:
        titles = {c.n: c.paper.title for c in answer.citations}
        for row in answer.comparison.rows:
            lines.append(f"[{row.n}] {titles.get(row.n, '')}")
            for col, cell in zip(answer.comparison.columns, row.cells):
                text = f"{cell.text} [{row.n}]" if cell is not None else NOT_STATED
                lines.append(textwrap.fill(f"{col}: {text}", width, initial_indent="    ", subsequent_indent="      "))
        lines.append("")
    lines.append(textwrap.fill(answer.text, width) if answer.text else "")
    if answer.notice and not answer.abstained:
        lines += ["", f"Note: {answer.notice}"]
    if answer.dropped and answer.model_used:
        n = len(answer.dropped)
        lines += ["", f"({n} sentence{'s' if n != 1 else ''} removed: not supported by the abstracts)"]
    if answer.citations:
        lines += ["", "References:"]
        for c in answer.citations:
            authors = ", ".join(c.paper.authors[:4]) + (" et al." if len(c.paper.authors) > 4 else "")
            lines.append(f"[{c.n}] {c.paper.title}" + (f" — {authors}" if authors else ""))
            lines.append(f"    {c.paper.url or '(no link)'}   id: {c.paper.id}")
            for ev in c.evidence:
                lines.append(textwrap.fill(f"“{ev}”", width, initial_indent="    > ", subsequent_indent="      "))
    elif answer.mode == "not_stated" and answer.sources:
        h = answer.sources[0]
        lines += ["", f"The question is about: {h.paper.title} ({h.paper.url or h.paper.id})"]
    elif answer.abstained and answer.sources:
        lines += ["", "Closest papers (not matching):"]
        lines += [f"  - {h.paper.title} ({h.paper.url or h.paper.id})" for h in answer.sources[:3]]
    if answer.resolved_query and answer.resolved_query != answer.question:
        lines += ["", f"searched for: {answer.resolved_query}"]
    t = answer.timings_ms
    by = answer.model if answer.model_used else "retrieval and code alone (no language model)"
    lines += ["", f"answered by {by} in {t.get('total', 0) / 1000:.1f} s"]
    return "\n".join(lines)
