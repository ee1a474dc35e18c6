"""api/chat.rebuild_session resolves an earlier turn only when something reads its resolution (issue 31): the
last earlier turn always; the one before it only when the last one is elliptic. The rebuilt session is the
same as when both are resolved."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assistant.api.chat import PriorTurn, rebuild_session
from tests.support.fake_openai_server import FakeOpenAIServer

A_BENCH_ID = "000_43469673d6f8aaa0.txt#8"
COOKBOOK_ID = "004_c45bebc30e22eceb.txt#6"


@pytest.fixture
def assistant(scripted_assistant: Any) -> Iterator[Any]:
    with FakeOpenAIServer([]) as llm, scripted_assistant(llm) as built:
        yield built


def _state(session: Any) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(t.question, t.resolved_query, t.focus_ids) for t in session.turns]


@pytest.mark.parametrize(
    "last",
    ["Compare it with the Number Cookbook paper and say which one uses more benchmarks.", "and the second one?"],
)
def test_the_turn_before_the_last_is_resolved_only_when_read(
    assistant: Any, monkeypatch: pytest.MonkeyPatch, last: str
) -> None:
    from assistant.conversation.session import ChatSession

    turns = [
        PriorTurn("Which paper introduces A-Bench?", {1: A_BENCH_ID}),
        PriorTurn("How many text-to-image models did they sample images from?", {1: A_BENCH_ID}),
        PriorTurn(last, {1: A_BENCH_ID, 2: COOKBOOK_ID}),
    ]
    resolved: list[str] = []
    original = ChatSession.resolve

    def counted(self: Any, question: Any, forced: Any = None) -> Any:
        resolved.append(question if isinstance(question, str) else question.text)
        return original(self, question, forced)

    monkeypatch.setattr(ChatSession, "resolve", counted)
    session = rebuild_session(assistant, turns)
    elliptic = last.startswith("and ")
    assert resolved == ([turns[1].question] if elliptic else []) + [last]

    # the same as resolving both (the rule before): every turn as it would be, the last one's query included
    resolved.clear()
    monkeypatch.setattr("assistant.conversation.resolve.inherits_query", lambda question: True)
    both = rebuild_session(assistant, turns)
    assert resolved == [turns[1].question, last]
    assert _state(session)[-1] == _state(both)[-1] and session.labels == both.labels
