"""The shipped support model (assistant/verify/support_model.py): loading, its input contract, and what it
decides, as properties over data nobody fitted to.

The properties run over every sentence of the 38 seed abstracts, which were excluded from the training
data (scripts/train_verifier.py drops the seed papers by title) and on which no threshold was chosen (the
threshold comes from the claims-corpus validation split + eval/claims-dev.jsonl). Each sentence is restated
in the third person (supported) and edited by the training recipe's generators (scripts/verifier_data.py,
seed 22): a negation added or removed, the sides of a comparison or an opposite swapped in, a number
changed, a clause of another seed paper appended, a scope word added. The gates sit a labelled regression
margin under the shares measured when the model was trained (MODEL_CARD.md, "Properties on the seed
abstracts"); they replace the hand-picked sentences the old word-list checks were tested on.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from assistant.errors import ConfigError
from assistant.ingest.chunking import split_sentences
from assistant.ingest.corpus import read_papers
from assistant.verify.support_model import MODEL_DIR, ONNX_FILE, SupportModel, load_support_model, model_meta

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import verifier_data as D  # noqa: E402

#: Measured share (MODEL_CARD.md) minus the regression margin REGRESSION_MARGIN.
REGRESSION_MARGIN = 0.05
MEASURED = {  # kind -> (label, share decided right at the shipped threshold when trained); see MODEL_CARD.md
    "restate": (1, 0.97),  # 294 sentences
    "negation": (0, 0.88),  # 179
    "direction": (0, 0.12),  # 116: the model's weak spot
    "number": (0, 0.20),  # 34 (end to end, the hard number constraint drops all of them)
    "extra_clause": (0, 0.42),  # 294 (end to end, an invented affiliation/place is also a hard constraint)
    "scope": (0, 0.61),  # 101
}


@pytest.fixture(scope="module")
def model() -> SupportModel:
    return load_support_model()


def seed_pairs() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """kind -> [(claim, evidence)], generated from the seed abstracts (deterministic, seed 22)."""
    rng = random.Random(22)
    papers = read_papers([REPO / "seeds"])
    sentences = [[s for s in split_sentences(p.text) if 6 <= len(s.split()) <= 60] for p in papers]
    others = [s for ss in sentences for s in ss]
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {k: [] for k in MEASURED}
    for ss in sentences:
        for s in ss:
            edits = {
                "restate": s,
                "negation": D.flip_negation(s, rng),
                "direction": D.swap_direction(s, rng),
                "number": D.change_number(s, rng),
                "extra_clause": D.append_extra(s, rng.choice(others), rng),
                "scope": D.add_scope(s, rng),
            }
            for kind, claim in edits.items():
                if claim and (kind == "restate" or claim != s):
                    out[kind].append((D.third_person(claim, rng), (s,)))
    return out


def shares(model: SupportModel, threshold: float) -> dict[str, float]:
    result = {}
    for kind, pairs in seed_pairs().items():
        probs = model.probabilities(pairs)
        label = MEASURED[kind][0]
        result[kind] = sum((p >= threshold) == bool(label) for p in probs) / len(probs)
    return result


def test_probabilities_are_in_order_and_in_range(model: SupportModel) -> None:
    pairs = [("The authors propose a new benchmark.", ["We propose a new benchmark."]), ("Cats sleep.", ["Dogs bark."])]
    probs = model.probabilities(pairs)
    assert len(probs) == 2 and all(0.0 <= p <= 1.0 for p in probs)
    assert model.probabilities(pairs[::-1]) == pytest.approx(probs[::-1], abs=1e-5)  # batching changes nothing
    assert model.probabilities([]) == []


def test_shipped_model_is_small_int8_with_a_card() -> None:
    size = (MODEL_DIR / ONNX_FILE).stat().st_size
    assert size <= 30 * 1024 * 1024, size
    meta = model_meta()
    assert 0.0 < meta["threshold"] < 1.0 and meta["seed"] is not None
    assert (MODEL_DIR / "MODEL_CARD.md").read_text().count("threshold") >= 1


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing"):
        SupportModel(tmp_path / "nope.onnx", tmp_path / "tokenizer.json")


def test_decisions_on_unseen_abstracts_hold(model: SupportModel) -> None:
    measured = shares(model, model_meta()["threshold"])
    for kind, (_, expected) in MEASURED.items():
        assert measured[kind] >= expected - REGRESSION_MARGIN, (kind, measured)
