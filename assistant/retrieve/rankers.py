"""The ranked lists retrieval fuses, one :class:`Ranker` each, and the one loop that fuses them (:func:`fuse`).

A ranker is a callable from the query (:class:`~assistant.retrieve.query.Query`: its text and its embedding,
computed once) and the :class:`Pool` it ranks in to a ranked list of ``(paper id, score)``, best first. Its
``weight`` says how the list is fused: each paper gets ``weight / (RRF_K + rank)`` (reciprocal-rank fusion,
Cormack et al. 2009), or, for ``weight=None``, its own ``score`` (the window fusion's aggregated RRF score).
``stage`` says when it runs: ``recall`` rankers see the whole index and decide the candidates; ``rerank``
rankers rank only those candidates, whose stored vectors have been read (:attr:`Pool.vectors`). A reranker
(a cross-encoder, say) is one more ``rerank`` entry of :func:`default_rankers`' list.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from assistant.lang.text import clauses
from assistant.tuning import RRF_K

if TYPE_CHECKING:
    from assistant.config import RetrievalSettings
    from assistant.retrieve.paper_bm25 import PaperBM25Index
    from assistant.retrieve.query import Query
    from assistant.retrieve.references import MetadataIndex
    from assistant.types import Paper

#: ``(paper id, score)`` pairs, best first.
Ranked = list[tuple[str, float]]
#: ``{paper_id: (sentence vectors, window vectors, sentences)}`` (retrieval.PaperRetriever._vectors).
Vectors = dict[str, tuple[np.ndarray, np.ndarray, list[str]]]


@dataclass
class Pool:
    """What a ranker ranks in: the index view read through (``fusion``: its dense+BM25 window retriever,
    ``store``: its paper store), the known papers, and, for ``rerank`` rankers, the candidates' stored
    vectors (filled in after the ``recall`` stage). ``papers`` reads the catalog (SQLite) per lookup: a ranker
    looks up its candidates' papers, it does not iterate all of them per query."""

    fusion: Any
    store: Any
    papers: Mapping[str, Paper]
    aspects: bool = False
    vectors: Vectors = field(default_factory=dict)


class Ranker(Protocol):
    """One ranked list of papers for a query (module docstring)."""

    @property
    def weight(self) -> float | None: ...

    @property
    def stage(self) -> Literal["recall", "rerank"]: ...

    def __call__(self, query: Query, pool: Pool) -> Ranked: ...


def fuse(scored: dict[str, float], ranked: Ranked, weight: float | None) -> None:
    """Add one ranked list to ``scored`` (paper id -> fused score), in place: ``weight / (RRF_K + rank)`` per
    paper (rank 1 first), or the list's own scores when ``weight`` is None."""
    for rank, (pid, score) in enumerate(ranked, start=1):
        scored[pid] = scored.get(pid, 0.0) + (score if weight is None else weight / (RRF_K + rank))


class WindowFusion:
    """Dense + BM25 over sentence windows (llama-index ``QueryFusionRetriever``, reciprocal rank), aggregated
    to papers: a paper's best window score plus ``second_window_weight`` x its second best. Fused by score."""

    weight: float | None = None
    stage: Literal["recall", "rerank"] = "recall"

    def __init__(self, second_window_weight: float) -> None:
        self._second = second_window_weight

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        per_paper: dict[str, list[float]] = defaultdict(list)
        for hit in pool.fusion.retrieve(query.bundle):
            pid = hit.node.metadata.get("paper_id")
            if pid in pool.papers:
                per_paper[str(pid)].append(float(hit.score or 0.0))
        return [
            (pid, s[0] + self._second * (s[1] if len(s) > 1 else 0.0))
            for pid, s in ((pid, sorted(v, reverse=True)) for pid, v in per_paper.items())
        ]


