"""Is an abstract written to steer the assistant? A small trained model plus a few exact forms.

Indexed text is data, never instructions: an abstract is quoted in the prompt with our delimiters and
citation markers neutralised, and citations are decided by code (``assistant.llm.prompts``). This module
only *flags* such abstracts at ingest, so the person indexing an export learns that a row was planted.

* The model (``steering_model.npz``, trained by ``scripts/train_steering.py``; card: docs/models/steering.md)
  scores each sentence with a logistic regression over hashed character 2-5-grams and word 1-2-grams; an
  abstract's score is its highest sentence's. It learned from ~80k real abstract sentences (negatives) and
  ~20k attacks composed by code (positives), so "you are now …", "disregard the above …" or the same in
  French are found without a word list, while papers *about* prompt injection are not flagged.
* Exact forms stay rules: our own prompt delimiters (``<source>``, a ``Question:`` label), chat-template
  control tokens, markdown images and HTML tags, and invisible characters used to hide text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.classifier import hashed_ngrams
from assistant.lang.markup import CHAT_TEMPLATE_TOKEN, HIDDEN_CHARACTERS, IMAGE_OR_HTML
from assistant.llm.prompts import PROMPT_DELIMITER_AS_WRITTEN
from assistant.models import artifact, read_npz, unreadable

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

    from assistant.types import Paper

_ARTIFACT = artifact("steering")
MODEL_PATH = _ARTIFACT.file
#: Hashed feature space of :func:`featurize` (character and word n-grams share it).
N_FEATURES = 1 << 20

#: Exact forms, each with the reason shown to the user.
EXACT_FORMS: list[tuple[str, re.Pattern[str]]] = [
    ("prompt delimiter", PROMPT_DELIMITER_AS_WRITTEN),
    (
        "chat-template control token",
        CHAT_TEMPLATE_TOKEN,
    ),
    (
        "markdown image or raw HTML",
        IMAGE_OR_HTML,
    ),
    ("hidden characters", HIDDEN_CHARACTERS),
]


def sentences_of(text: str) -> list[str]:
    """The sentences the model scores: each line of ``text`` split by the shared sentence splitter."""
    from assistant.lang.text import split_sentences

    return [s for line in text.splitlines() if line.strip() for s in split_sentences(line)]


def featurize(texts: list[str]) -> csr_matrix:
    """Texts -> sparse matrix (len(texts) x ``2 *`` :data:`N_FEATURES`): hashed character 2-5-grams within word
    boundaries plus word 1-2-grams, lower-cased, L2-normalised per block
    (:func:`assistant.lang.classifier.hashed_ngrams`, the classifiers' own features)."""
    return hashed_ngrams(texts, N_FEATURES)


@dataclass(frozen=True)
class SteeringModel:
    """A logistic regression over :func:`featurize` features, stored sparsely.

    Attributes:
        indices: feature indices with a non-zero weight (int32, sorted).
        weights: their weights (float32, same length).
        intercept: the bias.
        threshold: probability at or above which a sentence flags its abstract (chosen in training so that
            at most 0.1% of held-out real abstracts are flagged).
    """

    indices: np.ndarray
    weights: np.ndarray
    intercept: float
    threshold: float
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def _dense(self) -> np.ndarray:
        if "dense" not in self._cache:
            self._cache["dense"] = self.dense_weights()
        return self._cache["dense"]

    @classmethod
    def from_weights(cls, coef: np.ndarray, intercept: float, threshold: float) -> SteeringModel:
        """From a dense coefficient vector of length ``2 * N_FEATURES``."""
        nz = np.flatnonzero(np.abs(coef) > 1e-4).astype(np.int32)
        return cls(nz, coef[nz].astype(np.float32), float(intercept), float(threshold))

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> SteeringModel:
        """Read the model file.

        Raises:
            ConfigError: the file is missing or unreadable (names the file and how to recreate it).
        """
        data = read_npz(path, what=_ARTIFACT.what, trained_by=_ARTIFACT.trained_by)
        try:
            return cls(data["indices"], data["weights"], float(data["intercept"]), float(data["threshold"]))
        except (KeyError, ValueError) as e:
            raise unreadable(path, what=_ARTIFACT.what, trained_by=_ARTIFACT.trained_by, error=e) from e

    def save(self, path: Path) -> None:
        """Write the model as a compressed ``.npz`` file."""
        np.savez_compressed(
            path,
            indices=self.indices,
            weights=self.weights,
            intercept=np.float64(self.intercept),
            threshold=np.float64(self.threshold),
        )

    def dense_weights(self) -> np.ndarray:
        """The weights as one dense vector over the ``2 * N_FEATURES`` features (8 MB of float32)."""
        dense = np.zeros(2 * N_FEATURES, dtype=np.float32)
        dense[self.indices] = self.weights
        return dense

    def sentence_scores(self, sentences: list[str]) -> np.ndarray:
        """Probability (0..1) per sentence that it is written to steer the model."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        logits = featurize(sentences) @ self._dense() + self.intercept
        return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))

    def score(self, text: str) -> float:
        """The highest sentence probability of ``text`` (0.0 for empty text)."""
        scores = self.sentence_scores(sentences_of(text))
        return float(scores.max()) if len(scores) else 0.0

    def flags(self, text: str) -> bool:
        """True when some sentence of ``text`` scores at least :attr:`threshold`."""
        return self.score(text) >= self.threshold


class SteeringDetector:
    """Reasons an abstract looks written to steer the assistant: exact forms, then the model.

    One per ingest run (the model file is read once, ~1 MB)."""

    def __init__(self, model: SteeringModel | None = None) -> None:
        self._model = model or SteeringModel.load()

    def reasons(self, text: str) -> list[str]:
        """E.g. ``["prompt delimiter", "instruction to the model"]``; [] for an ordinary abstract."""
        return self.reasons_many([text])[0]

    def reasons_many(self, texts: list[str]) -> list[list[str]]:
        """:meth:`reasons` for many abstracts, their sentences scored in one batch (~10k abstracts in
        seconds)."""
        sentences: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            for sentence in sentences_of(text):
                sentences.append(sentence)
                owner.append(i)
        best = np.zeros(len(texts))
        if sentences:
            np.maximum.at(best, np.array(owner), self._model.sentence_scores(sentences))
        out = []
        for text, score in zip(texts, best):
            found = [reason for reason, pattern in EXACT_FORMS if pattern.search(text)]
            if score >= self._model.threshold:
                found.append("instruction to the model")
            out.append(found)
        return out

    def _author_reasons(self, authors: list[str]) -> list[list[str]]:
        """:meth:`reasons` for author entries: exact forms at any length, the model only for entries of at least
        :data:`AUTHOR_MODEL_MIN_WORDS` words."""
        long = [a for a in authors if len(a.split()) >= AUTHOR_MODEL_MIN_WORDS]
        by_model = dict(zip(long, self.reasons_many(long))) if long else {}
        return [by_model.get(a) or [reason for reason, pattern in EXACT_FORMS if pattern.search(a)] for a in authors]

    def withheld_parts(self, papers: Sequence[Paper]) -> list[tuple[tuple[str, ...], list[str]]]:
        """For each paper, the parts of its record that address the assistant (verbatim, for
        :attr:`assistant.types.Paper.withheld`) and the reasons (as :meth:`reasons`).

        Whether a paper is flagged is decided as by :meth:`reasons` over its title and abstract, plus each author
        entry on its own. For a flagged title + abstract, the parts withheld are the title and the abstract
        sentences (``lang.text.split_sentences``) flagged on their own; when none is (the steering text only
        reads as such across two of them), the part the model scores highest. Only flagged papers are split, so
        this costs little more than :meth:`reasons_many`.
        """
        from assistant.lang.text import split_sentences

        paper_reasons = self.reasons_many([f"{p.title} {p.text}" for p in papers])
        all_authors = [a for p in papers for a in p.authors]
        author_flags = iter(self._author_reasons(all_authors))
        out: list[tuple[tuple[str, ...], list[str]]] = []
        for p, reasons in zip(papers, paper_reasons):
            authors = [a for a in p.authors if next(author_flags)]
            parts: list[str] = []
            if reasons:
                candidates = [p.title, *split_sentences(p.text)]
                parts = [c for c, r in zip(candidates, self.reasons_many(candidates)) if r]
                if not parts:
                    scores = self._model.sentence_scores(candidates)
                    parts = [candidates[int(np.argmax(scores))]]
            if authors:
                reasons = [*reasons, "in the authors field"]
            out.append((tuple(dict.fromkeys([*parts, *authors])), reasons))
        return out


#: An author entry is read by the model only from this many words on: real names are short, and the model read
#: "You He" or "S. T. John" as addressing it (7 of the 54,821 author entries of ../shared/corpus/, none of them
#: an instruction); an instruction needs a verb and an object. Exact forms are checked at any length.
AUTHOR_MODEL_MIN_WORDS = 5


def check_withheld(papers: Sequence[Paper]) -> list[tuple[str, ...]]:
    """:meth:`SteeringDetector.withheld_parts` without the reasons: the catalog's check of records written before
    ingest kept their withheld parts (``index.catalog.WithheldCheck``)."""
    return [parts for parts, _ in SteeringDetector().withheld_parts(papers)]
