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
    assert all(s.check == "quote" for s in answer.sentences)


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
