"""assistant.lang.discourse: which abstract sentences lean on the one before them (issue 25, part 2)."""

from __future__ import annotations

import pytest

from assistant.lang.discourse import depends_on_previous, readable_start

DEPENDENT = [
    "The latter ability is essential for tackling complex arithmetic and mathematical problems.",
    "To address this, prior studies have combined model editing with retrieval.",
    "To address these limitations, this paper introduces a novel GT architecture.",
    "It also improves throughput by 2x.",
    "2) Various generative models are utilized for AIGI creation.",
    "(ii) a verifier that checks each step.",
    "These results suggest that scaling helps.",
    "However, these methods ignore the feature dimension.",
    "As a result, the model overfits.",
    "In contrast, our method keeps all tokens.",
    "Such models are expensive to train.",
    "Building on it, we develop a sampler.",
    "Motivated by this observation, we propose X.",
    "They are trained on 5 datasets.",
]
STANDS_ALONE = [
    "This paper proposes DUALFormer, a graph transformer.",
    "In this work, we study grokking.",
    "We propose a benchmark for LMMs.",
    "Finally, we evaluate X on three benchmarks.",
    "However, the performance of GTs degrades on large graphs.",
    "It is unclear whether LMMs can evaluate AI-generated images.",
    "It has long been challenging to recover dynamic scenes from video.",
    "Large language models such as GPT-4 are widely used.",
    "In contrast to prior work, we model the feature dimension.",
    "Instead of sampling, we optimise directly.",
    "Next-token prediction is the standard objective.",
    "Both text and video data are abundant.",
    "We show that grokking occurs in transformers.",
    "Ultimately, 2,864 AIGIs from 16 text-to-image models are sampled.",
]


@pytest.mark.parametrize("sentence", DEPENDENT)
def test_sentences_that_need_their_predecessor(sentence: str) -> None:
    assert depends_on_previous(sentence)


@pytest.mark.parametrize("sentence", STANDS_ALONE)
def test_sentences_that_stand_alone(sentence: str) -> None:
    assert not depends_on_previous(sentence)


def test_readable_start_goes_back_to_the_first_sentence_that_stands_alone() -> None:
    sentences = ["GTs are slow.", "This limits them.", "To address this, we propose X.", "X is fast."]
    assert readable_start(sentences, 3) == 3
    assert readable_start(sentences, 2) == 0  # two back: "This limits them." leans on "GTs are slow."
    assert readable_start(sentences, 2, max_back=1) == 1
    assert readable_start(["It also works."], 0) == 0  # nothing before it: shown as it is