class MetadataMatches:
    """Papers the query names by author, title name or title words (references.MetadataIndex.matches), in
    order of mention; weight ``metadata_weight``."""

    stage: Literal["recall", "rerank"] = "recall"

    def __init__(self, metadata: MetadataIndex, weight: float) -> None:
        self._metadata = metadata
        self.weight: float | None = weight

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        return [(pid, 1.0) for pid in self._metadata.matches(query.text, query.cache)]


class PaperBM25:
    """Papers by BM25 over their whole title + abstract (paper_bm25.PaperBM25Index), the ``k`` best first; weight
    ``paper_bm25_weight`` (0 turns the list off)."""

    stage: Literal["recall", "rerank"] = "recall"

    def __init__(self, index: PaperBM25Index, weight: float, k: int) -> None:
        self._index = index
        self.weight: float | None = weight
        self._k = k

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        if self.weight is None or self.weight <= 0:
            return []
        return self._index.search(query.text, self._k)


class PaperVectors:
    """Paper-level vectors (titles), the ``k`` nearest first; weight ``paper_vector_weight`` (0 turns the list
    off)."""

    stage: Literal["recall", "rerank"] = "recall"

    def __init__(self, weight: float, k: int) -> None:
        self.weight: float | None = weight
        self._k = k

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        if self.weight is None or self.weight <= 0:
            return []
        nearest = pool.store.nearest_papers(query.embedding, self._k)
        return [(pid, 1.0) for pid in nearest if pid in pool.papers]


class WindowRank:
    """The candidates by their best whole window (with its title) cosine; weight ``window_rank_weight``."""

    stage: Literal["recall", "rerank"] = "rerank"

    def __init__(self, weight: float) -> None:
        self.weight: float | None = weight

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        q = np.asarray(query.embedding, dtype=np.float32)
        best_window = {pid: float((v[1] @ q).max()) for pid, v in pool.vectors.items()}
        return [(pid, best_window[pid]) for pid in sorted(best_window, key=lambda pid: best_window[pid], reverse=True)]


class AspectCoverage:
    """For a question that asks for one paper (``Pool.aspects``): the candidates by how well they cover every
    clause of the question (lang.text.clauses, at most ``max_clauses``; ``embed`` gives the clauses' query embeddings
    in one call); weight ``aspect_weight``. Empty for a one-clause question."""

    stage: Literal["recall", "rerank"] = "rerank"

    def __init__(self, embed: Callable[[Query, list[str]], list[list[float]]], weight: float, max_clauses: int) -> None:
        self._embed = embed
        self.weight: float | None = weight
        self._max_clauses = max_clauses

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        parts = clauses(query.text)[: self._max_clauses] if pool.aspects else []
        if not parts or not pool.vectors:
            return []
        aspect_q = np.asarray(self._embed(query, parts), dtype=np.float32).T
        coverage = {
            pid: float(np.maximum((v[0] @ aspect_q).max(axis=0), (v[1] @ aspect_q).max(axis=0)).mean())
            for pid, v in pool.vectors.items()
        }
        return [(pid, coverage[pid]) for pid in sorted(coverage, key=lambda pid: coverage[pid], reverse=True)]


def default_rankers(
    metadata: MetadataIndex,
    embed: Callable[[Query, list[str]], list[list[float]]],
    retrieval: RetrievalSettings,
    paper_bm25: PaperBM25Index,
) -> list[Ranker]:
    """Retrieval's ranked lists in fusion order: window fusion, metadata matches, paper BM25, paper vectors
    (recall); window rank, aspect coverage (rerank); weights and sizes from ``retrieval`` (its fitted fields)."""
    r = retrieval
    return [
        WindowFusion(r.second_window_weight),
        MetadataMatches(metadata, r.metadata_weight),
        PaperBM25(paper_bm25, r.paper_bm25_weight, r.paper_bm25_k),
        PaperVectors(r.paper_vector_weight, r.paper_vector_k),
        WindowRank(r.window_rank_weight),
        AspectCoverage(embed, r.aspect_weight, r.aspect_max_clauses),
    ]
