"""Is the detail a question asks about stated anywhere in an abstract? (issue 23, part 3)

The decision is made over **every** sentence of the abstract of the paper the question is about (every
paper in focus for "which of them ..."), not by looking for one word near another: each sentence is aligned
with the question the way the citation verifier aligns an answer sentence with its evidence
(:mod:`assistant.verify.attribution`: ``COSINE_WEIGHT`` x embedding cosine + ``LEXICAL_WEIGHT`` x share of the
question's *detail words* found in the sentence), and whether it can answer is decided by exact tests:

* a question that asks for a number ("how many", "what accuracy") is answered by a sentence that states a
  number the question does not give itself, within a few words of the counted or measured thing when the
  question names one (``states_quantity``; any word of "how many *male sparrows*" counts: "We recorded 412
  males");
* any other question is answered by a sentence that names the thing a "what/which <thing>" question asks
  for ("what *simulator* ...", ``question.asked_thing``), or, for other questions, one of its detail words
  (the verifier's relation phrases count as one word: "beat" = "outperforms",
  :data:`assistant.lang.claims.RELATIONS`); or by a sentence whose cosine part of the alignment
  (``COSINE_WEIGHT`` x cosine) reaches ``ANSWERABLE_MIN_ALIGNMENT`` without naming them (a paraphrase);
* a question that asks to name a number of things ("which *four* Atari games ...?") is answered only by a
  sentence naming the thing that lists them (a list mark or enough commas), not by one that restates the
  count ("across four benchmark Atari games").

The detail words are the question's content words without the words of the paper's title (how the
question names the paper: "the grasping one") and without :data:`FRAME_WORDS` (how a question is framed:
"report", "mention", "exactly", "the second one"); words are compared by their Snowball stem (NLTK),
hyphenated words also by their parts, so "males" matches "male sparrows" and "bitrate" matches "bit-rate".

Also here: :func:`false_premise_number`, the exact check of a number with a unit that a question takes for
granted ("The CAD paper reports 20%, right?") against the sentence that answers it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.claims import RELATIONS
from assistant.lang.markup import plain_text
from assistant.lang.numbers import NUMBER_WITH_UNIT, NUMBER_WORDS
from assistant.lang.question_words import FRAME_WORDS
from assistant.lang.stemming import stem
from assistant.lang.text import STOPWORDS, content_tokens, content_words_in_order
from assistant.lang.words import AND, LIST_MARK, TOKEN_JOINER, whole_phrase_pattern
from assistant.tuning import ANSWERABLE_MIN_ALIGNMENT, COSINE_WEIGHT, LEXICAL_WEIGHT
from assistant.types import PaperHit
from assistant.understand.question import NUMBER_TOKEN, QuestionFacts, asked_thing, counted_words, states_quantity
from assistant.verify.constraints import Embedder

if TYPE_CHECKING:
    from assistant.understand.parse import Question


def _stem(word: str) -> str:
    """``word``'s Snowball stem, with an acronym's plural ``s`` removed too (``LMMs`` -> ``lmm``)."""
    s = stem(word)
    return s[:-1] if len(s) > 3 and s.endswith("s") and not s.endswith(("ss", "us", "is")) else s


def _words(token: str) -> set[str]:
    """A content token's stems: the token, and for a hyphenated one its parts and the parts joined
    (``bit-rate`` -> ``bit-rat``, ``bit``, ``rate``, ``bitrat``), so "bitrate" meets "bit-rate"."""
    out = {_stem(token)}
    parts = [p for p in TOKEN_JOINER.split(token) if p]
    if len(parts) > 1:
        out |= {_stem(p) for p in parts if p not in STOPWORDS} | {_stem("".join(parts))}
    return out


@lru_cache(maxsize=1)
def _relation_words() -> dict[str, str]:
    """Each one-word phrase of a verifier relation (rules.RELATIONS, "beats": outperforms / surpasses / beat
    ...), by its stem -> ``rel:<name>``: the relation counts as one detail word."""
    return {_stem(w): f"rel:{name}" for name, phrases in RELATIONS.items() for w in phrases if " " not in w}


@lru_cache(maxsize=1)
def _relation_phrases() -> list[tuple[re.Pattern[str], str]]:
    return [(whole_phrase_pattern(p), f"rel:{name}") for name, ps in RELATIONS.items() for p in ps]


def _stems(text: str) -> set[str]:
    """The stems of ``text``'s content words, plus ``rel:<name>`` for each verifier relation it states."""
    out = {w for t in content_tokens(text) for w in _words(t)}
    return out | {rel for pattern, rel in _relation_phrases() if pattern.search(text)}


def detail_words(question: str, title: str) -> set[str]:
    """Stems of what ``question`` asks about: its content words minus the words of the paper's ``title`` and
    minus :data:`FRAME_WORDS` (``"what simulator did the grasping one run in?"`` about a grasping paper ->
    ``{"simul", "run"}``); a relation word becomes its relation (``"beat"`` -> ``"rel:beats"``). Empty when
    nothing is left (the question only names the paper)."""
    title_stems = _stems(title)
    stems = {_stem(t) for t in content_tokens(question) if t not in FRAME_WORDS}
    return {_relation_words().get(w, w) for w in stems} - title_stems - {""}


