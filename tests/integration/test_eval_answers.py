"""`evaluate_answers` runs items (follow-ups as real conversations) through the UI's code path.

A wiring test on four dev items, not a quality gate: each assertion is the expected outcome of that item
(which can be false), and an item whose answer raised (an internal error) fails it through ``errors``."""

from __future__ import annotations

from pathlib import Path

from assistant.eval.evaluation import evaluate_answers, load_items
from assistant.llm.client import OpenAIChatBackend
from assistant.service import build_assistant
from tests.support.fake_openai_server import FakeOpenAIServer

DEV = Path(__file__).resolve().parents[2] / "eval" / "dev.jsonl"


def test_answer_eval_on_a_mix_of_item_types(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    items = [i for i in load_items(DEV) if i.id in {"q001", "q020", "q028", "q035"}]
    assert {i.type for i in items} == {"lookup", "compare", "followup", "unanswerable"}
    with FakeOpenAIServer(["Unverifiable filler text that no abstract supports at all."] * 20) as server:
        backend = OpenAIChatBackend(server.base_url, "k", "scripted", timeout_s=10)
        with build_assistant(seeded_settings, embed_model=embed_model, backend=backend) as assistant:
            report = evaluate_answers(assistant, items, (1, 5))
    assert report["errors"] == [], report["errors"]  # e.g. a broken verifier: every item would be listed here
    assert report["llm_failures"] == 0
    by_id = {r["id"]: r for r in report["items"]}
    assert by_id["q001"]["metrics"]["citation_recall"] == 1.0
    assert by_id["q028"]["metrics"]["citation_recall"] == 1.0  # follow-up resolved to A-Bench
    assert by_id["q035"]["abstained"] and by_id["q035"]["cited_ids"] == []  # awards: in no abstract
    assert by_id["q035"]["metrics"]["abstention_accuracy"] == 1.0
    assert by_id["q020"]["metrics"]["citation_recall"] == 1.0  # both compared papers cited
    assert by_id["q028"]["facts_hit"] == [True]  # "16" models, from the abstract, by code
    assert report["overall"]["recall@5"] >= 0.9
    assert set(report["overall"]) >= {"citation_precision", "citation_recall", "facts_hit", "abstention_accuracy"}
    assert "faithfulness" not in report["overall"]  # true by construction, so not reported (issue 26.2)
