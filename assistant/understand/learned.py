"""The trained classifiers that read questions and abstract sentences (models in ``models/``, trained by
``scripts/train_understanding.py``; data, held-out accuracy and limits: docs/models/understanding.md).

* :func:`classify_intent`: what a question asks — ``lookup``, ``summary``, ``compare``, ``choice``, ``topic``
  or ``metadata`` — from hashed word/character n-grams (typos keep most n-grams).
* :func:`classify_roles`: the role of each sentence of one abstract — ``problem``, ``approach``, ``data``,
  ``result`` or ``other`` — from its n-grams and its place in the abstract.
* :func:`topic_membership`: whether a retrieved paper belongs in the topic list asked for, from the
  retriever's scores and word-stem overlap (:func:`topic_features`).

The models are read once per process (immutable weights, cached); a missing model file raises
:class:`~assistant.errors.ConfigError` naming the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.classifier import TextClassifier
from assistant.models import artifact

if TYPE_CHECKING:
    from assistant.types import PaperHit

#: Hashed columns per n-gram block of each model (training and inference must agree).
INTENT_HASH_FEATURES = 1 << 18
ROLE_HASH_FEATURES = 1 << 18
#: Weight of the dense position features of a sentence relative to its n-grams.
ROLE_DENSE_SCALE = 1.0
#: Position buckets of a sentence in its abstract (relative position 0..1 cut into this many bins).
ROLE_POSITION_BINS = 5


@lru_cache(maxsize=None)
def load_model(name: str) -> TextClassifier:
    """The trained classifier ``name`` of the model registry (``models/<name>.npz``; read once per process).
    Raises ConfigError when it is missing."""
    return TextClassifier.load(artifact(name).file)


def intent_text(question: str) -> str:
    """The text the intent model reads: the question with whitespace collapsed."""
    return " ".join(question.split())


def classify_intent(question: str) -> str:
    """The intent of ``question``: one of the intent model's classes (``lookup`` for an empty question)."""
    if not question.strip():
        return "lookup"
    return load_model("intent").predict([intent_text(question)])[0]


def intent_probabilities(question: str) -> dict[str, float]:
    """Intent -> probability (sums to 1) for ``question``."""
    model = load_model("intent")
    return dict(zip(model.classes, map(float, model.proba([intent_text(question)])[0])))


def role_text(sentences: Sequence[str], i: int) -> str:
    """The text the role model reads for sentence ``i``: the sentence itself."""
    return sentences[i]


def role_features(sentences: Sequence[str]) -> np.ndarray:
    """Dense features per sentence ``(len(sentences), ROLE_POSITION_BINS + 3)``: one-hot position bin, first
    sentence, last sentence, and whether the sentence has a digit."""
    n = len(sentences)
    out = np.zeros((n, ROLE_POSITION_BINS + 3), dtype=np.float32)
    for i, s in enumerate(sentences):
        rel = i / max(1, n - 1)
        out[i, min(ROLE_POSITION_BINS - 1, int(rel * ROLE_POSITION_BINS))] = 1.0
        out[i, ROLE_POSITION_BINS] = float(i == 0)
        out[i, ROLE_POSITION_BINS + 1] = float(i == n - 1)
        out[i, ROLE_POSITION_BINS + 2] = float(any(ch.isdigit() for ch in s))
    return out


def role_probabilities(sentences: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The role model's classes and ``(len(sentences), len(classes))`` probabilities for one abstract."""
    model = load_model("roles")
    if not sentences:
        return model.classes, np.zeros((0, len(model.classes)))
    return model.classes, model.proba(
        [role_text(sentences, i) for i in range(len(sentences))], role_features(sentences)
    )


def classify_roles(sentences: Sequence[str]) -> list[str]:
    """The role of each sentence of one abstract (in order): ``problem``, ``approach``, ``data``, ``result``
    or ``other``; [] for no sentences."""
    if not sentences:
        return []
    model = load_model("roles")
    return model.predict([role_text(sentences, i) for i in range(len(sentences))], role_features(sentences))


#: Names of the features :func:`topic_features` gives each candidate paper of a topic list.
TOPIC_FEATURES = (
    "below_top_evidence",
    "second_below_top",
    "topic_words_in_text",
    "topic_words_in_title",
)


def topic_features(topic: str, hits: Sequence[PaperHit]) -> np.ndarray:
    """``(len(hits), len(TOPIC_FEATURES))`` features of each candidate of a topic listing (``hits``: the
    retriever's candidates for ``topic``): how far its best evidence-sentence score is below the best
    candidate's, how far its second-best is below that, and the share of the topic's word stems (NLTK's Snowball
    stemmer) found in its abstract and in its title.

    Only relative scores: an absolute score or a rank means another thing among 38 papers than among 10k (a
    model with them, trained over the 9.9k corpus, listed too few papers on the seeds); whether anything is
    about the topic at all is ``Settings.answer.topic_min_evidence``'s decision (:func:`intents.topic_members`)."""
    from assistant.lang.text import stems

    best = [max((e.score for e in h.evidence), default=0.0) for h in hits]
    top = max(best, default=0.0)
    want = stems(topic)
    out = np.zeros((len(hits), len(TOPIC_FEATURES)), dtype=np.float32)
    for i, h in enumerate(hits):
        scores = sorted(h.sentence_scores or [e.score for e in h.evidence], reverse=True)
        second = scores[1] if len(scores) > 1 else best[i]
        out[i] = (
            top - best[i],
            top - second,
            len(want & stems(h.paper.text)) / max(1, len(want)),
            len(want & stems(h.paper.title)) / max(1, len(want)),
        )
    return out


def topic_membership(topic: str, hits: Sequence[PaperHit]) -> np.ndarray:
    """P(the paper belongs in the list asked for) for each of ``hits`` (retriever order for ``topic``)."""
    if not hits:
        return np.zeros(0)
    model = load_model("topic")
    proba = model.proba([""] * len(hits), topic_features(topic, hits))
    return proba[:, model.classes.index("1")]
