"""Claims file parsing for ``assistant eval-claims``: bad rows fail with file:line and the field; report
aggregation and table (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.eval.claims_eval import format_claims_report, load_claims, summarize
from assistant.eval.evaluation import EvalFormatError

ROW = {"id": "c1", "question": "Q?", "claim": "A claim.", "paper_ids": ["a.txt#1"], "label": "supported",
       "kind": "paraphrase", "support": "", "notes": ""}


def write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_repo_claims_file_parses() -> None:
    items = load_claims(Path(__file__).resolve().parents[2] / "eval" / "claims-dev.jsonl")
    assert len(items) == 72 and {i.label for i in items} == {"supported", "unsupported"}


@pytest.mark.parametrize(("bad", "field"), [
    ({"paper_ids": []}, "paper_ids"),
    ({"paper_ids": "a.txt#1"}, "paper_ids"),
    ({"label": "true"}, "label"),
    ({"kind": "negation"}, "kind"),  # an unsupported kind on a supported claim
    ({"claim": "  "}, "claim"),
    ({"question": None}, "question"),
    ({"notes": 3}, "notes"),
])
def test_bad_row_names_file_line_and_field(tmp_path: Path, bad: dict[str, object], field: str) -> None:
    path = write(tmp_path, ROW, {**ROW, "id": "c2", **bad})
    with pytest.raises(EvalFormatError, match=rf"claims.jsonl:2: field '{field}'"):
        load_claims(path)


def test_invalid_json_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(EvalFormatError, match=r"claims.jsonl:2: invalid JSON"):
        load_claims(write(tmp_path, ROW, "{not json"))
    with pytest.raises(EvalFormatError, match=r"claims.jsonl:2: duplicate id 'c1'"):
        load_claims(write(tmp_path, ROW, ROW))
    with pytest.raises(EvalFormatError, match="no claims"):
        load_claims(write(tmp_path, ""))


def test_summary_and_table() -> None:
    records = [
        {"label": "supported", "kind": "paraphrase", "correct": True, "wrong_citation": False},
        {"label": "supported", "kind": "paraphrase", "correct": False, "wrong_citation": True},
        {"label": "unsupported", "kind": "negation", "correct": True, "wrong_citation": False},
    ]
    overall = summarize(records)
    assert overall == {"n": 3, "supported_kept": 0.5, "unsupported_dropped": 1.0, "balanced_accuracy": 0.75,
                       "wrong_paper_citations": 1}
    text = format_claims_report({"overall": overall, "by_kind": {"negation": summarize(records[2:])},
                                 "latency_ms": {"attribute": {"p50": 7.0, "p95": 9.0, "n": 3}}})
    assert "negation" in text and "overall" in text and "attribute" in text