def _numbers(text: str) -> set[str]:
    """The numbers ``text`` states (digits with thousands separators removed, number words lower-cased)."""
    return {m.group(0).replace(",", "").lower() for m in NUMBER_TOKEN.finditer(text)}


_COUNTS = {w: v for w, v in NUMBER_WORDS.items() if v <= 10}


def _int(word: str) -> int:
    return int(word) if word.isdigit() else 0


#: Words on each side of the named thing searched for its list ("Pong, Breakout, Seaquest and Qbert games").
_LIST_WINDOW = 8


def _lists(sentence: str, count: int, thing: set[str]) -> bool:
    """True when ``sentence`` lists the ``count`` things it names (``thing``: stems) rather than only stating how
    many there are: right after a word of the thing, a list mark (:data:`LIST_MARK`: "components: (1) ..."),
    or, within :data:`_LIST_WINDOW` words on one side of it, at least ``count - 1`` separators (commas, "and")."""
    words = sentence.split()
    at = [i for i, w in enumerate(words) if _words(w.strip(",.;:()").lower()) & thing]
    for i in at:
        after, before = words[i + 1 : i + 1 + _LIST_WINDOW], words[max(0, i - _LIST_WINDOW) : i]
        if LIST_MARK.search(" ".join([words[i], *after[:3]])):
            return True
        for side in (before, after):
            text = " ".join(side)
            if count > 1 and text.count(",") + len(AND.findall(text)) >= count - 1:
                return True
    return False


@dataclass(frozen=True, slots=True)
class SentenceFit:
    """How well abstract sentence ``index`` of paper ``paper_id`` could answer the question: ``alignment``
    (cosine + detail-word share, [0, 1]), ``shared`` (detail words it contains), ``form_ok`` (it has what the
    question's form needs, module docstring)."""

    paper_id: str
    index: int
    text: str
    alignment: float
    shared: frozenset[str]
    form_ok: bool


@dataclass(frozen=True, slots=True)
class Answerability:
    """The verdict for one question over one or more papers: ``stated`` when some sentence can answer it;
    ``best`` the sentence that answers best (when stated) or the best-aligned sentence (when not: context
    only, never an answer); ``detail`` the detail words; ``missing`` the question's words (as written) whose
    stems no sentence contains; ``fits`` every sentence scored."""

    stated: bool
    best: SentenceFit | None
    detail: frozenset[str]
    missing: tuple[str, ...]
    fits: tuple[SentenceFit, ...] = ()


def sentence_fits(
    question: str | Question,
    facts: QuestionFacts,
    hit: PaperHit,
    embed: Embedder,
    min_alignment: float = ANSWERABLE_MIN_ALIGNMENT,
) -> list[SentenceFit]:
    """Every sentence of ``hit``'s abstract scored against ``question`` (a text, or the turn's reading:
    ``understand.parse.Question``, whose words and vector are then not read or embedded again; module
    docstring).

    Shapes: one embedding batch (the question plus the abstract's sentences, cached by the app's embedder;
    for a parsed question its query vector of this turn when retrieval embedded it already); returns one
    :class:`SentenceFit` per sentence, in abstract order ([] for an empty abstract)."""
    texts = [plain_text(t) for t in hit.sentences]
    if not texts:
        return []
    text = question if isinstance(question, str) else question.text
    asked = asked_thing(text) if isinstance(question, str) else question.asked_thing
    counted_phrase = counted_words(text) if isinstance(question, str) else question.counted
    detail = detail_words(text, hit.paper.title)
    asked_numbers = _numbers(text)
    # every word of "how many <male sparrows>" may carry the count ("412 males"), within the same window
    counted = replace(facts, measured=tuple(stem(w) for w in counted_phrase if w.lower() not in FRAME_WORDS))
    thing = {_stem(t) for w in asked for t in content_tokens(w) if t not in FRAME_WORDS} & detail
    listed = next((_COUNTS.get(w.lower(), 0) or _int(w) for w in asked if NUMBER_TOKEN.fullmatch(w)), 0)
    if isinstance(question, str):
        vectors = np.asarray(embed([question, *hit.sentences]), dtype=np.float32)
        q_vec, sentence_vecs = vectors[0], vectors[1:]
    else:  # the question's vector of this turn (the same model's: a query vector equals a text's)
        q_vec = np.asarray(question.cache.get("query", text, lambda: embed([text])[0]), dtype=np.float32)
        sentence_vecs = np.asarray(embed(list(hit.sentences)), dtype=np.float32)
    cosines = np.clip(sentence_vecs @ q_vec, 0.0, None)
    fits = []
    for i, (text, cos) in enumerate(zip(texts, cosines)):
        words = _stems(text)
        shared = detail & words
        alignment = COSINE_WEIGHT * float(cos) + LEXICAL_WEIGHT * (len(shared) / len(detail) if detail else 0.0)
        if facts.quantity:
            new_number = bool(_numbers(text) - asked_numbers)
            about = not facts.measured or states_quantity(facts, text) or states_quantity(counted, text)
            form_ok = new_number and about
        else:  # the thing a "what/which <thing>" question asks for must be named; else any detail word
            named = bool(thing & words) if thing else bool(shared) or not detail
            if listed:  # "which four Atari games": the sentence must list them, not restate the count
                form_ok = named and _lists(text, listed, thing)
            else:
                form_ok = named or COSINE_WEIGHT * float(cos) >= min_alignment  # a paraphrase: by meaning alone
        fits.append(SentenceFit(hit.paper.id, i, text, alignment, frozenset(shared), form_ok))
    return fits


