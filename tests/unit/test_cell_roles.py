"""Comparison cells hold sentences of the column's role (issues 12.3, 23.1): the trained role classifier
(assistant/understand/learned.py) measured on the labelled seed sentences of eval/cell-roles.jsonl
(benchmarks/cell_placement.py prints the same figures).

The classifier learned from scripts/training-data/sentence-roles.jsonl (real corpus and CORD-19 abstracts);
no sentence of eval/cell-roles.jsonl was used to train or choose it, so every split is unseen data for it:

* ``test`` split (5 abstracts, 43 sentences, labelled and frozen in issue 26): the quality gate, bar 0.75
  fixed before the first measurement (the rules it replaced measured 0.791; the classifier 0.930).
* all three splits (14 abstracts, 119 sentences; ``fit`` and ``check`` were the rules' development data):
  the same bar (the rules: 0.857 / 1.0 on their own development data; the classifier 0.768 / 0.900 / 0.930).
"""

from __future__ import annotations

import json
from pathlib import Path

from assistant.ingest.corpus import read_papers
from assistant.lang.text import split_sentences
from assistant.understand.intents import sentence_roles

REPO = Path(__file__).resolve().parents[2]


def _accuracy(split: str) -> float:
    papers = {p.id: p for p in read_papers([REPO / "seeds"])}
    rows = [json.loads(line) for line in (REPO / "eval" / "cell-roles.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["split"] == split]
    roles = {pid: sentence_roles(split_sentences(papers[pid].text)) for pid in {r["paper_id"] for r in rows}}
    return sum(roles[r["paper_id"]][r["sentence_index"]] in r["roles"] for r in rows) / len(rows)


#: Quality gate on the frozen held-out split (fixed before it was measured), also applied to all 119 sentences.
TEST_GATE = 0.75


def test_role_accuracy_on_the_held_out_split() -> None:
    accuracy = _accuracy("test")
    assert accuracy >= TEST_GATE, f"held-out role accuracy {accuracy:.3f} < {TEST_GATE}"


def test_role_accuracy_on_every_labelled_seed_sentence() -> None:
    """No split of eval/cell-roles.jsonl was trained on: the bar holds over all of them together."""
    right = sum(_accuracy(split) * n for split, n in (("fit", 56), ("check", 20), ("test", 43)))
    assert right / 119 >= TEST_GATE, f"role accuracy over the 119 labelled seed sentences {right / 119:.3f}"


def test_roles_of_a_typical_abstract() -> None:
    sentences = [
        "However, large models struggle with long inputs because attention is quadratic.",
        "In this work, we introduce X, a method that compresses memory.",
        "X organises tokens into events.",
        "Experiments on three benchmarks show that X outperforms RAG by 4 points.",
        "Our code is available at https://example.org/x.",
    ]
    assert sentence_roles(sentences) == ["problem", "approach", "approach", "result", "other"]
