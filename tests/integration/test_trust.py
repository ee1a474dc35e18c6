"""Answers you can trust (issue 13), on the real index with a scripted model that echoes what it is told:
a detail the abstract does not give gets "not stated" (naming the paper, citing nothing); a name no paper
mentions gets an abstention; a false premise is corrected from the abstract, never echoed."""

from __future__ import annotations

from assistant.render import answer_to_dict
from tests.support.fake_openai_server import FakeOpenAIServer

CODEC = "000_43469673d6f8aaa0.txt#19"
CONTROLAR = "004_c45bebc30e22eceb.txt#5"


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
