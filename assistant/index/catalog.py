"""The catalog: paper records and the lexical indexes, persisted in one SQLite file next to the vector index.

Chroma (store.py) is the source of truth: window vectors, window texts and paper records, each paper record
stamped with the *generation* of the ingest step that wrote it, and a log of deletions. The catalog is a
derived, incrementally updated copy that answers everything a question needs without reading the corpus:

* ``papers``: one row per complete paper (metadata, abstract, its sentences), looked up by id;
* ``windows``: an FTS5 table of the window texts, ranked with SQLite's built-in BM25 (Robertson-Sparck
  Jones with k1 = 1.2, b = 0.75, https://www.sqlite.org/fts5.html#the_bm25_function), the lexical retriever;
* ``terms``: which papers contain each content token (document frequencies, "papers with this word");
* ``authors``, ``title_grams``, ``titles`` and ``contributions``: what references.MetadataIndex searches.

:meth:`Catalog.sync` brings the catalog to the store's generation: it reads only the papers stamped with a
newer generation and the deletions logged since, and applies them by paper id in one transaction; a reader
calls it per question (one small Chroma read when nothing changed), the writer after each committed group.
Opening a catalog reads nothing. The file lives at ``<storage_dir>/<collection>.catalog.sqlite3``; in
client/server mode each replica keeps its own, synced from the Chroma server.

A catalog built for another collection (the Chroma collection was dropped and rebuilt), one ahead of the
store, or a damaged file is never used: readers get :class:`~assistant.errors.StoreNotReadyError` and
``assistant ingest`` rebuilds it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.errors import StoreNotReadyError
from assistant.index.catalog_keys import author_key, fts_query, like_pattern, paper_terms, query_words, title_grams
from assistant.index.catalog_schema import CATALOG_SCHEMA, COPY, ROWS_PER_PAPER, SCHEMA, SYNC_BATCH, TABLES
from assistant.lang.text import code_link, split_sentences, states_contribution
from assistant.types import Paper

if TYPE_CHECKING:
    from assistant.config import RetrievalSettings, Settings
    from assistant.index.store import PaperStore

logger = logging.getLogger(__name__)


def catalog_path(storage_dir: Path, collection: str) -> Path:
    """Where the catalog of ``collection`` lives."""
    return storage_dir / f"{collection}.catalog.sqlite3"


#: Finds the parts of paper records that address the assistant (``ingest.steering.check_withheld``), for records
#: written before ingest kept them (``Paper.withheld is None``).
WithheldCheck = Callable[[Sequence[Paper]], list[tuple[str, ...]]]


def open_catalog(
    settings: Settings, store: PaperStore, *, repair: bool = False, withheld_check: WithheldCheck | None = None
) -> Catalog:
    """The catalog of ``store``'s collection under ``settings.storage.storage_dir`` (created empty when missing;
    ``repair``: a damaged file is replaced by an empty one, which the next sync fills; ``withheld_check``: see
    :class:`Catalog`)."""
    return Catalog(
        catalog_path(settings.storage.storage_dir, settings.collection_name()),
        store.collection_id,
        repair=repair,
        retrieval=settings.retrieval,
        withheld_check=withheld_check,
    )


class Catalog:
    """One catalog file (module docstring). Thread-safe: one connection per thread, WAL mode so readers never
    wait for the writer.

    Args:
        path: the SQLite file (created with its folder when missing).
        collection_id: the Chroma collection's id; a catalog built for another id is rebuilt by :meth:`sync`
            with ``rebuild_if_foreign`` (ingest) or refused (readers).
        retrieval: the BM25 word-choice limits (``bm25_*`` fields; None: the defaults).
        withheld_check: finds the withheld parts of records that do not say (written before ingest kept them);
            without it such a record is stored as unchecked and nothing of it is withheld.
    """

    def __init__(
        self,
        path: Path,
        collection_id: str,
        *,
        repair: bool = False,
        retrieval: RetrievalSettings | None = None,
        withheld_check: WithheldCheck | None = None,
    ) -> None:
        from assistant.config import RetrievalSettings

        self._retrieval = retrieval or RetrievalSettings()
        self.path = path
        self.collection_id = collection_id
        self._withheld_check = withheld_check
        self._local = threading.local()
        self._papers: OrderedDict[str, Paper | None] = OrderedDict()
        self._cache_generation = -1
        self._count: tuple[int, int] | None = None
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._conn() as con:
                con.executescript(SCHEMA)
        except sqlite3.DatabaseError as e:
            if not repair:
                raise StoreNotReadyError(
                    f"The catalog {path} is damaged ({e}). Run `assistant ingest` to rebuild it."
                ) from e
            logger.warning("catalog %s is damaged (%s); rebuilding it", path, e)
            self._reset_file()

    # --- connection and meta ------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con = con
        return con

    def _meta(self, key: str, default: str = "") -> str:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else default

    @property
    def generation(self) -> int:
        """The store generation this catalog reflects (0: empty)."""
        return int(self._meta("generation", "0"))

    @property
    def owner(self) -> str:
        """The id of the Chroma collection this catalog was built for ("" while empty)."""
        return self._meta("collection_id")

    def check(self) -> None:
        """Raise :class:`StoreNotReadyError` when this catalog belongs to another collection or schema."""
        owner = self._meta("collection_id")
        schema = self._meta("schema", str(CATALOG_SCHEMA))
        if (owner and owner != self.collection_id) or schema != str(CATALOG_SCHEMA):
            raise StoreNotReadyError(
                f"The catalog {self.path} was built for another index (collection {owner or '?'}, schema {schema}). "
                "Run `assistant ingest` to rebuild it."
            )

    # --- sync ---------------------------------------------------------------------------------
    def sync(self, store: PaperStore, *, rebuild_if_foreign: bool = False, progress: bool = False) -> int:
        """Apply the store's changes since :attr:`generation`; returns the number of papers changed or removed.

        Reads, from Chroma, only the paper records stamped with a generation in ``(ours, store's]`` (with
        their windows) and the deletions logged in that range; writes them in one transaction.

        Raises:
            StoreNotReadyError: the catalog belongs to another collection or is ahead of the store (the index
                was rebuilt) and ``rebuild_if_foreign`` is false; or the file is damaged.
        """
        head = store.generation()
        try:
            ours = self.generation
            if ours != self._cache_generation:  # another process (the writer) moved the file on
                self._invalidate()
                self._cache_generation = ours
            owner = self._meta("collection_id")
            foreign = (
                (owner and owner != self.collection_id)
                or ours > head
                or self._meta("schema", str(CATALOG_SCHEMA)) != str(CATALOG_SCHEMA)
            )
            if foreign:
                if not rebuild_if_foreign:
                    self.check()
                    raise StoreNotReadyError(
                        f"The catalog {self.path} is ahead of its index (generation {ours} > {head}). "
                        "Run `assistant ingest` to rebuild it."
                    )
                return self._apply(store, 0, head, progress, clear=True)  # one transaction: never half-empty
            if ours == head:
                return 0
            return self._apply(store, ours, head, progress)
        except sqlite3.DatabaseError as e:
            if rebuild_if_foreign:
                logger.warning("catalog %s is damaged (%s); rebuilding it", self.path, e)
                self._reset_file()
                return self.sync(store, rebuild_if_foreign=False, progress=progress)
            raise StoreNotReadyError(
                f"The catalog {self.path} is damaged ({e}). Run `assistant ingest` to rebuild it."
            ) from e

    def _reset_file(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        with self._conn() as con:
            con.executescript(SCHEMA)

    def replace_with(self, source: Path) -> None:
        """Replace this catalog's content with that of the catalog file ``source`` (a rebuild's), in one
        transaction: a reader sees the old catalog until the commit and the new one after, never a mix. This
        catalog then belongs to ``source``'s collection.

        Raises:
            sqlite3.Error: ``source`` cannot be read (this catalog is unchanged).
        """
        con = self._conn()
        con.execute("ATTACH DATABASE ? AS src", (str(source),))
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                for table in TABLES:
                    con.execute(f"DELETE FROM main.{table}")
                for table, columns in COPY.items():
                    con.execute(f"INSERT INTO main.{table}({columns}) SELECT {columns} FROM src.{table}")
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            con.execute("DETACH DATABASE src")
        self.collection_id = self.owner or self.collection_id
        self._invalidate()

    def _apply(self, store: PaperStore, ours: int, head: int, progress: bool, *, clear: bool = False) -> int:
        from tqdm import tqdm

        t0 = time.perf_counter()
        deleted = store.deleted_since(ours, head)
        changed = store.paper_ids_since(ours, head)
        con = self._conn()
        gone = [pid for pid in deleted if pid not in set(changed)]
        bar = tqdm(
            total=len(changed), desc="updating catalog", unit="paper", disable=not progress or len(changed) < 2000
        )
        con.execute("BEGIN IMMEDIATE")
        try:
            if clear:
                for table in TABLES:
                    con.execute(f"DELETE FROM {table}")
            elif self.generation != ours:  # another process synced meanwhile
                con.execute("ROLLBACK")
                self._invalidate()
                return 0
            for pid in gone:
                self._delete(con, pid)
            for b in range(0, len(changed), SYNC_BATCH):
                batch = changed[b : b + SYNC_BATCH]
                papers, hashes = store.papers_by_id(batch)
                unchecked = [p for p in papers.values() if p.withheld is None]
                if unchecked and self._withheld_check is not None:
                    for p, parts in zip(unchecked, self._withheld_check(unchecked)):
                        papers[p.id] = replace(p, withheld=parts)
                windows = store.window_texts(batch)
                for pid in batch:
                    if pid in papers:
                        self._upsert(con, papers[pid], hashes[pid], windows.get(pid, []))
                bar.update(len(batch))
            con.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("generation", str(head)), ("collection_id", self.collection_id), ("schema", str(CATALOG_SCHEMA))],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            bar.close()
        self._invalidate()
        self._cache_generation = head
        logger.info(
            "catalog %s: generation %d -> %d, %d paper(s) updated, %d removed in %.2f s",
            self.path.name,
            ours,
            head,
            len(changed),
            len(gone),
            time.perf_counter() - t0,
        )
        return len(changed) + len(gone)

    def _delete(self, con: sqlite3.Connection, pid: str) -> int | None:
        row = con.execute("SELECT rowid FROM papers WHERE id = ?", (pid,)).fetchone()
        if row is None:
            return None
        r = int(row[0])
        lo, hi = r * ROWS_PER_PAPER, (r + 1) * ROWS_PER_PAPER - 1
        con.execute("DELETE FROM windows WHERE rowid BETWEEN ? AND ?", (lo, hi))
        con.execute("DELETE FROM contributions WHERE rowid BETWEEN ? AND ?", (lo, hi))
        con.execute("DELETE FROM titles WHERE rowid = ?", (r,))
        con.execute("DELETE FROM terms WHERE paper = ?", (r,))
        con.execute("DELETE FROM authors WHERE paper = ?", (r,))
        con.execute("DELETE FROM title_grams WHERE paper = ?", (r,))
        con.execute("DELETE FROM papers WHERE rowid = ?", (r,))
        return r

    def _upsert(
        self, con: sqlite3.Connection, p: Paper, paper_hash: str, windows: Sequence[tuple[str, int, str, str]]
    ) -> None:
        old = self._delete(con, p.id)  # a replaced paper keeps its rowid
        sentences = split_sentences(p.text)
        cur = con.execute(
            "INSERT INTO papers(rowid, id, venue, title, authors, url, text, source_file, position, title_derived, "
            "sentences, hash, withheld) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                old,
                p.id,
                p.venue,
                p.title,
                json.dumps(list(p.authors)),
                p.url,
                p.text,
                p.source_file,
                p.position,
                int(p.title_derived),
                json.dumps(sentences),
                paper_hash,
                None if p.withheld is None else json.dumps(list(p.withheld)),
            ),
        )
        r = int(cur.lastrowid or 0)
        base = r * ROWS_PER_PAPER
        con.executemany(
            "INSERT INTO windows(rowid, body, wid, paper_id, sentence, content_hash) VALUES (?, ?, ?, ?, ?, ?)",
            [(base + i, text, wid, p.id, i, h) for wid, i, text, h in windows if i < ROWS_PER_PAPER],
        )
        con.executemany(
            "INSERT INTO contributions(rowid, sentence) VALUES (?, ?)",
            [(base + i, s) for i, s in enumerate(sentences[:ROWS_PER_PAPER]) if states_contribution(s)],
        )
        con.execute("INSERT INTO titles(rowid, title) VALUES (?, ?)", (r, p.title))
        con.executemany("INSERT OR IGNORE INTO terms VALUES (?, ?)", [(t, r) for t in paper_terms(p)])
        con.executemany("INSERT OR IGNORE INTO title_grams VALUES (?, ?)", [(g, r) for g in title_grams(p.title)])
        keys = [author_key(a) for a in p.authors]
        con.executemany("INSERT INTO authors VALUES (?, ?, ?)", [(k, k.split()[-1], r) for k in keys if k])

    def _invalidate(self) -> None:
        with self._lock:
            self._papers.clear()
            self._cache_generation = -1
            self._count = None

    # --- papers -------------------------------------------------------------------------------
    def paper(self, pid: str) -> Paper | None:
        """The paper ``pid`` as answers may use it (:meth:`Paper.for_answers`: its withheld parts left out, listed
        in ``withheld``), or None when the catalog does not hold it (cached, at most 4,096 papers)."""
        with self._lock:
            if pid in self._papers:
                self._papers.move_to_end(pid)
                return self._papers[pid]
        row = (
            self._conn()
            .execute(
                "SELECT id, venue, title, authors, url, text, source_file, position, title_derived, withheld "
                "FROM papers WHERE id = ?",
                (pid,),
            )
            .fetchone()
        )
        paper = (
            None
            if row is None
            else Paper(
                id=row[0],
                venue=row[1] or "",
                title=row[2] or "",
                authors=tuple(json.loads(row[3] or "[]")),
                url=row[4] or "",
                text=row[5] or "",
                source_file=row[6] or "",
                position=int(row[7] or 0),
                title_derived=bool(row[8]),
                withheld=None if row[9] is None else tuple(json.loads(row[9])),
            ).for_answers()  # the parts that address the assistant never reach an answer (types.Paper.withheld)
        )
        with self._lock:
            self._papers[pid] = paper
            while len(self._papers) > 4096:
                self._papers.popitem(last=False)
        return paper

    def sentences(self, pid: str) -> list[str]:
        """The abstract's sentences (``text.split_sentences``, computed once at sync); [] for an unknown id."""
        row = self._conn().execute("SELECT sentences FROM papers WHERE id = ?", (pid,)).fetchone()
        return list(json.loads(row[0])) if row else []

    def paper_count(self) -> int:
        """Number of papers (counted once per catalog generation)."""
        with self._lock:
            if self._count is not None and self._count[0] == self._cache_generation:
                return self._count[1]
        n = int(self._conn().execute("SELECT count(*) FROM papers").fetchone()[0])
        with self._lock:
            self._count = (self._cache_generation, n)
        return n

    def paper_ids(self) -> list[str]:
        """Every paper id, in catalog order (the order papers were first added)."""
        return [r[0] for r in self._conn().execute("SELECT id FROM papers ORDER BY rowid")]

    def find_papers(
        self, *, author: str = "", venue: str = "", offset: int = 0, limit: int | None = None
    ) -> tuple[int, list[str]]:
        """Papers matching every filter given, in catalog order, for listing and paging.

        Args:
            author: part of an author's name, case-insensitive (``"jiang"``, ``"Yalong Jiang"``).
            venue: part of the venue / collection name, case-insensitive (``"iclr 2025"``).
            offset, limit: the page (``limit`` None = all after ``offset``).

        Returns:
            ``(total, ids)``: how many papers match in all, and the ids of the requested page.
        """
        where, args = [], []
        if author.strip():
            where.append("rowid IN (SELECT paper FROM authors WHERE name LIKE ? ESCAPE '\\')")
            args.append(f"%{like_pattern(author_key(author))}%")
        if venue.strip():
            where.append("lower(venue) LIKE ? ESCAPE '\\'")
            args.append(f"%{like_pattern(' '.join(venue.lower().split()))}%")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        con = self._conn()
        total = int(con.execute(f"SELECT count(*) FROM papers{clause}", args).fetchone()[0])
        page = con.execute(
            f"SELECT id FROM papers{clause} ORDER BY rowid LIMIT ? OFFSET ?",
            [*args, -1 if limit is None else max(0, limit), max(0, offset)],
        )
        return total, [r[0] for r in page]

    def venues(self) -> list[str]:
        """Every distinct non-empty venue / collection name (``"ICLR 2024 Oral"``), sorted."""
        return [r[0] for r in self._conn().execute("SELECT DISTINCT venue FROM papers WHERE venue != '' ORDER BY 1")]

    def ids_in_venues(self, venues: Sequence[str]) -> list[str]:
        """Ids of the papers whose venue is exactly one of ``venues``, in catalog order."""
        venues = list(dict.fromkeys(venues))
        if not venues:
            return []
        marks = ",".join("?" * len(venues))
        return [
            r[0] for r in self._conn().execute(f"SELECT id FROM papers WHERE venue IN ({marks}) ORDER BY rowid", venues)
        ]

    def ids_linking_code(self) -> list[str]:
        """Ids of the papers whose abstract states a web link (:func:`assistant.lang.text.code_link`: their code or
        project page, "Code is available at https://github.com/…"), in catalog order; a link only in a withheld part
        (``Paper.withheld``: it addresses the assistant) does not count. Shapes: one scan of the abstracts that
        contain "http" (about 10 ms at 10k papers)."""
        rows = self._conn().execute("SELECT id, text, withheld FROM papers WHERE text LIKE '%http%' ORDER BY rowid")
        out = []
        for pid, text, withheld in rows:
            for part in json.loads(withheld) if withheld else ():
                text = text.replace(part, " ")
            if code_link(text):
                out.append(pid)
        return out

    def ids_by_url(self, urls: Sequence[str]) -> dict[str, list[str]]:
        """``{url: paper ids}`` for those of ``urls`` that are some paper's link (exact match)."""
        urls = [u for u in dict.fromkeys(urls) if u]
        out: dict[str, list[str]] = {}
        for b in range(0, len(urls), 500):
            chunk = urls[b : b + 500]
            marks = ",".join("?" * len(chunk))
            for pid, url in self._conn().execute(
                f"SELECT id, url FROM papers WHERE url IN ({marks}) ORDER BY rowid", chunk
            ):
                out.setdefault(url, []).append(pid)
        return out

    def _ids(self, rowids: Sequence[int]) -> list[str]:
        if not rowids:
            return []
        out: list[str] = []
        for b in range(0, len(rowids), 500):
            chunk = list(rowids[b : b + 500])
            marks = ",".join("?" * len(chunk))
            found = dict(self._conn().execute(f"SELECT rowid, id FROM papers WHERE rowid IN ({marks})", chunk))
            out += [found[r] for r in chunk if r in found]
        return out

    # --- lexical ------------------------------------------------------------------------------
    def bm25(self, query: str, k: int) -> list[tuple[str, str, int, str, str, float]]:
        """The ``k`` best windows for ``query`` by BM25 (any query word may match).

        Only the query's rarer words are searched: words in more than ``bm25_max_df_share`` of the papers
        (at least ``bm25_min_df_cutoff`` papers) are left out, then the rarest are taken while there are at
        most ``bm25_max_terms`` and their papers add up to at most ``bm25_max_postings`` (if none is left, the
        rarest word alone when it is in at most that many papers, else nothing: ``[]``; the fields of
        ``retrieval``, :class:`~assistant.config.RetrievalSettings`). Common words add little to BM25 (low idf)
        but make SQLite score most of the windows; see tuning.py.

        Returns:
            ``(window_id, paper_id, sentence, content_hash, text, score)``, best first; ``score`` is SQLite's
            bm25() negated, so higher is better (> 0).
        """
        limits = self._retrieval
        words = query_words(query)
        df = {w: self.document_frequency(w) for w in words}
        known = sorted((w for w in words if df[w] > 0), key=lambda w: (df[w], w))
        cutoff = max(limits.bm25_max_df_share * self.paper_count(), limits.bm25_min_df_cutoff)
        chosen: list[str] = []
        for w in (w for w in known if df[w] <= cutoff):
            if len(chosen) >= limits.bm25_max_terms or (
                chosen and sum(df[c] for c in chosen) + df[w] > limits.bm25_max_postings
            ):
                break
            chosen.append(w)
        chosen = chosen or [w for w in known[:1] if df[w] <= limits.bm25_max_postings]
        match = fts_query(" ".join(chosen))
        if not match:
            return []
        con = self._conn()
        top = con.execute(
            "SELECT rowid, bm25(windows) FROM windows WHERE windows MATCH ? ORDER BY bm25(windows) LIMIT ?", (match, k)
        ).fetchall()
        if not top:
            return []
        marks = ",".join("?" * len(top))
        rows = {
            r[0]: r[1:]
            for r in con.execute(
                f"SELECT rowid, wid, paper_id, sentence, content_hash, body FROM windows WHERE rowid IN ({marks})",
                [r[0] for r in top],
            )
        }
        return [
            (rows[r][0], rows[r][1], int(rows[r][2]), rows[r][3], rows[r][4], -float(score))
            for r, score in top
            if r in rows
        ]

    def document_frequency(self, term: str) -> int:
        """Number of papers whose title or abstract has the content token ``term`` (see :func:`paper_terms`)."""
        return int(self._conn().execute("SELECT count(*) FROM terms WHERE term = ?", (term,)).fetchone()[0])

    def papers_with(self, term: str) -> list[str]:
        """Ids of the papers that have the content token ``term`` (or it as part of a hyphenated token)."""
        return self._ids(
            [r[0] for r in self._conn().execute("SELECT paper FROM terms WHERE term = ? ORDER BY paper", (term,))]
        )

    # --- metadata (references.MetadataIndex) ----------------------------------------------------
    def by_author_key(self, key: str) -> list[str]:
        """Papers listing the author whose :func:`author_key` is ``key``."""
        return self._ids(
            [r[0] for r in self._conn().execute("SELECT paper FROM authors WHERE name = ? ORDER BY paper", (key,))]
        )

    def by_last_name(self, last: str) -> list[str]:
        """Papers with an author whose last name (lower-case) is ``last``."""
        return self._ids(
            [
                r[0]
                for r in self._conn().execute(
                    "SELECT DISTINCT paper FROM authors WHERE last = ? ORDER BY paper", (last,)
                )
            ]
        )

    def known_author_keys(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """``{key: paper ids}`` for those of ``keys`` that are author keys."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        out: dict[str, list[int]] = {}
        for name, paper in self._conn().execute(
            f"SELECT name, paper FROM authors WHERE name IN ({marks}) ORDER BY paper", keys
        ):
            out.setdefault(name, []).append(paper)
        return {k: self._ids(v) for k, v in out.items()}

    def author_name(self, key: str) -> str:
        """The author whose :func:`author_key` is ``key`` as a paper spells the name ("sébastien marcel" ->
        "Sébastien Marcel"); "" when no paper lists that author."""
        row = (
            self._conn()
            .execute(
                "SELECT authors FROM papers WHERE rowid = (SELECT paper FROM authors WHERE name = ? LIMIT 1)", (key,)
            )
            .fetchone()
        )
        return next((a for a in json.loads(row[0] or "[]") if author_key(a) == key), "") if row else ""

    def closest_authors(self, name: str, n: int = 3) -> list[str]:
        """Up to ``n`` indexed author names closest to ``name`` (difflib ratio >= 0.6, accents and case ignored),
        best first, as the papers spell them: for "No indexed paper is by X; did you mean …?". Authors sharing a
        word of ``name`` (a last or first name) are preferred; else every author name is compared."""
        import difflib

        from assistant.lang.text import fold

        key = author_key(name)
        if not key:
            return []
        con = self._conn()
        parts = key.split()
        shared = {
            r[0]
            for part in parts
            for r in con.execute(
                "SELECT DISTINCT name FROM authors WHERE last = ? OR name LIKE ? ESCAPE '\\' LIMIT 200",
                (part, f"{like_pattern(part)} %"),
            )
        }
        pool = shared or {r[0] for r in con.execute("SELECT DISTINCT name FROM authors")}
        folded: dict[str, str] = {}
        for k in sorted(pool):
            folded.setdefault(fold(k), k)
        close = difflib.get_close_matches(fold(key), list(folded), n=n, cutoff=0.6)
        return [self.author_name(folded[c]) or folded[c] for c in close]

    def by_title_grams(self, grams: Sequence[str]) -> list[str]:
        """Papers whose title has one of ``grams`` (see :func:`title_grams`), in catalog order."""
        grams = list(dict.fromkeys(grams))
        if not grams:
            return []
        marks = ",".join("?" * len(grams))
        rows = self._conn().execute(
            f"SELECT DISTINCT paper FROM title_grams WHERE gram IN ({marks}) ORDER BY paper", grams
        )
        return self._ids([r[0] for r in rows])

    def titles_matching(self, phrase: str, limit: int) -> list[tuple[str, str]]:
        """``(paper_id, title)`` of papers whose title has the words of ``phrase`` in order (stemmed); at most
        ``limit``."""
        match = fts_query(phrase, phrase=True)
        if not match:
            return []
        rows = (
            self._conn()
            .execute("SELECT rowid, title FROM titles WHERE titles MATCH ? ORDER BY rowid LIMIT ?", (match, limit))
            .fetchall()
        )
        titles = dict(rows)
        rowids = [r for r in titles]
        return list(zip(self._ids(rowids), (titles[r] for r in rowids)))

    def contributions_matching(self, phrase: str, limit: int) -> list[tuple[str, str]]:
        """``(paper_id, sentence)`` of contribution sentences ("we propose X") with the words of ``phrase``."""
        match = fts_query(phrase, phrase=True)
        if not match:
            return []
        rows = (
            self._conn()
            .execute(
                "SELECT rowid, sentence FROM contributions WHERE contributions MATCH ? ORDER BY rowid LIMIT ?",
                (match, limit),
            )
            .fetchall()
        )
        ids = self._ids(sorted({r[0] // ROWS_PER_PAPER for r in rows}))
        rowid_to_id = dict(zip(sorted({r[0] // ROWS_PER_PAPER for r in rows}), ids))
        return [(rowid_to_id[r[0] // ROWS_PER_PAPER], r[1]) for r in rows if r[0] // ROWS_PER_PAPER in rowid_to_id]

    def close(self) -> None:
        """Close this thread's connection."""
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


class CatalogPapers(Mapping[str, Paper]):
    """The catalog's papers as a read-only mapping ``{paper_id: Paper}``; nothing is loaded up front."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def __getitem__(self, pid: str) -> Paper:
        paper = self._catalog.paper(pid) if isinstance(pid, str) else None
        if paper is None:
            raise KeyError(pid)
        return paper

    def __contains__(self, pid: Any) -> bool:
        return isinstance(pid, str) and self._catalog.paper(pid) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._catalog.paper_ids())

    def __len__(self) -> int:
        return self._catalog.paper_count()
