"""What a question asks (the trained intent classifier) and the two intents answered by code alone: the
comparison table (cells chosen by the trained sentence-role classifier) and the topic listing (members chosen
by the trained membership classifier). Every cell and line is an abstract sentence, cited."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from assistant.lang.discourse import readable_start
from assistant.lang.text import content_tokens
from assistant.lang.words import PAPER_NOUNS_PLURAL
from assistant.tuning import COMPARISON_RELEVANCE_WEIGHT
from assistant.types import INTENTS, AnswerSentence, Comparison, ComparisonRow, Intent, PaperHit
from assistant.understand.learned import (
    classify_intent,
    classify_roles,
    intent_probabilities,
    role_probabilities,
    topic_membership,
)

if TYPE_CHECKING:
    import numpy as np

    from assistant.understand.turn import TurnCache

_TOPIC_FRAME = re.compile(
    r"^\s*(?:which|what|are there any|any|list|find|show me)\s+(?:of the\s+)?"
    rf"(?:{'|'.join(PAPER_NOUNS_PLURAL)})\s*(?:that|which|are|do|does)?\s*|"
    r"\b(?:list (?:all|every)(?: of)? (?:them|papers|the papers)?|all of them)\b[.?!]*",
    re.I,
)

#: The comparison table's columns, in order.
COLUMNS: tuple[str, ...] = ("problem", "approach", "data / setting", "key result")


def detect_intent(question: str) -> Intent:
    """What ``question`` asks (``lookup``, ``summary``, ``compare``, ``choice``, ``topic`` or ``metadata``):
    the trained intent classifier (:func:`assistant.understand.learned.classify_intent`; its data and held-out
    accuracy: docs/models/understanding.md)."""
    intent = classify_intent(question)
    return intent if intent in INTENTS else "lookup"


def next_intent(question: str, exclude: Sequence[str]) -> Intent:
    """The most probable intent of ``question`` other than those in ``exclude`` (by the intent classifier's
    probabilities), e.g. when the context rules one out: a choice with no papers to choose among."""
    proba = intent_probabilities(question)
    ranked = sorted((p, i) for i, p in proba.items() if i not in exclude and i in INTENTS)
    return ranked[-1][1] if ranked else "lookup"


def topic_query(question: str) -> str:
    """The topic of a listing question without its frame ("Which papers introduce a new benchmark? List
    all of them." -> "introduce a new benchmark?"); the question itself when nothing is left."""
    stripped = _TOPIC_FRAME.sub(" ", question)
    stripped = " ".join(stripped.split())
    return stripped if len(content_tokens(stripped)) >= 1 else question


#: Column name -> the role a sentence must play to be put there.
COLUMN_ROLES = {"problem": "problem", "approach": "approach", "data / setting": "data", "key result": "result"}
#: Shown in a comparison cell no sentence of the abstract fits.
NOT_STATED = "not stated in the abstract"


def role_table(sentences: Sequence[str], cache: TurnCache | None = None) -> tuple[tuple[str, ...], np.ndarray]:
    """The role model's classes and ``(len(sentences), len(classes))`` probabilities for one abstract
    (:func:`assistant.understand.learned.role_probabilities`), computed once per turn when ``cache`` is given."""
    if cache is None:
        return role_probabilities(sentences)
    return cache.get("roles", tuple(sentences), lambda: role_probabilities(sentences))


def sentence_roles(sentences: Sequence[str], cache: TurnCache | None = None) -> list[str]:
    """The role each sentence of one abstract plays: ``problem``, ``approach``, ``data``, ``result`` or
    ``other`` (background, code links, hopes): the trained role classifier
    (:func:`assistant.understand.learned.classify_roles`, learned from 2,238 sentences of 278 real abstracts
    of several fields; held-out accuracy in docs/models/understanding.md). ``cache``: the turn's memo (the
    classifier's most probable class per sentence, from :func:`role_table`)."""
    if cache is None:
        return classify_roles(sentences)
    if not sentences:
        return []
    classes, proba = role_table(sentences, cache)
    return [classes[j] for j in proba.argmax(axis=1)]


def comparison_table(hits: Sequence[PaperHit], cache: TurnCache | None = None) -> Comparison:
    """Rows = papers (label ``n`` = position in ``hits`` + 1), columns = :data:`COLUMNS`.

    A sentence goes only under the column whose role it plays (the trained role classifier,
    :func:`assistant.understand.learned.role_probabilities`); among those, the cell is the sentence the
    classifier is surest plays that role, plus ``COMPARISON_RELEVANCE_WEIGHT`` x its evidence score for the
    question (the answer's ``hits`` carry them). No sentence with that role: the cell is None ("not stated in
    the abstract"). (Until issue 23 the cell was the sentence closest to an ML-worded column description plus cue
    words; on held-out labelled abstracts of several fields the share of filled cells holding a sentence of the
    column's role went from 0.727 to 0.797, benchmarks/comparison_fill.py.)
    """
    rows = []
    for n, hit in enumerate(hits, start=1):
        classes, proba = role_table(hit.sentences, cache)
        roles = [classes[j] for j in proba.argmax(axis=1)] if len(hit.sentences) else []
        cells: list[AnswerSentence | None] = []
        for name in COLUMNS:
            role = COLUMN_ROLES[name]
            best, best_i = float("-inf"), -1
            for i in range(len(hit.sentences)):
                if roles[i] != role:
                    continue
                score = float(proba[i, classes.index(role)])
                if hit.sentence_scores:
                    score += COMPARISON_RELEVANCE_WEIGHT * hit.sentence_scores[i]
                if score > best:
                    best, best_i = score, i
            if best_i < 0:
                cells.append(None)
                continue
            start = readable_start(hit.sentences, best_i)  # "The latter …" is shown with what it refers to
            text = " ".join(hit.sentences[start : best_i + 1])
            cells.append(AnswerSentence(text, (n,), round(max(best, 0.0), 3)))
        rows.append(ComparisonRow(n, tuple(cells)))
    return Comparison(COLUMNS, tuple(rows))


def topic_members(topic: str, hits: Sequence[PaperHit], min_evidence: float) -> list[PaperHit]:
    """The candidates (retriever order for ``topic``) that belong in the topic list: none when even the best
    candidate's best evidence sentence scores under ``min_evidence`` (``Settings.answer.topic_min_evidence``: nothing is
    about the topic); else the best candidate and every candidate the trained membership classifier
    (:func:`assistant.understand.learned.topic_membership`, learned from 1,625 labelled (topic, paper) pairs over
    the 9.9k-paper corpus, on scores relative to the best candidate's) gives P(member) >= 0.5."""
    if not hits:
        return []
    best = [max((e.score for e in h.evidence), default=float("-inf")) for h in hits]
    top = max(range(len(hits)), key=lambda i: best[i])
    if best[top] < min_evidence:
        return []
    proba = topic_membership(topic, hits)
    return [h for i, (h, p) in enumerate(zip(hits, proba)) if p >= 0.5 or i == top]
