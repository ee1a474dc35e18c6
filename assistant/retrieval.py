"""Query -> ranked papers with evidence sentences: dense + BM25 over sentence windows, fused with RRF.

Retrieval runs through llama-index: a ``VectorIndexRetriever`` over the Chroma windows, a
``BM25Retriever`` over the same nodes, and ``QueryFusionRetriever`` in reciprocal-rank mode
(k = 60, Cormack et al. 2009). Window hits are aggregated to papers; then, for the best papers,
each sentence is scored by the exact cosine between the query and the window centred on it.

Score conversion, written down once: the Chroma collections use cosine space, so a stored
distance ``d = 1 - cos``; dense cosines here are computed directly from stored unit vectors.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from assistant.references import MetadataIndex
from assistant.text import content_tokens, is_boilerplate, split_sentences, states_contribution
from assistant.types import Evidence, PaperHit
from assistant.tuning import METADATA_WEIGHT, RRF_K, EVIDENCE_BOILERPLATE_PENALTY, EVIDENCE_CONTRIBUTION_PRIOR, EVIDENCE_LEXICAL_WEIGHT, RARE_TERM_MAX_DF, SECOND_WINDOW_WEIGHT, SENTENCE_WEIGHT

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.config import Settings
    from assistant.store import PaperStore

logger = logging.getLogger(__name__)

_NAME_LIKE = re.compile(r"[A-Z].*[A-Z]|\d|-")


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


class PaperRetriever:
    """Hybrid retriever over one :class:`PaperStore`; build once per process, then call :meth:`retrieve`.

    Args:
        store: an opened index (papers are loaded once at construction).
        embed_model: the same embedding model the index was built with.
        settings: ``candidate_k`` (windows per retriever) and evidence sizes.
        sentence_embedder: batch texts -> unit vectors (e.g. a cached embedder); when given, evidence
            sentences are also scored on their own embedding, not only their window's.
    """

    def __init__(self, store: PaperStore, embed_model: BaseEmbedding, settings: Settings,
                 sentence_embedder: Callable[[list[str]], list[list[float]]] | None = None) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.retrievers.bm25 import BM25Retriever

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets itself to DEBUG on import
        t0 = time.perf_counter()
        self._store = store
        self._embed = embed_model
        self._settings = settings
        self._sentence_embedder = sentence_embedder
        self.papers = store.load_papers()
        self.sentences = {pid: split_sentences(p.text) for pid, p in self.papers.items()}
        self.metadata = MetadataIndex(self.papers, self.sentences)
        self._df: dict[str, int] = defaultdict(int)  # document frequency of content tokens over papers
        self._postings: dict[str, set[str]] = defaultdict(set)  # token (and each part of a hyphenated one) -> papers
        for pid, p in self.papers.items():
            tokens = content_tokens(f"{p.title} {p.text}")
            for tok in tokens:
                self._df[tok] += 1
            for tok in tokens | {part for t in tokens if "-" in t for part in t.split("-") if part}:
                self._postings[tok].add(pid)
        nodes = [n for n in store.all_nodes() if n.metadata.get("paper_id") in self.papers]
        k = min(settings.candidate_k, max(1, len(nodes)))
        dense = VectorStoreIndex.from_vector_store(store.vector_store, embed_model=embed_model).as_retriever(similarity_top_k=k)
        bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k, language="english")
        # num_queries=1: no query generation, so the LLM is never called; MockLLM only keeps
        # llama-index from resolving its global default (OpenAI) at construction.
        self._fusion = QueryFusionRetriever(
            {"fused": [dense, bm25], "dense": [dense], "bm25": [bm25]}[settings.retrieval_mode], mode="reciprocal_rerank", num_queries=1, similarity_top_k=2 * k,
            use_async=False, llm=MockLLM(), verbose=False,
        )
        logger.info("retriever ready: %d papers, %d windows in %.2f s", len(self.papers), len(nodes), time.perf_counter() - t0)

    def rare_terms_matched(self, query: str, hits: list[PaperHit]) -> list[str]:
        """Rare query terms found in ``hits``: evidence of topicality that dense similarity can miss
        (acronyms and names such as ``A-Bench`` or ``SMM``).

        Returns:
            the matched rare terms if at least one is name-like (capitals, digits, hyphens) or at least
            two match; else ``[]``. A term is rare when at most ``RARE_TERM_MAX_DF`` of papers contain it.
        """
        max_df = max(1, int(RARE_TERM_MAX_DF * len(self.papers)))
        name_like = {t.lower().strip(".") for t in re.findall(r"[\w\-\.]+", query) if _NAME_LIKE.search(t)}
        hit_tokens: set[str] = set()
        for h in hits:
            hit_tokens |= content_tokens(f"{h.paper.title} {h.paper.text}")
        matched = [t for t in content_tokens(query) if 0 < self._df.get(t, 0) <= max_df and t in hit_tokens]
        if any(t in name_like for t in matched) or len(matched) >= 2:
            return matched
        return []

    def papers_with(self, term: str) -> set[str]:
        """Ids of the papers whose title or abstract contains the token ``term`` (or has it as part of a
        hyphenated token: "combinatorial" in "combinatorial-optimization"); lower-case token expected."""
        return set(self._postings.get(term, ()))

    def mentions_anywhere(self, term: str) -> bool:
        """True when some indexed paper's title or abstract contains ``term`` as a token (case-insensitive,
        a plural ``s`` ignored); uses the document-frequency table, so it costs no scan."""
        tokens = content_tokens(term)
        if not tokens:
            return True
        def known(t: str) -> bool:
            return t in self._df or t.rstrip("s") in self._df or f"{t}s" in self._df

        return all(known(t) or all(known(part) for part in t.split("-") if part) for t in tokens)

    def retrieve(self, query: str, top_k: int | None = None) -> list[PaperHit]:
        """Rank papers for ``query``.

        Returns:
            up to ``top_k`` (default ``settings.top_k``) :class:`PaperHit`, best first; ``score`` is the
            aggregated RRF score, ``dense_similarity`` the best window cosine in [-1, 1], and
            ``evidence`` the ``evidence_sentences`` best sentences of the paper (in abstract order).
            Papers the query names by author, title name or title words (references.MetadataIndex) get
            a third reciprocal-rank list fused in with weight ``METADATA_WEIGHT``.
        """
        from llama_index.core.schema import QueryBundle

        top_k = top_k or self._settings.top_k
        q_emb = self._embed.get_query_embedding(query)
        fused = self._fusion.retrieve(QueryBundle(query_str=query, embedding=q_emb))
        per_paper: dict[str, list[float]] = defaultdict(list)
        for hit in fused:
            pid = hit.node.metadata.get("paper_id")
            if pid in self.papers:
                per_paper[str(pid)].append(float(hit.score or 0.0))
        scored = {
            pid: s[0] + SECOND_WINDOW_WEIGHT * (s[1] if len(s) > 1 else 0.0)
            for pid, s in ((pid, sorted(v, reverse=True)) for pid, v in per_paper.items())
        }
        for rank, pid in enumerate(self.metadata.matches(query), start=1):  # authors, title names, title words
            scored[pid] = scored.get(pid, 0.0) + METADATA_WEIGHT / (RRF_K + rank)
        ranked = sorted(scored, key=lambda pid: scored[pid], reverse=True)[:top_k]
        return self._hits(query, q_emb, ranked, scored)

    def hits_for(self, query: str, paper_ids: list[str]) -> list[PaperHit]:
        """:class:`PaperHit` for the given papers (in that order), with evidence for ``query``; unknown ids
        are skipped. Used when a follow-up names the papers ("those two", "the second one")."""
        known = [pid for pid in paper_ids if pid in self.papers]
        return self._hits(query, self._embed.get_query_embedding(query), known, {})

    def _hits(self, query: str, q_emb: list[float], ranked: list[str], scored: dict[str, float]) -> list[PaperHit]:
        window_vectors = self._store.window_embeddings(ranked)
        q_tokens = content_tokens(query)
        hits = []
        for pid in ranked:
            cosines = {i: _dot(q_emb, e) for i, e in window_vectors.get(pid, [])}
            sentences = self.sentences[pid]
            sentence_cos = ([_dot(q_emb, v) for v in self._sentence_embedder(sentences)]
                            if self._sentence_embedder else [cosines.get(i, 0.0) for i in range(len(sentences))])
            ev = []
            for i, sent in enumerate(sentences):
                lex = len(q_tokens & content_tokens(sent)) / len(q_tokens) if q_tokens else 0.0
                dense = SENTENCE_WEIGHT * sentence_cos[i] + (1 - SENTENCE_WEIGHT) * cosines.get(i, 0.0)
                prior = EVIDENCE_CONTRIBUTION_PRIOR * states_contribution(sent) - EVIDENCE_BOILERPLATE_PENALTY * is_boilerplate(sent)
                ev.append(Evidence(pid, i, sent, dense + EVIDENCE_LEXICAL_WEIGHT * lex + prior))
            best = sorted(ev, key=lambda e: e.score, reverse=True)[: self._settings.evidence_sentences]
            hits.append(PaperHit(
                paper=self.papers[pid], score=scored.get(pid, 0.0), dense_similarity=max(cosines.values(), default=0.0),
                evidence=tuple(sorted(best, key=lambda e: e.sentence_index)), sentences=tuple(sentences),
                sentence_scores=tuple(e.score for e in ev),
            ))
        return hits
