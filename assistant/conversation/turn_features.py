"""Features of the candidate papers of one conversation turn, for a learned turn resolver (issue 42): which of
the papers the conversation showed, the question names, or a search for it finds, the turn is about.

Candidates: every paper the conversation showed (most recent first), the papers the question names or describes
(:func:`~assistant.retrieve.references.find_references`), and the best papers of a profile search for the question
(``PaperRetriever.describes``). Each gets :data:`FEATURES`: where the conversation showed it (latest answer, how
many turns ago, its position in the latest list and whether an ordinal or ``[n]`` in the question points at it:
exact), whether the question names it (exact), how well the question describes it (profile cosine, its margin
over the best other candidate and over the papers in focus), the question's pronouns (closed-class words) and
its intent probabilities (the trained intent model), ordinals counted over the papers in the order the turns
took them up, the longest word run the question shares with each abstract (a pasted passage), each of the
question's sentences' cosines, "the former/latter", "both / the two" and the position in the latest list ("that
one" after a list is its first) and paper BM25 over title + abstract (retrieve/paper_bm25.py: a keyword
description). :class:`CandidateScorer` (a small network trained by scripts/train_resolver.py) scores P(the turn is
about this paper). Not used by the assistant yet: benchmarks/turn_resolution.py ``--scorer`` measures it against
the rules of conversation/resolve.py first (docs/results/issue42/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from assistant.conversation.state import Turn
from assistant.lang.numbers import ORDINALS
from assistant.lang.references import (
    FORMER_LATTER,
    LABEL_REF,
    ORDINAL_REF,
    OTHER,
    PLURAL_REF,
    SET_REF,
    SINGULAR_REF,
)
from assistant.lang.text import word_tokens
from assistant.retrieve.references import find_references
from assistant.types import Answer, AnswerSentence, Citation

if TYPE_CHECKING:
    from assistant.conversation.state import ConversationState
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.types import Paper
    from assistant.understand.parse import Question

#: Papers of a profile search for the question scored besides the conversation's.
SEARCH_CANDIDATES = 5
#: Feature names, in column order.
FEATURES = (
    "in_conversation",
    "in_latest",
    "recency",  # 1 / (1 + turns since it was last shown); 0 when never shown
    "in_list",  # in the latest answer that showed two or more papers
    "ordinal_points_here",  # "the second one" and it is the second of that list
    "label_points_here",  # "[2]" / "paper 2" and it is labelled 2
    "other_points_here",  # "the other one" and it is the latest-shown paper not in the latest answer
    "named",  # the question names or describes it (references.find_references)
    "similarity",  # profile cosine of the question to the paper
    "similarity_margin",  # its cosine minus the best other candidate's
    "over_focus",  # its cosine minus the best cosine of a paper in the latest answer (0 for those)
    "search_rank",  # 1 / (1 + rank) among the candidates by cosine
    "plural_ref",
    "singular_ref",
    "no_ref",
    "plural_and_latest",
    "singular_and_latest",
    "no_ref_and_latest",
    "no_ref_and_named",
    "compare_p",
    "choice_p",
    "compare_and_conversation",
    "choice_and_list",
    "latest_size",  # papers the latest answer showed (capped at 3) / 3
    "first_turn",
    "has_ordinal",
    "ordinal_label_here",  # "the second one" and it is labelled [2] (the order papers were first cited)
    "ordinal_turn_order_here",  # "the second one" and it is the second paper the turns were about (first shown)
    "pasted_run",  # the longest word run the question shares with its title + abstract, / 12, capped at 1
    "pasted_share",  # that run / the question's words
    "sentence_similarity",  # the best profile cosine of one of the question's sentences (whole question: one)
    "sentence_margin",  # that cosine minus the best other candidate's for the same sentence
    "former_latter_here",  # "the former" / "the latter" and it is the first / last of the latest list
    "set_ref",  # "both", "the two", "each of them" ...
    "set_ref_and_recent_two",  # that, and it is one of the two papers shown most recently
    "list_position",  # 1 / position in the latest answer that showed two or more papers (0 when not in it)
    "bm25_share",  # paper BM25 (title + abstract) of the question / the best paper's of the whole index
    "bm25_margin",  # that, minus the best other candidate's
    "bm25_sentence_share",  # the best share over the question's sentences (a description may be one sentence)
)
#: Papers of a paper-BM25 search for the question (and for each of its sentences) added to the candidates.
BM25_CANDIDATES = 3
#: Words of a shared run that count as a whole pasted passage (``pasted_run`` = run / this, capped at 1).
PASTED_RUN_WORDS = 12


@dataclass(frozen=True, slots=True)
class TurnCandidates:
    """The candidate papers of one turn (``ids``, conversation papers first) and their feature rows (``matrix``:
    shape ``(len(ids), len(FEATURES))``, float32)."""

    ids: tuple[str, ...]
    matrix: np.ndarray


def turn_candidates(
    question: Question, state: ConversationState, retriever: PaperRetriever, min_similarity: float
) -> TurnCandidates:
    """The candidates of ``question`` in ``state`` (module docstring) with their features; ``min_similarity``:
    ``Settings.retrieval.min_similarity`` (a description below it names no paper). Costs one query embedding, a
    search, and the searches ``find_references`` makes for the question's descriptions."""
    text = question.text
    shown = state.shown()
    recent = state.recent()
    latest = list(shown[0]) if shown else []
    listed = next((list(s) for s in shown if len(s) >= 2), [])
    refs = find_references(question, retriever, min_similarity)
    sims = retriever.describes(retriever.query(text, question.cache), [*recent, *refs.named], top_k=SEARCH_CANDIDATES)
    parts = list(question.sentences) if len(question.sentences) > 1 else []
    part_sims = [
        retriever.describes(retriever.query(part, question.cache), [*recent, *refs.named], top_k=SEARCH_CANDIDATES)
        for part in parts
    ] or [sims]
    lexical = retriever.paper_bm25
    texts = [text, *parts]
    bm25_top = [lexical.search(t, BM25_CANDIDATES) for t in texts]
    searched = [*(pid for ps in part_sims for pid in ps), *(pid for top in bm25_top for pid, _ in top)]
    ids = list(dict.fromkeys([*recent, *refs.named, *sims, *searched]))
    bm25 = [_shares(lexical.scores(t, ids), top) for t, top in zip(texts, bm25_top, strict=True)]
    if parts:  # a sentence's search found papers the others did not score: score every candidate for each
        sims = retriever.describes(retriever.query(text, question.cache), ids, top_k=SEARCH_CANDIDATES)
        part_sims = [
            retriever.describes(retriever.query(part, question.cache), ids, top_k=SEARCH_CANDIDATES) for part in parts
        ]
    labels = state.labels
    turn_order = list(dict.fromkeys(t.shown[0] for t in state.turns if t.shown))
    question_words = word_tokens(text)
    former_latter = {
        (listed[0] if m.group(1).lower() == "former" else listed[-1]) for m in FORMER_LATTER.finditer(text) if listed
    }
    set_ref = bool(SET_REF.search(text))
    ordinals = [ORDINALS[m.group(1).lower()] for m in ORDINAL_REF.finditer(text)]
    labelled = {state.by_label(int(m.group(1) or m.group(2))) for m in LABEL_REF.finditer(text)}
    other = ""
    if OTHER.search(text):
        other = next((pid for pid in recent if pid not in latest), "")
    plural, singular = bool(PLURAL_REF.search(text)), bool(SINGULAR_REF.search(text))
    no_ref = not (plural or singular or ordinals or labelled or other)
    probs = question.intent_probabilities
    compare_p, choice_p = float(probs.get("compare", 0.0)), float(probs.get("choice", 0.0))
    ranked = sorted(ids, key=lambda pid: -sims.get(pid, -1.0))
    focus_best = max((sims.get(pid, -1.0) for pid in latest), default=0.0)
    rows = []
    for pid in ids:
        s = sims.get(pid, 0.0)
        best_other = max((sims.get(o, -1.0) for o in ids if o != pid), default=0.0)
        ago = next((i for i, turn in enumerate(shown) if pid in turn), None)
        in_conv, in_latest, in_list = pid in recent, pid in latest, pid in listed
        paper = retriever.papers.get(pid)
        run = shared_run(question_words, word_tokens(f"{paper.title} {paper.text}")) if paper else 0
        sentence_best, sentence_margin = max(
            (
                (ps.get(pid, 0.0), ps.get(pid, 0.0) - max((ps.get(o, -1.0) for o in ids if o != pid), default=0.0))
                for ps in part_sims
            ),
            default=(0.0, 0.0),
        )
        share = bm25[0].get(pid, 0.0)
        rows.append(
            [
                in_conv,
                in_latest,
                0.0 if ago is None else 1.0 / (1 + ago),
                in_list,
                any(0 < k <= len(listed) and listed[k - 1] == pid for k in ordinals),
                pid in labelled,
                pid == other,
                pid in refs.named,
                s,
                s - best_other,
                0.0 if in_latest else s - focus_best,
                1.0 / (1 + ranked.index(pid)),
                plural,
                singular,
                no_ref,
                plural and in_latest,
                singular and in_latest,
                no_ref and in_latest,
                no_ref and pid in refs.named,
                compare_p,
                choice_p,
                compare_p * in_conv,
                choice_p * in_list,
                min(len(latest), 3) / 3,
                not shown,
                bool(ordinals),
                any(labels.get(pid) == k for k in ordinals),
                any(0 < k <= len(turn_order) and turn_order[k - 1] == pid for k in ordinals),
                min(run, PASTED_RUN_WORDS) / PASTED_RUN_WORDS,
                run / max(1, len(question_words)),
                sentence_best,
                sentence_margin,
                pid in former_latter,
                set_ref,
                set_ref and pid in recent[:2],
                1.0 / (1 + listed.index(pid)) if in_list else 0.0,
                share,
                share - max((bm25[0].get(o, 0.0) for o in ids if o != pid), default=0.0),
                max(b.get(pid, 0.0) for b in bm25),
            ]
        )
    return TurnCandidates(tuple(ids), np.asarray(rows, dtype=np.float32).reshape(len(ids), len(FEATURES)))


