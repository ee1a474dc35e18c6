"""The exact constraints every answer sentence meets before the self-check reads it (never about meaning;
attribution.py, step 2), and the text helpers they use (words, numbers, names).

Every number and name-like token (``DUALFormer``, ``GPT-4o``) must occur in the cited paper, a number with
the word it measures must match the evidence (``12 hours`` vs ``24 hours``), and a named organisation, place or
dataset (a capitalised word inside the sentence: "Stanford University", "Sydney") must occur in the cited paper.
A person the sentence credits is checked against the author list instead
(:class:`~assistant.verify.attribution.Attributor`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from assistant.lang.claims import CLAIM_NUMBER_WORDS, LATEX_MARKUP, REFERS_TO_TWO
from assistant.lang.numbers import DIGIT_NUMBER, THOUSANDS
from assistant.lang.stemming import stem as _stem
from assistant.lang.text import STOPWORDS
from assistant.lang.words import (
    CLAIM_NAME_TOKEN,
    CLAIM_WORD,
    COUNTED_WORKS,
    NOT_PROPER_NOUNS,
    POSSESSIVE,
    PROPER_NOUN,
    whole_name_pattern,
)


def refers_to_two(sentence: str) -> bool:
    """True when ``sentence`` speaks of two works ("both", "the former", "while", "respectively"): it may be
    aligned to one fact from each of two papers."""
    return REFERS_TO_TWO.search(sentence) is not None


Embedder = Callable[[list[str]], list[list[float]]]


def _norm_num(n: str) -> str:
    return n.replace(",", "").rstrip(".")


def _is_name(token: str) -> bool:
    """Name-like: a capital after the first character (``DUALFormer``, ``A-Bench``), letters mixed with
    digits (``GPT-4o``, ``Gen-3``) or all capitals of length >= 2 (``NTK``)."""
    core = token.rstrip("+")
    if len(core) < 2 or not any(c.isalpha() for c in core):
        return False
    return (
        any(c.isupper() for c in core[1:])
        or (any(c.isdigit() for c in core) and any(c.isalpha() for c in core))
        or token.endswith("+")
    )


def names_in(text: str) -> list[str]:
    """Name-like tokens of ``text`` in order (see :func:`_is_name`)."""
    return [t for t in CLAIM_NAME_TOKEN.findall(text) if _is_name(t)]


def name_occurs(name: str, text: str) -> bool:
    """``name`` occurs in ``text`` as a whole token (case-insensitive; a plural ``s`` allowed), so ``GPT-4``
    does not match inside ``GPT-4o``."""
    return whole_name_pattern(name).search(text) is not None


def unmatched_facts(sentence: str, paper_text: str) -> list[str]:
    """Numbers and name-like tokens (``DUALFormer``, ``GPT-4o``, ``TD(0)``) in ``sentence`` absent from ``paper_text``.

    Numbers are compared without thousands commas; names as whole tokens, case-insensitively.
    """
    text_nums = {_norm_num(n) for n in DIGIT_NUMBER.findall(paper_text)}
    missing = [n for n in DIGIT_NUMBER.findall(sentence) if _norm_num(n) not in text_nums]
    missing += [t for t in names_in(sentence) if not name_occurs(t, paper_text)]
    return missing


def words(text: str) -> list[str]:
    """Lower-case word tokens in order, hyphenated words split, LaTeX markup dropped, thousands commas removed,
    number words as digits and ``percent`` as ``%`` (``"sixteen"`` -> ``"16"``, ``"2,864"`` -> ``"2864"``); the
    clause punctuation ``, ; : ( )`` is kept as tokens (it ends a negation's scope)."""
    text = LATEX_MARKUP.sub(" ", text.replace("\\%", "%"))
    text = THOUSANDS.sub(r"\1\2", text.lower())
    return [CLAIM_NUMBER_WORDS.get(w, w) for w in CLAIM_WORD.findall(text.replace("n't", " nt"))]


def _is_number(w: str) -> bool:
    return w[0].isdigit()


def _content(w: str) -> bool:
    return len(w) > 2 and w not in STOPWORDS and not _is_number(w) and w != "%"


@dataclass(frozen=True, slots=True)
class _Text:
    """A sentence analysed once: word tokens, their stems, content stems, and the sentence's own number facts."""

    raw: str
    words: tuple[str, ...]
    stems: tuple[str, ...]
    content: frozenset[str]

    @classmethod
    def of(cls, text: str) -> _Text:
        ws = tuple(words(text))
        stems = tuple(_stem(w) for w in ws)
        return cls(text, ws, stems, frozenset(s for w, s in zip(ws, stems) if _content(w)))


def _numbers(t: _Text) -> list[tuple[str, str]]:
    """``(number, the word after it)`` for each number in ``t`` (``%`` counts as the word), counts of works skipped."""
    out = []
    for i, w in enumerate(t.words):
        if _is_number(w):
            nxt = t.stems[i + 1] if i + 1 < len(t.words) and (t.words[i + 1].isalnum() or t.words[i + 1] == "%") else ""
            if nxt in {_stem(m) for m in COUNTED_WORKS}:
                continue
            out.append((w.rstrip("."), nxt))
    return out


#: Words that make a number a bound rather than a value ("up to 27 baselines", "by as much as 377%"), as word tuples
#: of :func:`words`; a closed class of English, like negations.
NUMBER_BOUNDS = tuple(
    tuple(b.split())
    for b in (
        "up to", "as much as", "as many as", "as high as", "as low as", "as few as", "at most", "at least",
        "more than", "less than", "fewer than", "greater than", "over", "under", "above", "below", "nearly", "almost",
        "approximately", "about", "around", "roughly", "exceeding", "exceeds", "within",
    )
)  # fmt: skip


def _bounded(t: _Text, i: int) -> bool:
    """True when the number at word ``i`` of ``t`` is preceded by a bound (:data:`NUMBER_BOUNDS`), possibly with
    "by" or "of" between ("by as much as 377%", "up to 27")."""
    before = list(t.words[max(0, i - 4) : i])
    while before and before[-1] in ("by", "of"):
        before.pop()
    return any(tuple(before[-len(b) :]) == b for b in NUMBER_BOUNDS if len(before) >= len(b))


def _bounds(t: _Text, every: bool) -> dict[str, bool]:
    """Each number of ``t``: True when every occurrence of it (``every``), or any (not ``every``), is a bound
    (:func:`_bounded`)."""
    out: dict[str, bool] = {}
    for i, w in enumerate(t.words):
        if _is_number(w):
            n, bounded = w.rstrip("."), _bounded(t, i)
            out[n] = (out.get(n, True) and bounded) if every else (out.get(n, False) or bounded)
    return out


def _check_numbers(claim: _Text, ev: _Text) -> str:
    ev_nums = _numbers(ev)
    ev_values = {n for n, _ in ev_nums}
    claim_nums = _numbers(claim)
    for n, unit in claim_nums:
        if n not in ev_values:
            return f"number {n} not in the evidence"
    ev_bounds, claim_bounds = _bounds(ev, every=True), _bounds(claim, every=False)
    for n, _unit in claim_nums:
        if ev_bounds.get(n) and not claim_bounds.get(n):  # "27 baselines" where the abstract says "up to 27"
            return f"number {n} is a bound in the evidence, stated as a value"
    for n, unit in claim_nums:
        if unit and not _is_number(unit) and (n, unit) not in ev_nums:
            if any(u == unit for _, u in ev_nums):  # the same measured word carries another number there
                return f"number {n} {unit} measures something else in the evidence"
    if "respectively" in claim.words:
        order = [n for n, _ in claim_nums if n in ev_values]
        ev_order = [n for n, _ in ev_nums if n in set(order)]
        if len(set(order)) >= 2 and order != ev_order[: len(order)] and sorted(order) == sorted(ev_order[: len(order)]):
            return "numbers in another order (respectively)"
    return ""


def number_mismatch(claim: str, evidence: Sequence[str]) -> str:
    """Why the numbers of ``claim`` are not those of its ``evidence`` sentence(s) (joined): a number absent from
    them, a bound there stated as a value (``27 baselines`` for "up to 27 baselines", :data:`NUMBER_BOUNDS`),
    measuring another word there (``12 hours`` vs ``24 hours``) or, for "respectively", in another order; ``""``
    when they match."""
    return _check_numbers(_Text.of(claim), _Text.of(" ".join(evidence)))


def proper_nouns(sentence: str) -> list[str]:
    """Capitalised words inside ``sentence`` (see :data:`assistant.lang.words.PROPER_NOUN`), in order: candidate
    organisation, place, dataset or person names; the first word of the sentence or of a clause after ``: ; (``
    is skipped."""
    out = []
    for m in PROPER_NOUN.finditer(sentence):
        word = POSSESSIVE.sub("", m.group(1))
        before = sentence[: m.start()].rstrip()
        if word in NOT_PROPER_NOUNS or (before and before[-1] in ".:;(\"“"):
            continue
        out.append(word)
    return out


def hard_mismatches(sentence: str, aligned: Sequence[str], paper_text: str, people: Iterable[str] = ()) -> list[str]:
    """Exact constraints of ``sentence`` against its ``aligned`` evidence sentence(s) and the cited paper(s)'
    ``paper_text`` (title + abstract); empty when all hold.

    * a number absent from the aligned evidence, a bound there stated as a value, or measuring another thing there
      (:func:`number_mismatch`);
    * a number or name-like token absent from the paper (:func:`unmatched_facts`);
    * a proper noun (:func:`proper_nouns`: "Stanford University", "Sydney") absent from the paper, except the
      words of ``people`` (credited authors, checked against the author list by :class:`Attributor`).
    """
    own = {w for p in people for w in p.lower().split()}
    reasons = [f"'{f}' is not in the paper" for f in unmatched_facts(sentence, paper_text)]
    reasons += [
        f"'{w}' is not in the paper"
        for w in proper_nouns(sentence)
        if w.lower() not in own and not name_occurs(w, paper_text)
    ]
    number = number_mismatch(sentence, aligned)
    if number:
        reasons.append(number)
    return reasons
