"""One reading of a question per turn: :func:`parse_question` -> :class:`Question`, everything read from its
wording (facts asked, intent with probabilities, names, the author it names, its descriptions of a paper, its
parts and sentences, its premises, the thing it asks for), so no stage reads the text again.

The intent model runs at most once per question (when the intent is first asked for); every other reading is
a wording rule of question.py. The question's :class:`~assistant.understand.turn.TurnCache` goes with it: the
model outputs of the turn (query vectors, sentence roles, answer-sentence scores) are shared through it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property

from assistant.lang.text import split_sentences
from assistant.types import INTENTS, Intent
from assistant.understand import learned
from assistant.understand.question import (
    QuestionFacts,
    analyze,
    asked_thing,
    author_phrase,
    counted_words,
    descriptions,
    premises,
    question_parts,
)
from assistant.understand.turn import TurnCache


def read_facts(text: str, cache: TurnCache | None = None) -> QuestionFacts:
    """:func:`~assistant.understand.question.analyze` of ``text``, once per turn when ``cache`` is given (the
    question itself and the queries searched for it are read once)."""
    if cache is None:
        return analyze(text)
    return cache.get("facts", text, lambda: analyze(text))


class Question:
    """What one question says, read once (module docstring). Build it with :func:`parse_question`.

    Attributes:
        text: the question as cleaned (``question.clean_question``).
        cache: the turn's memo of model outputs (shared by every stage of the turn).
        facts: :class:`~assistant.understand.question.QuestionFacts` (names, number asked, which paper ...).
    """

    def __init__(self, text: str, cache: TurnCache | None = None) -> None:
        self.text = text
        self.cache = cache if cache is not None else TurnCache()
        self.facts = read_facts(text, self.cache)

    def __repr__(self) -> str:
        return f"Question({self.text!r})"

    @property
    def names(self) -> tuple[str, ...]:
        """The names it mentions (``facts.entities``: ``GPT-4o``, ``LeReT``)."""
        return self.facts.entities

    @cached_property
    def intent_probabilities(self) -> Mapping[str, float]:
        """Intent -> probability (sums to 1): the trained intent classifier, run once for this question."""
        return learned.intent_probabilities(self.text)

    @cached_property
    def intent(self) -> Intent:
        """The most probable intent (``lookup``, ``summary``, ``compare``, ``choice``, ``topic`` or
        ``metadata``; ``lookup`` for an empty question or a class not in :data:`~assistant.types.INTENTS`): the
        classifier's top class, as ``intents.detect_intent`` gives it."""
        if not self.text.strip():
            return "lookup"
        proba = self.intent_probabilities
        best = max(proba, key=lambda c: proba[c])  # the first class of the highest probability, as argmax
        return best if best in INTENTS else "lookup"

    def next_intent(self, exclude: Sequence[str]) -> Intent:
        """The most probable intent other than those in ``exclude`` (``intents.next_intent``)."""
        ranked = sorted((p, i) for i, p in self.intent_probabilities.items() if i not in exclude and i in INTENTS)
        return ranked[-1][1] if ranked else "lookup"

    @cached_property
    def author(self) -> str:
        """The author named by "the paper by <Name>", or "" (``question.author_phrase``)."""
        return author_phrase(self.text)

    @cached_property
    def descriptions(self) -> tuple[str, ...]:
        """Its descriptions of one paper ("the paper about X" -> "X"; ``question.descriptions``)."""
        return tuple(descriptions(self.text))

    @cached_property
    def sentences(self) -> tuple[str, ...]:
        """Its sentences (``lang.text.split_sentences``)."""
        return tuple(split_sentences(self.text))

    @cached_property
    def parts(self) -> tuple[Question, ...]:
        """The things it asks, in order, each read as a question of its own (``question.question_parts``);
        ``(self,)`` when it asks one."""
        found = question_parts(self.text)
        if found == [self.text]:
            return (self,)
        return tuple(Question(part, self.cache) for part in found)

    @cached_property
    def premises(self) -> tuple[str, ...]:
        """Statements it takes for granted (``question.premises``)."""
        return tuple(premises(self.text))

    @cached_property
    def asked_thing(self) -> tuple[str, ...]:
        """The words naming what a "what/which <thing>" question asks for (``question.asked_thing``)."""
        return tuple(asked_thing(self.text))

    @cached_property
    def counted(self) -> tuple[str, ...]:
        """The words of the noun phrase whose count it asks for (``question.counted_words``)."""
        return tuple(counted_words(self.text))


def parse_question(text: str, cache: TurnCache | None = None) -> Question:
    """The one reading of ``text`` (already cleaned: ``question.clean_question``) for this turn; ``cache``: the
    turn's memo (a new one when None)."""
    return Question(text, cache)
