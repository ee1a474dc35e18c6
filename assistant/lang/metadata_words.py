"""The English wording of a request for a paper's record fields (authors, venue, year, link) or for a person's
papers, written once. Read by :mod:`assistant.understand.metadata`, which matches these phrases as runs of
word tokens (:func:`assistant.lang.text.word_tokens`), never as patterns.

Until a learned intent classifier says "metadata" (issue 23), this vocabulary is the whole of the rule: a
question asks for a record field when it has one of a field's phrases and nothing else but the paper's name
(see ``understand.metadata.MetadataRequest.only_names``).
"""

from __future__ import annotations

from collections.abc import Mapping

METADATA_WORDS: Mapping[str, tuple[str, ...]] = {
    # the record field -> the phrases that ask for it (lower-case, accents folded, as word_tokens gives them)
    "authors": (
        "who",  # in questions over papers, "who ..." asks for people: the authors
        "author",
        "authors",
        "authored",
        "co-author",
        "co-authors",
        "coauthor",
        "coauthors",
        "wrote",
        "write",
        "written",
        "writer",
        "writers",
    ),
    "venue": (
        "venue",
        "venues",
        "conference",
        "conferences",
        "published",
        "publish",
        "appear",
        "appeared",
        "accepted",
        "proceedings",
        "journal",
    ),
    "year": ("year", "when"),
    "link": (
        "link",
        "links",
        "url",
        "urls",
        "pdf",
        "arxiv",
        "openreview",
        "download",
        "where can i read",
        "where can i find",
    ),
    # a link to the paper's code or project page, which its abstract states ("papers that release code", "does
    # HyperFace have code?")
    "code": (
        "code",
        "codes",
        "source code",
        "codebase",
        "github",
        "repository",
        "repositories",
        "repo",
        "repos",
        "open source",
        "open-source",
        "open-sourced",
        "project page",
    ),
    # a list of papers ("which papers did <author> write?", "list the publications by <author>")
    "papers": ("papers", "works", "publications", "articles", "list", "other papers"),
    # words that only frame a request ("give me the full author list"): neither a field nor what the
    # paper is about
    "frame": (
        "paper",
        "work",
        "publication",
        "article",
        "show",
        "give",
        "tell",
        "name",
        "names",
        "full",
        "all",
        "please",
        "get",
        "s",
        "et",
        "al",
        "one",
        "did",
        "anything",
        "else",
        "other",
        "release",
        "releases",
        "released",
        "share",
        "shares",
        "shared",
        "provide",
        "provides",
        "available",
        "publicly",
    ),
}
"""Field -> the phrases (one or more words) that ask for it: a record field (``authors``, ``venue``, ``year``,
``link``, ``code``), ``papers`` (a list of papers, e.g. a person's), or ``frame`` (words that only frame the
request)."""