def _shares(scores: dict[str, float], top: list[tuple[str, float]]) -> dict[str, float]:
    """Each candidate's BM25 score over the best score of the whole index (``top``'s first; a candidate's own when
    higher, as from another text): values in [0, 1], all 0 when the text matched no paper."""
    best = max([*(s for _, s in top[:1]), *scores.values(), 0.0])
    return {pid: (s / best if best > 0 else 0.0) for pid, s in scores.items()}


class CandidateScorer:
    """P(a turn is about a candidate) from its :data:`FEATURES` row: a small feed-forward network (standardised
    inputs, ReLU hidden layers, one logistic output; no hidden layer: a logistic regression), its weights read
    from the ``.npz`` scripts/train_resolver.py writes.

    Args:
        weights: arrays ``mean``, ``scale`` (per feature), ``w0``, ``b0``, ``w1``, ``b1`` ... (layer ``i``'s weights
            of shape ``(inputs, outputs)``), and ``features`` (the names the model was trained on).

    Raises:
        ValueError: the weights were trained on other features than today's :data:`FEATURES` (retrain them).
    """

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        if tuple(weights["features"].tolist()) != FEATURES:
            raise ValueError("the resolver was trained on other features than turn_features.FEATURES; retrain it")
        self._mean = weights["mean"].astype(np.float32)
        self._scale = weights["scale"].astype(np.float32)
        n = sum(1 for k in weights if k.startswith("w"))
        self._layers = [(weights[f"w{i}"].astype(np.float32), weights[f"b{i}"].astype(np.float32)) for i in range(n)]

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """P(about this paper) per row of ``matrix`` (shape ``(candidates, len(FEATURES))``) -> ``(candidates,)``."""
        h = (matrix - self._mean) / self._scale
        for i, (w, b) in enumerate(self._layers):
            h = h @ w + b
            if i < len(self._layers) - 1:
                h = np.maximum(h, 0.0)
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(h[:, 0], -60.0, 60.0))))


