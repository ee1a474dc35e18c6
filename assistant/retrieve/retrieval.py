"""Query -> ranked papers with evidence sentences: dense + BM25 over sentence windows, fused with RRF.

Retrieval runs through llama-index: a ``VectorIndexRetriever`` over the Chroma windows (each window's
vector is the embedding of its centre sentence, computed once at ingest), a BM25 retriever over the same
windows' texts in the catalog's FTS5 index (catalog.py), and ``QueryFusionRetriever`` in reciprocal-rank
mode (k = 60, Cormack et al. 2009). Window hits are aggregated to papers; then, for the best papers, each
sentence is scored from the stored vectors: its own cosine with the query and that of the window centred
on it (the normalised mean of the window's sentence vectors); nothing is embedded but the query. Each ranked
list is a ranker (rankers.py), fused in one loop (:meth:`PaperRetriever._retrieve`); the query arrives as one
:class:`~assistant.retrieve.query.Query` holding its embedding.

Score conversion, written down once: the Chroma collections use cosine space, so a stored
distance ``d = 1 - cos``; dense cosines here are computed directly from stored unit vectors.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from assistant.lang.text import content_tokens, is_boilerplate, states_contribution
from assistant.lang.words import DOTTED_WORD, QUERY_NAME_LIKE
from assistant.retrieve.paper_bm25 import PaperBM25Index
from assistant.retrieve.query import Query
from assistant.retrieve.rankers import Pool, Ranker, default_rankers, fuse
from assistant.retrieve.references import MetadataIndex
from assistant.types import Evidence, Paper, PaperHit

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.config import Settings
    from assistant.index.catalog import Catalog
    from assistant.index.embeddings import CachedEmbedder
    from assistant.index.store import PaperStore
    from assistant.understand.turn import TurnCache

logger = logging.getLogger(__name__)

#: A retriever checks for papers added, replaced or deleted by another process at most this often (seconds).
REFRESH_INTERVAL_S = 1.0
#: A search restricted to a large set of papers (``retrieve(allowed=...)``: a venue of thousands) fetches at most this
#: many times the windows of an unrestricted one (as many times as the corpus is larger than the set).
NARROWED_WIDEN_MAX = 4
T = TypeVar("T")
#: Reads of one question through successive views when the index changed under the previous ones.
READ_ATTEMPTS = 3


class CatalogBM25Retriever(BaseRetriever):
    """llama-index retriever over the catalog's FTS5 window index (BM25, catalog.Catalog.bm25); its nodes
    equal those the Chroma vector store returns for the same windows (text and metadata, hence the node
    hash), so reciprocal-rank fusion merges the two rankings.

    Args:
        catalog: the catalog to search; similarity_top_k: windows returned per query.
    """

    def __init__(self, catalog: Catalog, similarity_top_k: int) -> None:
        super().__init__()
        self._catalog = catalog
        self._k = similarity_top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        rows = self._catalog.bm25(query_bundle.query_str, self._k)
        return [
            NodeWithScore(
                node=TextNode(id_=wid, text=text, metadata={"paper_id": pid, "sentence": sent, "content_hash": h}),
                score=score,
            )
            for wid, pid, sent, h, text, score in rows
        ]


def _no_transformation() -> Any:
    """A llama-index ``TransformComponent`` that returns the nodes unchanged (for a read-only index)."""
    from llama_index.core.schema import TransformComponent

    class NoTransformation(TransformComponent):
        def __call__(self, nodes: Any, **kwargs: Any) -> Any:
            return nodes

    return NoTransformation()


class _View:
    """One opening of the index that questions read through: its store, its dense+BM25 fusion retriever, and
    (embedded mode) the Chroma ``System`` behind the store, stopped once the view is replaced and no question
    reads through it any more (stopping it earlier broke the questions of other conversations)."""

    def __init__(self, store: PaperStore, fusion: BaseRetriever, system: object) -> None:
        self.store = store
        self.fusion = fusion
        self.wide: dict[int, BaseRetriever] = {}  # candidate_k -> a wider fusion over this store (topic lists)
        self.system = system
        self.readers = 0
        self.retired = False

    def close(self, current_system: object) -> None:
        if self.system is not None and self.system is not current_system:
            try:
                self.system.stop()  # type: ignore[attr-defined]
            except Exception as e:  # noqa: BLE001 - releasing memory only
                logger.debug("stopping an old Chroma client failed: %s", e)


class PaperRetriever:
    """Hybrid retriever over one :class:`PaperStore` and its catalog; build once per process, then call
    :meth:`retrieve` from any number of threads. Opening reads nothing of the corpus: papers, sentences, BM25
    and the metadata index are looked up in the catalog (catalog.py) per question.

    Another process may write meanwhile (ingest, delete, rebuild). An embedded Chroma client holds the vectors
    it loaded in memory and does not see that process's writes, while the catalog and Chroma's own records
    (SQLite) do: reading the vector of a paper newer than the loaded ones fails with "Error finding id", and a
    rebuild drops the collections a reader holds. So questions read through a *view* (one opening of the
    index); when the index's generation moves on (checked at most every ``REFRESH_INTERVAL_S``), or a read
    fails in one of those two ways (:func:`assistant.index.store.is_stale_view_error`), a new view is opened
    and the question read again; the old view is closed when its last question is done. A view's client makes its
    first read of the index (the load of the vector files) under the index lock held shared, which each write call
    of another process holds exclusively (assistant/index/index_lock.py: a load meeting a write segfaulted,
    issue 43); questions read through a loaded view without the lock.

    Args:
        store: an opened index.
        catalog: its catalog (synced here, and again at most every ``REFRESH_INTERVAL_S`` seconds, so
            papers another process adds, replaces or deletes show up within that time).
        embed_model: the same embedding model the index was built with.
        settings: ``candidate_k`` (windows per retriever) and evidence sizes.
        sentence_embedder: a cached embedder of ``embed_model``; the stored sentence vectors of retrieved
            papers are put into its cache, so answer checking never re-embeds an abstract sentence.
    """

    def __init__(
        self,
        store: PaperStore,
        catalog: Catalog,
        embed_model: BaseEmbedding,
        settings: Settings,
        sentence_embedder: CachedEmbedder | None = None,
    ) -> None:
        from assistant.index.catalog import CatalogPapers
        from assistant.index.store import embedded_system

        t0 = time.perf_counter()
        self._catalog = catalog
        self._embed = embed_model
        self._settings = settings
        self._sentence_embedder = sentence_embedder
        self._synced_at = 0.0
        self._seen_generation = -1
        self._sync_lock = threading.RLock()
        self._views_lock = threading.Lock()
        self._view = _View(store, self._build_fusion(store), embedded_system(settings))
        self.refresh(force=True)
        self.papers: Mapping[str, Paper] = CatalogPapers(catalog)
        self.metadata = MetadataIndex(catalog)
        #: The ranked lists fused per query, in order (rankers.py); a reranker is one more ``rerank`` entry.
        self.paper_bm25 = PaperBM25Index(catalog)
        self.rankers: list[Ranker] = default_rankers(
            self.metadata, self._clause_vectors, settings.retrieval, self.paper_bm25
        )
        logger.info(
            "retriever ready: %d papers (catalog generation %d) in %.2f s",
            len(self.papers),
            catalog.generation,
            time.perf_counter() - t0,
        )

    @property
    def _store(self) -> PaperStore:
        """The store of the current view."""
        return self._view.store

    def _build_fusion(self, store: PaperStore, candidate_k: int | None = None) -> BaseRetriever:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever

        k = candidate_k or self._settings.retrieval.candidate_k
        # one no-op transformation: no default node parser. An empty list is falsy, and llama-index then builds
        # its global SentenceSplitter, which loads a tiktoken encoding (~0.5 s) and, when TIKTOKEN_CACHE_DIR
        # lacks it, tries to download it (a raw ConnectionError offline; issue 20). Nothing is inserted here.
        dense = VectorStoreIndex.from_vector_store(
            store.vector_store, embed_model=self._embed, transformations=[_no_transformation()]
        ).as_retriever(similarity_top_k=k)
        bm25 = CatalogBM25Retriever(self._catalog, k)
        # num_queries=1: no query generation, so the LLM is never called; MockLLM only keeps
        # llama-index from resolving its global default (OpenAI) at construction.
        return QueryFusionRetriever(
            {"fused": [dense, bm25], "dense": [dense], "bm25": [bm25]}[self._settings.retrieval.mode],
            mode="reciprocal_rerank",
            num_queries=1,
            similarity_top_k=2 * k,
            use_async=False,
            llm=MockLLM(),
            verbose=False,
        )

    @classmethod
    def open(
        cls, settings: Settings, embed_model: BaseEmbedding, sentence_embedder: CachedEmbedder | None = None
    ) -> PaperRetriever:
        """Open the index for ``settings`` and its catalog, and build the retriever.

        Raises:
            StoreNotReadyError: no index for these settings (run ``assistant ingest``), or a damaged catalog.
        """
        from assistant.index.catalog import open_catalog
        from assistant.index.store import PaperStore
        from assistant.ingest.steering import check_withheld

        store = PaperStore.open_for_read(settings)
        catalog = open_catalog(settings, store, withheld_check=check_withheld)
        return cls(store, catalog, embed_model, settings, sentence_embedder=sentence_embedder)

    def refresh(self, force: bool = False) -> int:
        """Bring the catalog up to the index's generation (papers added, replaced or deleted by another process);
        at most once per ``REFRESH_INTERVAL_S`` unless ``force``. Returns the number of papers changed.

        Raises:
            StoreNotReadyError: the catalog is damaged or belongs to another index (run ``assistant ingest``).
        """
        now = time.monotonic()
        if not force and now - self._synced_at < REFRESH_INTERVAL_S:
            return 0
        from assistant.index.store import embedded_system, is_stale_view_error, process_id

        with self._sync_lock:
            self._synced_at = now
            view = self._view
            try:
                generation, writer = view.store.head()
            except Exception as e:
                if not is_stale_view_error(e):
                    raise
                generation, writer = -1, ""  # the collections were dropped (a rebuild switched): reopen
            owner = self._catalog.owner
            switched = generation < 0 or bool(owner and owner != view.store.collection_id)
            if generation == self._seen_generation and not switched:
                return 0
            embedded = not self._settings.storage.chroma_host
            others_wrote = writer != process_id() or view.system is not embedded_system(self._settings)
            reopen = switched or (self._seen_generation >= 0 and embedded and others_wrote)
            for attempt in range(1, READ_ATTEMPTS + 1):
                try:
                    if reopen:
                        view = self._reopen()
                        generation = view.store.generation()
                    changed = self._sync_catalog(view)
                    break
                except Exception as e:
                    if attempt == READ_ATTEMPTS or not is_stale_view_error(e):
                        raise
                    reopen = True  # the index changed again while it was being read: open what is there now
            self._seen_generation = generation
            return changed

    def _reopen(self) -> _View:
        """Open the index again (embedded: through a new Chroma client, which loads what is on disk now) and make
        that the view new questions read through. When the catalog already belongs to a rebuild's collections
        (it is switched first), those are read, whatever names they carry at that moment; otherwise this waits,
        at most ``SWITCH_WAIT_S``, for the catalog and the index to match. Call under ``_sync_lock``.

        The new client's first read of each collection (the load of its vector files) is made under the index
        lock held shared (:meth:`PaperStore.load`; assistant/index/index_lock.py), which each write call of
        another process holds exclusively: the load never reads files a writer is rewriting (a segfault in
        Chroma's Rust layer, issue 43). The lock is held for that load only (milliseconds at 38 papers), never
        while this waits for a rebuild's switch, and questions read through the loaded view without it.

        Raises:
            StoreNotReadyError: no index (any more), or the index lock was held by another process for
                ``index_lock.LOCK_TIMEOUT_S``.
        """
        from assistant.index.store import SWITCH_WAIT_S, embedded_system, forget_embedded_client, is_stale_view_error

        if not self._settings.storage.chroma_host:
            forget_embedded_client(self._settings, stop=False)  # the old view's client stops when it is done
        deadline = time.monotonic() + SWITCH_WAIT_S
        while True:
            try:
                store = self._open_store(deadline)
                # an embedded client loads a collection's vectors and replays Chroma's write log into them at its
                # first read; done here, once, before any question reads through the view (several threads doing
                # that first read at once replayed the log into one vector index: a segfault), under the index
                # lock held shared (a writer rewriting those files meanwhile: a segfault too, issue 43)
                store.load()
                break
            except Exception as e:
                if not is_stale_view_error(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)  # dropped while being opened (a rebuild's switch): open what is there now
        new = _View(store, self._build_fusion(store), embedded_system(self._settings))
        with self._views_lock:
            old, self._view = self._view, new
            old.retired = True
            done = old.readers == 0
        if done:
            old.close(new.system)
        logger.info("reopened the index (collection %s)", store.collection_id)
        return new

    def _open_store(self, deadline: float) -> PaperStore:
        """The index's store for a new view (see :meth:`_reopen`)."""
        from assistant.index.store import PaperStore

        while True:
            store = PaperStore.open_for_read(self._settings)
            owner = self._catalog.owner
            if not owner or owner == store.collection_id:
                return store
            rebuilt = PaperStore.open_rebuilt(self._settings, owner)  # a rebuild is switching (or was killed doing so)
            if rebuilt is not None:
                return rebuilt  # complete: read it under whichever names its collections have now
            if self._settings.storage.chroma_host or time.monotonic() > deadline:
                return store  # server: this replica's catalog is rebuilt; embedded: "run `assistant ingest`"
            time.sleep(0.05)

    def _sync_catalog(self, view: _View) -> int:
        """Sync the catalog to ``view``'s store. In client/server mode the catalog is this replica's own and is
        rebuilt (in one transaction) when the server's index was rebuilt; embedded, the writer replaces it."""
        if self._catalog.collection_id != view.store.collection_id:
            self._catalog.collection_id = view.store.collection_id
        return self._catalog.sync(view.store, rebuild_if_foreign=bool(self._settings.storage.chroma_host))

    def _reopen_after(self, failed: _View) -> None:
        """A read through ``failed`` found the index changed under it: reopen, unless another thread already did."""
        from assistant.index.store import is_stale_view_error

        with self._sync_lock:
            if self._view is failed:
                try:
                    view = self._reopen()
                    self._sync_catalog(view)
                    self._seen_generation = view.store.generation()
                except Exception as e:  # changed again meanwhile: the next read finds out and reopens
                    if not is_stale_view_error(e):
                        raise
                    logger.info("the index changed again while it was reopened (%s)", e)

    def _acquire(self) -> _View:
        with self._views_lock:
            view = self._view
            view.readers += 1
            return view

    def _release(self, view: _View) -> None:
        with self._views_lock:
            view.readers -= 1
            done = view.retired and view.readers == 0
            current = self._view.system
        if done:
            view.close(current)

    def _read(self, work: Callable[[_View, bool], T]) -> T:
        """Run ``work(view, lenient)`` through the current view; if the index changed under it (a stale-view
        error), reopen and run it again, at most ``READ_ATTEMPTS`` times in all, the last with ``lenient``
        (papers whose vectors that view still cannot read, i.e. being written right now, are left out of that
        answer)."""
        from assistant.index.store import is_stale_view_error

        for attempt in range(1, READ_ATTEMPTS + 1):
            view = self._acquire()
            try:
                return work(view, attempt == READ_ATTEMPTS)
            except Exception as e:
                if attempt == READ_ATTEMPTS or not is_stale_view_error(e):
                    raise
                logger.info("the index changed while reading (%s); reading it again", e)
            finally:
                self._release(view)
            self._reopen_after(view)
        raise AssertionError("unreachable")

    @property
    def catalog(self) -> Catalog:
        """The catalog this retriever reads (paper records, filters, BM25); call :meth:`refresh` first to see
        the index's latest papers."""
        return self._catalog

    def sentences_of(self, pid: str) -> list[str]:
        """The sentences of paper ``pid`` (``text.split_sentences`` of its abstract); [] if unknown."""
        return self._catalog.sentences(pid)

    def rare_terms_matched(self, query: str, hits: list[PaperHit]) -> list[str]:
        """Rare query terms found in ``hits``: evidence of topicality that dense similarity can miss
        (acronyms and names such as ``A-Bench`` or ``SMM``).

        Returns:
            the matched rare terms if at least one is name-like (capitals, digits, hyphens) or at least
            two match; else ``[]``. A term is rare when at most ``retrieval.rare_term_max_df`` of papers contain it.
        """
        max_df = max(1, int(self._settings.retrieval.rare_term_max_df * len(self.papers)))
        df = self._catalog.document_frequency
        name_like = {t.lower().strip(".") for t in DOTTED_WORD.findall(query) if QUERY_NAME_LIKE.search(t)}
        hit_tokens: set[str] = set()
        for h in hits:
            hit_tokens |= content_tokens(f"{h.paper.title} {h.paper.text}")
        matched = [t for t in content_tokens(query) if t in hit_tokens and 0 < df(t) <= max_df]
        if any(t in name_like for t in matched) or len(matched) >= 2:
            return matched
        return []

    def papers_with(self, term: str) -> set[str]:
        """Ids of the papers whose title or abstract contains the token ``term`` (or has it as part of a
        hyphenated token: "combinatorial" in "combinatorial-optimization"); lower-case token expected."""
        return set(self._catalog.papers_with(term))

    def mentions_anywhere(self, term: str) -> bool:
        """True when some indexed paper's title or abstract contains ``term`` as a token (case-insensitive,
        a plural ``s`` ignored); uses the document-frequency table, so it costs no scan."""
        tokens = content_tokens(term)
        if not tokens:
            return True
        df = self._catalog.document_frequency

        def known(t: str) -> bool:
            return df(t) > 0 or df(t.rstrip("s")) > 0 or df(f"{t}s") > 0

        return all(known(t) or all(known(part) for part in t.split("-") if part) for t in tokens)

    def query(self, text: str, cache: TurnCache | None = None) -> Query:
        """The :class:`~assistant.retrieve.query.Query` for ``text``: its query embedding, computed once per turn
        when ``cache`` (the turn's memo) is given."""
        if cache is None:
            return Query(text, self._embed.get_query_embedding(text))
        return Query(text, cache.get("query", text, lambda: self._embed.get_query_embedding(text)), cache)

    def _as_query(self, query: str | Query) -> Query:
        return query if isinstance(query, Query) else self.query(query)

    def _clause_vectors(self, query: Query, texts: list[str]) -> list[list[float]]:
        """The query embeddings of clauses of ``query``, in order (shared through the turn's memo when it has one);
        those not yet embedded in this turn are embedded in one run of the ONNX runtime (one run per text costs about
        5 ms at any length on 2 cores: 3 clauses were 17 of a lookup's 82 ms at 10k)."""

        def embed(missing: list[str]) -> list[list[float]]:
            from assistant.index.onnx_embedding import OnnxEmbedding

            if isinstance(self._embed, OnnxEmbedding):  # its query and text embeddings are the same pipeline
                return self._embed.embed(missing).tolist()
            return [self._embed.get_query_embedding(t) for t in missing]

        if query.cache is None:
            return embed(texts)
        return query.cache.get_many("query", texts, embed)

    def retrieve(
        self,
        query: str | Query,
        top_k: int | None = None,
        *,
        aspects: bool = False,
        candidate_k: int | None = None,
        allowed: Collection[str] | None = None,
    ) -> list[PaperHit]:
        """Rank papers for ``query`` (a text, or a :class:`~assistant.retrieve.query.Query` holding its
        embedding); ``aspects=True`` for a question that asks for one paper (lookup, summary): the candidates
        are also ranked by how well each covers every clause of the question (``retrieval.aspect_weight``; costs
        one query embedding per clause, at most ``retrieval.aspect_max_clauses``). ``candidate_k`` overrides
        ``settings.retrieval.candidate_k`` (windows fetched per retriever), for a listing that needs more papers than a
        lookup (a topic over a whole conference). ``allowed`` (paper ids: a venue's, an author's; None for all)
        ranks those papers only: a set of at most ``retrieval.narrowed_score_all`` papers is ranked whole (every one
        a candidate of every ranker's fused list), a larger one is searched with up to :data:`NARROWED_WIDEN_MAX`
        times more windows (the corpus's share outside it) and filtered.

        Returns:
            up to ``top_k`` (default ``settings.retrieval.top_k``) :class:`PaperHit`, best first; ``score`` is the
            fused score of the rankers (rankers.py: window RRF score, then metadata, paper-vector, window-rank
            and aspect reciprocal ranks), ``dense_similarity`` the best window cosine in [-1, 1], and
            ``evidence`` the ``evidence_sentences`` best sentences of the paper (in abstract order).
            Papers the query names by author, title name or title words (references.MetadataIndex) get
            a reciprocal-rank list fused in with weight ``METADATA_WEIGHT``.
        """
        top_k = top_k or self._settings.retrieval.top_k
        self.refresh()
        q = self._as_query(query)
        if allowed is not None:
            allowed = frozenset(allowed)
            if len(allowed) > self._settings.retrieval.narrowed_score_all:
                base = candidate_k or self._settings.retrieval.candidate_k
                widen = min(NARROWED_WIDEN_MAX, math.ceil(len(self.papers) / max(1, len(allowed))))
                candidate_k = base * widen
        return self._read(lambda view, lenient: self._retrieve(view, q, top_k, aspects, lenient, candidate_k, allowed))

    def _retrieve(
        self,
        view: _View,
        query: Query,
        top_k: int,
        aspects: bool,
        lenient: bool,
        candidate_k: int | None = None,
        allowed: frozenset[str] | None = None,
    ) -> list[PaperHit]:
        """One fusion loop over :attr:`rankers`: the ``recall`` rankers decide the candidates (the best
        ``max(top_k, retrieval.window_rank_candidates)``; of ``allowed`` only, and all of a small ``allowed``), whose
        vectors are then read for the ``rerank`` rankers."""
        fusion = view.fusion
        if candidate_k and candidate_k != self._settings.retrieval.candidate_k:
            fusion = view.wide.get(candidate_k) or view.wide.setdefault(
                candidate_k, self._build_fusion(view.store, candidate_k)
            )
        pool = Pool(fusion, view.store, self.papers, aspects)
        scored: dict[str, float] = {}
        for ranker in self.rankers:
            if ranker.stage == "recall":
                fuse(scored, ranker(query, pool), ranker.weight)
        keep = max(top_k, self._settings.retrieval.window_rank_candidates)
        if allowed is not None:
            scored = {pid: s for pid, s in scored.items() if pid in allowed}
            if len(allowed) <= self._settings.retrieval.narrowed_score_all:
                for pid in sorted(allowed):
                    scored.setdefault(pid, 0.0)  # unknown ids have no vectors: _hits skips them
                keep = len(scored)  # every allowed paper is ranked again
        candidates = sorted(scored, key=lambda pid: scored[pid], reverse=True)[:keep]
        pool.vectors = vectors = self._vectors(view, candidates, lenient)
        for ranker in self.rankers:
            if ranker.stage == "rerank":
                fuse(scored, ranker(query, pool), ranker.weight)
        ranked = sorted(candidates, key=lambda pid: scored[pid], reverse=True)[:top_k]
        return self._hits(query, ranked, scored, vectors)

    def hits_for(self, query: str | Query, paper_ids: list[str]) -> list[PaperHit]:
        """:class:`PaperHit` for the given papers (in that order), with evidence for ``query``; unknown ids
        are skipped. Used when a follow-up names the papers ("those two", "the second one")."""
        self.refresh()
        known = [pid for pid in paper_ids if pid in self.papers]
        q = self._as_query(query)
        return self._read(lambda view, lenient: self._hits(q, known, {}, self._vectors(view, known, lenient)))

    def describes(self, query: str | Query, paper_ids: list[str], top_k: int | None = None) -> dict[str, float]:
        """How well ``query`` describes each paper as a whole: the cosine in [-1, 1] between the query vector and
        the paper's profile vector (the normalised mean of its stored sentence vectors plus its title vector,
        ``retrieval.profile_title_weight``; nothing is embedded but the query, once). A description of a paper ("a
        robot grasping one that uses RL") matches that paper's profile; a question about a detail ("how many
        baselines?") matches many papers' profiles about equally, and none well.

        Args:
            query: the question as asked (a text or a :class:`~assistant.retrieve.query.Query`).
            paper_ids: papers always scored (e.g. those a conversation is about); unknown ids are skipped.
            top_k: how many papers of a search for ``query`` are scored besides them (None:
                ``retrieval.described_candidates``).

        Returns:
            ``{paper_id: cosine}`` for ``paper_ids`` and the ``top_k`` best papers of :meth:`retrieve`.
        """
        query = self._as_query(query)
        top_k = self._settings.retrieval.described_candidates if top_k is None else top_k
        title_weight = self._settings.retrieval.profile_title_weight
        pids = list(dict.fromkeys([*(h.paper.id for h in self.retrieve(query, top_k=top_k)), *paper_ids]))
        pids = [pid for pid in pids if pid in self.papers]
        q = np.asarray(query.embedding, dtype=np.float32)

        def read(view: _View, lenient: bool) -> dict[str, float]:
            vectors = self._vectors(view, pids, lenient)
            titles = view.store.title_vectors(list(vectors))
            out = {}
            for pid, (vecs, _, _) in vectors.items():
                profile = vecs.mean(axis=0)
                profile /= max(float(np.linalg.norm(profile)), 1e-12)
                if pid in titles:
                    profile = profile + title_weight * np.asarray(titles[pid], dtype=np.float32)
                out[pid] = float(profile @ q) / max(float(np.linalg.norm(profile)), 1e-12)
            return out

        return self._read(read)

    def _vectors(
        self, view: _View, pids: list[str], lenient: bool = False
    ) -> dict[str, tuple[np.ndarray, np.ndarray, list[str]]]:
        """``{paper_id: (sentence vectors, window vectors, sentences)}`` from the stored vectors (rows in
        sentence order; the window centred on each sentence derived with ``retrieval.window_title_weight``). Papers
        whose windows are not all written yet (another process is re-indexing them) are left out; so are, when
        ``lenient``, papers whose vectors ``view`` cannot read (written after it was opened)."""
        all_sentences = {pid: self._catalog.sentences(pid) for pid in pids if pid in self.papers}
        pids = [pid for pid in pids if all_sentences.get(pid)]
        # each window's vector is its centre sentence's
        sentence_vectors, title_vectors = self._stored_vectors(
            view, {pid: len(all_sentences[pid]) for pid in pids}, lenient
        )
        title_weight = self._settings.retrieval.window_title_weight
        half_before = (self._settings.storage.window_sentences - 1) // 2
        half_after = self._settings.storage.window_sentences - 1 - half_before
        out = {}
        for pid in pids:
            sentences = all_sentences[pid]
            rows = dict(sentence_vectors.get(pid, []))
            if not sentences or len(rows) < len(sentences):
                continue
            vecs = np.asarray([rows[i] for i in range(len(sentences))], dtype=np.float32)
            windows = np.stack(
                [vecs[max(0, i - half_before) : i + half_after + 1].mean(axis=0) for i in range(len(sentences))]
            )
            windows /= np.maximum(np.linalg.norm(windows, axis=1, keepdims=True), 1e-12)
            if pid in title_vectors:
                windows += title_weight * np.asarray(title_vectors[pid], dtype=np.float32)
                windows /= np.maximum(np.linalg.norm(windows, axis=1, keepdims=True), 1e-12)
            withheld = set(self.papers[pid].withheld or ())
            if withheld:  # sentences that address the assistant are never evidence (types.Paper.withheld)
                keep = [i for i, s in enumerate(sentences) if s not in withheld]
                vecs, windows, sentences = vecs[keep], windows[keep], [sentences[i] for i in keep]
            out[pid] = (vecs, windows, sentences)
        return out

    @staticmethod
    def _stored_vectors(
        view: _View, counts: dict[str, int], lenient: bool
    ) -> tuple[dict[str, list[tuple[int, list[float]]]], dict[str, list[float]]]:
        """Sentence and title vectors of the papers ``counts`` (``{paper_id: sentences}``) through ``view``;
        ``lenient``: paper by paper, leaving out those ``view`` cannot read (see :meth:`_vectors`)."""
        from assistant.index.store import is_stale_view_error

        try:
            return view.store.sentence_vectors(counts), view.store.title_vectors(list(counts))
        except Exception as e:
            if not (lenient and is_stale_view_error(e)):
                raise
        sentences: dict[str, list[tuple[int, list[float]]]] = {}
        titles: dict[str, list[float]] = {}
        for pid, n in counts.items():
            try:
                one, title = view.store.sentence_vectors({pid: n}), view.store.title_vectors([pid])
            except Exception as e:
                if not is_stale_view_error(e):
                    raise
                logger.info("%s left out of this answer: it is being written by another process", pid)
                continue
            sentences.update(one)
            titles.update(title)
        return sentences, titles

    def _hits(
        self,
        query: Query,
        ranked: list[str],
        scored: dict[str, float],
        vectors: dict[str, tuple[np.ndarray, np.ndarray, list[str]]],
    ) -> list[PaperHit]:
        q_tokens = content_tokens(query.text)
        q = np.asarray(query.embedding, dtype=np.float32)
        r = self._settings.retrieval
        hits = []
        for pid in ranked:
            if pid not in vectors:
                continue  # being re-indexed by another process right now: its windows are not all written yet
            vecs, windows, sentences = vectors[pid]
            if self._sentence_embedder is not None:
                self._sentence_embedder.prime(sentences, vecs.tolist())
            sentence_cos = vecs @ q
            window_cos = windows @ q
            ev = []
            for i, sent in enumerate(sentences):
                lex = len(q_tokens & content_tokens(sent)) / len(q_tokens) if q_tokens else 0.0
                dense = r.sentence_weight * float(sentence_cos[i]) + (1 - r.sentence_weight) * float(window_cos[i])
                prior = r.evidence_contribution_prior * states_contribution(
                    sent
                ) - r.evidence_boilerplate_penalty * is_boilerplate(sent)
                ev.append(Evidence(pid, i, sent, dense + r.evidence_lexical_weight * lex + prior))
            best = sorted(ev, key=lambda e: e.score, reverse=True)[: self._settings.answer.evidence_sentences]
            hits.append(
                PaperHit(
                    paper=self.papers[pid],
                    score=scored.get(pid, 0.0),
                    dense_similarity=float(window_cos.max()),
                    evidence=tuple(sorted(best, key=lambda e: e.sentence_index)),
                    sentences=tuple(sentences),
                    sentence_scores=tuple(e.score for e in ev),
                )
            )
        return hits
