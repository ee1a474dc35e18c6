"""Answers made of abstract sentences, chosen for what the question asks (issue 13, parts 3 and 4).

* :func:`refocus`: the paper a question is about is the first of the top papers that mentions every name
  in the question (``GPT-4o``, ``LeReT``), not simply the best-ranked one.
* whether the paper states the detail asked for at all is decided over every abstract sentence by
  :mod:`assistant.verify.answerable` (issue 23), called from ``strategies.LookupStrategy.settle``.
* :func:`pick_sentences`: the sentences that hold the requested thing (the number next to the measured
  noun, the sentence naming the question's entity, the sentence that negates a false premise, the
  contribution sentence for "which paper" questions), not the abstract's background sentences.

The weights (assistant/tuning.py) were set on the kinds of question in eval/dev.jsonl (docs/evaluation.md, "Extractive
answers"); each is added to a sentence's evidence score (retrieval.py, roughly 0.2-1.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.question_words import NAMING_VERBS
from assistant.lang.text import content_tokens, states_contribution
from assistant.lang.words import SPACE_BEFORE_STOP
from assistant.tuning import (
    CONTRIBUTION_BONUS,
    DEFINITION_BONUS,
    ENTITY_BONUS,
    ENTITY_BONUS_MAX_NAMES,
    EXPANSION_BONUS,
    NEGATION_BONUS,
    NUMBER_BONUS,
    QUANTITY_BONUS,
    REFOCUS_DEPTH,
)
from assistant.types import Evidence, PaperHit
from assistant.understand.question import (
    QuestionFacts,
    has_number,
    mentions,
    missing_entities,
    negates,
    states_quantity,
)

if TYPE_CHECKING:
    from assistant.understand.turn import TurnCache


def _introduces(hit: PaperHit, entity: str) -> bool:
    """True when the paper names ``entity`` in its title, in a contribution sentence ("we propose X"), as
    an acronym it defines ("... processing ability (NUPA)") or as "our (proposed) X": the paper is *about*
    that thing, not just comparing with it."""
    e = entity.lower()
    return mentions(hit.paper.title, entity) or any(
        (states_contribution(s) and mentions(s, entity))
        or f"({e})" in s.lower()
        or f"our proposed {e}" in s.lower()
        or f"our {e}" in s.lower()
        for s in hit.sentences
    )


#: A question needs this many content words besides its paper's title words to be searched without them.
_DETAIL_MIN_WORDS = 2


def detail_query(question: str, title: str) -> str:
    """``question`` without the words of its paper's ``title`` ("On which real-world tasks is the quasi-Newton
    bilevel optimization framework evaluated?" -> "On which real-world tasks is the framework evaluated?"):
    what it asks of the paper, not how it names it; ``question`` itself when fewer than two content words
    would be left or none was removed."""
    title_words = content_tokens(title)
    kept = [w for w in question.split() if not (content_tokens(w) and content_tokens(w) <= title_words)]
    detail = " ".join(kept)
    if len(kept) == len(question.split()) or len(content_tokens(detail)) < _DETAIL_MIN_WORDS:
        return question
    return SPACE_BEFORE_STOP.sub(r"\1", detail)


def introduces_in(sentence: str, entity: str) -> bool:
    """True when ``sentence`` introduces ``entity``: a contribution sentence naming it ("we propose X"),
    an acronym it defines ("... (X)"), or "dubbed/called/named X"."""
    low, e = sentence.lower(), entity.lower()
    return (
        (states_contribution(sentence) and mentions(sentence, entity))
        or f"({e})" in low
        or any(f"{w} {e}" in low for w in NAMING_VERBS)
    )


def refocus(hits: Sequence[PaperHit], facts: QuestionFacts) -> list[PaperHit]:
    """``hits`` with the paper the question is about moved to the front: among the top
    :data:`REFOCUS_DEPTH`, the first that mentions every question entity; if none does, the first that
    introduces one of them (title or contribution sentence). Unchanged when the first paper qualifies."""
    hits = list(hits)
    if not facts.entities or not hits or not missing_entities(facts, hits[0].paper):
        return hits
    top = hits[:REFOCUS_DEPTH]
    chosen = next((h for h in top if not missing_entities(facts, h.paper)), None)
    if chosen is None:
        chosen = next((h for h in top if any(_introduces(h, e) for e in facts.entities)), hits[0])
    return [chosen] + [h for h in hits if h is not chosen]


def _expands(sentence: str, entity: str) -> bool:
    low, e = sentence.lower(), entity.lower()
    return f"({e})" in low or f"{e} (" in low or f"{e}, short for" in low or f"{e}: " in low


@dataclass(frozen=True, slots=True)
class Pick:
    """A chosen sentence with its score (evidence score + bonuses)."""

    evidence: Evidence
    score: float


def score_sentences(hit: PaperHit, facts: QuestionFacts, question: str) -> list[Pick]:
    """Every sentence of ``hit`` scored for ``question``: its evidence score plus the bonuses above."""
    q_tokens = content_tokens(question)
    scores = hit.sentence_scores or tuple(0.0 for _ in hit.sentences)
    picks = []
    for i, (sent, base) in enumerate(zip(hit.sentences, scores)):
        bonus = 0.0
        if facts.quantity:
            if facts.measured and states_quantity(facts, sent):
                bonus += QUANTITY_BONUS
            elif has_number(sent):
                bonus += NUMBER_BONUS
        named = [e for e in facts.entities if mentions(sent, e)]
        bonus += ENTITY_BONUS * min(ENTITY_BONUS_MAX_NAMES, len(named))
        if facts.expansion and any(_expands(sent, e) for e in facts.entities):
            bonus += EXPANSION_BONUS
        if negates(sent) and q_tokens & content_tokens(sent) and not negates(question):
            bonus += NEGATION_BONUS
        if facts.which_paper and states_contribution(sent):
            bonus += CONTRIBUTION_BONUS
        if facts.definition and any(introduces_in(sent, e) for e in facts.entities):
            bonus += DEFINITION_BONUS
        picks.append(Pick(Evidence(hit.paper.id, i, sent, base), base + bonus))
    return picks


#: Names of the features :func:`answer_features` gives each (question, sentence) pair.
ANSWER_FEATURES = (
    "evidence",
    "evidence_below_best",
    "measured_quantity",
    "number_for_quantity",
    "names_entities",
    "expands_entity",
    "negates_premise",
    "contribution_for_which_paper",
    "introduces_defined",
    "question_stems_share",
    "relative_position",
    "first_sentence",
    "role_problem",
    "role_approach",
    "role_data",
    "role_result",
    "role_other",
    "asked_thing_share",
    "counted_words_share",
    "evidence_rank",
    "has_digit",
)


def answer_features(hit: PaperHit, facts: QuestionFacts, question: str, cache: TurnCache | None = None) -> np.ndarray:
    """``(len(hit.sentences), len(ANSWER_FEATURES))``: for each sentence, its evidence score for the question
    (and how far below the abstract's best), the exact checks of :func:`score_sentences` as 0/1 (a number of the
    measured noun, a number at all for a how-many question, names of the question, an acronym expanded, a
    negation of a premise, a contribution sentence for "which paper", a name introduced for "what is X"), the
    share of the question's word stems it contains (the words of the paper's title left out: "the universal
    dexterous grasping paper" names the paper, it is not what is asked), its place in the abstract, the role
    classifier's probabilities (problem, approach, data, result, other), the share of the stems of what a
    "what/which <thing>" question asks for and of the noun a "how many" question counts that it contains, its
    rank by evidence score (1 / (1 + rank)) and whether it has a digit."""
    from assistant.lang.text import stems
    from assistant.understand.intents import role_table
    from assistant.understand.question import asked_thing, counted_words

    n = len(hit.sentences)
    out = np.zeros((n, len(ANSWER_FEATURES)), dtype=np.float32)
    if not n:
        return out
    scores = hit.sentence_scores or tuple(0.0 for _ in hit.sentences)
    top = max(scores)
    q_tokens = content_tokens(question)
    q_stems = stems(detail_query(question, hit.paper.title))  # what it asks, not how it names the paper
    classes, roles = role_table(hit.sentences, cache)
    order = [classes.index(r) for r in ("problem", "approach", "data", "result", "other")]
    thing, counted = stems(" ".join(asked_thing(question))), stems(" ".join(counted_words(question)))
    rank = {i: r for r, i in enumerate(sorted(range(n), key=lambda i: -scores[i]))}
    for i, sent in enumerate(hit.sentences):
        out[i, :12] = (
            scores[i],
            top - scores[i],
            float(bool(facts.quantity and facts.measured and states_quantity(facts, sent))),
            float(bool(facts.quantity and has_number(sent))),
            min(ENTITY_BONUS_MAX_NAMES, sum(1 for e in facts.entities if mentions(sent, e))) / ENTITY_BONUS_MAX_NAMES,
            float(bool(facts.expansion and any(_expands(sent, e) for e in facts.entities))),
            float(bool(negates(sent) and q_tokens & content_tokens(sent) and not negates(question))),
            float(bool(facts.which_paper and states_contribution(sent))),
            float(bool(facts.definition and any(introduces_in(sent, e) for e in facts.entities))),
            len(q_stems & stems(sent)) / max(1, len(q_stems)),
            i / max(1, n - 1),
            float(i == 0),
        )
        out[i, 12:17] = roles[i, order]
        sent_stems = stems(sent)
        out[i, 17:] = (
            len(thing & sent_stems) / len(thing) if thing else 0.0,
            len(counted & sent_stems) / len(counted) if counted else 0.0,
            1.0 / (1 + rank[i]),
            float(any(ch.isdigit() for ch in sent)),
        )
    return out


def pick_sentences(
    hit: PaperHit, facts: QuestionFacts, question: str, k: int, cache: TurnCache | None = None
) -> list[Evidence]:
    """The ``k`` sentences of ``hit`` that best answer ``question`` (:func:`answer_probabilities`), in abstract
    order; for a "which paper ...?" question the paper's contribution sentence (the one that names what it
    proposes) is one of them. ``Evidence.score`` stays the plain evidence score (shown as support). ``cache``:
    the turn's memo (the model's scores for one paper and question are computed once per turn)."""
    if not hit.sentences:
        return []
    proba = answer_probabilities(hit, facts, question, cache)
    ranked = sorted(range(len(hit.sentences)), key=lambda i: -proba[i])
    own = next((i for i, s in enumerate(hit.sentences) if states_contribution(s)), None)
    if facts.which_paper and own is not None and k >= 1:  # "which paper ...?" is answered by the one naming it
        ranked = [own] + [i for i in ranked if i != own]
    best = ranked[:k]
    scores = hit.sentence_scores or tuple(0.0 for _ in hit.sentences)
    return [Evidence(hit.paper.id, i, hit.sentences[i], scores[i]) for i in sorted(best)]


def answer_probabilities(
    hit: PaperHit, facts: QuestionFacts, question: str, cache: TurnCache | None = None
) -> np.ndarray:
    """P(the sentence answers ``question``) for each sentence of ``hit``: the trained answer-sentence selector
    (``models/answer.npz``, scripts/train_understanding.py: 600 questions written about 150 real abstracts by
    annotators who never saw the code, + Check-COVID claims; top-1 on held-out papers 0.714 where the
    hand-weighted :func:`score_sentences` gets 0.670; docs/models/understanding.md) over :func:`answer_features`."""
    from assistant.understand.learned import load_model

    def compute() -> np.ndarray:
        model = load_model("answer")
        proba = model.proba([""] * len(hit.sentences), answer_features(hit, facts, question, cache))
        return proba[:, model.classes.index("1")]

    if cache is None:
        return compute()
    return cache.get("answer", (question, facts, hit.paper.id, hit.sentences, hit.sentence_scores), compute)


#: The roles a summary's sentences take, in order of preference, by how many sentences it has room for: the
#: problem, the approach and the key result (what the summary task asks of a model, prompts/strategies.py).
SUMMARY_ROLES = {1: ("approach",), 2: ("approach", "result"), 3: ("problem", "approach", "result")}


def summary_sentences(hit: PaperHit, k: int, cache: TurnCache | None = None) -> list[Evidence]:
    """``k`` sentences that summarise ``hit``: for each role of :data:`SUMMARY_ROLES` (intents.sentence_roles)
    the sentence of that role that scores best for the question, then the best-scoring others; in abstract
    order. Without per-sentence scores, its evidence sentences are used as they are."""
    from assistant.understand.intents import sentence_roles

    if not hit.sentence_scores:
        best = sorted(hit.evidence, key=lambda e: e.score, reverse=True)[:k]
        return sorted(best, key=lambda e: e.sentence_index)
    scores, roles = hit.sentence_scores, sentence_roles(hit.sentences, cache)
    chosen: list[int] = []
    for role in SUMMARY_ROLES.get(k, SUMMARY_ROLES[3]):
        of_role = [i for i, r in enumerate(roles) if r == role]
        if of_role and len(chosen) < k:
            chosen.append(max(of_role, key=lambda i: scores[i]))
    for i in sorted(range(len(hit.sentences)), key=lambda i: scores[i], reverse=True):
        if len(chosen) >= k:
            break
        if i not in chosen:
            chosen.append(i)
    return [Evidence(hit.paper.id, i, hit.sentences[i], scores[i]) for i in sorted(chosen)]


def answers_request(facts: QuestionFacts, texts: Sequence[str]) -> bool:
    """True when the shown ``texts`` contain what the question asks for: the number (quantity questions)
    or, for an acronym, its expansion. Other questions: True."""
    if facts.quantity:
        return any(states_quantity(facts, t) if facts.measured else has_number(t) for t in texts)
    if facts.expansion and facts.entities:
        return any(_expands(t, e) for t in texts for e in facts.entities)
    return True
