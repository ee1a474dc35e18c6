"""``ask --json`` is a contract: every kind of answer fits :class:`assistant.answer.render.AnswerJSON` (and so
docs/answer.schema.json), nullable fields are null exactly when documented, and anything else is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from assistant.answer.render import AnswerJSON, answer_to_dict, answer_to_text
from assistant.types import Answer, AnswerSentence, Citation, Comparison, ComparisonRow, Paper, PaperHit

REPO = Path(__file__).resolve().parents[2]
P1 = Paper("a.txt#1", "V", "Sock Sorter", ("Ann Lee",), "https://x.org/1", "We sort socks. It works.", "a.txt", 1)
P2 = Paper("a.txt#2", "V", "Fish Counter", (), "", "We count fish.", "a.txt", 2)
HITS = (PaperHit(P1, 0.03, 0.61, (), ("We sort socks.",)), PaperHit(P2, 0.02, 0.2, (), ("We count fish.",)))


def _answer(**kw: object) -> Answer:
    base: dict[str, object] = dict(question="Which paper sorts socks?",
                                   sentences=(AnswerSentence("We sort socks.", (1,), 0.9, 0.9, by_model=True,
                                                             check="self_check"),),
                                   citations=(Citation(1, P1, ("We sort socks.",)),), sources=HITS, mode="generated",
                                   model="smollm2",
                                   timings_ms={"retrieve": 12.3, "first_token": 40.0, "generate": 80.5, "total": 99.9},
                                   model_used=True)
    base.update(kw)
    return Answer(**base)  # type: ignore[arg-type]


def test_generated_answer_has_every_timing() -> None:
    data = answer_to_dict(_answer())
    assert data["timings_ms"] == {"retrieve": 12.3, "first_token": 40.0, "generate": 80.5, "check_after_stream": None,
                                     "total": 99.9}
    assert data["answer"] == "We sort socks. [1]" and data["citations"][0]["paper_id"] == "a.txt#1"


def test_abstained_answer_has_null_model_timings_not_zero() -> None:
    data = answer_to_dict(_answer(sentences=(), citations=(), mode="abstained",
                                  notice="The indexed abstracts don't cover this question.",
                                  timings_ms={"retrieve": 5.0, "total": 6.0}, model_used=False))
    assert data["timings_ms"] == {"retrieve": 5.0, "first_token": None, "generate": None, "check_after_stream": None,
                                     "total": 6.0}
    assert data["abstained"] is True and data["citations"] == [] and data["comparison"] is None


def test_comparison_cells_are_objects_or_null() -> None:
    comp = Comparison(("problem", "approach"), (ComparisonRow(1, (AnswerSentence("We sort socks.", (1,), 1.0), None)),
                                                ComparisonRow(2, (None, AnswerSentence("We count fish.", (2,), 1.0)))))
    answer = _answer(intent="compare", comparison=comp, citations=(Citation(1, P1, ()), Citation(2, P2, ())))
    rows = answer_to_dict(answer)["comparison"]["rows"]
    assert rows[0]["cells"] == [{"text": "We sort socks.", "n": 1}, None]
    assert rows[1] == {"paper_id": "a.txt#2", "n": 2, "cells": [None, {"text": "We count fish.", "n": 2}]}


def test_the_contract_refuses_extra_missing_or_mistyped_fields() -> None:
    good = answer_to_dict(_answer())
    for bad in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "mode"}, {**good, "mode": "guessed"},
                {**good, "timings_ms": {**good["timings_ms"], "total": None}}):
        with pytest.raises(ValidationError):
            AnswerJSON.model_validate(bad)


def test_schema_file_says_which_fields_are_nullable() -> None:
    schema = json.loads((REPO / "docs" / "answer.schema.json").read_text())
    timings = schema["$defs"]["TimingsJSON"]["properties"]
    assert {"type": "null"} in timings["generate"]["anyOf"] and "type" in timings["total"]
    assert {"type": "null"} in schema["$defs"]["ComparisonRowJSON"]["properties"]["cells"]["items"]["anyOf"]


def test_footer_names_the_model_only_when_its_sentences_are_shown() -> None:
    assert answer_to_text(_answer()).endswith("\nanswered by smollm2 in 0.1 s")
    assert answer_to_text(_answer(), details=True).endswith(  # assistant ask -v: which checks passed
"answered by smollm2 (every sentence checked against its evidence: numbers and names found, and the model, asked "
        "again, said the abstract states each (probability of yes 0.90)) in 0.1 s"
    )
    failed = _answer(mode="extractive",
                     notice="Cannot reach the LLM. Showing the most relevant passages instead, each cited.")
    assert "answered by retrieval and code alone (smollm2's answer was not used)" in answer_to_text(failed)
    assert "no language model" in answer_to_text(_answer(model_used=False, mode="extractive"))


def test_the_terminal_keeps_what_explains_an_answer_for_details() -> None:
    from dataclasses import replace

    written = replace(
        _answer(notice="About XNet, not YNet from the last answer."),
        dropped=("XNet is slow.",),
        resolved_query="XNet speed",
    )
    short, full = answer_to_text(written), answer_to_text(written, details=True)
    for detail in ("Note: About XNet", "1 sentence removed", "searched for: XNet speed"):
        assert detail not in short and detail in full, detail
    quoted = _answer(mode="extractive", notice="Cannot reach the LLM. Showing the most relevant passages instead.")
    assert "Note: Cannot reach the LLM" in answer_to_text(quoted)  # it changes how the answer reads: in view
    withheld = _answer(notice="Part of “XNet” was withheld from this answer: it addresses the assistant.")
    assert "Note: Part of “XNet” was withheld" in answer_to_text(withheld)  # a generated answer, but said in view


def test_a_topic_listing_says_how_many_match_and_where_the_next_page_starts() -> None:
    from assistant.types import Listing

    page = _answer(intent="topic", listing=Listing(total=37, offset=10, shown=10, limit=10, venue="ICLR 2024"))
    data = answer_to_dict(page)["listing"]
    assert data == {"total": 37, "offset": 10, "shown": 10, "limit": 10, "next_offset": 20, "venue": "ICLR 2024",
                    "author": "", "links_code": False}
    text = answer_to_text(page)
    assert text.startswith("37 papers (ICLR 2024) match; showing 11–20, by closeness.") and "--offset 20" in text
    last = _answer(intent="topic", listing=Listing(total=12, offset=10, shown=2, limit=10))
    assert answer_to_dict(last)["listing"]["next_offset"] is None and "--offset" not in answer_to_text(last)
    assert answer_to_dict(_answer())["listing"] is None
