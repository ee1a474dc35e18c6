"""The intent seam (assistant/answer/strategies.py): a new intent is one class plus one registry entry, and the
answerer runs it like the built-in ones (real index and embeddings, scripted model)."""

from __future__ import annotations

from assistant.answer.answerer import AnswerEvent
from assistant.answer.builder import AnswerBuilder
from assistant.answer.strategies import STRATEGIES, IntentStrategy, Plan, Request, Tools
from assistant.types import AnswerSentence, PaperHit
from tests.support.fake_openai_server import FakeOpenAIServer

DUALFORMER = "000_43469673d6f8aaa0.txt#1"
Q = "Which graph transformer performs self-attention on feature dimensions?"


class FirstSentence(IntentStrategy):
    """Toy intent: quote the first sentence of the best paper; no model call."""

    intent = "first_sentence"

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        return Plan(hits[:1])

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        hit = plan.context[0]
        builder.add(AnswerSentence(hit.sentences[0], (1,), 1.0), hit.sentences[0])


class OneLiner(IntentStrategy):
    """Toy intent that asks the model, with its own task sentence."""

    intent = "one_liner"
    task = "Answer in exactly one sentence of at most twelve words."

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        return Plan(hits[:1], use_model=True, max_tokens=40)


def test_a_new_intent_needs_one_class_and_one_registry_line(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    registry = {**STRATEGIES, FirstSentence.intent: FirstSentence()}
    with FakeOpenAIServer([]) as server, scripted_assistant(server, strategies=registry) as assistant:
        events: list[AnswerEvent] = list(assistant.answerer.stream(Q, intent="first_sentence"))
        assert server.requests == []  # answered by code
    assert events[0].kind == "status" and events[0].hits  # the papers found come first
    answer = events[-1].answer
    assert events[-1].kind == "final" and answer is not None
    assert answer.intent == "first_sentence" and not answer.model_used and answer.mode == "extractive"
    top = answer.citations[0].paper
    assert top.id == DUALFORMER and answer.sentences[-1].text == top.text.split(". ")[0] + "."
    assert "first_sentence" in assistant.answerer.intents


def test_a_new_intent_that_asks_the_model_uses_its_task_sentence(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    reply = "DUALFormer performs the global self-attention module on feature dimensions [1]."
    registry = {**STRATEGIES, OneLiner.intent: OneLiner()}
    with FakeOpenAIServer([reply]) as server, scripted_assistant(server, strategies=registry) as assistant:
        answer = assistant.answerer.answer(Q, intent="one_liner")
        asked = server.requests[0]["messages"][-1]["content"]  # one paper: the task is asked of its reading
    assert OneLiner.task in asked and server.requests[0]["max_tokens"] == 40
    assert answer.mode == "generated" and answer.model_used and answer.citations[0].paper.id == DUALFORMER


def test_an_unknown_intent_is_refused_before_any_search(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from assistant.errors import AssistantError

    with FakeOpenAIServer([]) as server, scripted_assistant(server) as assistant:
        with pytest.raises(AssistantError, match="Unknown intent 'poem'"):
            assistant.answerer.answer(Q, intent="poem")
