"""Numbers in English, written once: number words and their values, ordinals, and the pattern of a number
as a question or an abstract writes it (digits or words)."""

from __future__ import annotations

import re
from collections.abc import Mapping

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
).split()
#: Number words -> their value ("sixteen" -> 16, "hundred" -> 100, "million" -> 1_000_000).
NUMBER_WORDS: Mapping[str, int] = {
    **{w: i for i, w in enumerate(_UNITS)},
    **{w: 10 * i for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), start=3)},
    "hundred": 100,
    "thousand": 1_000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
}
#: Ordinals a user points with ("the second one", "the 2nd paper") -> the 1-based position.
ORDINALS: Mapping[str, int] = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
#: Words that ask for a count of papers without a digit ("the three papers", "both abstracts") -> how many.
PAPER_COUNT_WORDS: Mapping[str, int] = {
    "two": NUMBER_WORDS["two"],
    "both": 2,
    "three": NUMBER_WORDS["three"],
    "four": NUMBER_WORDS["four"],
    "2": 2,
    "3": 3,
    "4": 4,
}

#: The number words :data:`NUMBER_TOKEN` reads as a stated number: those of :data:`NUMBER_WORDS` but "zero"
#: ("zero-shot" states no number), 13, 14, 16-19 and 40, 60-90 (left out before the lists were merged in issue 31;
#: kept out so answers stay the same), plus plural and fractional words.
_STATED_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|fifty|hundred|hundreds|"
    "thousand|thousands|million|millions|billion|billions|dozens?|half|twice|double|triple"
)
#: A number as digits (``2,864``, ``88.8``, ``5x``) or as a word (:data:`_STATED_NUMBER_WORDS`).
NUMBER_TOKEN = re.compile(rf"(?<![A-Za-z])\d+(?:[.,]\d+)*|\b(?:{_STATED_NUMBER_WORDS})\b", re.I)
#: Digits with decimal/thousands separators, not inside a word or a version (``v2.1``) - the verifier's numbers.
DIGIT_NUMBER = re.compile(r"(?<![A-Za-z0-9\-.])\d+(?:[.,]\d+)*")
#: A thousands separator between digits (``2,864``): group 1 and 2 are the digits on each side.
THOUSANDS = re.compile(r"(\d),(\d{3})\b")
#: A number with its unit: "20%", "5.0 %", "10x", "3 percent" (the unit decides the kind of a number).
NUMBER_WITH_UNIT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)\s?(%|percent\b|[x×](?![\w-]))", re.I)
#: A relative number as written: a percentage or a factor ("3.3%", "2 percent", "5x").
RELATIVE_NUMBER = re.compile(r"\d(?:[.,]\d+)?\s?(?:%|percent\b|[x×](?![\w-]))")
#: A year (1900-2099) as a whole token.
YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
#: Any digit.
DIGIT = re.compile(r"\d")
