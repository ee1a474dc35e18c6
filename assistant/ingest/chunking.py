"""Papers -> sentences -> sentence windows (the indexed chunks/nodes).

all-MiniLM-L6-v2 truncates input at 256 word pieces and about half of the seed abstracts are
longer (docs/measurements.md), so a paper is indexed as overlapping windows of
``window_sentences`` sentences, one window centred on each sentence. A window's score is then
also the score of its centre sentence, which is what evidence selection needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from assistant.lang.text import split_sentences
from assistant.types import Paper, Window

__all__ = ["WINDOW_TEMPLATE", "make_windows", "paper_hash", "split_sentences"]

# Chunk text formats: the title is prepended so a window keeps its paper's topic in the embedding.
WINDOW_TEMPLATE = "{title}. {body}"


def paper_hash(paper: Paper) -> str:
    """sha1 over everything of a paper that is stored (text and metadata): changes trigger re-ingest."""
    key = "\x1f".join([paper.id, paper.venue, paper.title, "; ".join(paper.authors), paper.url, paper.text])
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def make_windows(paper: Paper, sentences: Sequence[str], window_sentences: int) -> list[Window]:
    """One window per sentence: the sentence and its neighbours, ``window_sentences`` in all.

    Args:
        paper: the paper; its title is prepended to each window's text.
        sentences: ``split_sentences(paper.text)``.
        window_sentences: window length in sentences (>= 1).

    Returns:
        ``len(sentences)`` windows; window ``i`` is centred on sentence ``i`` (ids ``<paper>:<i:04d>``).
    """
    half_before = (window_sentences - 1) // 2
    half_after = window_sentences - 1 - half_before
    phash = paper_hash(paper)
    windows: list[Window] = []
    for i in range(len(sentences)):
        lo, hi = max(0, i - half_before), min(len(sentences), i + half_after + 1)
        body = " ".join(sentences[lo:hi])
        text = WINDOW_TEMPLATE.format(title=paper.title.rstrip(". "), body=body)
        chash = hashlib.sha1(f"{phash}|{i}|{text}".encode()).hexdigest()
        windows.append(Window(f"{paper.id}:{i:04d}", paper.id, i, text, lo, hi - 1, chash))
    return windows
