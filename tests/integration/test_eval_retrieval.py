"""CI gates on retrieval-only evaluation, exactly as ``assistant eval --retrieval-only``, on the session's real
index of seeds/ (bundled MiniLM, built once in a temporary directory).

* Quality gate: the frozen held-out split eval/test.jsonl (written and committed in issue 26 before any run on
  it) must reach recall@5 >= 0.90 (the evaluation issue's bar; measured 1.000 when frozen).
* Regression band: eval/dev.jsonl is development data (thresholds, ASPECT_WEIGHT and rules were tuned on it), so
  its gate only catches regressions: recall@5 >= 0.95 (measured 0.985; one answerable item lost entirely would
  still pass, two would not). Passing it is not a quality figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "eval" / "dev.jsonl"
TEST = REPO / "eval" / "test.jsonl"
#: Minimum overall recall@5 on the held-out split (the evaluation issue's bar).
RECALL_AT_5_GATE = 0.90
#: Regression band on dev (measured 0.985 when set).
DEV_RECALL_AT_5_BAND = 0.95


@pytest.fixture(scope="module")
def retrieval_report(seeded_settings, embed_model) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from assistant.eval.evaluation import evaluate_retrieval, load_items
    from assistant.retrieve.retrieval import PaperRetriever

    retriever = PaperRetriever.open(seeded_settings, embed_model)
    assert len(retriever.papers) == 38
    return evaluate_retrieval(retriever, load_items(DEV), (1, 3, 5, 10))


def test_held_out_recall_at_5_gate(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    from assistant.eval.evaluation import evaluate_retrieval, load_items
    from assistant.retrieve.retrieval import PaperRetriever

    report = evaluate_retrieval(PaperRetriever.open(seeded_settings, embed_model), load_items(TEST), (1, 3, 5, 10))
    overall = report["overall"]
    assert overall["n"] == 32
    assert overall["recall@5"] >= RECALL_AT_5_GATE, f"held-out recall@5 {overall['recall@5']:.3f} < {RECALL_AT_5_GATE}"


def test_dev_recall_at_5_has_not_regressed(retrieval_report: dict[str, Any]) -> None:
    """Regression band on development data (see module docstring), not a quality gate."""
    overall = retrieval_report["overall"]
    assert overall["n"] == 42
    assert overall["recall@5"] >= DEV_RECALL_AT_5_BAND, \
        f"dev recall@5 {overall['recall@5']:.3f} < {DEV_RECALL_AT_5_BAND}"


def test_dev_report_shape(retrieval_report: dict[str, Any]) -> None:
    assert list(retrieval_report["overall"]) == ["n", "recall@1", "recall@3", "recall@5", "recall@10"]
    assert retrieval_report["by_type"]["unanswerable"]["recall@5"] is None
    for item in retrieval_report["items"]:
        assert len(item["retrieved_ids"]) <= 10
        assert all("#" in pid for pid in item["retrieved_ids"])
    recalls = [retrieval_report["overall"][f"recall@{k}"] for k in (1, 3, 5, 10)]
    assert recalls == sorted(recalls)  # recall@k never decreases with k


def test_one_paper_questions_rank_their_paper_first_with_aspect_coverage(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    """Paraphrased "which paper" questions describe their paper by several aspects in other words; with
    aspect coverage (what lookups and summaries search with) each ranks its paper first. Checked on the
    held-out paraphrases of eval/test.jsonl: ``tuning.ASPECT_WEIGHT`` was fitted to dev's three."""
    from assistant.eval.evaluation import load_items
    from assistant.retrieve.retrieval import PaperRetriever

    retriever = PaperRetriever.open(seeded_settings, embed_model)
    items = [it for it in load_items(TEST) if it.type == "paraphrase"]
    assert len(items) == 3
    firsts = {it.id: retriever.retrieve(it.question, top_k=1, aspects=True)[0].paper.id for it in items}
    assert firsts == {it.id: it.gold_ids[0] for it in items}
