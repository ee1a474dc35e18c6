"""The hand-written meaning checks of the ``rules`` verifier (``ASSISTANT_VERIFIER=rules``, the default), and
the text helpers the whole verifier shares (words, numbers, names).

Fitted to the 72 claims of eval/claims-dev.jsonl before issue 22 (docs/evaluation.md, "Citation verifier");
:func:`mismatches` returns why a sentence is not backed by the evidence it is aligned to:

* ``number``: every number (digits or number words) is in the aligned text, with the same
  measured word after it (``12 hours`` vs ``24 hours``) and, for "respectively" lists, in order;
* ``negation``: a word negated on one side ("not", "no", "without", "fails", "in-/un-" prefixes)
  but stated plainly on the other ("with no fine-tuning" vs "through fine-tuning");
* ``antonym``: an opposite ("narrows"/"widens", "high"/"low", "stable"/"degrades") used in the slot
  where the evidence has the other one (same neighbouring words);
* ``order``: an asymmetric relation with its two sides swapped: "X outperforms Y", "X rather
  than Y", "X stems from Y" / "Y leads to X", "from X to Y", "one ... another";
* ``overclaim``: a scope or strength word ("all", "every", "always", "first", "prove", "far from",
  "state of the art") absent from the aligned sentence that carries its clause;
* ``substitution``: a near-copy of the evidence whose replaced words occur nowhere in that paper
  ("... and knowledge editing" where the abstract lists "few-shot meta-learning").

With ``ASSISTANT_VERIFIER=model`` the trained support model decides all of these instead
(assistant/verify/support_model.py); only the exact constraints stay rules (attribution.hard_mismatches).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from assistant.lang.claims import (
    ANTONYMS,
    CLAIM_NUMBER_WORDS,
    COMPARISON,
    FIRST_OF_PAIR,
    GENERIC_WORDS,
    IDENTITY,
    LATEX_MARKUP,
    NEGATION_SCOPE_END,
    PREFERENCE_LEADS,
    REFERS_TO_TWO,
    RELATION_SIDE_NOISE,
    RELATIONS,
    SECOND_OF_PAIR,
    STRENGTH_GROUPS,
    says_what_it_is,
)
from assistant.lang.numbers import DIGIT_NUMBER, THOUSANDS
from assistant.lang.stemming import stem as _stem
from assistant.lang.text import STOPWORDS
from assistant.lang.words import (
    CLAIM_CLAUSE_BREAK,
    CLAIM_NAME_TOKEN,
    CLAIM_WORD,
    COUNTED_WORKS,
    NEGATING_PREFIXES,
    NEGATION_CUES,
    whole_name_pattern,
)
from assistant.tuning import (
    NAME_SIDE_WINDOW,
    NEAR_COPY_LEXICAL,
    NEGATION_SCOPE,
    SLOT_MIN_OVERLAP,
    SLOT_WINDOW,
    SUBSTITUTION_MIN_WORDS,
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


@lru_cache(maxsize=1)
def _antonym_of() -> dict[str, set[str]]:
    """Stem -> the stems of its opposites (:data:`ANTONYMS`); built on first use, so importing this module does
    not import NLTK (the stemmer's)."""
    out: dict[str, set[str]] = {}
    for a, b in ANTONYMS:
        out.setdefault(_stem(a), set()).add(_stem(b))
        out.setdefault(_stem(b), set()).add(_stem(a))
    return out


@lru_cache(maxsize=1)
def _strength_of() -> dict[str, int]:
    """Stem -> its group in :data:`STRENGTH_GROUPS` (built on first use, like :func:`_antonym_of`)."""
    return {_stem(w): i for i, group in enumerate(STRENGTH_GROUPS) for w in group}


_RELATION_PHRASES = sorted(
    ((tuple(p.split()), rel) for rel, ps in RELATIONS.items() for p in ps), key=lambda x: -len(x[0])
)


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


def _context(t: _Text, i: int, width: int = SLOT_WINDOW, skip: frozenset[str] = frozenset()) -> set[str]:
    """Content stems within ``width`` content words on either side of position ``i``."""
    out: set[str] = set()
    for rng in (range(i - 1, -1, -1), range(i + 1, len(t.words))):
        taken = 0
        for j in rng:
            if _content(t.words[j]) and t.stems[j] not in skip:
                out.add(t.stems[j])
                taken += 1
                if taken >= width:
                    break
    return out


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


def _check_numbers(claim: _Text, ev: _Text) -> str:
    ev_nums = _numbers(ev)
    ev_values = {n for n, _ in ev_nums}
    claim_nums = _numbers(claim)
    for n, unit in claim_nums:
        if n not in ev_values:
            return f"number {n} not in the evidence"
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
    them, measuring another word there (``12 hours`` vs ``24 hours``) or, for "respectively", in another order;
    ``""`` when they match (the ``number`` check of :func:`mismatches`)."""
    return _check_numbers(_Text.of(claim), _Text.of(" ".join(evidence)))


def _polarity(t: _Text, other: _Text) -> tuple[set[str], set[str]]:
    """``(negated stems, plainly stated stems)`` of ``t``; a prefixed word (``ineffective``) counts as its
    negated stem when ``other`` has the stem (``effective``)."""
    negated: set[str] = set()
    plain: set[str] = set()
    scope = 0
    for w, s in zip(t.words, t.stems):
        if w in NEGATION_CUES:
            scope = NEGATION_SCOPE
            continue
        if w in NEGATION_SCOPE_END:
            scope = 0
        if not _content(w):
            continue
        base = next(
            (
                _stem(w[len(p) :])
                for p in NEGATING_PREFIXES
                if w.startswith(p) and len(w) - len(p) >= 4 and _stem(w[len(p) :]) in other.content
            ),
            None,
        )
        if base is not None and s not in other.content:
            (plain if scope else negated).add(base)  # "not ineffective" reads as plain
            scope = max(scope - 1, 0)
            continue
        if scope:
            negated.add(s)
            scope -= 1
        else:
            plain.add(s)
    return negated, plain


def _check_negation(claim: _Text, ev: _Text) -> str:
    c_neg, c_plain = _polarity(claim, ev)
    e_neg, e_plain = _polarity(ev, claim)
    for w in sorted(c_neg):
        if w in e_plain and w not in e_neg:
            return f"'{w}' negated in the sentence, not in the evidence"
    for w in sorted(e_neg):
        if w in c_plain and w not in c_neg:
            return f"'{w}' negated in the evidence, not in the sentence"
    return ""


def _check_antonyms(claim: _Text, ev: _Text) -> str:
    antonym_of = _antonym_of()
    polar = frozenset(antonym_of)
    ev_at = [(_context(ev, j, skip=polar), s) for j, s in enumerate(ev.stems) if s in polar]
    if not ev_at:
        return ""
    for i, s in enumerate(claim.stems):
        if s not in polar:
            continue
        ctx = _context(claim, i, skip=polar)
        # the evidence occurrence whose neighbours best match this word's: the same word, or its opposite?
        # Neighbours that both have (the noun they share, e.g. "patterns" in "global/local patterns") don't tell.
        same_all = set().union(*(c for c, e in ev_at if e == s))
        anti_all = set().union(*(c for c, e in ev_at if e in antonym_of[s]))
        same = max((len(ctx & (c - anti_all)) for c, e in ev_at if e == s), default=0)
        anti = max((len(ctx & (c - same_all)) for c, e in ev_at if e in antonym_of[s]), default=0)
        if anti >= SLOT_MIN_OVERLAP and anti > same:
            return f"'{claim.words[i]}' where the evidence has its opposite"
    return ""


def _relations(t: _Text, width: int = SLOT_WINDOW) -> list[tuple[str, set[str], set[str]]]:
    """``(relation, X side, Y side)`` for each asymmetric relation in ``t`` (``caused_by`` turned into ``causes``);
    a side is the content stems within ``width`` content words of the relation phrase."""
    out = []
    i = 0
    skip = frozenset(RELATION_SIDE_NOISE)
    while i < len(t.words):
        for phrase, rel in _RELATION_PHRASES:
            if t.words[i : i + len(phrase)] == phrase:
                left = _context(_Text(t.raw, t.words[:i], t.stems[:i], t.content), i, width, skip)
                right_t = _Text(t.raw, t.words[i + len(phrase) :], t.stems[i + len(phrase) :], t.content)
                right = _context(right_t, -1, width, skip)
                if rel == "caused_by":
                    rel, left, right = "causes", right, left
                if rel == "beats" and phrase[0] in PREFERENCE_LEADS:
                    rel = "preferred"
                out.append((rel, left, right))
                i += len(phrase) - 1
                break
        if t.words[i] == "from" and "to" in t.words[i + 1 : i + 5]:
            k = t.words.index("to", i + 1)
            x = {s for w, s in zip(t.words[i + 1 : k], t.stems[i + 1 : k]) if _content(w)}
            y = {s for w, s in zip(t.words[k + 1 : k + 4], t.stems[k + 1 : k + 4]) if _content(w)}
            before = _context(_Text(t.raw, t.words[:i], t.stems[:i], t.content), i, skip=skip)
            out.append(("from_to:" + ",".join(sorted(before)), x, y))
        i += 1
    if SECOND_OF_PAIR & set(t.words):  # "one for X and another for Y", "the former ... the latter"
        a = next((k for k, w in enumerate(t.words) if w in FIRST_OF_PAIR), None)
        b = next((k for k, w in enumerate(t.words) if w in SECOND_OF_PAIR), None)
        if a is not None and b is not None and a < b:
            x = {s for w, s in zip(t.words[a + 1 : b], t.stems[a + 1 : b]) if _content(w)}
            y = {s for w, s in zip(t.words[b + 1 :], t.stems[b + 1 :]) if _content(w)}
            out.append(("one_another", x, y))
    return out


def _same_relation(a: str, b: str) -> bool:
    if a.startswith("from_to:") and b.startswith("from_to:"):
        return bool(set(a[8:].split(",")) & set(b[8:].split(",")) - {""})
    return a == b


def _name_words(raw: str) -> set[str]:
    """Stems of the word pieces of the name-like tokens in ``raw`` (``EM-LLM`` -> ``{"em", "llm"}``)."""
    return {_stem(w) for name in names_in(raw) for w in words(name) if not _is_number(w)}


def _check_order(claim: _Text, ev: _Text) -> str:
    ev_rels, ev_wide = _relations(ev), _relations(ev, NAME_SIDE_WINDOW)
    names = _name_words(claim.raw) & _name_words(ev.raw)
    for (rel, x, y), (_, wx, wy) in zip(_relations(claim), _relations(claim, NAME_SIDE_WINDOW)):
        nx, ny = wx & names, wy & names
        if nx and ny and not nx & ny:  # named sides: compare the names only ("X outperforms Y")
            for r, ex, ey in ev_wide:
                if _same_relation(rel, r) and nx & ey and ny & ex and not (nx & ex or ny & ey):
                    return f"'{rel.split(':')[0]}' with its named sides swapped"
            continue
        matches = [
            (len(x & ey) + len(y & ex), len(x & ex) + len(y & ey)) for r, ex, ey in ev_rels if _same_relation(rel, r)
        ]
        if not matches:
            continue
        best_straight = max(s for _, s in matches)
        crossed = max(c for c, _ in matches)
        if crossed >= SLOT_MIN_OVERLAP and crossed > best_straight:
            return f"the two sides of '{rel.split(':')[0]}' are swapped"
    return ""


def _check_identity(claim: _Text, ev: _Text) -> str:
    """ "X is a Y" where the evidence only sets X against Y ("X surpasses ... Y models"): the thing a method
    is compared with is not what it is (issue 13: "ControlAR is a diffusion model")."""
    names = [n for n in names_in(claim.raw) if name_occurs(n, ev.raw)]
    low_claim, low_ev = claim.raw.lower(), ev.raw.lower()
    for name in names:
        m = IDENTITY.search(low_claim, low_claim.find(name.lower()) + len(name)) if name.lower() in low_claim else None
        if m is None or m.start() - (low_claim.find(name.lower()) + len(name)) > 3:
            continue
        kind = {_stem(w) for w in words(m.group(1)) if _content(w)}
        for cm in COMPARISON.finditer(low_ev):
            after = {_stem(w) for w in words(low_ev[cm.end() : cm.end() + 80]) if _content(w)}
            if kind and kind & after and not says_what_it_is(name.lower(), low_ev):
                return f"'{name}' called '{m.group(1)}', which the evidence compares it with"
    return ""


def _clauses(claim: str) -> list[_Text]:
    parts = [p for p in CLAIM_CLAUSE_BREAK.split(claim) if p and p.strip()]
    return [_Text.of(p) for p in parts] or [_Text.of(claim)]


def _check_strength(claim: str, aligned: Sequence[_Text]) -> str:
    strength_of = _strength_of()
    for clause in _clauses(claim):
        groups = {
            strength_of[s]
            for k, s in enumerate(clause.stems)
            if s in strength_of and (s != "first" or (k > 0 and clause.words[k - 1] == "the"))
        }  # "the first", not "first trains"
        if not groups:
            continue
        carrier = max(aligned, key=lambda ev: len(clause.content & ev.content))
        have = {strength_of[s] for s in carrier.stems if s in strength_of}
        missing = groups - have
        if missing:
            word = next(w for w, s in zip(clause.words, clause.stems) if strength_of.get(s) in missing)
            return f"'{word}' is not backed by the evidence"
    return ""


def _check_substitution(claim: _Text, ev: _Text, paper: _Text) -> str:
    if not claim.content or len(claim.content & ev.content) / len(claim.content) < NEAR_COPY_LEXICAL:
        return ""
    matcher = difflib.SequenceMatcher(None, claim.stems, ev.stems, autojunk=False)
    generic = {_stem(w) for w in GENERIC_WORDS}
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        new = [s for w, s in zip(claim.words[i1:i2], claim.stems[i1:i2]) if _content(w) and s not in generic]
        old = [w for w in ev.words[j1:j2] if _content(w)]
        if len(new) >= SUBSTITUTION_MIN_WORDS and old and all(s not in paper.content for s in new):
            return f"'{' '.join(claim.words[i1:i2])}' replaces '{' '.join(ev.words[j1:j2])}'"
    return ""


def mismatches(claim: str, aligned: Sequence[str], paper_texts: Sequence[str] = ()) -> list[str]:
    """Why ``claim`` is not backed by its ``aligned`` evidence sentence(s) (empty list: no mismatch found).

    Args:
        claim: the answer sentence, markers removed.
        aligned: the one or two evidence sentences it was aligned to.
        paper_texts: title + abstract of the paper(s) those sentences come from (for ``substitution``).

    Returns:
        one short reason per failed check (``number``, ``negation``, ``antonym``, ``order``,
        ``overclaim``, ``substitution``; see the module docstring).
    """
    c = _Text.of(claim)
    evs = [_Text.of(a) for a in aligned]
    joined = _Text.of(" ".join(aligned))
    reasons = [
        _check_numbers(c, joined),
        _check_negation(c, joined),
        _check_antonyms(c, joined),
        _check_order(c, joined),
        _check_strength(claim, evs),
        _check_identity(c, joined),
    ]
    if len(evs) == 1:
        reasons.append(_check_substitution(c, evs[0], _Text.of(" ".join(paper_texts))))
    return [r for r in reasons if r]
