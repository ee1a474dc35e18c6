"""Answers you can trust (issue 13), on the real index with a scripted model that echoes what it is told.
Properties, not exact answer strings (issue 26.3); each behaviour is checked on a question the rule was
written for (marked "regression") and on held-out ones (eval/test.jsonl, or unseen when added in issue 26):
a detail the abstract does not give gets "not stated" (naming the paper, citing nothing); a name no paper
mentions gets an abstention; a false premise is corrected from the abstract, never echoed."""

from __future__ import annotations

from typing import Any

import pytest

from assistant.answer.render import answer_to_dict
from tests.support.fake_openai_server import FakeOpenAIServer

CODEC = "000_43469673d6f8aaa0.txt#19"
CONTROLAR = "004_c45bebc30e22eceb.txt#5"
HCOMP = "000_43469673d6f8aaa0.txt#4"
T2V = "004_c45bebc30e22eceb.txt#2"
HYPERFACE = "000_43469673d6f8aaa0.txt#18"
ADAMCB = "004_c45bebc30e22eceb.txt#3"
INFOALIGN = "004_c45bebc30e22eceb.txt#1"
CAD = "004_c45bebc30e22eceb.txt#14"
SADR = "000_43469673d6f8aaa0.txt#9"
SENSITIVITY = "000_43469673d6f8aaa0.txt#11"


def _ask(scripted_assistant, question: str, reply: str, denied: str = ""):  # type: ignore[no-untyped-def]
    """Ask with a scripted model that answers ``reply``, whose self-check says no to ``denied`` (yes to all else) and
    which reads no abstract as stating the answer to a question (the stated check: it decides with the exact tests
    whether a detail is "not stated")."""

    def self_check(payload: dict[str, Any]) -> float:
        asked = payload["messages"][-1]["content"]
        if "state the answer to this question" in asked:
            return 0.05
        return 0.05 if denied and f"Sentence: {denied}" in asked else 0.95

    with FakeOpenAIServer([reply], yes_probability=self_check) as server, scripted_assistant(server) as assistant:
        return assistant.new_session().ask(question), server.requests


@pytest.mark.parametrize(
    ("question", "paper"),
    [
        ("How many parameters does the transformer-based speech codec have?", CODEC),  # dev q036 (regression)
        ("What GPU did the T2V-Turbo-v2 authors train on?", T2V),  # held-out t025
    ],
)
def test_detail_not_in_the_abstract_is_not_stated(scripted_assistant, question: str, paper: str) -> None:  # type: ignore[no-untyped-def]
    answer, requests = _ask(scripted_assistant, question, "The codec has 700 million parameters.")
    assert answer.mode == "not_stated" and answer.abstained and not answer.citations and not requests
    assert answer.sources[0].paper.id == paper
    assert answer.sources[0].paper.title in answer.notice  # names the paper it is about
    assert "700 million" not in answer.text
    out = answer_to_dict(answer)
    assert out["abstained"] is True and out["citations"] == [] and out["mode"] == "not_stated"


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("What does the HyenaDNA-XL paper propose for genomic sequences?", "HyenaDNA-XL"),
        ("Which paper proposes a protein folding model that beats AlphaFold?", "AlphaFold"),  # held-out t026
    ],
)
def test_a_name_no_paper_mentions_abstains(scripted_assistant, question: str, name: str) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant, question, f"{name} proposes long convolutions.")
    assert answer.mode == "abstained" and not answer.citations
    assert name in answer.notice


@pytest.mark.parametrize(
    ("question", "premise", "paper", "correction"),
    [
        ("Since ControlAR is a diffusion model, how does it attach spatial controls to ControlNet?",
         "ControlAR is a diffusion model", CONTROLAR, "autoregressive"),  # dev q040 (regression)
        ("Since HyperFace collects real face photos from the Internet with consent, how many people are in its "
         "dataset?",
         "HyperFace collects real face photos from the Internet with consent", HYPERFACE, "synthetic"),  # held-out t031
    ],
)
def test_false_premise_is_corrected_not_echoed(scripted_assistant, question: str, premise: str, paper: str,  # type: ignore[no-untyped-def]
                                               correction: str) -> None:
    # the premise is checked as a claim about the paper: the model, asked whether the abstract states it, says no
    answer, requests = _ask(scripted_assistant, question, f"{premise}.", denied=premise)
    assert "assumes" in answer.notice and premise in answer.notice
    assert [c.paper.id for c in answer.citations] == [paper]
    assert correction in answer.text and premise not in answer.text
    assert not requests  # the model, which would echo the premise, is not asked


def test_true_premise_goes_on_to_a_normal_answer(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant,
                     "Since ControlAR is an autoregressive framework, how does it integrate spatial controls?",
                     "Nothing verifiable.")
    assert "assumes" not in answer.notice
    assert CONTROLAR in [c.paper.id for c in answer.citations]


@pytest.mark.parametrize(
    ("name", "paper"),
    [
        ("HComP-Net", HCOMP),  # from the "what is X" questions the rule was written for (regression)
        ("AdamCB", ADAMCB), ("InfoAlign", INFOALIGN), ("SADR", SADR),  # unseen when written
        pytest.param("CADPrompt", CAD, marks=pytest.mark.xfail(strict=True, reason=(
            "known defect: the paper's contribution sentence ('we introduce CADCodeVerify') wins over the one "
            "introducing CADPrompt, the benchmark the question names"))),
    ],
)
def test_what_is_x_quotes_the_sentence_that_introduces_x(scripted_assistant, name: str, paper: str) -> None:  # type: ignore[no-untyped-def]
    """Each of these abstracts has one sentence that introduces the name ("we introduce ... (X)"), read by
    hand; the answer built by code starts with it and cites only that paper."""
    answer, _ = _ask(scripted_assistant, f"What is {name}?", "Nothing verifiable here.")
    assert answer.mode == "extractive"
    assert {c.paper.id for c in answer.citations} == {paper}
    first = answer.sentences[0].text
    assert name in first.replace("*", "") or name in first, first
    assert "introduce" in first, first


