"""Which language a question is written in, and its English reading: the index, the embedding model and every
reading step after this one are English, so a question in another language is searched and answered through its
English translation, and the answer says so (issue 41).

Two steps, each a trained model rather than a word list:

1. ``langid`` (Lui & Baldwin 2012; naive Bayes over byte n-grams, trained on 97 languages; ships in its PyPI package)
   identifies the language in about a millisecond. "en" ends the step: no model call.
2. Otherwise the answering model translates it (:data:`assistant.llm.prompts.TRANSLATE_REQUEST`). A translation that
   equals the question, word for word, means it was English after all: short English questions full of method names
   ("How does GETS calibrate graph neural networks?") are read as Welsh or German by langid about 3 times in 100 on
   this project's question sets. (Asked "is this question written in English?", the 1.5B model said yes to German
   and Chinese questions alike, P >= 0.9: no use as a second opinion.)

Measured on every question of eval/ (English and not): benchmarks/language_step.py, docs/results/issue41.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from assistant.llm.client import ChatBackend, connection_errors

logger = logging.getLogger(__name__)

#: The most tokens a translated question may take (a question is at most a few dozen words).
TRANSLATION_MAX_TOKENS = 120

_classify: Callable[[str], tuple[str, float]] | None = None
_lock = threading.Lock()
_LEAD_IN = re.compile(r"^\s*(?:english(?: question| translation)?|translation|question)\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class EnglishReading:
    """A question not written in English, and its English translation.

    Attributes:
        original: the user's text.
        english: the model's English translation (one line, no lead-in or quotes).
        language: the ISO 639-1 code langid gave ("de", "zh", ...).
    """

    original: str
    english: str
    language: str

    @property
    def notice(self) -> str:
        """What the answer says about it (shown before the answer's own notice)."""
        return f"Read in English as “{self.english}”; the answer is in English, the language of the abstracts."


def identify_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language by langid ("en", "de", "zh", ...). The model (a few MB) is loaded
    on the first call (about 1 s; :func:`warm` does it at start-up), once, behind a lock; thread-safe after."""
    global _classify
    if _classify is None:
        with _lock:
            if _classify is None:
                import langid

                langid.classify("warm")  # builds langid's global identifier now, under the lock
                _classify = langid.classify
    return _classify(text)[0]


def warm() -> None:
    """Load the language identifier now (entry points call it at start-up, so the first question does not wait)."""
    identify_language("What does this paper propose?")


def english_reading(backend: ChatBackend, question: str) -> EnglishReading | None:
    """The English reading of ``question`` when it is not written in English, else None.

    None also when the model repeats the question unchanged (it was English), cannot be asked or returns no
    translation: the question is then searched as written (what happened before this step existed); a failure is
    logged.

    Args:
        backend: the answering model (:meth:`ChatBackend.stream`).
        question: the user's cleaned question text.
    """
    from assistant.llm.prompts import translation_messages

    language = identify_language(question)
    if language == "en":
        return None
    try:
        raw = "".join(backend.stream(translation_messages(question), TRANSLATION_MAX_TOKENS))
    except connection_errors() as e:
        logger.warning("the question could not be translated (%s); searched as written", getattr(e, "reason", e))
        return None
    english = _first_line(raw)
    if not english or _words(english) == _words(question):  # repeated unchanged: it was English
        return None
    return EnglishReading(question, english, language)


def _words(text: str) -> list[str]:
    """``text``'s words, case-folded, without punctuation (so "ROI?" equals "ROI ?")."""
    return re.findall(r"\w+", text.casefold())


def _first_line(raw: str) -> str:
    """The translation as one line: the first non-empty line, without a lead-in ("English:") or wrapping quotes."""
    line = next((x.strip() for x in raw.splitlines() if x.strip()), "")
    line = _LEAD_IN.sub("", line).strip()
    if len(line) > 1 and line[0] in "\"'“«" and line[-1] in "\"'”»":
        line = line[1:-1].strip()
    return line
