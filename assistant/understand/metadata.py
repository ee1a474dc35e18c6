"""Whether a question asks for a paper's record fields (authors, venue, year, link, code) or for a person's papers,
and which: read from the wording in ``assistant/lang/metadata_words.py`` and an exact lookup of author names in
the index. The answer is then built from the records (``answer/strategies.py`` ``MetadataStrategy``), never
from the abstract text.

The trained intent classifier (``understand/learned.py``) proposes the ``metadata`` intent; what this module
reads decides whether the records can answer (a question the classifier calls a lookup or a topic that asks only
for record fields or a person's papers is answered from the records too). It uses no wording pattern beyond
that one vocabulary.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from assistant.lang.metadata_words import METADATA_WORDS
from assistant.lang.text import FUNCTION_WORDS, split_sentences, word_tokens

#: The record fields a question may ask for, in the order an answer gives them; ``papers``: a list of papers
#: (a person's).
FIELDS: tuple[str, ...] = ("papers", "authors", "venue", "year", "link", "code")
#: Longest author name matched, in words ("Hatef Otroshi Shahreza" is 3).
_MAX_NAME_WORDS = 4


class AuthorNames(Protocol):
    """What :func:`metadata_request` needs of the index: exact author-name lookup
    (``assistant.index.catalog.Catalog`` fits)."""

    def known_author_keys(self, keys: Sequence[str]) -> dict[str, list[str]]: ...


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    """What a question asks of the paper records.

    Attributes:
        fields: what is asked for, a subset of :data:`FIELDS` in that order: record fields, and ``papers``
            for a list of papers ("papers by X"); empty when the question only names an author.
        person: the author the question names: a full name as the index keys it (lower-case) or the name
            after "by" as written ("" when none); ``person_ids`` the papers the index lists for that author
            (in index order).
        unknown_person: the name after "… by <Name>" that no indexed paper lists ("" when none).
        rest: the question's words that are neither function words, field or frame words, nor the
            person's name: what else the question says (a paper's name, or something it asks about).
        asks_who: a sentence of the question starts with "who" (then it asks for the authors whatever else it
            says; a relative "who", "people who don't exist", is only a field word).
    """

    fields: tuple[str, ...]
    person: str = ""
    person_ids: tuple[str, ...] = ()
    unknown_person: str = ""
    rest: frozenset[str] = frozenset()
    asks_who: bool = False

    @property
    def names_person(self) -> bool:
        """True when the question names an author (known to the index or not)."""
        return bool(self.person or self.unknown_person)

    def only_names(self, paper_words: Collection[str]) -> bool:
        """True when the question asks for records and nothing else: every word of :attr:`rest` is in
        ``paper_words`` (the folded words of the titles and names by which it names papers), and it asks for a
        record field or a named person's papers. "Who …" questions ask for the authors whatever they add (a
        description of the paper)."""
        if not [f for f in self.fields if f != "papers" or self.names_person]:
            return False  # "papers" alone asks for a person's papers only: "the ControlAR and LucidPPN papers"
        if self.asks_who and not self.names_person:
            return True
        return self.rest <= set(paper_words)


def _phrases() -> dict[tuple[str, ...], str]:
    """Each phrase of METADATA_WORDS as a word tuple -> its field (``"frame"`` for frame words)."""
    out: dict[tuple[str, ...], str] = {}
    for field, phrases in METADATA_WORDS.items():
        for phrase in phrases:
            out.setdefault(tuple(word_tokens(phrase)), field)
    return out


def metadata_request(
    question: str,
    authors: AuthorNames,
    by_name: str = "",
    by_name_ids: Sequence[str] = (),
) -> MetadataRequest | None:
    """What ``question`` asks of the paper records, or None when it has no field phrase and names no author.

    Args:
        question: as the user wrote it.
        authors: exact author-name lookup; a run of 2-4 words of the question that is an indexed author's full
            name (case-insensitive, as ``catalog.author_key`` stores it) names that person.
        by_name: the name after "the paper(s) by …" when the caller found one (``references.author_phrase``),
            a last name possibly; ``by_name_ids``: the papers the index lists for it ([] = nobody of that name).

    Returns:
        a :class:`MetadataRequest`; None when the question has no field phrase and names no author.
    """
    words = word_tokens(question)
    phrases = _phrases()
    longest = max(len(p) for p in phrases)
    used = [False] * len(words)
    fields: set[str] = set()
    i = 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            field = phrases.get(tuple(words[i : i + n]))
            if field is not None:
                if field != "frame":
                    fields.add(field)
                for j in range(i, i + n):
                    used[j] = True
                i += n - 1
                break
        i += 1
    person = ""
    person_ids: tuple[str, ...] = ()
    spelled = word_tokens(question, keep_accents=True)  # author names are keyed with their accents
    spelled = spelled if len(spelled) == len(words) else words
    runs = {
        " ".join(spelled[i : i + n]): (i, n)
        for n in range(_MAX_NAME_WORDS, 1, -1)
        for i in range(len(words) - n + 1)
        if not any(used[i : i + n])
    }
    known = authors.known_author_keys(list(runs)) if runs else {}
    if known:
        key = max(known, key=lambda k: (runs[k][1], -runs[k][0]))  # the longest name, the first one
        at, n = runs[key]
        person, person_ids = key, tuple(known[key])
        for j in range(at, at + n):
            used[j] = True
    unknown = ""
    if by_name and not person:
        name_words = word_tokens(by_name)
        if by_name_ids:
            person, person_ids = by_name, tuple(by_name_ids)
        else:
            unknown = by_name
        for i in range(len(words) - len(name_words) + 1):
            if words[i : i + len(name_words)] == name_words:
                for j in range(i, i + len(name_words)):
                    used[j] = True
    if not fields and not person and not unknown:
        return None
    rest = frozenset(w for w, u in zip(words, used) if not u and w not in FUNCTION_WORDS)
    return MetadataRequest(
        tuple(f for f in FIELDS if f in fields),
        person,
        person_ids,
        unknown,
        rest,
        asks_who=any(word_tokens(sentence)[:1] == ["who"] for sentence in split_sentences(question)),
    )
