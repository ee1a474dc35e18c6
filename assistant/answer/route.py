"""The router: which intent (strategy) answers a question, decided in one place (:func:`decide_intent`), with
the reason. It reads the turn's :class:`~assistant.understand.parse.Question` (the intent classifier's
reading, run once), what the conversation's resolver found the question refers to (:class:`Referents`), and,
only where the decision needs them, the paper records the question asks for (``strategies.read_records``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.answer.strategies import RecordQuery
    from assistant.understand.parse import Question


@dataclass(frozen=True, slots=True)
class Referents:
    """What the conversation's resolver found a question refers to: ``by_name`` papers it names each by a
    name of its own, ``focus`` papers it is about (in focus or named), ``named`` papers named or described,
    ``explicit``: the question says which paper it means (names, descriptions, an author); ``moved``: the papers
    it is about are none of those the latest answer showed (the conversation moves to them)."""

    by_name: int
    focus: int
    named: int
    explicit: bool
    moved: bool = False


@dataclass(frozen=True, slots=True)
class Route:
    """The intent that answers a question and why (a short phrase, for logs and tests); ``records``: what the
    question asks of the paper records, when the decision read them (None otherwise)."""

    intent: str
    reason: str
    records: RecordQuery | None = None


def wording_intent(question: Question, forced: str | None, by_name: int) -> str:
    """The intent the wording asks for, before the papers referred to are known: ``forced`` (the user's
    choice), else the classifier's, except that a lookup naming two or more papers each by a name of its own
    compares them ("What do the ControlAR and LucidPPN papers propose?"). Step 1 of :func:`decide_intent`;
    the resolver uses it to choose papers."""
    if forced:
        return forced
    if question.intent == "lookup" and by_name >= 2:
        return "compare"
    return question.intent


def decide_intent(
    question: Question,
    intents: Collection[str],
    records: Callable[[], RecordQuery | None],
    *,
    forced: str | None = None,
    referents: Referents | None = None,
) -> Route:
    """Which registered intent answers ``question``.

    1. ``forced`` (the user chose it): that one.
    2. With ``referents`` (a conversation's turn), the papers referred to may imply one: a lookup naming two
       papers by name compares them; a comparison about one paper is a lookup, in focus ("what architectures
       does it compare transformers against?") or named as the conversation moves to it ("ok and what about
       SPA, the preference annotation one?" after LeReT: the classifier reads "and what about" as a
       comparison, issue 60; a paper named while in focus, "how does it differ from the episodic memory one?",
       stays a comparison, which asks back); a lookup about several papers in focus
       is a choice ("of those two, which one links its code?"); a choice with fewer than two papers to choose
       among is the classifier's next intent other than choice and metadata. Unless the question asks for
       paper records and nothing else ("Who wrote HyperFace and EM-LLM?": ``records().applies``, with the
       ``metadata`` intent registered): then step 3.
    3. Else the classifier's intent; ``metadata`` when the question asks for records and nothing else and the
       classifier says lookup, topic or metadata (authors, venue, link, "papers by X": answered from the
       records); a classifier's ``metadata`` without a record field or person, or an intent not registered,
       is a lookup.

    ``records``: reads what the question asks of the paper records (called only when the decision needs it).
    The route's intent may be one not in ``intents`` only when ``forced`` or implied (the caller refuses it).
    """
    if forced:
        return Route(forced, "chosen by the user")
    if referents is not None:
        implied, reason = "", ""
        detected = wording_intent(question, None, referents.by_name)
        if detected != question.intent:
            implied, reason = detected, "names two or more papers, each by a name of its own"
        if detected == "compare" and referents.focus == 1 and (not referents.explicit or referents.moved):
            implied, reason = "lookup", "a comparison asked of the one paper in focus"
        elif detected == "lookup" and referents.focus >= 2 and not referents.explicit:
            implied, reason = "choice", "a detail asked of several papers in focus"
        elif detected == "choice" and referents.focus < 2 and referents.named < 2:
            implied = question.next_intent(exclude=("choice", "metadata"))
            reason = "a choice with no papers to choose among: the classifier's next intent"
        if implied:
            asked = records() if "metadata" in intents else None
            if not (asked is not None and asked.applies):
                return Route(implied, reason)
    intent = question.intent
    asked = records()
    if asked is not None and asked.applies and intent in ("lookup", "topic", "metadata") and "metadata" in intents:
        return Route("metadata", "asks for paper records and nothing else", asked)
    if intent == "metadata" or intent not in intents:
        return Route("lookup", f"the classifier's {intent!r} is not answerable here", asked)
    return Route(intent, "the intent classifier", asked)
