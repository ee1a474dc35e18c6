"""The session file (CLI ``--session FILE``): a conversation written as JSON and read back, each turn's answer
as it was shown (:func:`answer_record`, :func:`answer_from_record`); :func:`read_saved_session` checks a file
before anything loads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from assistant.conversation.state import Turn
from assistant.errors import AssistantError
from assistant.types import (
    INTENTS,
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    Comparison,
    ComparisonRow,
    Listing,
    Paper,
    SentenceCheck,
)

if TYPE_CHECKING:
    from assistant.conversation.state import ConversationState


def session_record(state: ConversationState) -> dict[str, Any]:
    """The conversation as JSON-ready data (format version :data:`SESSION_VERSION`): the labels, and per turn
    the question, the resolved query, the papers it referred to, and the answer as shown (text, sentences with
    their ``[n]`` and support, citations with their evidence, mode, intent, notice, comparison table, model,
    total time). What :func:`save_session` writes and the chat page keeps in the browser."""
    return {
        "version": SESSION_VERSION,
        "labels": dict(state.labels),
        "turns": [
            {
                "question": t.question,
                "resolved_query": t.resolved_query,
                "focus_ids": list(t.focus_ids),
                **answer_record(t.answer),
            }
            for t in state.turns
        ],
    }


def save_session(state: ConversationState, path: Path) -> None:
    """Write :func:`session_record` as JSON to ``path``. Written to ``<path>.tmp`` first and renamed, so a failed
    save leaves the old file whole."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(session_record(state), indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def restore_session(state: ConversationState, data: dict[str, Any], known: Mapping[str, Paper]) -> None:
    """Restore a conversation from :func:`read_saved_session`'s result into ``state``: every turn's answer as it
    was shown (text, citations, mode, ...); citations of papers not in ``known`` (no longer indexed) are left
    out."""
    labels, turns = data["labels"], data["turns"]
    state.labels = {pid: n for pid, n in labels.items() if pid in known}
    state.papers = {pid: known[pid] for pid in state.labels}
    state.turns = []
    for t in turns:
        answer = answer_from_record(t, known, state.labels)
        state.turns.append(
            Turn(t.get("question", ""), t.get("resolved_query", ""), tuple(t.get("focus_ids", [])), answer)
        )


#: Version of the file :func:`save_session` writes. 1: answer text and cited ids only (read as one uncited
#: block of text); 2: the whole answer as shown.
SESSION_VERSION = 2


def _sentence_record(s: AnswerSentence) -> dict[str, Any]:
    return {
        "text": s.text,
        "citations": list(s.citations),
        "support": round(float(s.support), 4),
        "by_model": s.by_model,
        "check": s.check,
        "probability": s.probability,
    }


def _sentence_from(rec: Any, labels: set[int]) -> AnswerSentence:
    by_model = bool(rec.get("by_model", False))
    check = rec.get("check")
    if check not in get_args(SentenceCheck) or (check in ("quote", "record")) == by_model:
        check = "rules" if by_model else "quote"  # a file written before issue 40: the then default verifier's check
    return AnswerSentence(
        str(rec.get("text", "")),
        tuple(int(n) for n in rec.get("citations", []) if int(n) in labels),
        float(rec.get("support", 0.0)),
        probability=float(rec["probability"]) if isinstance(rec.get("probability"), (int, float)) else None,
        by_model=by_model,
        check=check,
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
        "total_ms": round(float(answer.timings_ms.get("total", 0.0)), 1),
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
        timings_ms={"total": float(total)} if isinstance(total := rec.get("total_ms"), (int, float)) else {},
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
    """Read and check a file written by :func:`save_session` (no model or index needed, so the CLI
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
        return checked_session_data(data)
    except ValueError as e:
        raise AssistantError(f"--session {path}: not a saved conversation ({e}); {keep}.") from e


def checked_session_data(data: object) -> dict[str, Any]:
    """``data`` (parsed JSON of a :func:`session_record`) checked for the shape :func:`restore_session` reads.

    Returns:
        ``{"labels": {paper_id: n}, "turns": [{question, resolved_query, focus_ids, answer, ...}, ...]}``.

    Raises:
        ValueError: not shaped like a saved conversation; the message says what is wrong.
    """
    try:
        if not isinstance(data, dict) or "turns" not in data or "labels" not in data:
            raise KeyError("it holds other JSON, without 'labels' and 'turns'")
        labels = {str(k): int(v) for k, v in data["labels"].items()}
        turns = data["turns"]
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise TypeError("'turns' must be a list of objects")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        reason = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise ValueError(str(reason)) from e
    return {"labels": labels, "turns": turns}
