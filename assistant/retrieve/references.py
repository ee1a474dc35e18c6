"""Which paper a question names: by an author, by a name from its title or contribution ("the DUALFormer
paper", "MatryoshkaKV"), by a fragment of its title, or by a description ("the paper about compressing the
KV cache along the feature dimension", "the episodic memory one").

An explicit reference beats the conversation's focus (session.py): the conversation's papers are used only
for pronouns, ordinals and ellipsis. The same author and title matches are a retrieval signal fused with
the text retrievers (retrieval.py ``metadata_matches``), so a first question can name a paper too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from assistant.index.catalog import author_key, title_grams
from assistant.lang.words import LOOSE_WORD
from assistant.tuning import DESCRIPTION_MIN_SIMILARITY, NAME_MAX_PAPERS
from assistant.understand.parse import Question, read_facts
from assistant.understand.question import BY_AUTHOR, names
from assistant.understand.question import author_phrase as author_phrase  # re-exported: it moved to understand/

if TYPE_CHECKING:
    from assistant.index.catalog import Catalog
    from assistant.retrieve.query import Query
    from assistant.types import PaperHit
    from assistant.understand.turn import TurnCache


class PaperSearch(Protocol):
    """What :func:`find_references` needs of a retriever (``assistant.retrieve.retrieval.PaperRetriever``
    fits): the metadata index and a ranked search. A protocol, so this module never imports the retriever."""

    @property
    def metadata(self) -> MetadataIndex: ...

    def retrieve(self, query: str | Query, top_k: int | None = None, *, aspects: bool = False) -> list[PaperHit]: ...

    def query(self, text: str, cache: TurnCache | None = None) -> Query: ...


@dataclass(frozen=True, slots=True)
class References:
    """What a question says about which papers it means.

    Attributes:
        named: ids of papers named or described explicitly, in order of mention (no duplicates).
        unknown_author: an author the question names ("the paper by X") whom no indexed paper lists; "".
        unresolved: descriptions or names that matched no paper (for "could not find" notices).
    """

    named: tuple[str, ...] = ()
    unknown_author: str = ""
    unresolved: tuple[str, ...] = ()


class MetadataIndex:
    """Authors and titles of the indexed papers, searchable through the catalog (catalog.py): full author
    names and last names, names in titles (``DUALFormer``, ``A-Bench``) or introduced by a contribution
    sentence, and runs of ``TITLE_FRAGMENT_WORDS`` title words. Holds nothing in memory."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def by_author(self, name: str) -> list[str]:
        """Papers listing ``name`` as an author: the full name (case-insensitive), else a last name."""
        key = author_key(name)
        found = self._catalog.by_author_key(key)
        if found:
            return found
        parts = key.split()
        return self._catalog.by_last_name(parts[-1]) if len(parts) == 1 else []

    def by_name(self, entity: str) -> list[str]:
        """Papers whose title contains the name ``entity``; else papers that introduce it in a contribution
        sentence ("we propose X"). A name matches from the start of a word, an acronym in its case
        (:func:`~assistant.understand.question.names`: "AR" is not "Are"). More than ``NAME_MAX_PAPERS``
        matches: not a name of one paper -> []."""
        limit = 8 * NAME_MAX_PAPERS + 1
        titled = [pid for pid, title in self._catalog.titles_matching(entity, limit) if names(title, entity)]
        if not titled:
            titled = list(
                dict.fromkeys(pid for pid, s in self._catalog.contributions_matching(entity, limit) if names(s, entity))
            )
        return titled if len(titled) <= NAME_MAX_PAPERS else []

    def by_title_fragment(self, text: str) -> list[str]:
        """Papers at least ``TITLE_FRAGMENT_WORDS`` consecutive words of whose title appear in ``text``."""
        return self._catalog.by_title_grams(sorted(title_grams(text)))

    def matches(self, text: str, cache: TurnCache | None = None) -> list[str]:
        """Papers ``text`` names by author, title name or title fragment, in order of mention (no search);
        ``cache``: the turn's memo (``text`` is then read once per turn)."""
        found: list[tuple[int, str]] = []
        for m in BY_AUTHOR.finditer(text):
            found += [(m.start(), pid) for pid in self.by_author(m.group(1))]
        words = [(m.start(), m.group(0)) for m in LOOSE_WORD.finditer(text.lower())]
        runs = [
            (words[i][0], " ".join(w for _, w in words[i : i + n]).strip("."))  # a full author name anywhere
            for n in (2, 3, 4)
            for i in range(len(words) - n + 1)
        ]
        known = self._catalog.known_author_keys([key for _, key in runs])
        for at, key in runs:
            found += [(at, pid) for pid in known.get(key, ())]
        for entity in read_facts(text, cache).entities:
            at = text.find(entity)
            found += [(at, pid) for pid in self.by_name(entity)]
        found += [(len(text), pid) for pid in self.by_title_fragment(text)]
        return list(dict.fromkeys(pid for _, pid in sorted(found, key=lambda x: x[0])))


def find_references(question: Question, retriever: PaperSearch, min_similarity: float) -> References:
    """The papers ``question`` (the turn's reading) names or describes (module docstring).

    A description resolves to the best paper of a search for it when that paper's dense similarity is at
    least ``max(min_similarity, DESCRIPTION_MIN_SIMILARITY)``; else it is ``unresolved``. The best paper
    wins even when it is the one the conversation is about ("how does it differ from the episodic memory
    one?" when "it" is that paper: the caller then has one paper, not an unrelated second one). Found once per
    turn (the question's cache).
    """
    return question.cache.get(
        "references", (question.text, min_similarity), lambda: _find_references(question, retriever, min_similarity)
    )


def _find_references(question: Question, retriever: PaperSearch, min_similarity: float) -> References:
    index = retriever.metadata
    cache = question.cache
    named = index.matches(question.text, cache)
    author = question.author
    unknown_author = author if author and not index.by_author(author) else ""
    unresolved: list[str] = []
    for text in question.descriptions:
        if index.matches(text, cache):
            continue  # already named ("the DUALFormer paper")
        hits = retriever.retrieve(retriever.query(text, cache), top_k=3)
        good = [h for h in hits if h.dense_similarity >= max(min_similarity, DESCRIPTION_MIN_SIMILARITY)]
        if good:
            named.append(good[0].paper.id)
        else:
            unresolved.append(text)
    return References(tuple(dict.fromkeys(named)), unknown_author, tuple(unresolved))
