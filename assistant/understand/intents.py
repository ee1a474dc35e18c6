"""Intent detection (lookup / summary / compare / topic) and the two intents answered by code alone:
the comparison table and the topic listing. Every cell and line is an abstract sentence, cited."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from assistant.lang.discourse import readable_start
from assistant.lang.text import content_tokens
from assistant.tuning import COMPARISON_RELEVANCE_WEIGHT, CUE_MAX, CUE_WEIGHT
from assistant.types import INTENTS, AnswerSentence, Comparison, ComparisonRow, Intent, PaperHit
from assistant.understand.learned import classify_intent, classify_roles, intent_probabilities, topic_membership

Embedder = Callable[[list[str]], list[list[float]]]

_TOPIC_FRAME = re.compile(
    r"^\s*(?:which|what|are there any|any|list|find|show me)\s+(?:of the\s+)?"
    r"(?:papers|abstracts|works|studies|articles)\s*(?:that|which|are|do|does)?\s*|"
    r"\b(?:list (?:all|every)(?: of)? (?:them|papers|the papers)?|all of them)\b[.?!]*",
    re.I,
)

#: Comparison columns and the description each cell sentence is matched against (embedding cosine),
#: plus cue words that mark such sentences in abstracts.
COLUMNS: tuple[tuple[str, str, frozenset[str]], ...] = (
    (
        "problem",
        "the problem, challenge or limitation of existing methods that this work addresses",
        frozenset(
            {"challenge", "challenges", "limitation", "limitations", "however", "struggle", "problem", "fail", "lack"}
        ),
    ),
    (
        "approach",
        "we propose a new method, framework or model that works by",
        frozenset({"propose", "introduce", "present", "framework", "novel", "approach", "design"}),
    ),
    (
        "data / setting",
        "experiments on datasets, benchmarks, tasks and settings",
        frozenset({"dataset", "datasets", "benchmark", "benchmarks", "experiments", "tasks", "evaluate", "evaluated"}),
    ),
    (
        "key result",
        "results show it outperforms baselines, achieving better accuracy and efficiency",
        frozenset(
            {
                "outperforms",
                "outperform",
                "achieves",
                "achieve",
                "improves",
                "state-of-the-art",
                "surpassing",
                "results",
            }
        ),
    ),
)


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


def sentence_roles(sentences: Sequence[str]) -> list[str]:
    """The role each sentence of one abstract plays: ``problem``, ``approach``, ``data``, ``result`` or
    ``other`` (background, code links, hopes): the trained role classifier
    (:func:`assistant.understand.learned.classify_roles`, learned from 2,238 sentences of 278 real abstracts
    of several fields; held-out accuracy in docs/models/understanding.md)."""
    return classify_roles(sentences)


def comparison_table(hits: Sequence[PaperHit], embed: Embedder, question: str) -> Comparison:
    """Rows = papers (label ``n`` = position in ``hits`` + 1), columns = :data:`COLUMNS`.

    A sentence goes only under the column whose role it plays (:func:`sentence_roles`); among those, the
    cell is the one that best fits the column (cosine to the column description + cue words + relevance
    to the question). No sentence with that role: the cell is None ("not stated in the abstract").
    """
    col_vecs = embed([desc for _, desc, _ in COLUMNS])
    rows = []
    for n, hit in enumerate(hits, start=1):
        vecs = embed(list(hit.sentences))
        roles = sentence_roles(hit.sentences)
        cells: list[AnswerSentence | None] = []
        for (name, _, cues), cvec in zip(COLUMNS, col_vecs):
            best, best_i = float("-inf"), -1
            for i, (sent, svec) in enumerate(zip(hit.sentences, vecs)):
                if roles[i] != COLUMN_ROLES[name]:
                    continue
                toks = content_tokens(sent)
                score = sum(a * b for a, b in zip(svec, cvec)) + CUE_WEIGHT * min(CUE_MAX, len(toks & cues))
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
    return Comparison(tuple(c for c, _, _ in COLUMNS), tuple(rows))


def topic_members(topic: str, hits: Sequence[PaperHit], min_evidence: float) -> list[PaperHit]:
    """The candidates (retriever order for ``topic``) that belong in the topic list: none when even the best
    candidate's best evidence sentence scores under ``min_evidence`` (``Settings.topic_min_evidence``: nothing is
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
