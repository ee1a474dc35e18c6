"""The router (assistant/answer/route.py): one function decides the intent, with a reason."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from assistant.answer.route import Referents, decide_intent, wording_intent

INTENTS = ("lookup", "summary", "compare", "topic", "choice", "metadata")


def _q(intent: str, nxt: str = "summary") -> Any:
    return SimpleNamespace(intent=intent, next_intent=lambda exclude: nxt)


def _records(applies: bool) -> Any:
    return lambda: SimpleNamespace(applies=applies)


def test_the_users_choice_wins_and_reads_no_records() -> None:
    def never() -> None:
        raise AssertionError("records read")

    route = decide_intent(_q("lookup"), INTENTS, never, forced="summary", referents=Referents(2, 2, 2, True))
    assert (route.intent, route.reason) == ("summary", "chosen by the user")


def test_referents_imply_an_intent() -> None:
    no = _records(False)
    assert wording_intent(_q("lookup"), None, 2) == "compare"
    assert decide_intent(_q("lookup"), INTENTS, no, referents=Referents(2, 2, 2, True)).intent == "compare"
    assert decide_intent(_q("compare"), INTENTS, no, referents=Referents(0, 1, 0, False)).intent == "lookup"
    # "ok and what about SPA, the preference annotation one?" after LeReT: one named paper the chat moves to
    assert decide_intent(_q("compare"), INTENTS, no, referents=Referents(1, 1, 1, True, moved=True)).intent == "lookup"
    # "how does it differ from the episodic memory one?" about EM-LLM: compared with itself, asked back by compare
    assert decide_intent(_q("compare"), INTENTS, no, referents=Referents(1, 1, 1, True)).intent == "compare"
    assert decide_intent(_q("lookup"), INTENTS, no, referents=Referents(0, 2, 0, False)).intent == "choice"
    route = decide_intent(_q("choice", "lookup"), INTENTS, no, referents=Referents(0, 0, 0, False))
    assert route.intent == "lookup" and "next intent" in route.reason


def test_records_and_nothing_else_go_to_the_records() -> None:
    yes = _records(True)
    # an implied comparison of two named papers that only asks who wrote them: their records
    assert decide_intent(_q("lookup"), INTENTS, yes, referents=Referents(2, 2, 2, True)).intent == "metadata"
    assert decide_intent(_q("topic"), INTENTS, yes).intent == "metadata"
    assert decide_intent(_q("metadata"), INTENTS, _records(False)).intent == "lookup"
    assert decide_intent(_q("summary"), ("lookup",), _records(False)).intent == "lookup"  # not registered
    assert decide_intent(_q("summary"), INTENTS, _records(False)).reason == "the intent classifier"
