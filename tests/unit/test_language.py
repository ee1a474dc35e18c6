"""The language step's decisions that need no model (understand/language.py): langid's reading, the English
questions that never reach the model, a model that cannot be asked, and how a translation is cleaned. The model's
translations themselves: tests/e2e/test_bundled_languages.py and benchmarks/language_step.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from assistant.errors import LLMUnavailableError
from assistant.llm.client import Message
from assistant.understand.language import EnglishReading, _first_line, english_reading, identify_language


class Backend:
    """Replies ``reply`` to every stream (or raises ``error``) and records the requests."""

    model = "scripted"

    def __init__(self, reply: str = "", error: Exception | None = None) -> None:
        self.reply, self.error, self.requests = reply, error, 0

    def stream(self, messages: Sequence[Message], max_tokens: int | None = None) -> Iterator[str]:
        self.requests += 1
        if self.error is not None:
            raise self.error
        yield self.reply

    def yes_probability(self, messages: Sequence[Message]) -> float:
        raise AssertionError("the language step asks no yes/no question")


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Which paper proposes DUALFormer, and on how many datasets is it evaluated?", "en"),
        ("Auf wie vielen realen Datensätzen wurde DUALFormer evaluiert?", "de"),
        ("哪篇论文提出了 DUALFormer？", "zh"),
        ("¿Cuánto mejora LiMAC la precisión de las acciones?", "es"),
    ],
)
def test_langid_reads_the_question_language(question: str, language: str) -> None:
    assert identify_language(question) == language


def test_an_english_question_never_reaches_the_model() -> None:
    backend = Backend("Ignored.")
    assert english_reading(backend, "Summarize the DUALFormer paper in two sentences.") is None
    assert backend.requests == 0


def test_a_question_the_model_repeats_unchanged_was_english() -> None:
    question = "How much does ROIDICE improve ROI?"  # langid: German
    assert identify_language(question) != "en"
    backend = Backend("How much does ROIDICE improve ROI ?")
    assert english_reading(backend, question) is None and backend.requests == 1


def test_a_translation_becomes_the_reading_and_its_notice() -> None:
    question = "Auf wie vielen realen Datensätzen wurde DUALFormer evaluiert?"
    backend = Backend('English: "On how many real datasets was DUALFormer evaluated?"\n(German)')
    reading = english_reading(backend, question)
    assert reading == EnglishReading(question, "On how many real datasets was DUALFormer evaluated?", "de")
    assert reading.notice.startswith("Read in English as “On how many real datasets")


def test_a_model_that_cannot_be_asked_leaves_the_question_as_written(caplog: pytest.LogCaptureFixture) -> None:
    backend = Backend(error=LLMUnavailableError("down", reason="connection"))
    assert english_reading(backend, "哪篇论文提出了 DUALFormer？") is None
    assert "could not be translated" in caplog.text


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ("\n  Which paper proposed DUALFormer?\nNote: translated.", "Which paper proposed DUALFormer?"),
        ("Translation: “Which article presents A-Bench?”", "Which article presents A-Bench?"),
        ("   \n", ""),
    ],
)
def test_a_translation_is_cleaned_to_one_line(raw: str, line: str) -> None:
    assert _first_line(raw) == line
