"""AnswerBuilder: sentences shown so that each reads on its own (issue 25, part 2)."""

from __future__ import annotations

from assistant.answer.builder import AnswerBuilder, is_name, paper_spelling, unfuse_title
from assistant.types import AnswerSentence, Evidence, Paper, PaperHit

SENTENCES = (
    "Graph Transformers (GTs) have shown promising performance.",
    "However, GTs face scalability challenges on large graphs.",
    "To address these limitations, this paper introduces a novel GT architecture, dubbed DUALFormer.",
    "DUALFormer runs self-attention over the feature dimension.",
    "It also keeps a GNN over the nodes.",
)
PAPER = Paper(
    "p#1",
    "ICLR 2025 Papers",
    "DUALFormer: Dual Graph Transformer",
    ("A B",),
    "https://x.example/p",
    " ".join(SENTENCES),
    "p",
    1,
)
HIT = PaperHit(PAPER, 0.1, 0.7, (), SENTENCES, (0.1, 0.2, 0.9, 0.5, 0.6))


def _builder() -> AnswerBuilder:
    return AnswerBuilder("Which paper?", [HIT], [HIT], "m", "lookup", "Which paper?")


def _ev(i: int) -> Evidence:
    return Evidence(PAPER.id, i, SENTENCES[i], HIT.sentence_scores[i])


def test_a_quote_that_leans_on_its_predecessor_is_shown_with_it() -> None:
    b = _builder()
    b.quote(_ev(2))  # "To address these limitations, …" needs "However, GTs face …" (which reads on its own)
    answer = b.build("extractive")
    assert [s.text for s in answer.sentences] == [" ".join(SENTENCES[1:3])]
    assert answer.sentences[0].text in PAPER.text and answer.sentences[0].citations == (1,)
    assert answer.citations[0].evidence == SENTENCES[1:3]  # each sentence highlighted in the abstract


def test_no_context_is_repeated_when_the_predecessor_was_just_shown() -> None:
    b = _builder()
    b.quote(_ev(3))
    b.quote(_ev(4))  # "It also …" right after "DUALFormer runs …": readable as it is
    assert [s.text for s in b.build("extractive").sentences] == [SENTENCES[3], SENTENCES[4]]


def test_a_sentence_that_stands_alone_is_quoted_alone() -> None:
    b = _builder()
    b.quote(_ev(3))
    assert [s.text for s in b.build("extractive").sentences] == [SENTENCES[3]]


def test_a_model_sentence_loses_a_glued_title_and_gets_its_context() -> None:
    b = _builder()
    fused = ("DualFormer: Dual Graph Transformer To address these limitations, this paper introduces a novel GT "
             "architecture, dubbed DualFormer.")
    b.add(AnswerSentence(fused, (1,), 0.8), SENTENCES[2])
    texts = [s.text for s in b.build("generated").sentences]
    assert texts == [
        SENTENCES[1],  # the abstract's own sentence that makes it readable, quoted first
        "To address these limitations, this paper introduces a novel GT architecture, dubbed DUALFormer.",
    ]


def test_title_and_spelling_helpers() -> None:
    assert unfuse_title("DUALFormer: Dual Graph Transformer To address this, X.", [HIT]) == "To address this, X."
    assert unfuse_title("DUALFormer: Dual Graph Transformer runs attention.", [HIT]) == (
        "DUALFormer: Dual Graph Transformer runs attention."  # a title as the subject is a sentence
    )
    assert (
        paper_spelling("Dualformer and gts beat dualFORMER-like models.", [HIT])
        == "DUALFormer and GTs beat dualFORMER-like models."
    )
    assert is_name("DUALFormer") and is_name("GPT-4o") and is_name("LeReT") and not is_name("Self-Attention")
    assert paper_spelling("global self-attention", [HIT]) == "global self-attention"  # a capitalised word is no name


def test_a_sentence_shown_earlier_is_not_repeated_as_context() -> None:
    """A quote that leans on a sentence shown earlier in the answer (not just before it) is shown without repeating
    that sentence: at 10k an answer showed "We propose a new variant of the Adam optimizer …" twice, alone and again
    in front of "We achieve this by …"."""
    b = _builder()
    b.quote(_ev(3))  # "DUALFormer runs self-attention …"
    b.quote(_ev(1))  # another sentence in between
    b.quote(_ev(4))  # "It also keeps …" leans on sentence 3, already shown
    texts = [s.text for s in b.build("extractive").sentences]
    assert texts == [SENTENCES[3], SENTENCES[1], SENTENCES[4]]
    b = _builder()
    b.quote(_ev(1))  # "However, GTs face …"
    b.quote(_ev(3))
    b.add(AnswerSentence("To address these limitations, the paper introduces DUALFormer.", (1,), 0.8), SENTENCES[2])
    texts = [s.text for s in b.build("generated").sentences]
    assert texts.count(SENTENCES[1]) == 1 and len(texts) == 3  # its context was shown already: not again
