"""CI gates for the citation verifier, through the answerer's own Attributor as ``assistant eval-claims`` runs it
(no LLM), on the session's real index of seeds/.

* ``eval/claims-dev.jsonl`` (72 claims): the default ``rules`` verifier was fitted on it, so its gate (supported
  kept >= 0.90, unsupported dropped >= 0.95) is a regression check on tuned data, not a measure of quality.
* ``eval/claims-seeds-test.jsonl`` (90 claims on the 38 seeds): written by a session that had not seen the
  verifier and frozen before issue 22's work; nothing was chosen on it. Gated for both verifiers at the figure
  measured when the support model was shipped minus :data:`HELD_OUT_MARGIN` (docs/evaluation.md, "Citation
  verifier"): the issue's targets (0.85 / 0.90) are **not** met by either, so these gates only stop regressions.
* the ``test`` split of ``eval/claims-seeds-2.jsonl`` (47 claims, written blind for issue 40), gated the same way
  at the figures measured in issue 40 (docs/results/issue40/README.md).
No wrong-paper citation is allowed on dev; the held-out set allows what was measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.verify.verifiers import VERIFIER_NAMES

REPO = Path(__file__).resolve().parents[2]
CLAIMS = REPO / "eval" / "claims-dev.jsonl"
#: Held-out claim sets on the seeds: name -> (file, split or None for every claim).
HELD_OUT = {
    "claims-seeds-test": (REPO / "eval" / "claims-seeds-test.jsonl", None),
    "claims-seeds-2-test": (REPO / "eval" / "claims-seeds-2.jsonl", "test"),
}
#: Targets of the citation-verifier issue, on the dev claims the rules were fitted to.
SUPPORTED_KEPT_GATE = 0.90
UNSUPPORTED_DROPPED_GATE = 0.95
#: Measured on the held-out seeds claims (verifier -> set -> supported kept, unsupported dropped, wrong-paper
#: citations).
HELD_OUT_MEASURED = {
    "rules": {"claims-seeds-test": (0.805, 0.673, 2), "claims-seeds-2-test": (0.950, 0.630, 0)},
    "model": {"claims-seeds-test": (0.707, 0.612, 1), "claims-seeds-2-test": (0.750, 0.630, 0)},
}
HELD_OUT_MARGIN = 0.05


def _report(  # type: ignore[no-untyped-def]
    settings, embed_model, path: Path, verifier: str = "rules", split: str | None = None
) -> dict[str, Any]:
    from assistant.eval.claims_eval import evaluate_claims, load_claims
    from assistant.index.embeddings import CachedEmbedder
    from assistant.retrieve.retrieval import PaperRetriever

    embedder = CachedEmbedder(embed_model)
    retriever = PaperRetriever.open(settings, embed_model, sentence_embedder=embedder)
    verify = settings.verify.model_copy(update={"verifier": verifier})
    items = [i for i in load_claims(path) if split is None or i.split == split]
    return evaluate_claims(retriever, embedder, items, verify)


@pytest.fixture(scope="module")
def claims_report(seeded_settings, embed_model) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return _report(seeded_settings, embed_model, CLAIMS)


def test_claims_gate(claims_report: dict[str, Any]) -> None:
    overall = claims_report["overall"]
    assert overall["n"] == 72
    assert overall["supported_kept"] >= SUPPORTED_KEPT_GATE, overall
    assert overall["unsupported_dropped"] >= UNSUPPORTED_DROPPED_GATE, overall
    assert overall["wrong_paper_citations"] == 0, [i["id"] for i in claims_report["items"] if i["wrong_citation"]]


def test_every_verifier_has_measured_held_out_figures() -> None:
    # a new verifier (a name in setting_groups.VerifierName) is measured before it ships: its figures go here
    assert set(HELD_OUT_MEASURED) == set(VERIFIER_NAMES), "measure the new verifier: assistant eval-claims --claims " \
        "eval/claims-seeds-test.jsonl with ASSISTANT_VERIFIER=<name>, then add its figures to HELD_OUT_MEASURED"
    assert all(set(sets) == set(HELD_OUT) for sets in HELD_OUT_MEASURED.values())


@pytest.mark.parametrize("verifier", VERIFIER_NAMES)
@pytest.mark.parametrize("held_out", sorted(HELD_OUT))
def test_held_out_claims_do_not_regress(seeded_settings, embed_model, verifier: str, held_out: str) -> None:  # type: ignore[no-untyped-def]
    path, split = HELD_OUT[held_out]
    overall = _report(seeded_settings, embed_model, path, verifier, split)["overall"]
    kept, dropped, wrong = HELD_OUT_MEASURED[verifier][held_out]
    assert overall["n"] == {"claims-seeds-test": 90, "claims-seeds-2-test": 47}[held_out]
    assert overall["supported_kept"] >= kept - HELD_OUT_MARGIN, overall
    assert overall["unsupported_dropped"] >= dropped - HELD_OUT_MARGIN, overall
    assert overall["wrong_paper_citations"] <= wrong, overall


def test_claims_report_shape(claims_report: dict[str, Any]) -> None:
    assert set(claims_report["by_kind"]) == {"paraphrase", "synthesis", "multi_paper", "number", "number_swap",
                                             "entity_swap", "negation", "relation_swap", "wrong_paper", "overclaim"}
    assert claims_report["by_kind"]["negation"]["supported_kept"] is None
    assert claims_report["overall"]["balanced_accuracy"] is not None
    assert claims_report["latency_ms"]["attribute"]["n"] == 72
    for item in claims_report["items"]:
        assert len(item["context_ids"]) == len(item["paper_ids"]) + 2  # the claim's papers + two distractors
        assert item["kept"] == bool(item["cited_ids"]) == (not item["reasons"])
        assert 0.0 <= item["probability"] <= 1.0
        assert item["verdict"] in ("rules", "constraint", "") and item["gold_verdict"] == ""  # claims-dev has none
