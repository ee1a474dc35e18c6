"""CI gates for the citation verifier, through the answerer's own Attributor as ``assistant eval-claims`` runs it,
with the real bundled 1.5B model doing the self-check (the default writer checks its own sentences), on the
session's real index of seeds/.

* every third claim of the ``test`` split of ``eval/claims-seeds-2.jsonl`` (16 of 47 claims, written blind for
  issue 40 by a session that never saw the code; nothing was chosen on it): gated at what those claims scored in
  the last full run (``benchmarks/verifier_claims.sh``, docs/results/issue59) less one claim either way
  (:data:`HELD_OUT_MARGIN`). The issue's targets (0.90 / 0.90) are **not** met, so this gate only stops
  regressions.
* the report's shape, on the same claims.

Slow (about 7 s a claim on 2 cores: each claim's abstract is read anew), so one model server, one report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.service import Assistant

pytestmark = [pytest.mark.llm, pytest.mark.slow]  # slow: ./scripts/test.sh --all (CI)

REPO = Path(__file__).resolve().parents[2]
#: Every third claim of claims-seeds-2 test (7 supported, 9 unsupported), as scored in the full run with the
#: shipped threshold: supported kept, unsupported dropped, wrong-paper citations. Whole split at 6a82211 (the reading
#: as one paragraph, 5b59f1a): 0.700 / 0.741 / 1; when the self-check shipped (issue 40): 0.650 / 0.889 / 0 — the
#: subset's second false claim kept since ("The method can sustain over 90% performance ...", P(yes) 0.834 then
#: 0.868 against the threshold 0.85), which CI of stop 63 caught.
HELD_OUT_MEASURED = (0.429, 0.778, 0)
#: One claim either way (1/7 of the supported, 1/9 of the unsupported): a P(yes) within a few hundredths of the
#: threshold may move with the server's cached reading; two claims lost is a regression.
HELD_OUT_MARGIN = (1 / 7 + 0.01, 1 / 9 + 0.01)
HELD_OUT_STEP = 3


@pytest.fixture(scope="module")
def assistant(bundled_assistant: Assistant) -> Assistant:
    return bundled_assistant  # the session's 1.5B server (tests/conftest.py local_llm)


@pytest.fixture(scope="module")
def report(assistant: Assistant) -> dict[str, Any]:
    from assistant.eval.claims_eval import evaluate_claims, load_claims

    items = [i for i in load_claims(REPO / "eval" / "claims-seeds-2.jsonl") if i.split == "test"][::HELD_OUT_STEP]
    a = assistant.answerer
    return evaluate_claims(assistant.retriever, a.embedder, items, assistant.settings.verify, backend=a.backend)


def test_held_out_claims_do_not_regress(report: dict[str, Any]) -> None:
    overall = report["overall"]
    kept, dropped, wrong = HELD_OUT_MEASURED
    assert overall["n"] == 16
    assert overall["supported_kept"] >= kept - HELD_OUT_MARGIN[0], overall
    assert overall["unsupported_dropped"] >= dropped - HELD_OUT_MARGIN[1], overall
    assert overall["wrong_paper_citations"] <= wrong, overall


def test_claims_report_shape(assistant: Assistant, report: dict[str, Any]) -> None:
    assert report["latency_ms"]["attribute"]["n"] == 16
    for item in report["items"]:
        assert len(item["context_ids"]) == len(item["paper_ids"]) + 2  # the claim's papers + two distractors
        assert item["kept"] == bool(item["cited_ids"]) == (not item["reasons"])
        assert 0.0 <= item["probability"] <= 1.0
        assert item["verdict"] in ("supported", "not_stated", "constraint", "") and item["gold_verdict"]
        if item["verdict"] in ("supported", "not_stated"):  # the model was asked: its answer decided
            assert item["kept"] == (item["probability"] >= assistant.settings.verify.self_check_probability)
