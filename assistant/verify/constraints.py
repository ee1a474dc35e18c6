"""The exact constraints every verifier applies first (never about meaning; attribution.py, step 2).

Every number and name-like token (``DUALFormer``, ``GPT-4o``) must occur in the cited paper, a number with
the word it measures must match the evidence (``12 hours`` vs ``24 hours``), and a named organisation, place or
dataset (a capitalised word inside the sentence: "Stanford University", "Sydney") must occur in the cited paper.
A person the sentence credits is checked against the author list instead
(:class:`~assistant.verify.attribution.Attributor`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from assistant.verify.rules import name_occurs, number_mismatch, unmatched_facts

#: A capitalised word inside a sentence (not its first word, nor the first after ``. : ; ( " “``): a
#: proper noun - an organisation, place, dataset or person ("Stanford University", "Sydney", "ImageNet").
_PROPER = re.compile(r"(?<=[A-Za-z0-9,\-] )([A-Z][a-z]+(?:['’]s)?)\b")
#: Capitalised words that are not names (function words after a colon or in a title).
_NOT_PROPER = frozenset(
    {"The", "This", "These", "That", "Their", "Its", "It", "A", "An", "In", "On", "And", "Both", "I"}
)


def proper_nouns(sentence: str) -> list[str]:
    """Capitalised words inside ``sentence`` (see :data:`_PROPER`), in order: candidate organisation, place,
    dataset or person names; the first word of the sentence or of a clause after ``: ; (`` is skipped."""
    out = []
    for m in _PROPER.finditer(sentence):
        word = re.sub(r"['’]s$", "", m.group(1))
        before = sentence[: m.start()].rstrip()
        if word in _NOT_PROPER or (before and before[-1] in ".:;(\"“"):
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
