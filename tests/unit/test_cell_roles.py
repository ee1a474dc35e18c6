"""Comparison cells hold sentences of the column's role (issue 12.3): the role rules measured on the
labelled sentences of eval/cell-roles.jsonl (benchmarks/cell_placement.py prints the same figures).

Two kinds of gate (issue 26.3):

* ``test`` split (5 abstracts, 43 sentences, labelled and frozen before the rules were run on them): the
  quality gate. Its bar, 0.75, was fixed before the first measurement (the fit target 0.85 less 0.10 for
  generalisation); measured 0.791 (34/43) when frozen.
* ``fit`` (the rules were written on it, 48/56 = 0.857) and ``check`` (labels edited after the rules were
  seen, 20/20): development data, so only **regression bands**: they fail when a change loses more than
  about three ``fit`` sentences (0.80) or two ``check`` sentences (0.90). Passing them says nothing about
  unseen abstracts.
"""

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


#: Quality gate on the frozen held-out split (fixed before it was measured).
TEST_GATE = 0.75
#: Regression bands on development data (measured 0.857 and 1.0 when set).
FIT_REGRESSION_BAND = 0.80
CHECK_REGRESSION_BAND = 0.90


def test_role_accuracy_on_the_held_out_split() -> None:
    accuracy = _accuracy("test")
    assert accuracy >= TEST_GATE, f"held-out role accuracy {accuracy:.3f} < {TEST_GATE}"


def test_role_accuracy_on_development_splits_has_not_regressed() -> None:
    """Regression band on the data the rules were fitted to (not a quality figure)."""
    assert _accuracy("fit") >= FIT_REGRESSION_BAND
    assert _accuracy("check") >= CHECK_REGRESSION_BAND


def test_roles_follow_the_contribution_sentence() -> None:
    sentences = [
        "Large models struggle with long inputs.",
        "In this work, we introduce X, a method that compresses memory.",
        "X organises tokens into events.",
        "Experiments on three benchmarks show that X outperforms RAG.",
        "Our code is available at https://example.org/x.",
    ]
    assert sentence_roles(sentences) == ["problem", "approach", "approach", "result", "other"]
