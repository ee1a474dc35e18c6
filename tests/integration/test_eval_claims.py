"""CI gate for the citation verifier: ``eval/claims-dev.jsonl`` through the answerer's own Attributor must reach
supported_kept >= 0.90, unsupported_dropped >= 0.95 and no citation of a paper outside a claim's paper_ids.

Uses the session's real index of seeds/ (bundled MiniLM) and runs :func:`assistant.eval.claims_eval.evaluate_claims`
exactly as ``assistant eval-claims`` does (no LLM).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CLAIMS = REPO / "eval" / "claims-dev.jsonl"
#: Targets of the citation-verifier issue.
SUPPORTED_KEPT_GATE = 0.90
UNSUPPORTED_DROPPED_GATE = 0.95


@pytest.fixture(scope="module")
def claims_report(seeded_settings, embed_model) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from assistant.eval.claims_eval import evaluate_claims, load_claims
    from assistant.index.embeddings import CachedEmbedder
    from assistant.retrieve.retrieval import PaperRetriever

    embedder = CachedEmbedder(embed_model)
    retriever = PaperRetriever.open(seeded_settings, embed_model, sentence_embedder=embedder)
    return evaluate_claims(retriever, embedder, load_claims(CLAIMS), seeded_settings.support_threshold)


def test_claims_gate(claims_report: dict[str, Any]) -> None:
    overall = claims_report["overall"]
    assert overall["n"] == 72
    assert overall["supported_kept"] >= SUPPORTED_KEPT_GATE, overall
    assert overall["unsupported_dropped"] >= UNSUPPORTED_DROPPED_GATE, overall
    assert overall["wrong_paper_citations"] == 0, [i["id"] for i in claims_report["items"] if i["wrong_citation"]]


def test_claims_report_shape(claims_report: dict[str, Any]) -> None:
    assert set(claims_report["by_kind"]) == {"paraphrase", "synthesis", "multi_paper", "number", "number_swap",
                                             "entity_swap", "negation", "relation_swap", "wrong_paper", "overclaim"}
    assert claims_report["by_kind"]["negation"]["supported_kept"] is None
    assert claims_report["latency_ms"]["attribute"]["n"] == 72
    for item in claims_report["items"]:
        assert len(item["context_ids"]) == len(item["paper_ids"]) + 2  # the claim's papers + two distractors
        assert item["kept"] == bool(item["cited_ids"])