def answerability(
    question: str | Question,
    facts: QuestionFacts,
    hits: Sequence[PaperHit],
    embed: Embedder,
    min_alignment: float = ANSWERABLE_MIN_ALIGNMENT,
) -> Answerability:
    """Whether the abstracts of ``hits`` (the paper the question is about, or every paper in focus) state what
    ``question`` asks (module docstring): stated when some sentence of one of them has the right form.

    Args:
        min_alignment: cosine + share alignment at which a sentence sharing no detail word still answers a
            question that asks for no number (``tuning.ANSWERABLE_MIN_ALIGNMENT``).

    Returns:
        an :class:`Answerability`; ``best`` is None only when no paper has a sentence.
    """
    fits = [f for hit in hits for f in sentence_fits(question, facts, hit, embed, min_alignment)]
    text = question if isinstance(question, str) else question.text
    detail = frozenset().union(*(detail_words(text, h.paper.title) for h in hits[:1])) if hits else frozenset()
    found = set().union(*(f.shared for f in fits)) if fits else set()
    missing = tuple(
        t for t in content_words_in_order(text) if _relation_words().get(_stem(t), _stem(t)) in detail - found
    )
    candidates = [f for f in fits if f.form_ok]
    best = max(candidates or fits, key=lambda f: f.alignment, default=None)
    return Answerability(bool(candidates), best, detail, missing, tuple(fits))


@dataclass(frozen=True, slots=True)
class NumberPremise:
    """A number the question takes for granted that the abstract does not state (``claimed``, e.g. "20%"),
    and the numbers of the same unit that the sentence answering the question states instead (``stated``,
    e.g. ``("7.30%", "5.0%")``), in sentence ``index`` (``text``)."""

    claimed: str
    stated: tuple[str, ...]
    index: int
    text: str


def _unit(u: str) -> str:
    return "%" if u.lower() in ("%", "percent") else "x"


def _value(n: str) -> float | None:
    try:
        return float(n.replace(",", ""))
    except ValueError:
        return None


def false_premise_number(question: str, hit: PaperHit, fits: Sequence[SentenceFit]) -> NumberPremise | None:
    """The exact check of a number with a unit in ``question`` ("20%", "10x") against ``hit``'s abstract: when
    the abstract (title included) never states that value with that unit, and the best-aligned sentence
    stating a number of the same unit states others, those are what the answer must say instead.

    Returns:
        a :class:`NumberPremise`, or None (no such number in the question, the abstract states it, or no
        sentence states a number of the same unit).
    """
    text = plain_text(f"{hit.paper.title} {hit.paper.text}")
    stated_here = {(_value(n), _unit(u)) for n, u in NUMBER_WITH_UNIT.findall(text)}
    own = [f for f in fits if f.paper_id == hit.paper.id]
    for m in NUMBER_WITH_UNIT.finditer(question):
        claimed = (_value(m.group(1)), _unit(m.group(2)))
        if claimed[0] is None or claimed in stated_here:
            continue
        for fit in sorted(own, key=lambda f: -f.alignment):
            others = [
                f"{n}{'%' if claimed[1] == '%' else u}"
                for n, u in NUMBER_WITH_UNIT.findall(fit.text)
                if _unit(u) == claimed[1]
            ]
            if others:
                return NumberPremise(m.group(0).strip(), tuple(dict.fromkeys(others)), fit.index, fit.text)
    return None


def near_miss(question: str, hit: PaperHit) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The question's detail words (as written) that ``hit``'s title and abstract do and do not contain:
    ``(found, missing)`` ("a benchmark of AI-generated videos" against A-Bench -> found ``benchmark``,
    ``ai-generated``; missing ``videos``). Words compared by stem, as in :func:`answerability`."""
    detail = detail_words(question, "")
    present = _stems(f"{hit.paper.title} {plain_text(hit.paper.text)}")
    relations = _relation_words()
    found: list[str] = []
    missing: list[str] = []
    for t in content_words_in_order(question):
        w = relations.get(_stem(t), _stem(t))
        if w in detail:
            (found if w in present else missing).append(t)
    return tuple(found), tuple(missing)
