"""Attribution with the real embedding model: supported sentences are cited to the right paper,
unsupported ones (wrong numbers, invented names, off-topic) are dropped, model [n] markers ignored. The model's
self-check is a stand-in that says yes (tests/support/stand_ins.py): what is dropped here, code drops."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.ingest.chunking import split_sentences
from assistant.ingest.corpus import read_papers
from assistant.llm.prompts import strip_citations
from assistant.types import PaperHit
from assistant.verify.attribution import Attributor, unmatched_facts
from tests.support.stand_ins import yes_verifier

REPO_SEEDS = Path(__file__).resolve().parents[2] / "seeds"


@pytest.fixture(scope="module")
def attributor(embed_model) -> Attributor:  # type: ignore[no-untyped-def]
    papers = {p.id: p for p in read_papers([REPO_SEEDS])}
    hits = [
        PaperHit(papers[pid], 1.0, 0.5, (), tuple(split_sentences(papers[pid].text)))
        for pid in ("000_43469673d6f8aaa0.txt#1", "000_43469673d6f8aaa0.txt#8")
    ]
    return Attributor(hits, embed_model.get_text_embedding_batch, yes_verifier())


def test_strip_citations() -> None:
    assert strip_citations("DUALFormer is fast [1][2].") == ("DUALFormer is fast.", (1, 2))
    assert strip_citations("X uses Y [1, 3] and Z.") == ("X uses Y and Z.", (1, 3))
    # a small model's lead-in goes; a name keeps its case, a plain word is capitalised
    assert strip_citations("The answer to this question is: EM-LLM uses Bayesian surprise. [1]") == (
        "EM-LLM uses Bayesian surprise.", (1,))
    assert strip_citations("The source of the question was: EM-LLM uses Bayesian surprise. [1]") == (
        "EM-LLM uses Bayesian surprise.", (1,))
    assert strip_citations("Based on the sources, the answer is: it works [2]") == ("It works", (2,))
    assert strip_citations("The source code is public. [1]") == ("The source code is public.",
                                                                 (1,))  # no colon: a sentence
    assert strip_citations("The source: qNBO uses BFGS. [1]") == ("qNBO uses BFGS.", (1,))
    assert strip_citations("Answer: it uses BFGS [1].") == ("It uses BFGS.", (1,))
    assert strip_citations("The answers are 29% and 17% [1].") == ("The answers are 29% and 17%.", (1,))
    # Markdown list markup is not what a sentence states: the item's marker, bold, and the next item's number that
    # the splitter leaves after the sentence's end go; a number that ends a sentence stays
    assert strip_citations("**Low-Rank Projection**: The authors use projection matrices [1]. 3.") == (
        "Low-Rank Projection: The authors use projection matrices.", (1,))
    assert strip_citations("2. **Adaptive Compression**: It adapts the rates. [1]") == (
        "Adaptive Compression: It adapts the rates.", (1,))
    assert strip_citations("- The authors release code [1].") == ("The authors release code.", (1,))
    assert strip_citations("The main contributions are: 1.") == ("The main contributions are:", ())
    assert strip_citations("Accuracy improves by 3.") == ("Accuracy improves by 3.", ())
    assert strip_citations("-3.5 dB is the loss [1].") == ("-3.5 dB is the loss.", (1,))


def test_a_part_read_from_one_paper_is_checked_against_that_paper_alone(attributor: Attributor) -> None:
    """A comparison's part is written from one paper's reading: only that paper can support it (it was cited to the
    other paper when the words fitted that one better, and checked against an abstract the model had not read)."""
    sentence = "DUALFormer performs the global self-attention on feature dimensions."
    own = attributor.attribute(sentence, 1)
    assert own is not None and own[0].citations == (1,)
    assert attributor.attribute(sentence, 2) is None
    assert attributor.check(sentence, 2)[0].reasons  # no evidence in the paper it was read from


def test_unmatched_facts_numbers_and_names() -> None:
    text = "We test 16 models on 2,864 images with GPT-4o."
    assert unmatched_facts("It uses 2864 images and 16 models.", text) == []
    assert unmatched_facts("It uses 17 models.", text) == ["17"]
    assert unmatched_facts("GPT-5 wins.", text) == ["GPT-5"]


def test_supported_sentence_cited_to_its_paper(attributor: Attributor) -> None:
    verdict = attributor.attribute("DUALFormer performs the global self-attention on feature dimensions [2].")
    assert verdict is not None
    sentence, evidence = verdict
    assert sentence.citations == (1,)  # the model's [2] is ignored: the support decides
    assert "feature dimensions" in evidence
    assert "[" not in sentence.text


def test_title_sentence_is_supported(attributor: Attributor) -> None:
    verdict = attributor.attribute("The paper is A-Bench: Are LMMs Masters at Evaluating AI-generated Images?")
    assert verdict is not None and verdict[0].citations == (2,) and verdict[0].check == "title"
    # a title cut short (a sentence split at its question mark) is not the title matched exactly: the self-check
    # reads it like any other sentence
    cut = attributor.attribute('The paper "A-Bench: Are LMMs Masters at Evaluating AI-generated Images?')
    assert cut is not None and cut[0].check == "title"
    part = attributor.attribute('The paper "A-Bench: Are LMMs Masters?')
    assert part is None or part[0].check != "title"


@pytest.mark.parametrize(
    "sentence",
    [
        "DUALFormer was trained on 7 billion tokens of web text.",  # number not in the abstract
        "The capital of France is Paris.",  # off-topic
        "MegaNet-9 beats every model on ImageNet.",  # invented name
        "Yes.",  # too short to check
        # authors the abstracts' records do not list, credited after a quoted title (conversations-5, stop 65)
        'The paper "DUALFormer: Dual Graph Transformer" by X. Zhang, Y. Liu, and J. Wang performs the global '
        "self-attention on feature dimensions.",
    ],
)
def test_unsupported_sentences_are_dropped(attributor: Attributor, sentence: str) -> None:
    assert attributor.attribute(sentence) is None


def test_prompt_markup_echoed_by_the_model_is_removed() -> None:
    assert strip_citations("[A-Bench: Are LMMs Masters?[1]") == ("A-Bench: Are LMMs Masters?", (1,))
    assert strip_citations("<source>DUALFormer is fast [2].</source>") == ("DUALFormer is fast.", (2,))


def test_numbers_need_context(embed_model) -> None:  # type: ignore[no-untyped-def]
    papers = {p.id: p for p in read_papers([REPO_SEEDS])}
    a_bench = papers["000_43469673d6f8aaa0.txt#8"]
    hit = PaperHit(a_bench, 1.0, 0.5, (), tuple(split_sentences(a_bench.text)))
    att = Attributor([hit], embed_model.get_text_embedding_batch, yes_verifier(),
                     question="How many AIGIs were sampled for A-Bench?")
    kept = att.attribute("A-Bench has 2864 AIGIs from 16 text-to-image models.")
    assert kept is not None and "2,864" in kept[1]  # thousands comma normalised when matching
    assert att.attribute("A-Bench has 2865 AIGIs.") is None  # a number the abstract does not state


def test_a_sentence_that_restates_the_question_is_decided_by_the_self_check(embed_model) -> None:  # type: ignore[no-untyped-def]
    """ "qNBO or AdamCB, which one relies on BFGS?": "qNBO uses BFGS." only restates the question, yet it is the
    answer. It is checked against the abstracts like any sentence (an echo rule dropped it before stop 73): kept when
    the self-check says yes, dropped when it says no, and never supported by a paper that does not state it."""
    papers = {p.id: p for p in read_papers([REPO_SEEDS])}
    hits = [
        PaperHit(papers[pid], 1.0, 0.5, (), tuple(split_sentences(papers[pid].text)))
        for pid in ("004_c45bebc30e22eceb.txt#8", "004_c45bebc30e22eceb.txt#3")  # qNBO, AdamCB
    ]
    question = "qNBO or AdamCB, which one relies on BFGS?"
    embed = embed_model.get_text_embedding_batch
    kept = Attributor(hits, embed, yes_verifier(), question).attribute("qNBO relies on BFGS.")
    assert kept is not None and kept[0].citations == (1,) and "BFGS" in kept[1]
    assert Attributor(hits, embed, yes_verifier(), question).attribute("AdamCB relies on BFGS.", 2) is None
    alignment, verdict = Attributor(hits, embed, yes_verifier(0.1), question).check("qNBO relies on BFGS.")
    assert verdict is None and alignment.score == 0.1  # the self-check said no: dropped on its word
