"""How the catalog keys what it looks up (:mod:`assistant.index.catalog`): title fragments, the content terms of a
paper, author names, FTS5 match expressions and escaped LIKE patterns."""

from __future__ import annotations

from assistant.lang.text import content_tokens, fold
from assistant.lang.words import FTS_WORD, HYPHENATED_WORD
from assistant.tuning import TITLE_FRAGMENT_WORDS
from assistant.types import Paper


def title_grams(title: str) -> set[str]:
    """Every run of ``TITLE_FRAGMENT_WORDS`` consecutive lower-cased words of ``title``."""
    words = HYPHENATED_WORD.findall(title.lower())
    return {" ".join(words[i : i + TITLE_FRAGMENT_WORDS]) for i in range(len(words) - TITLE_FRAGMENT_WORDS + 1)}


def paper_terms(paper: Paper) -> set[str]:
    """Content tokens of title + abstract, plus each part of a hyphenated token ("combinatorial" of
    "combinatorial-optimization"): the keys of the ``terms`` table."""
    tokens = content_tokens(f"{paper.title} {paper.text}")
    return tokens | {part for t in tokens if "-" in t for part in t.split("-") if part}


def author_key(name: str) -> str:
    """An author name as looked up: case-folded and without accents (:func:`~assistant.lang.text.fold`: "Thomas
    Müller", typed decomposed or not, is "thomas muller", as is "Thomas Muller"), single-spaced, without
    surrounding dots/commas."""
    return " ".join(fold(name).strip(" .,").split())


def fts_query(text: str, *, phrase: bool = False) -> str:
    """An FTS5 MATCH expression for ``text``: its words quoted (so no word is read as FTS syntax), joined by
    OR, or as one phrase when ``phrase``; "" when ``text`` has no word."""
    words = FTS_WORD.findall(text.lower())
    if not words:
        return ""
    if phrase:
        return '"' + " ".join(words) + '"'
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


def query_words(query: str) -> set[str]:
    """The FTS words of ``query``'s content tokens (what the lexical retriever looks up)."""
    return {w for t in content_tokens(query) for w in FTS_WORD.findall(t)}


def like_pattern(text: str) -> str:
    """``text`` with LIKE's wildcards (and the escape character) escaped by a backslash."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