def shared_run(words: Sequence[str], text_words: Sequence[str]) -> int:
    """The length (in words) of the longest run of consecutive ``words`` that also occurs, consecutively, in
    ``text_words``: 0 when they share no word; a passage pasted from an abstract shares all of its words."""
    positions: dict[str, list[int]] = {}
    for i, w in enumerate(text_words):
        positions.setdefault(w, []).append(i)
    best, previous = 0, dict[int, int]()
    for w in words:
        current = {i: previous.get(i - 1, 0) + 1 for i in positions.get(w, ())}
        best = max(best, max(current.values(), default=0))
        previous = current
    return best


def choose(ids: Sequence[str], probabilities: Sequence[float], threshold: float = 0.5) -> list[str]:
    """The candidates the turn is about: those with probability at least ``threshold``, in candidate order
    (conversation papers first, most recent first); [] means a new search."""
    return [pid for pid, p in zip(ids, probabilities) if p >= threshold]


def record_oracle_turn(state: ConversationState, question: str, query: str, papers: Sequence[Paper]) -> None:
    """Record in ``state`` a turn whose answer cites ``papers`` in order, one title sentence each: the history a
    correct answer leaves, so a replayed conversation scores each turn's resolution on a correct past (training
    and benchmarks; ``papers`` empty: an answer that cites nothing)."""
    answer = Answer(
        question=question,
        sentences=tuple(AnswerSentence(p.title, (i,), 1.0) for i, p in enumerate(papers, 1)),
        citations=tuple(Citation(i, p, ()) for i, p in enumerate(papers, 1)),
        sources=(),
        mode="extractive" if papers else "not_stated",
        model="oracle",
    )
    state.turns.append(Turn(question, query, tuple(p.id for p in papers), state.stable(answer)))
