"""The exact constraints every verifier applies first (never about meaning; attribution.py, step 2).

Every number and name-like token (``DUALFormer``, ``GPT-4o``) must occur in the cited paper, a number with
the word it measures must match the evidence (``12 hours`` vs ``24 hours``), and a named organisation, place or
dataset (a capitalised word inside the sentence: "Stanford University", "Sydney") must occur in the cited paper.
A person the sentence credits is checked against the author list instead
(:class:`~assistant.verify.attribution.Attributor`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assistant.lang.words import NOT_PROPER_NOUNS, POSSESSIVE, PROPER_NOUN
from assistant.verify.rules import name_occurs, number_mismatch, unmatched_facts


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

    * a number absent from the aligned evidence, or measuring another thing there (``number``);
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
