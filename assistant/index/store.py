"""Chroma storage: a ``windows`` collection (llama-index ``ChromaVectorStore`` nodes) and a ``papers``
collection (one record per paper, written last so a paper is visible only when all its windows are).

Embedded (``PersistentClient`` under ``storage_dir``) or client/server (``HttpClient``) by settings.
Collections are created with ``embedding_function=None`` and cosine space; we always pass embeddings.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assistant.errors import StorageEnvironmentError, StoreNotReadyError
from assistant.index.index_lock import NO_LOCK, IndexLock, index_lock
from assistant.index.storage_env import STORAGE_SETTING, check_sqlite, short_error, storage_failure, store_location

# the storage checks live in storage_env.py; the callers of the store find them here too
from assistant.index.storage_env import check_storage_path as check_storage_path
from assistant.index.storage_env import explain_failure as explain_failure
from assistant.index.storage_env import require_existing_storage as require_existing_storage
from assistant.types import Paper

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from llama_index.vector_stores.chroma import ChromaVectorStore

    from assistant.config import Settings

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
#: Id of the record in the ``<name>_log`` collection that holds the index's generation.
HEAD_ID = "head"
#: Records per Chroma ``get`` page: unpaged reads of large collections fail with "too many SQL variables".
READ_PAGE_SIZE = 5000


def _get_all(collection: Collection, include: list[str], where: dict[str, Any] | None = None) -> dict[str, list[Any]]:
    """``collection.get`` over all matching records, page by page; returns ``{"ids", <include>...}`` lists."""
    out: dict[str, list[Any]] = {"ids": [], **{k: [] for k in include}}
    offset = 0
    while True:
        page = collection.get(include=include, where=where, limit=READ_PAGE_SIZE, offset=offset)
        out["ids"] += page["ids"]
        for k in include:
            values = page.get(k)
            out[k] += list(values) if values is not None else [None] * len(page["ids"])
        if len(page["ids"]) < READ_PAGE_SIZE:
            return out
        offset += READ_PAGE_SIZE


def process_id() -> str:
    """This process as ``host:pid`` (who published a generation)."""
    import os
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


#: Suffix of the collections an ``ingest --rebuild`` builds before they replace the index (pipeline.rebuild).
STAGING_SUFFIX = "-rebuild"
#: Suffix the replaced collections carry between the switch and their deletion.
RETIRED_SUFFIX = "-retired"
#: The three collections of an index named ``name``: windows, paper records, generation log.
COLLECTION_PARTS = ("", "_papers", "_log")
#: Id of the record in the ``<name>_log`` collection that lists the inputs the index was built from.
INPUTS_ID = "inputs"
#: Id of the record in a staging ``_log`` collection that says the rebuild finished writing it.
BUILT_ID = "built"
#: How long a reader waits for a rebuild's switch of collections (a few milliseconds normally).
SWITCH_WAIT_S = 5.0


def triple(name: str) -> tuple[str, str, str]:
    """The collection names of the index ``name``: ``(name, name_papers, name_log)``."""
    return tuple(f"{name}{part}" for part in COLLECTION_PARTS)  # type: ignore[return-value]


def embedded_system(settings: Settings) -> Any:
    """This process's cached embedded Chroma ``System`` for ``settings.storage.storage_dir`` (None in client/server mode
    or before a client was made). chromadb caches one per path (``SharedSystemClient``), with no public accessor."""
    if settings.storage.chroma_host:
        return None
    from chromadb.api.shared_system_client import SharedSystemClient

    return SharedSystemClient._identifier_to_system.get(str(settings.storage.storage_dir))


def forget_embedded_client(settings: Settings, *, stop: bool = True) -> Any:
    """Drop this process's cached embedded Chroma client for ``settings.storage.storage_dir``, so the next
    :func:`make_client` loads the index from disk again. An embedded client keeps its vector segments in
    memory (it replays Chroma's write log once per collection, at its first read) and does not see what
    another process wrote afterwards: a read of a new id fails with "Error finding id" (chroma issue #3792).

    Args:
        stop: stop the dropped client now. Pass False while other threads may still read through it (the
            retriever's views); then the caller stops the returned ``System`` when they are done.

    Returns:
        the dropped ``System``, or None when none was cached.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(str(settings.storage.storage_dir), None)
    if system is not None and stop:
        system.stop()
    return system


#: What Chroma's embedded vector reader says when its in-memory index lacks a record its SQLite side has
#: (rust/segment/src/local_hnsw.rs: ``IdNotFound``, ``GetEmbeddingError``), or when replaying the write log into
#: that index fails because another process rewrote the vector files meanwhile (seen once in 1,581 answers during
#: an ingest/delete/rebuild: "Error sending backfill request to compactor: Failed to apply logs to the hnsw
#: segment writer").
STALE_VECTOR_ERRORS = ("Error finding id", "Error getting embedding", "Failed to apply logs to the hnsw segment writer")
#: What Chroma says when a collection read through is being dropped (a rebuild's switch drops the replaced ones).
DROPPING_ERRORS = ("Missing metadata segment", "Missing vector segment")


def is_stale_view_error(error: BaseException) -> bool:
    """True for the errors a reader gets when its view of the index is older than what another process wrote:
    an embedded client asked for a record whose vector it has not loaded (:data:`STALE_VECTOR_ERRORS`: it
    loaded the vectors on disk, plus Chroma's write log, once, at its first read; the records themselves are
    read live from SQLite; and the vector files on disk are rewritten by the writer every 1,000 records, so a
    client that loaded them mid-write lacks some), or a collection dropped by a rebuild ("does not exist", or
    :data:`DROPPING_ERRORS` while it is being dropped).
    Reopening the index and reading again is the cure; anything else is a real error."""
    from chromadb.errors import ChromaError, NotFoundError

    if isinstance(error, NotFoundError):
        return True
    text = str(error)
    return isinstance(error, (ChromaError, ValueError)) and (
        any(e in text for e in (*STALE_VECTOR_ERRORS, *DROPPING_ERRORS)) or "does not exist" in text
    )


def start_loading_vectors(settings: Settings) -> threading.Thread | None:
    """Start loading the vector index of ``settings``' collection in a background thread and return it
    (None when there is nothing to load). Chroma loads a collection's HNSW index at its first query
    (~1 s at 100k windows); starting that while the caller imports llama-index and loads the embedding model
    overlaps the two (Chroma's Rust core releases the GIL). Errors are left for the caller's own open."""
    import threading

    if not settings.storage.chroma_host and not settings.storage.storage_dir.is_dir():
        return None
    try:
        collection = make_client(settings).get_collection(settings.collection_name(), embedding_function=None)
    except Exception:  # noqa: BLE001 - no index yet or unreachable: open_for_read says so properly
        return None

    def load() -> None:
        try:
            with index_lock(settings).loading():  # a first read: not while another process writes (index_lock.py)
                collection.count()
        except Exception as e:  # noqa: BLE001 - a warm-up only
            logger.debug("vector index preload failed: %s", e)

    thread = threading.Thread(target=load, name="vector-index-load", daemon=True)
    thread.start()
    return thread


def make_client(settings: Settings) -> ClientAPI:
    """A Chroma client with telemetry off: HTTP when ``chroma_host`` is set, else persistent on disk.

    Raises:
        StoreNotReadyError: the Chroma server cannot be reached.
    """
    check_sqlite()
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.storage.chroma_host:
        try:
            return chromadb.HttpClient(
                host=settings.storage.chroma_host, port=settings.storage.chroma_port, settings=chroma_settings
            )
        except Exception as e:  # chromadb raises plain ValueError/ConnectionError variants here
            raise StoreNotReadyError(
                f"Cannot reach the Chroma server at {settings.storage.chroma_host}:{settings.storage.chroma_port} "
                f"({e}). "
                "Start it with `chroma run --path DIR --host HOST --port PORT` or unset ASSISTANT_CHROMA_HOST."
            ) from e
    check_storage_path(settings)
    try:
        settings.storage.storage_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise storage_failure(e, settings) or StorageEnvironmentError(
            f"Cannot create the index folder {settings.storage.storage_dir} ({STORAGE_SETTING}): {short_error(e)}."
        ) from e
    try:
        return chromadb.PersistentClient(path=str(settings.storage.storage_dir), settings=chroma_settings)
    except Exception as e:  # chromadb raises InternalError / sqlite errors for a damaged store
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()  # do not keep the broken client cached for this path
        cause = storage_failure(e, settings)
        if cause is not None:  # read-only or full: the index is healthy, never call it damaged
            raise cause from e
        raise StoreNotReadyError(
            f"The index at {settings.storage.storage_dir} cannot be opened ({e}). It may be damaged: run "
            "`assistant ingest --rebuild` (the damaged folder is kept aside as <dir>.damaged-<time>)."
        ) from e


#: Text whose embedding is kept in the collection metadata (first :data:`PROBE_COMPONENTS` numbers), so an ingest
#: can tell whether the model answering under the recorded name still makes the same vectors.
PROBE_TEXT = "Graph neural networks learn node representations by passing messages along edges."
PROBE_COMPONENTS = 64
#: Cosine between the stored and the fresh probe (over those components) below which the vectors are another
#: model's: the same model gives 1.00 up to float noise (and a faithful export of it, e.g. ONNX, close to it);
#: unrelated models of the same size about 0. Loose on purpose, so only another model trips it.
PROBE_MIN_COSINE = 0.9


@dataclass
class StoreInfo:
    """What a collection was built with (stored in its metadata).

    ``embed_model`` is :meth:`assistant.config.Settings.embed_identity` (``bundled:all-MiniLM-L6-v2``, a folder,
    or ``remote:<model>``); ``probe`` the first components of the embedding of :data:`PROBE_TEXT` (empty for
    indexes built before it was recorded; not part of equality, compared by :meth:`PaperStore.check_info`).
    """

    embed_model: str
    dimensions: int
    window_sentences: int
    probe: tuple[float, ...] = field(default=(), compare=False, repr=False)


def store_info(settings: Settings, probe_vector: Sequence[float]) -> StoreInfo:
    """The :class:`StoreInfo` for ``settings`` given the embedding of :data:`PROBE_TEXT` by the current model."""
    return StoreInfo(
        settings.embed_identity(),
        len(probe_vector),
        settings.storage.window_sentences,
        probe=tuple(round(float(x), 5) for x in probe_vector[:PROBE_COMPONENTS]),
    )


def _describe(meta: dict[str, Any] | None) -> str:
    m = meta or {}
    return (
        f"embedding model {m.get('embed_model', '?')}, {m.get('window_sentences', '?')}-sentence windows, "
        f"index layout v{m.get('schema', 1)}"
    )


class PaperStore:
    """Access to one index: windows + papers collections named after ``settings.collection_name()``.

    Use :meth:`open_for_write` in ingest and :meth:`open_for_read` everywhere else. In embedded mode every write
    method holds the index lock exclusively for its Chroma call, and a store opened for reading has made its
    first read of each collection under the shared lock (:meth:`load`; index_lock.py says why).

    Args:
        lock: the index's reader/writer lock (:func:`assistant.index.index_lock.index_lock`); none by default.
    """

    def __init__(
        self, windows: Collection, papers: Collection, log: Collection, location: str, lock: IndexLock = NO_LOCK
    ) -> None:
        from llama_index.vector_stores.chroma import ChromaVectorStore  # noqa: F811 (the TYPE_CHECKING name)

        self.windows = windows
        self.papers = papers
        self.log = log
        self.location = location
        self.lock = lock
        self.vector_store: ChromaVectorStore = ChromaVectorStore(chroma_collection=windows)

    def load(self) -> tuple[int, int, int]:
        """This client's first read of each collection (it loads the vector files a writer rewrites), under the index
        lock held shared (index_lock.py); later reads need no lock. Returns the windows, papers and log counts.
        Raises :class:`StoreNotReadyError` when another process held the lock for ``index_lock.LOCK_TIMEOUT_S``."""
        with self.lock.loading():
            return self.windows.count(), self.papers.count(), self.log.count()

    @staticmethod
    def _location(settings: Settings) -> str:
        return store_location(settings)

    @classmethod
    def open_for_write(cls, settings: Settings, info: StoreInfo, *, name: str | None = None) -> PaperStore:
        """Open or create the collections for ``settings`` (or the collections ``name``, e.g. a rebuild's staging
        ones); check that ``info`` matches what is stored. Call it only under the writer lock (pipeline.py).

        Raises:
            StoreNotReadyError: the existing collection was built with another model/dimension.
        """
        client = make_client(settings)
        lock = index_lock(settings)
        name = name or settings.collection_name()
        meta: dict[str, Any] = {
            "hnsw:space": "cosine",
            "embed_model": info.embed_model,
            "dimensions": info.dimensions,
            "window_sentences": info.window_sentences,
            "schema": SCHEMA_VERSION,
        }
        if info.probe:
            meta["embed_probe"] = json.dumps(list(info.probe))
        with lock.exclusive():  # creating collections, and this client's first read of them (see load)
            windows = client.get_or_create_collection(name=name, metadata=meta, embedding_function=None)
            papers = client.get_or_create_collection(name=f"{name}_papers", metadata=meta, embedding_function=None)
            log = client.get_or_create_collection(
                name=f"{name}_log", metadata={"schema": SCHEMA_VERSION}, embedding_function=None
            )
            store = cls(windows, papers, log, cls._location(settings), lock)
            store.load()
        store.check_info(info)
        return store

    @classmethod
    def open_for_read(cls, settings: Settings, *, _again: bool = True) -> PaperStore:
        """Open existing collections and make the first read of each (:meth:`load`: under the index lock, held
        shared). While a rebuild switches its new collections in (a few milliseconds), this waits for it (at most
        :data:`SWITCH_WAIT_S`) or opens the replaced ones (``<name>-retired``), which stay readable until the
        switch is over.

        Raises:
            StoreNotReadyError: no index for these settings, or it holds no papers yet; or another process held
                the index lock for ``index_lock.LOCK_TIMEOUT_S``.
        """
        import time

        require_existing_storage(settings)
        client = make_client(settings)
        name = settings.collection_name()
        deadline = time.monotonic() + SWITCH_WAIT_S
        while True:
            try:
                existing = {c if isinstance(c, str) else c.name for c in client.list_collections()}
            except Exception as e:
                raise storage_failure(e, settings) or StoreNotReadyError(
                    f"Cannot read the index at {cls._location(settings)}: {e}. Run `assistant ingest --rebuild`."
                ) from e
            if set(triple(name)) <= existing:
                break
            retired = f"{name}{RETIRED_SUFFIX}"
            if set(triple(retired)) <= existing:  # a rebuild is switching (or was killed while switching)
                name = retired
                break
            switching = any(c.startswith(retired) for c in existing)
            if not switching or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # half of the index renamed: the switch takes milliseconds
        if not set(triple(name)) <= existing and f"{name}{STAGING_SUFFIX}_log" in existing:
            rebuilt = cls.open_rebuilt(settings)  # a rebuild killed in its switch: its collections are complete
            if rebuilt is not None:
                return rebuilt
        if not set(triple(name)) <= existing:
            others = sorted(
                c
                for c in existing
                if c.startswith(settings.storage.collection_prefix)
                and not c.endswith(("_papers", "_log", STAGING_SUFFIX, RETIRED_SUFFIX))
            )
            found, older = [], []
            for c in others:
                try:
                    meta = client.get_collection(c, embedding_function=None).metadata or {}
                except Exception:  # noqa: BLE001 - a collection dropped meanwhile: list it by name
                    found.append(c)
                    continue
                found.append(f"{c} ({_describe(meta)})")
                if (
                    meta.get("embed_model") == settings.embed_identity()
                    and meta.get("window_sentences") == settings.storage.window_sentences
                    and int(meta.get("schema", 1)) < SCHEMA_VERSION
                ):
                    older.append(c)
            wanted = (
                f"{settings.embed_identity()}, {settings.storage.window_sentences}-sentence windows, "
                f"index layout v{SCHEMA_VERSION}"
            )
            if older:
                hint = (
                    f"; found {', '.join(older)}, built for the same model by an older version of the assistant "
                    f"(an older index layout). Run `assistant ingest` to build the index this version reads "
                    "(the old one is left in place, unused)."
                )
            elif found:
                hint = (
                    f"; found indexes built with other settings: {'; '.join(found)}. Set ASSISTANT_EMBED_MODEL / "
                    "ASSISTANT_EMBED_BASE_URL / ASSISTANT_WINDOW_SENTENCES to those of the index, "
                    "or run `assistant ingest` "
                    "to build one for these settings."
                )
            else:
                hint = ". Run `assistant ingest` first."
            raise StoreNotReadyError(
                f"No index for the current settings (embedding model {wanted}) at {cls._location(settings)}{hint}"
            )
        try:
            store = cls(
                client.get_collection(name, embedding_function=None),
                client.get_collection(f"{name}_papers", embedding_function=None),
                client.get_collection(f"{name}_log", embedding_function=None),
                cls._location(settings),
                index_lock(settings),
            )
            _, papers, _ = store.load()
        except Exception as e:
            if not (_again and is_stale_view_error(e)):
                raise
            return cls.open_for_read(settings, _again=False)  # dropped between listing and opening: list again
        if papers == 0:
            raise StoreNotReadyError(f"The index at {store.location} is empty. Run `assistant ingest`.")
        return store

    @classmethod
    def open_rebuilt(cls, settings: Settings, windows_id: str | None = None) -> PaperStore | None:
        """The collections of a rebuild whose switch was interrupted (killed between replacing the catalog and
        the last rename), found by the id of its windows collection (the catalog's owner): each part under its
        ``-rebuild`` name if not renamed yet, else under the index's name. None unless that rebuild is complete
        (its log holds the ``built`` mark) and (when given) its windows collection has ``windows_id``. Its
        collections are not loaded yet (call :meth:`load`)."""
        client = make_client(settings)
        lock = index_lock(settings)
        name, staging = settings.collection_name(), f"{settings.collection_name()}{STAGING_SUFFIX}"
        try:
            have = {c if isinstance(c, str) else c.name for c in client.list_collections()}
            parts = []
            for current, new in zip(triple(name), triple(staging)):
                parts.append(client.get_collection(new if new in have else current, embedding_function=None))
        except Exception as e:  # noqa: BLE001 - not there (any more): not an interrupted switch
            logger.debug("no interrupted rebuild to read: %s", e)
            return None
        windows, papers, log = parts
        if windows_id and str(windows.id) != windows_id:
            return None
        try:
            with lock.loading():  # the first read of that log through this client (see load)
                built = bool(log.get(ids=[BUILT_ID])["ids"])
        except Exception as e:
            if not is_stale_view_error(e):
                raise
            logger.debug("no interrupted rebuild to read: %s", e)  # dropped meanwhile: not one any more
            return None
        return cls(windows, papers, log, cls._location(settings), lock) if built else None

    @property
    def collection_id(self) -> str:
        """The windows collection's id (a rebuilt index gets a new one)."""
        return str(self.windows.id)

    def info(self) -> StoreInfo:
        """The build parameters recorded in the collection metadata."""
        m = self.windows.metadata or {}
        probe = tuple(float(x) for x in json.loads(str(m.get("embed_probe", "[]"))))
        return StoreInfo(
            str(m.get("embed_model", "")), int(m.get("dimensions", 0)), int(m.get("window_sentences", 0)), probe=probe
        )

    def check_info(self, expected: StoreInfo) -> None:
        """Raise :class:`StoreNotReadyError` when the index was built with another model (name, vector size,
        or, where both are recorded, the probe vector) or other chunking than ``expected``: vectors of two
        models are never mixed in one index."""
        got = self.info()
        where = f"The index at {self.location} (collection {self.windows.name})"
        fix = (
            "Set ASSISTANT_EMBED_MODEL / ASSISTANT_EMBED_BASE_URL back to the model that built it, or run "
            "`assistant ingest --rebuild` to rebuild it with the new one."
        )
        if got.embed_model != expected.embed_model:
            raise StoreNotReadyError(
                f"{where} holds vectors made by {got.embed_model}, but these settings embed with "
                f"{expected.embed_model}; mixing two models in one index is refused. {fix}"
            )
        if got.dimensions != expected.dimensions:
            raise StoreNotReadyError(
                f"{where} holds {got.dimensions}-dimensional vectors made by {got.embed_model}, but "
                f"{expected.embed_model} now returns {expected.dimensions}-dimensional ones: another "
                f"model answers under that name; mixing them is refused. {fix}"
            )
        if got != expected:
            raise StoreNotReadyError(
                f"The index at {self.location} was built with {got} but the settings ask for "
                f"{expected}. Run `assistant ingest --rebuild` to rebuild it."
            )
        if got.probe and expected.probe:
            n = min(len(got.probe), len(expected.probe))
            a, b = got.probe[:n], expected.probe[:n]
            cos = sum(x * y for x, y in zip(a, b)) / ((sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5 or 1.0)
            if cos < PROBE_MIN_COSINE:
                raise StoreNotReadyError(
                    f"{where} holds vectors made by {got.embed_model}, but the model now answering under that name "
                    f"makes other vectors (similarity {cos:.2f} on a probe sentence; the same model gives 1.00); "
                    f"mixing them is refused. {fix}"
                )

    # --- windows -----------------------------------------------------------------------------
    def window_hashes(self) -> dict[str, str]:
        """``{window_id: content_hash}`` for every stored window."""
        got = _get_all(self.windows, ["metadatas"])
        return {i: str((m or {}).get("content_hash", "")) for i, m in zip(got["ids"], got["metadatas"])}

    def delete_windows(self, ids: Sequence[str]) -> None:
        """Delete windows by id (no error for unknown ids)."""
        if ids:
            with self.lock.exclusive():
                self.windows.delete(ids=list(ids))

    def add_windows(self, nodes: Sequence[Any]) -> None:
        """Write window nodes (llama-index ``TextNode`` with their embeddings) through :attr:`vector_store`."""
        if nodes:
            with self.lock.exclusive():
                self.vector_store.add(list(nodes))

    def sentence_vectors(self, counts: dict[str, int]) -> dict[str, list[tuple[int, list[float]]]]:
        """``{paper_id: [(sentence, vector), ...]}`` for papers with known sentence counts ``{paper_id: n}``:
        the windows are read by id (``<paper>:<i:04d>``), which is faster than a metadata filter."""
        ids = [f"{pid}:{i:04d}" for pid, n in counts.items() for i in range(n)]
        if not ids:
            return {}
        got = self.windows.get(ids=ids, include=["metadatas", "embeddings"])
        out: dict[str, list[tuple[int, list[float]]]] = {}
        embeddings = got.get("embeddings")
        for meta, emb in zip(got["metadatas"] or [], embeddings if embeddings is not None else []):
            out.setdefault(str(meta["paper_id"]), []).append((int(meta["sentence"]), emb))
        return out

    def window_embeddings(self, paper_ids: Sequence[str]) -> dict[str, list[tuple[int, list[float]]]]:
        """``{paper_id: [(centre_sentence, embedding), ...]}`` for the given papers' windows."""
        if not paper_ids:
            return {}
        got = _get_all(self.windows, ["metadatas", "embeddings"], where={"paper_id": {"$in": list(paper_ids)}})
        out: dict[str, list[tuple[int, list[float]]]] = {}
        for meta, emb in zip(got["metadatas"], got["embeddings"]):
            out.setdefault(str(meta["paper_id"]), []).append((int(meta["sentence"]), list(emb)))
        return out

    # --- papers ------------------------------------------------------------------------------
    def paper_hashes(self) -> dict[str, str]:
        """``{paper_id: paper_hash}`` for every complete paper."""
        got = _get_all(self.papers, ["metadatas"])
        return {i: str((m or {}).get("paper_hash", "")) for i, m in zip(got["ids"], got["metadatas"])}

    def upsert_papers(
        self, papers: Sequence[Paper], hashes: Sequence[str], embeddings: Sequence[Sequence[float]], generation: int = 0
    ) -> None:
        """Write paper records (abstract text as document, metadata as flat fields, the title's unit vector as
        embedding), stamped with ``generation``
        (readers' catalogs pick up records newer than theirs, see catalog.py)."""
        if not papers:
            return
        metas = [
            {
                "title": p.title,
                "authors": json.dumps(list(p.authors)),
                "url": p.url,
                "venue": p.venue,
                "source_file": p.source_file,
                "position": p.position,
                "title_derived": p.title_derived,
                # JSON list of the parts that address the assistant; absent: not checked (types.Paper.withheld)
                **({"withheld": json.dumps(list(p.withheld))} if p.withheld is not None else {}),
                "paper_hash": h,
                "generation": generation,
            }
            for p, h in zip(papers, hashes)
        ]
        with self.lock.exclusive():
            self.papers.upsert(
                ids=[p.id for p in papers],
                documents=[p.text for p in papers],
                metadatas=metas,
                embeddings=[list(e) for e in embeddings],
            )

    def delete_papers(self, ids: Sequence[str], generation: int = 0) -> None:
        """Delete paper records and their windows; the deletion is logged under ``generation`` so readers'
        catalogs drop the papers too."""
        if ids:
            ids = list(ids)
            with self.lock.exclusive():
                self.log.upsert(
                    ids=[f"deleted:{pid}" for pid in ids],
                    embeddings=[[1.0]] * len(ids),
                    metadatas=[{"paper_id": pid, "generation": generation} for pid in ids],
                )
                self.papers.delete(ids=ids)
            for b in range(0, len(ids), 500):
                with self.lock.exclusive():
                    self.windows.delete(where={"paper_id": {"$in": ids[b : b + 500]}})

    # --- generations (what readers' catalogs sync to) ----------------------------------------------
    def generation(self) -> int:
        """The index's generation: raised by the writer after each committed group of papers (0: none)."""
        return self.head()[0]

    def head(self) -> tuple[int, str]:
        """``(generation, writer)``: the generation and the process that published it (``host:pid``)."""
        got = self.log.get(ids=[HEAD_ID], include=["metadatas"])
        metas = got.get("metadatas") or []
        meta = (metas[0] or {}) if metas else {}
        return int(meta.get("generation", 0)), str(meta.get("writer", ""))

    def set_generation(self, generation: int) -> None:
        """Publish ``generation``: every record stamped with it is written (writer only)."""
        with self.lock.exclusive():
            self.log.upsert(
                ids=[HEAD_ID], embeddings=[[1.0]], metadatas=[{"generation": generation, "writer": process_id()}]
            )

    def recorded_inputs(self) -> list[str]:
        """The input paths (absolute, as given to ``assistant ingest``) this index was built from, oldest first;
        [] for an index built before they were recorded."""
        got = self.log.get(ids=[INPUTS_ID], include=["metadatas"])
        metas = got.get("metadatas") or []
        meta = (metas[0] or {}) if metas else {}
        return [str(p) for p in json.loads(str(meta.get("paths", "[]")))]

    def record_inputs(self, paths: Sequence[str], *, replace: bool = False) -> None:
        """Add ``paths`` to the recorded inputs (``replace``: record exactly ``paths``, for a rebuilt index)."""
        merged = list(dict.fromkeys([*([] if replace else self.recorded_inputs()), *paths]))
        with self.lock.exclusive():
            self.log.upsert(ids=[INPUTS_ID], embeddings=[[1.0]], metadatas=[{"paths": json.dumps(merged)}])

    def paper_ids_since(self, after: int, upto: int) -> list[str]:
        """Ids of the paper records stamped with a generation in ``(after, upto]``."""
        where = {"$and": [{"generation": {"$gt": after}}, {"generation": {"$lte": upto}}]}
        return list(_get_all(self.papers, [], where=where)["ids"])

    def deleted_since(self, after: int, upto: int) -> list[str]:
        """Ids of the papers deleted in a generation in ``(after, upto]``."""
        where = {"$and": [{"generation": {"$gt": after}}, {"generation": {"$lte": upto}}]}
        got = _get_all(self.log, ["metadatas"], where=where)
        return [str(m["paper_id"]) for m in got["metadatas"] if m and "paper_id" in m]

    def title_vectors(self, paper_ids: Sequence[str]) -> dict[str, list[float]]:
        """``{paper_id: unit vector of its title}`` (the paper record's embedding) for the given papers."""
        if not paper_ids:
            return {}
        got = self.papers.get(ids=list(paper_ids), include=["embeddings"])
        embeddings = got.get("embeddings")
        if embeddings is None:
            return {}
        return {pid: list(e) for pid, e in zip(got["ids"], embeddings)}

    def nearest_papers(self, query_embedding: Sequence[float], k: int) -> list[str]:
        """Ids of the ``k`` papers whose record vector (the title's unit vector) is closest to
        ``query_embedding`` (cosine), best first; [] for an empty index."""
        if k < 1 or self.papers.count() == 0:
            return []
        got = self.papers.query(query_embeddings=[list(query_embedding)], n_results=k, include=[])
        return list(got["ids"][0]) if got.get("ids") else []

    def papers_by_id(self, ids: Sequence[str]) -> tuple[dict[str, Paper], dict[str, str]]:
        """``({paper_id: Paper}, {paper_id: paper_hash})`` for those of ``ids`` that have a record."""
        got = self.papers.get(ids=list(ids), include=["metadatas", "documents"])
        return self._papers_from(got["ids"], got["metadatas"] or [], got["documents"] or [])

    def window_texts(self, paper_ids: Sequence[str]) -> dict[str, list[tuple[str, int, str, str]]]:
        """``{paper_id: [(window_id, sentence, text, content_hash), ...]}`` of the given papers' windows."""
        got = _get_all(self.windows, ["metadatas", "documents"], where={"paper_id": {"$in": list(paper_ids)}})
        out: dict[str, list[tuple[str, int, str, str]]] = {}
        for wid, meta, doc in zip(got["ids"], got["metadatas"], got["documents"]):
            out.setdefault(str(meta["paper_id"]), []).append(
                (wid, int(meta["sentence"]), doc or "", str(meta.get("content_hash", "")))
            )
        return out

    def load_papers(self) -> dict[str, Paper]:
        """Every complete paper, keyed by id."""
        got = _get_all(self.papers, ["metadatas", "documents"])
        return self._papers_from(got["ids"], got["metadatas"], got["documents"])[0]

    @staticmethod
    def _papers_from(
        ids: Sequence[str], metas: Sequence[Any], docs: Sequence[Any]
    ) -> tuple[dict[str, Paper], dict[str, str]]:
        out: dict[str, Paper] = {}
        hashes: dict[str, str] = {}
        for pid, meta, doc in zip(ids, metas, docs):
            m = meta or {}
            hashes[pid] = str(m.get("paper_hash", ""))
            out[pid] = Paper(
                id=pid,
                venue=str(m.get("venue", "")),
                title=str(m.get("title", "")),
                authors=tuple(json.loads(str(m.get("authors", "[]")))),
                url=str(m.get("url", "")),
                text=doc or "",
                source_file=str(m.get("source_file", "")),
                position=int(m.get("position", 0)),
                title_derived=bool(m.get("title_derived", False)),
                withheld=tuple(json.loads(str(m["withheld"]))) if "withheld" in m else None,
            )
        return out, hashes
