"""How the answer path uses the self-check (assistant/answer/answerer.py, verifiers.SelfCheckVerifier), against a
scripted OpenAI-compatible server whose self-check answers are scripted too (real Chroma, real embeddings): only
sentences the model confirms are shown, in the model's order, each with its probability; a check that fails shows
nothing as checked; checks run while the model is still writing. What the real model decides is measured in
tests/e2e/test_eval_claims.py and docs/results/issue40."""

from __future__ import annotations

from typing import Any

from tests.support.fake_openai_server import PACED, FakeOpenAIServer

Q = "Which graph transformer runs global self-attention on the feature dimension?"
GOOD = "DUALFormer performs the global self-attention module on feature dimensions."
SECOND = "DUALFormer achieves a natural balance between local and global expressivity."


def about(sentence: str, p_yes: float, otherwise: float | None = 0.95):  # type: ignore[no-untyped-def]
    """Self-check answers: ``p_yes`` for the check of ``sentence``, ``otherwise`` for the others."""

    def answer(payload: dict[str, Any]) -> float | None:
        return p_yes if f"Sentence: {sentence}" in payload["messages"][-1]["content"] else otherwise

    return answer


def test_a_sentence_the_model_does_not_confirm_is_not_shown(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with (FakeOpenAIServer([f"{GOOD} [1] {SECOND} [1]"], yes_probability=about(SECOND, 0.2)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(Q)
    written = [s for s in answer.sentences if s.by_model]
    assert [s.text for s in written] == [GOOD]
    assert written[0].check == "self_check" and written[0].probability == 0.95
    assert SECOND in answer.dropped
    asked = [c["messages"][-1]["content"] for c in server.self_checks]
    assert any(f"Sentence: {SECOND}" in a for a in asked) and all("Answer yes or no." in a for a in asked)
    assert all(c["max_tokens"] == 1 and c["logprobs"] for c in server.self_checks)


def test_a_failed_self_check_shows_nothing_as_checked(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with (FakeOpenAIServer([f"{GOOD} [1]"], yes_probability=lambda payload: None) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(Q)
    assert server.self_checks, "the model was not asked to check"
    assert not any(s.by_model for s in answer.sentences) and answer.sentences  # the quotes stand alone
    assert all(s.check in ("quote", "record") for s in answer.sentences)  # quotes, and the title from the record


def test_checks_run_while_the_model_writes_and_keep_its_order(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    third = "DUALFormer can reduce intra-class variance, enhancing the discriminability of node representations."
    reply = f"{PACED}{GOOD} [1] {SECOND} [1] {third} [1]"
    with FakeOpenAIServer([reply]) as server, scripted_assistant(server) as assistant:
        finished_when_first_shown = None
        for event in assistant.stream(Q):
            if finished_when_first_shown is None and event.answer and any(s.by_model for s in event.answer.sentences):
                finished_when_first_shown = server.finished
        final = event.answer
    assert final is not None
    # the first sentence was checked and shown while the model was still writing the rest (a PACED reply pauses
    # between sentences); a server that takes one request at a time (the bundled one) checks after the stream
    assert finished_when_first_shown == 0
    written = [s.text for s in final.sentences if s.by_model]
    assert written == sorted(written, key=[GOOD, SECOND, third].index) and GOOD in written
    assert len(server.self_checks) >= 2


def test_the_answer_is_the_model_s_checked_sentences_alone(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """Issue 41: once a model sentence passes, the quotes shown while it wrote are gone from the final answer."""
    with FakeOpenAIServer([f"{GOOD} [1]"]) as server, scripted_assistant(server) as assistant:
        answer = assistant.ask(Q)
    assert answer.mode == "generated" and [s.text for s in answer.sentences] == [GOOD]
    assert all(s.by_model for s in answer.sentences)


def test_when_nothing_passes_the_answer_says_so_and_quotes(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with (FakeOpenAIServer([f"{GOOD} [1] {SECOND} [1]"], yes_probability=about(GOOD, 0.1, 0.1)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(Q)
    assert answer.mode == "extractive" and "could be checked" in answer.notice
    assert answer.sentences and all(s.check in ("quote", "record") and not s.by_model for s in answer.sentences)
    assert GOOD in answer.dropped and SECOND in answer.dropped and answer.model_used


def _reading(named: float, stated: float, self_check: float = 0.95):  # type: ignore[no-untyped-def]
    """P(yes) by what the model is asked: the named check, the stated check, else the self-check of a sentence."""

    def answer(payload: dict[str, Any]) -> float:
        asked = payload["messages"][-1]["content"]
        if "Is this the abstract of the paper called" in asked:
            return named
        if "state the answer to this question" in asked:
            return stated
        return self_check

    return answer


def test_a_paper_the_model_does_not_read_as_the_one_named_is_not_substituted(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """"Summarize 'Attention Is All You Need'": the paper found is another; the answer says so and cites nothing."""
    question = "Summarize 'Attention Is All You Need'"
    with (FakeOpenAIServer([f"{GOOD} [1]"], yes_probability=_reading(0.1, 0.9)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(question)
    assert answer.abstained and not answer.citations and "Attention Is All You Need" in answer.notice
    assert not server.requests  # the model was never asked to write
    named = [c for c in server.self_checks if "paper called" in c["messages"][-1]["content"]]
    assert named and "Attention Is All You Need" in named[0]["messages"][-1]["content"]
    with (FakeOpenAIServer([f"{GOOD} [1]"], yes_probability=_reading(0.9, 0.9)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(question)
    assert not answer.abstained and answer.citations  # read as the paper named: answered from it


def test_a_paper_named_in_its_title_is_not_asked_about(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with (FakeOpenAIServer([f"{GOOD} [1]"], yes_probability=_reading(0.1, 0.9)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask("Summarize the DUALFormer paper")
    assert not answer.abstained and answer.citations
    assert not [c for c in server.self_checks if "paper called" in c["messages"][-1]["content"]]


def test_not_stated_needs_the_model_s_reading_too(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    """A detail the exact tests find no sentence for is "not stated" only when the model, reading the abstract, says
    it is not stated either; else the model writes."""
    question = "How many parameters does the transformer-based speech codec have?"  # dev q036
    with (FakeOpenAIServer([f"{GOOD} [1]"], yes_probability=_reading(0.9, 0.1)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(question)
    assert answer.mode == "not_stated" and not answer.citations, (answer.mode, answer.notice)
    asked = [c["messages"][-1]["content"] for c in server.self_checks]
    assert any("state the answer to this question" in a and question in a for a in asked)
    with (FakeOpenAIServer([f"{GOOD} [1]"], yes_probability=_reading(0.9, 0.9)) as server,
          scripted_assistant(server) as assistant):
        answer = assistant.ask(question)
    assert answer.mode != "not_stated" and server.requests  # the model was asked to write
