"""A question is read once per turn (issue 31, item 1): through the real ChatSession on the seed index, one
turn parses the question once, reads its wording (``question.analyze``) once, runs the intent model once and
embeds the question once (a follow-up: at most twice, the question and the query it resolves to).

The counters wrap the functions and models themselves (every module's reference to ``analyze``, the intent
model's ``proba``, the embedding model's three embedding methods), so they count what any code path calls."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.fake_openai_server import FakeOpenAIServer

FIRST = "How many text-to-image models did A-Bench sample its images from, in this collection?"
FOLLOW_UP = "And how many images does its benchmark hold in this collection?"


@pytest.fixture
def scripted(scripted_assistant: Any) -> Iterator[Any]:
    with (
        FakeOpenAIServer(["Nothing verifiable here at all, sorry friend."] * 20) as server,
        scripted_assistant(server) as assistant,
    ):
        yield assistant


def _wrap_everywhere(monkeypatch: pytest.MonkeyPatch, func: Callable[..., Any], calls: list[tuple[Any, ...]]) -> None:
    """Replace every ``assistant.*`` module's reference to ``func`` by a wrapper that records its arguments."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return func(*args, **kwargs)

    for module in list(sys.modules.values()):
        if module is None or not getattr(module, "__name__", "").startswith("assistant"):
            continue
        for name, value in list(vars(module).items()):
            if value is func:
                monkeypatch.setattr(module, name, wrapper)


class Counts:
    """What one turn called, by the text it was called with."""

    def __init__(self) -> None:
        self.parses: list[tuple[Any, ...]] = []
        self.readings: list[tuple[Any, ...]] = []
        self.intent_runs: list[list[str]] = []
        self.embedded: list[str] = []

    def clear(self) -> None:
        self.parses.clear()
        self.readings.clear()
        self.intent_runs.clear()
        self.embedded.clear()

    def read(self, text: str) -> int:
        return sum(1 for args in self.readings if args and args[0] == text)

    def intent(self, text: str) -> int:
        return sum(1 for texts in self.intent_runs if text in texts)

    def embeddings(self, *texts: str) -> int:
        return sum(1 for t in self.embedded if t in texts)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch, scripted: Any) -> Iterator[Counts]:
    import assistant.understand.parse as parse
    from assistant.lang.classifier import TextClassifier
    from assistant.understand.learned import load_model
    from assistant.understand.question import analyze

    found = Counts()
    _wrap_everywhere(monkeypatch, parse.parse_question, found.parses)
    _wrap_everywhere(monkeypatch, analyze, found.readings)

    intent_model = load_model("intent")
    proba = TextClassifier.proba

    def counted_proba(self: TextClassifier, texts: list[str], dense: Any = None) -> Any:
        if self is intent_model:
            found.intent_runs.append(list(texts))
        return proba(self, texts, dense)

    monkeypatch.setattr(TextClassifier, "proba", counted_proba)

    model_class = type(scripted.retriever._embed)
    for name in ("_get_query_embedding", "_get_text_embedding", "_get_text_embeddings"):
        original = getattr(model_class, name)

        def counted(self: Any, arg: Any, _original: Any = original) -> Any:
            found.embedded.extend([arg] if isinstance(arg, str) else list(arg))
            return _original(self, arg)

        monkeypatch.setattr(model_class, name, counted)
    yield found


def test_one_turn_reads_and_embeds_its_question_once(scripted: Any, counts: Counts) -> None:
    session = scripted.new_session()
    answer = session.ask(FIRST)
    assert answer.citations, answer  # a real answer, about A-Bench
    assert len(counts.parses) == 1, counts.parses
    assert counts.read(FIRST) == 1
    assert counts.intent(FIRST) == 1, counts.intent_runs
    assert counts.embeddings(FIRST) == 1, counts.embedded

    counts.clear()
    session.ask(FOLLOW_UP)
    resolved = session.turns[-1].resolved_query
    assert session.turns[-1].focus_ids  # it is a follow-up about the paper before
    assert len(counts.parses) == 1, counts.parses
    assert counts.read(FOLLOW_UP) == 1
    assert counts.intent(FOLLOW_UP) == 1, counts.intent_runs
    assert counts.embeddings(FOLLOW_UP, resolved) <= 2, counts.embedded
