"""Answers you can trust (issue 13), on the real index with a scripted model that echoes what it is told:
a detail the abstract does not give gets "not stated" (naming the paper, citing nothing); a name no paper
mentions gets an abstention; a false premise is corrected from the abstract, never echoed."""

from __future__ import annotations

from assistant.answer.render import answer_to_dict
from tests.support.fake_openai_server import FakeOpenAIServer

CODEC = "000_43469673d6f8aaa0.txt#19"
CONTROLAR = "004_c45bebc30e22eceb.txt#5"
HCOMP = "000_43469673d6f8aaa0.txt#4"


def _ask(scripted_assistant, question: str, reply: str):  # type: ignore[no-untyped-def]
    with FakeOpenAIServer([reply]) as server, scripted_assistant(server) as assistant:
        return assistant.new_session().ask(question), server.requests


def test_detail_not_in_the_abstract_is_not_stated(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, requests = _ask(scripted_assistant, "How many parameters does the transformer-based speech codec have?",
                            "The codec has 700 million parameters.")
    assert answer.mode == "not_stated" and answer.abstained and not answer.citations and not requests
    assert answer.sources[0].paper.id == CODEC
    assert "don't state" in answer.notice and answer.sources[0].paper.title in answer.notice
    assert "does not answer" in answer.notice  # the closest sentence is offered, marked as such
    out = answer_to_dict(answer)
    assert out["abstained"] is True and out["citations"] == [] and out["mode"] == "not_stated"


def test_a_name_no_paper_mentions_abstains(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant, "What does the HyenaDNA-XL paper propose for genomic sequences?",
                     "HyenaDNA-XL proposes long convolutions.")
    assert answer.mode == "abstained" and not answer.citations
    assert "HyenaDNA-XL" in answer.notice


def test_false_premise_is_corrected_not_echoed(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, requests = _ask(scripted_assistant,
                            "Since ControlAR is a diffusion model, how does it attach spatial controls to ControlNet?",
                            "ControlAR is a diffusion model that attaches spatial controls to ControlNet.")
    assert "assumes" in answer.notice and "ControlAR is a diffusion model" in answer.notice
    assert [c.paper.id for c in answer.citations] == [CONTROLAR]
    assert "autoregressive" in answer.text and "ControlAR is a diffusion model" not in answer.text
    assert not requests  # the model, which would echo the premise, is not asked


def test_true_premise_goes_on_to_a_normal_answer(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant,
                     "Since ControlAR is an autoregressive framework, how does it integrate spatial controls?",
                     "Nothing verifiable.")
    assert "assumes" not in answer.notice
    assert CONTROLAR in [c.paper.id for c in answer.citations]


LOOSE = ("The horizon generalization paper is a theoretical work in the field of machine learning, specifically "
         "focused on planning and reinforcement learning. [1]")


def test_the_small_profile_keeps_only_near_restatements(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """A loose, vague sentence (support ~0.63: above Settings.support_threshold, below SMALL_MODEL_MIN_SUPPORT)
    is kept from a capable model but dropped from the small one, whose answer then quotes the abstract."""
    from assistant.tuning import SMALL_MODEL_MIN_SUPPORT

    question = "What is the horizon generalization paper about?"
    with FakeOpenAIServer([LOOSE]) as server, scripted_assistant(server, llm_profile="capable") as assistant:
        capable = assistant.new_session().ask(question)
    assert capable.mode == "generated" and "theoretical work" in capable.text
    support = capable.sentences[0].support
    assert 0.55 <= support < SMALL_MODEL_MIN_SUPPORT, support
    with FakeOpenAIServer([LOOSE] * 3) as server, scripted_assistant(server, llm_profile="small") as assistant:
        small = assistant.new_session().ask(question)
    assert "theoretical work" not in small.text and small.citations  # quoted from the abstract instead
    assert all(s.text in small.citations[0].paper.text for s in small.sentences if s.support < 1.0)


def test_what_is_x_quotes_the_sentence_that_introduces_x(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant, "What is HComP-Net?", "Nothing verifiable here.")
    assert answer.mode == "extractive"
    assert "we introduce the framework of Hierarchy aligned Commonality through Prototypical Networks (HComP-Net)" in answer.text
    assert {c.paper.id for c in answer.citations} == {HCOMP}


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
    """No abstract is about federated learning; the nearest paper is offered as the closest match, not as
    "the paper"; a question that clearly matches its paper still gets "The paper is"."""
    far, _ = _ask(scripted_assistant, "Which paper proposes a federated learning method with differential privacy guarantees?",
                  "Nothing verifiable here.")
    assert far.text.startswith("The closest match in the abstracts is “"), far.text[:120]
    near, _ = _ask(scripted_assistant, "Which paper makes a graph transformer scale to large graphs by running its global "
                   "self-attention over the feature dimension instead of across nodes?", "Nothing verifiable here.")
    assert near.text.startswith("The paper is “DUALFormer: Dual Graph Transformer”."), near.text[:120]


def test_a_comparison_by_code_quotes_what_each_paper_contributes(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """Without model sentences, a comparison's text is each paper's contribution sentence (what it does),
    not a later sentence of the approach part that happens to fit the question's words."""
    answer, _ = _ask(scripted_assistant, "The conformal prediction paper and the average-treatment-effect paper both aim at "
                     "more precise uncertainty quantification. What technique does each use?", "Nothing verifiable here.")
    assert answer.intent == "compare" and len(answer.citations) == 2
    assert "combines Bayesian model averaging (BMA) with" in answer.text and "we propose a new method that estimates the ATE" in answer.text


def test_an_answer_by_code_quotes_what_is_asked_not_how_the_paper_is_named(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """The question names the paper by its title's words; the quoted sentences are chosen for what it asks
    (the number of objects), not for those words (the opening sentence repeats the title)."""
    answer, _ = _ask(scripted_assistant, "How many objects does the universal dexterous grasping paper test on?",
                     "Nothing verifiable here.")
    assert "3,200 objects" in answer.text
    assert "Universal dexterous grasping across diverse objects presents" not in answer.text


def test_a_question_that_asks_two_things_gets_a_sentence_for_each(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    answer, _ = _ask(scripted_assistant, "Which paper finds transformers less sensitive to token perturbations than LSTMs, and "
                     "what does it say low sensitivity correlates with?", "Nothing verifiable here.")
    assert "We show that transformers have lower sensitivity than MLPs" in answer.text and "robustness" in answer.text
