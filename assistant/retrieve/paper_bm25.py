"""BM25 over each paper's whole title + abstract (:class:`PaperBM25Index`), the lexical list of paper retrieval that
reads a description the way a keyword search does (issue 44).

The catalog's window BM25 (catalog.Catalog.bm25) scores 2-3 sentence windows and keeps only a query's rarest words,
for speed; a description of a whole paper ("cut most of the weights of a value-based RL agent and it plays better")
spreads its words over the abstract and uses common ones. On the frozen descriptions of real corpus papers
(``eval/descriptions-1.jsonl``, 10k index) a plain BM25 over title + abstract found the paper in the top 5 for 0.97
of the validation descriptions, the shipped fusion for 0.85 (docs/results/issue44).

The index is `bm25s <https://github.com/xhluca/bm25s>`_ (a sparse-matrix BM25, k1 = 1.5, b = 0.75; English stop
words, no stemming), held in memory and built from the catalog on the first search, then again whenever the
catalog's generation moves on (papers added, replaced or deleted by any process). Building it for 9.9k papers takes
about 1.5 s on 2 cores; a search about 1 ms.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.index.catalog import Catalog

logger = logging.getLogger(__name__)


def _bm25s() -> Any:
    """The ``bm25s`` module, its logger quieted: importing it sets that logger to DEBUG, which would print "Building
    index ..." on stderr under any level the entry point chose (logs.configure_logging runs before this import)."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


class PaperBM25Index:
    """BM25 over ``title + abstract`` of every paper of ``catalog``; safe to search from any number of threads.

    Args:
        catalog: the index's catalog (its papers and its ``generation``).
    """

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._lock = threading.Lock()
        # (generation, paper ids in index order, bm25s model, paper id -> its row in the model)
        self._built: tuple[int, list[str], Any, dict[str, int]] | None = None

    def _current(self) -> tuple[list[str], Any, dict[str, int]]:
        generation = self._catalog.generation
        built = self._built
        if built is not None and built[0] == generation:
            return built[1], built[2], built[3]
        with self._lock:
            built = self._built
            if built is None or built[0] != generation:
                ids, model = self._build()
                built = (generation, ids, model, {pid: i for i, pid in enumerate(ids)})
                self._built = built
        return built[1], built[2], built[3]

    def _build(self) -> tuple[list[str], Any]:
        bm25s = _bm25s()

        t0 = time.perf_counter()
        ids, texts = [], []
        for pid in self._catalog.paper_ids():
            paper = self._catalog.paper(pid)
            if paper is not None:
                ids.append(pid)
                texts.append(f"{paper.title}. {paper.text}")
        model = bm25s.BM25()
        if texts:
            model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        logger.info("paper BM25 index: %d papers in %.2f s", len(ids), time.perf_counter() - t0)
        return ids, model

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` papers best matching ``query`` by BM25 over title + abstract, best first.

        Returns:
            ``(paper id, BM25 score)`` pairs (score > 0; a query sharing no indexed word with any paper gets
            ``[]``).
        """
        bm25s = _bm25s()
        ids, model, _ = self._current()
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not ids or not tokens.ids or not tokens.ids[0]:
            return []
        docs, scores = model.retrieve(tokens, k=min(k, len(ids)), show_progress=False)
        return [(ids[int(i)], float(s)) for i, s in zip(docs[0], scores[0], strict=True) if float(s) > 0]

    def scores(self, query: str, paper_ids: Iterable[str]) -> dict[str, float]:
        """BM25 scores of ``query`` for the papers ``paper_ids`` (title + abstract; what :meth:`search` ranks by),
        for comparing a few given papers, e.g. those a conversation showed.

        Returns:
            ``{paper id: score}`` (>= 0; 0 when the query shares no indexed word with the paper) for each id the
            index holds; unknown ids are left out.
        """
        bm25s = _bm25s()
        ids, model, rows = self._current()
        wanted = [(pid, rows[pid]) for pid in dict.fromkeys(paper_ids) if pid in rows]
        tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
        known = [t for t in (tokens[0] if tokens else []) if t in model.vocab_dict] if ids else []
        if not known:
            return {pid: 0.0 for pid, _ in wanted}
        all_scores = model.get_scores(known)
        return {pid: float(all_scores[i]) for pid, i in wanted}
