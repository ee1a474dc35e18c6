"""Features of the candidate papers of one conversation turn, for a learned turn resolver (issue 42): which of
the papers the conversation showed, the question names, or a search for it finds, the turn is about.

Candidates: every paper the conversation showed (most recent first), the papers the question names or describes
(:func:`~assistant.retrieve.references.find_references`), and the best papers of a profile search for the question
(``PaperRetriever.describes``). Each gets :data:`FEATURES`: where the conversation showed it (latest answer, how
many turns ago, its position in the latest list and whether an ordinal or ``[n]`` in the question points at it:
exact), whether the question names it (exact), how well the question describes it (profile cosine, its margin
over the best other candidate and over the papers in focus), the question's pronouns (closed-class words) and
its intent probabilities (the trained intent model). A linear model over these (scripts/train_resolver.py)
scores P(the turn is about this paper).

Measured by benchmarks/turn_resolution.py; the rule cascade in resolve.py is what it is measured against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from assistant.conversation.state import Turn
from assistant.lang.numbers import ORDINALS
from assistant.lang.references import LABEL_REF, ORDINAL_REF, OTHER, PLURAL_REF, SINGULAR_REF
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
)


@dataclass(frozen=True, slots=True)
class TurnCandidates:
    """The candidate papers of one turn (``ids``, conversation papers first) and their feature rows
    (``matrix``: shape ``(len(ids), len(FEATURES))``, float32)."""

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
    sims = retriever.describes(text, [*recent, *refs.named], top_k=SEARCH_CANDIDATES)
    ids = list(dict.fromkeys([*recent, *refs.named, *sims]))
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
            ]
        )
    return TurnCandidates(tuple(ids), np.asarray(rows, dtype=np.float32).reshape(len(ids), len(FEATURES)))


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
