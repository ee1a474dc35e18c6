"""Comparison cells hold sentences of the column's role (issue 12.3): the role rules measured on the
labelled sentences of eval/cell-roles.jsonl (benchmarks/cell_placement.py prints the same figures)."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.ingest.corpus import read_papers
from assistant.understand.intents import sentence_roles
from assistant.lang.text import split_sentences

REPO = Path(__file__).resolve().parents[2]


def _accuracy(split: str) -> float:
    papers = {p.id: p for p in read_papers([REPO / "seeds"])}
    rows = [json.loads(line) for line in (REPO / "eval" / "cell-roles.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["split"] == split]
    roles = {pid: sentence_roles(split_sentences(papers[pid].text)) for pid in {r["paper_id"] for r in rows}}
    return sum(roles[r["paper_id"]][r["sentence_index"]] in r["roles"] for r in rows) / len(rows)


def test_role_accuracy_on_the_labelled_sentences() -> None:
    assert _accuracy("fit") >= 0.85
    assert _accuracy("check") >= 0.9


def test_roles_follow_the_contribution_sentence() -> None:
    sentences = [
        "Large models struggle with long inputs.",
        "In this work, we introduce X, a method that compresses memory.",
        "X organises tokens into events.",
        "Experiments on three benchmarks show that X outperforms RAG.",
        "Our code is available at https://example.org/x.",
    ]
    assert sentence_roles(sentences) == ["problem", "approach", "approach", "result", "other"]
