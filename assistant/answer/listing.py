"""Narrowing a search by the question's metadata words: "ICLR 2024 papers on ...", "orals only", "papers by
<author>", "the ICML 2024 paper about ..." (topic listings, and the search for one paper: strategy.one_paper_search).

The venue words are read from the index itself (the distinct ``venue`` values of the catalog, e.g. ``ICLR 2024
Oral``, ``NeurIPS 2024``), never from a list of conference names: a question word that is a word of some
venue (``iclr``, ``2024``, ``oral`` / ``orals``) narrows the search to the papers whose venue has every such
word. A year alone ("evaluated on the 2024 split") narrows only as a paper's year: beside another venue word
("ICLR 2024"), before a paper noun ("2024 papers") or after "from" ("papers from 2024"). The author is the name
after "papers by" (references.author_phrase), matched as the metadata index matches it. What narrowed a list is
shown with the answer, so a reader sees (and can re-ask) it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.lang.question_words import LISTING_FRAME_WORDS
from assistant.lang.text import STOPWORDS
from assistant.lang.words import (
    GENERIC_VENUE_WORDS,
    PAPER_NOUNS,
    PAPER_NOUNS_PLURAL,
    VENUE_WORD,
    without_by_author,
)
from assistant.retrieve.references import author_phrase

if TYPE_CHECKING:
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.understand.turn import TurnCache


@dataclass(frozen=True, slots=True)
class Narrowing:
    """The metadata narrowing of a listing question.

    Attributes:
        venue: the venue words found, as written in the index's venues ("ICLR 2024 Oral" order), or "".
        author: the author named ("papers by <author>"), or "".
        ids: the papers allowed by both (None: no narrowing; an empty set: nothing matches).
        query: the topic to search for, without the venue words and the "by <author>" phrase.
    """

    venue: str
    author: str
    ids: frozenset[str] | None
    query: str

    @property
    def described(self) -> str:
        """ "ICLR 2024 Oral, by Jane Doe"-style description of the narrowing, or ""."""
        return ", ".join(x for x in (self.venue, f"by {self.author}" if self.author else "") if x)


def _venue_key(word: str, known: set[str]) -> str:
    """``word`` lowercased as a venue word: itself when a venue has it ("neurips"), else its singular ("orals" ->
    "oral")."""
    w = word.lower()
    if w in known:
        return w
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _venue_words(words: list[str], known: set[str]) -> list[str]:
    """The words of ``words`` (a question's, in order) that narrow to a venue: those in ``known``, a year only as a
    paper's year (module docstring)."""
    named = any(not w.isdigit() and _venue_key(w, known) in known for w in words)
    out = []
    for i, w in enumerate(words):
        if _venue_key(w, known) not in known:
            continue
        if w.isdigit() and not named:
            after = words[i + 1].lower() if i + 1 < len(words) else ""
            before = words[i - 1].lower() if i else ""
            if after not in PAPER_NOUNS and after not in PAPER_NOUNS_PLURAL and before != "from":
                continue
        out.append(w)
    return out


def narrowing(
    retriever: PaperRetriever,
    question: str,
    topic: str,
    author: str | None = None,
    cache: TurnCache | None = None,
) -> Narrowing:
    """Read the venue words and the author a question narrows its search to (once per turn when ``cache``, the turn's
    memo, is given: the search, the named-paper check and a listing's plan all read it)."""
    if cache is not None:
        return cache.get("narrowing", (question, topic, author), lambda: _narrowing(retriever, question, topic, author))
    return _narrowing(retriever, question, topic, author)


def _narrowing(retriever: PaperRetriever, question: str, topic: str, author: str | None) -> Narrowing:
    """The narrowing of :func:`narrowing`, read from the catalog.

    Args:
        retriever: gives the catalog (distinct venues, papers per venue) and the author index.
        question: the question as asked (the author phrase is read from it).
        topic: what is searched for (a listing's topic, intents.topic_query; a lookup's query), from which the
            narrowing words are removed.
        author: the author phrase when the caller read it already (``understand.parse.Question.author``).

    Returns:
        a :class:`Narrowing`; ``ids`` is None when the question names no venue word and no author.
    """
    catalog = retriever.catalog
    venues = catalog.venues()
    venue_words: dict[str, set[str]] = {v: {w.lower() for w in VENUE_WORD.findall(v)} for v in venues}
    known = set().union(*venue_words.values()) - GENERIC_VENUE_WORDS - STOPWORDS if venues else set()
    asked = _venue_words(VENUE_WORD.findall(question), known)
    wanted = {_venue_key(w, known) for w in asked}
    ids: set[str] | None = None
    venue_label = ""
    if wanted:
        chosen = [v for v, words in venue_words.items() if wanted <= words]
        ids = set(catalog.ids_in_venues(chosen))
        order = {w: i for v in venues for i, w in enumerate(w.lower() for w in VENUE_WORD.findall(v))}
        venue_label = " ".join(
            sorted(
                {w for w in asked if _venue_key(w, known) in wanted}, key=lambda w: order.get(_venue_key(w, known), 9)
            )
        )
    author = author_phrase(question) if author is None else author
    if author:
        by_author = set(retriever.metadata.by_author(author))
        ids = by_author if ids is None else ids & by_author
    query = topic
    if author:
        query = without_by_author(query, author)
    if wanted:
        drop = {w.lower() for w in asked} | LISTING_FRAME_WORDS
        kept = [w for w in query.split() if w.lower().strip(".,;:?!") not in drop]
        query = " ".join(kept)
    query = " ".join(query.split()) or topic
    return Narrowing(venue_label, author, frozenset(ids) if ids is not None else None, query)