def test_a_question_naming_a_paper_reads_only_papers_that_name_it(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """The model is given the paper that names HComP-Net, not a neighbour that never does, so a true sentence
    about the neighbour (what the 135M model wrote for this question) cannot be cited as the answer."""
    with FakeOpenAIServer(["The Lightweight Multi-modal App Control (LiMAC) is for efficient interactions and control "
                           "across various Android apps. [2]"]) as server, scripted_assistant(server) as assistant:
        answer = assistant.new_session().ask("What is HComP-Net?")
        prompt = server.requests[0]["messages"][-1]["content"]
    assert "LiMAC" not in answer.text and {c.paper.id for c in answer.citations} == {HCOMP}
    assert "Lightweight Neural App Control" not in prompt


def test_an_unsure_which_paper_answer_says_closest_match(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """No abstract is about federated learning: the nearest paper is never presented as "the paper"; the answer
    offers it as the closest match or says the abstracts do not cover the question (since the paper-BM25 list of
    issue 44 joined the fusion, the second-ranked paper changed and the answer abstains, which eval/README scores
    as right for a paper that is not in the corpus). (Held-out t027, speech recognition, still gets "The paper
    is": see test_held_out_answers.)"""
    far, _ = _ask(scripted_assistant,
                  "Which paper proposes a federated learning method with differential privacy guarantees?",
                  "Nothing verifiable here.")
    assert not far.text.startswith("The paper is"), far.text[:120]
    assert far.text.startswith(("The closest match in the abstracts is “", "The indexed abstracts don't cover")), (
        far.text[:120]
    )
    if far.text.startswith("The indexed abstracts don't cover"):
        assert not far.citations, far.text[:120]


@pytest.mark.parametrize(
    ("question", "paper_title"),
    [
        ("Which paper makes a graph transformer scale to large graphs by running its global self-attention over the "
         "feature dimension instead of across nodes?", "DUALFormer: Dual Graph Transformer"),  # dev q001 (regression)
        ("Which paper adds an identity mapping and a feed-forward layer to a light decoder so that learned routing "
         "solvers generalize better?", "Rethinking Light Decoder-based Solvers for Vehicle Routing Problems"),  # t006
        ("Which paper models point processes with a diffusion model that needs no intensity function?",
         "Unlocking Point Processes through Point Set Diffusion"),  # held-out t003
    ],
)
def test_a_question_that_clearly_matches_its_paper_says_the_paper_is(scripted_assistant, question: str,  # type: ignore[no-untyped-def]
                                                                     paper_title: str) -> None:
    near, _ = _ask(scripted_assistant, question, "Nothing verifiable here.")
    assert near.text.startswith(f"The paper is “{paper_title}”."), near.text[:160]


#: Each paper's contribution sentence (what it does), read by hand: a fragment of it, and of the held-out
#: comparisons (t017, t018) the cause of the known defect.
CONTRIBUTIONS = [
    pytest.param("The conformal prediction paper and the average-treatment-effect paper both aim at more precise "
                 "uncertainty quantification. What technique does each use?",
                 ["combines Bayesian model averaging (BMA) with", "we propose a new method that estimates the ATE"],
                 id="fresh-f019"),
    pytest.param("How do HyperFace and A-Bench differ in the kind of dataset they build?",
                 ["propose a new synthetic dataset generation approach, called HyperFace", "we introduce **A-Bench**"],
                 id="held-out-t017"),  # a known defect until the trained role classifier (issue 23)
    pytest.param("Compare ControlAR and CMLoRA: how does each steer what the image generator produces?",
                 ["we introduce ControlAR", "Cached Multi-LoRA (CMLoRA)"],
                 id="held-out-t018"),  # a known defect until the trained role classifier (issue 23)
]


@pytest.mark.parametrize(("question", "fragments"), CONTRIBUTIONS)
def test_a_comparison_by_code_quotes_what_each_paper_contributes(scripted_assistant, question: str,  # type: ignore[no-untyped-def]
                                                                 fragments: list[str]) -> None:
    """Without model sentences, a comparison's text is each paper's contribution sentence (what it does),
    not a later sentence of the approach part that happens to fit the question's words."""
    answer, _ = _ask(scripted_assistant, question, "Nothing verifiable here.")
    assert answer.intent == "compare" and len(answer.citations) == 2
    for fragment in fragments:
        assert fragment in answer.text, (fragment, answer.text[:500])


def test_an_answer_by_code_quotes_what_is_asked_not_how_the_paper_is_named(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """The question names the paper by its title's words; the quoted sentences are chosen for what it asks
    (the number of objects), not for those words (the opening sentence repeats the title)."""
    answer, _ = _ask(scripted_assistant, "How many objects does the universal dexterous grasping paper test on?",
                     "Nothing verifiable here.")
    assert "3,200 objects" in answer.text
    assert "Universal dexterous grasping across diverse objects presents" not in answer.text


def test_a_question_that_asks_two_things_gets_a_sentence_for_each(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant,
                     "Which paper finds transformers less sensitive to token perturbations than LSTMs, and "
                     "what does it say low sensitivity correlates with?", "Nothing verifiable here.")
    assert [c.paper.id for c in answer.citations][:1] == [SENSITIVITY]
    assert "lower sensitivity" in answer.text and "robustness" in answer.text  # both parts answered
