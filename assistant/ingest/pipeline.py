"""Seed files -> papers -> sentence windows -> embeddings -> Chroma; idempotent and resumable.

Each run compares content hashes with what is stored and embeds only new or changed windows, so a
second run adds 0 and a run after an interruption finishes the job. A paper record is written
after all its windows, so readers never see half a paper.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import StorageEnvironmentError, StoreNotReadyError, WriterBusyError
from assistant.index.index_lock import LOCK_FILES, index_lock
from assistant.index.store import (
    BUILT_ID,
    PROBE_TEXT,
    RETIRED_SUFFIX,
    STAGING_SUFFIX,
    PaperStore,
    make_client,
    require_existing_storage,
    store_info,
    triple,
)
from assistant.ingest.chunking import make_windows, paper_hash
from assistant.ingest.corpus import read_papers
from assistant.ingest.identity import plan_sync
from assistant.lang.text import split_sentences
from assistant.types import IngestReport, Paper, Window

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.config import Settings

logger = logging.getLogger(__name__)

#: Papers are committed in groups of about one write batch of windows (~8 windows per abstract), so an
#: interrupted ingest keeps every group finished before the interruption.
WINDOWS_PER_PAPER_ESTIMATE = 8
#: The writer lock's file in the storage dir (holds "pid N" of the writer). One writer at a time holds it for its
#: whole run; each of its Chroma writes also holds the index lock (``index_lock.INDEX_LOCK_FILE``) exclusively,
#: which readers take shared at their first read of a new client (assistant/index/index_lock.py).
LOCK_FILE = ".ingest.lock"


def delete_papers(settings: Settings, paper_ids: Sequence[str]) -> list[str]:
    """Remove papers (records and windows) by id, under the writer lock; returns the ids that were indexed.

    Raises:
        StoreNotReadyError: no index, or an ingest is writing (then nothing is removed; the message says to
            wait for that ingest to finish and run the delete again).
    """
    require_existing_storage(settings)  # deleting never creates an index folder
    with _delete_lock(settings, paper_ids):
        recover_interrupted_rebuild(settings, make_client(settings))
        store = PaperStore.open_for_read(settings)
        indexed = store.paper_hashes()
        known = [pid for pid in paper_ids if pid in indexed]
        if known:
            generation = store.generation() + 1
            store.delete_papers(known, generation)
            store.set_generation(generation)
            from assistant.index.catalog import open_catalog
            from assistant.ingest.steering import check_withheld

            catalog = open_catalog(settings, store, repair=True, withheld_check=check_withheld)
            catalog.sync(store, rebuild_if_foreign=True)
    logger.info("deleted %d paper(s): %s", len(known), known)
    return known


@contextmanager
def _delete_lock(settings: Settings, paper_ids: Sequence[str]) -> Iterator[None]:
    """:func:`writer_lock` for ``assistant delete``: refused while an ingest writes, with what to do."""
    stack = ExitStack()
    try:
        stack.enter_context(writer_lock(settings))
    except StoreNotReadyError as e:
        holder = ""
        with suppress(OSError):
            holder = (settings.storage.storage_dir / ".ingest.lock").read_text().strip()
        raise WriterBusyError(
            f"Nothing removed: an ingest ({holder or 'another process'}) is writing to {settings.storage.storage_dir}. "
            f"Wait for the ingest to finish, then run `assistant delete {' '.join(paper_ids)}` again."
        ) from e
    with stack:
        yield


def drop_index(settings: Settings) -> None:
    """Delete the collections for the current settings (and a rebuild's leftovers), under the writer lock. A
    storage dir that cannot be opened has its contents moved to ``<dir>.damaged-<unix time>`` so a fresh index can
    be built (the folder itself and its lock file stay).

    Raises:
        StoreNotReadyError: another process is writing (nothing is dropped), or the Chroma server is unreachable.
    """
    with writer_lock(settings):
        _drop_index(settings)


def _open_client_or_move_damaged(settings: Settings) -> ClientAPI | None:
    """A Chroma client, or None after moving a damaged storage folder's contents aside (under the writer lock
    and, while moving, the index lock)."""
    try:
        return make_client(settings)
    except StorageEnvironmentError:
        raise  # read-only, full disk, old SQLite: the index is not damaged; moving it aside would not help
    except StoreNotReadyError:
        if settings.storage.chroma_host:
            raise
    import shutil

    aside = settings.storage.storage_dir.with_name(f"{settings.storage.storage_dir.name}.damaged-{int(time.time())}")
    aside.mkdir()
    with index_lock(settings).exclusive():
        for entry in settings.storage.storage_dir.iterdir():
            if entry.name not in (LOCK_FILE, *LOCK_FILES):  # the locks stay where other processes look for them
                shutil.move(str(entry), aside / entry.name)
    logger.warning(
        "storage at %s could not be opened; moved its contents to %s and starting afresh",
        settings.storage.storage_dir,
        aside,
    )
    return None


def _drop_collections(client: ClientAPI, name: str) -> None:
    for c in triple(name):
        try:
            client.delete_collection(c)
        except Exception:  # noqa: BLE001 - absent collection: nothing to drop
            logger.debug("collection %s absent", c)


def _remove_catalog(settings: Settings, name: str) -> None:
    from assistant.index.catalog import catalog_path

    for suffix in ("", "-wal", "-shm"):
        Path(f"{catalog_path(settings.storage.storage_dir, name)}{suffix}").unlink(missing_ok=True)


def _drop_index(settings: Settings) -> None:
    client = _open_client_or_move_damaged(settings)
    if client is None:
        return
    name = settings.collection_name()
    with index_lock(settings).exclusive():
        for n in (name, f"{name}{STAGING_SUFFIX}", f"{name}{RETIRED_SUFFIX}"):
            _drop_collections(client, n)
            _remove_catalog(settings, n)
        if not settings.storage.chroma_host:
            remove_orphan_segment_dirs(settings.storage.storage_dir)


def _existing(client: ClientAPI) -> set[str]:
    return {c if isinstance(c, str) else c.name for c in client.list_collections()}


def _rename(client: ClientAPI, old: str, new: str) -> None:
    client.get_collection(old, embedding_function=None).modify(name=new)


def recover_interrupted_rebuild(settings: Settings, client: ClientAPI) -> None:
    """Finish or undo a rebuild that was killed (call under the writer lock, before anything else is written).

    A rebuild writes ``<name>-rebuild`` collections (windows, papers, then log), marks its log ``built``, then
    switches: the index's collections are renamed to ``<name>-retired`` and the built ones to ``<name>`` (log
    last), and the retired ones dropped. Killed before the mark: the staging collections are dropped (the index
    was never touched) and any retired one is put back. Killed after it: the switch is completed. Either way
    the index is then whole: the last completed run's or the rebuilt one. Holds the index lock exclusively while
    it reads and changes anything (readers open either the state before or the recovered one).
    """
    name = settings.collection_name()
    staging, retired = f"{name}{STAGING_SUFFIX}", f"{name}{RETIRED_SUFFIX}"
    if not _existing(client) & {*triple(staging), *triple(retired)}:
        return
    with index_lock(settings).exclusive():
        _recover(settings, client, name, staging, retired)


def _recover(settings: Settings, client: ClientAPI, name: str, staging: str, retired: str) -> None:
    """:func:`recover_interrupted_rebuild` under the index lock."""
    have = _existing(client)
    log = f"{staging}_log"
    built = log in have and bool(client.get_collection(log, embedding_function=None).get(ids=[BUILT_ID])["ids"])
    for current, new, old in zip(triple(name), triple(staging), triple(retired)):
        if built and new in have:
            if current in have:
                if old in have:
                    client.delete_collection(old)
                _rename(client, current, old)
            _rename(client, new, current)
            logger.warning("finished the switch of an interrupted rebuild: %s is now %s", new, current)
        elif not built and current not in have and old in have:
            _rename(client, old, current)
            logger.warning("put %s back after an interrupted rebuild", current)
    _drop_collections(client, retired)
    _drop_collections(client, staging)
    _remove_catalog(settings, retired)
    _remove_catalog(settings, staging)
    if not settings.storage.chroma_host:
        remove_orphan_segment_dirs(settings.storage.storage_dir)


def remove_orphan_segment_dirs(storage_dir: Path) -> list[str]:
    """Delete the vector-segment folders (UUID names) of collections that no longer exist: Chroma's
    ``delete_collection`` leaves them on disk, so every ``--rebuild`` would otherwise grow the folder.

    The live segments are read from Chroma's own ``chroma.sqlite3`` (table ``segments``); if that cannot be
    read (another Chroma version), nothing is deleted. Returns the names of the folders removed.
    """
    import shutil
    import sqlite3
    import uuid
    from contextlib import closing

    db = storage_dir / "chroma.sqlite3"
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            live = {str(row[0]) for row in con.execute("SELECT id FROM segments")}
    except sqlite3.Error as e:
        logger.debug("not removing old segment folders: cannot read %s (%s)", db, e)
        return []
    removed = []
    for d in storage_dir.iterdir():
        try:
            uuid.UUID(d.name)
        except ValueError:
            continue
        if d.is_dir() and d.name not in live:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
    if removed:
        logger.info("removed %d folder(s) of dropped collections from %s", len(removed), storage_dir)
    return removed


def check_no_writer(settings: Settings) -> None:
    """Fail fast when another process holds the writer lock (before reading inputs or loading a model): takes
    and releases the lock. Creates nothing: without a storage folder there is no writer.

    Raises:
        WriterBusyError: another process is writing (the message names its pid).
    """
    if settings.storage.chroma_host or not (settings.storage.storage_dir / LOCK_FILE).is_file():
        return
    with writer_lock(settings, record=False):
        pass


@contextmanager
def writer_lock(settings: Settings, *, record: bool = True) -> Iterator[None]:
    """Hold an exclusive, non-blocking lock on the storage dir while writing. Every writer (ingest, rebuild,
    delete, the migration of old ids, dropping an index) takes it before it opens anything for writing, so a
    writer refused here has changed nothing. Not re-entrant: a second ``with writer_lock`` in the same process
    is refused too.

    Embedded mode only (in client/server mode run a single ingest writer, see README).

    Args:
        record: write ``pid N`` of this process into the lock file (what a refused writer's message names).

    Raises:
        WriterBusyError: another process is writing to the same storage dir.
    """
    if settings.storage.chroma_host:
        yield
        return
    import fcntl

    settings.storage.storage_dir.mkdir(parents=True, exist_ok=True)
    path = settings.storage.storage_dir / LOCK_FILE
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            f.seek(0)
            raise WriterBusyError(
                f"Another ingest ({f.read().strip() or 'unknown process'}) is writing to "
                f"{settings.storage.storage_dir}; "
                "nothing was changed. Wait for it to finish, then run the command again."
            ) from e
        if record:
            f.seek(0)
            f.truncate()
            f.write(f"pid {os.getpid()}")
            f.flush()
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ingest(
    settings: Settings,
    paths: Sequence[Path],
    embed_model: BaseEmbedding,
    *,
    progress: bool = True,
    rebuild: bool = False,
    may_remove: Collection[str] | None = None,
) -> IngestReport:
    """Index the abstracts in ``paths`` (files or directories) into the store for ``settings``.

    Args:
        settings: storage location, window size, batch sizes.
        paths: seed ``.txt`` files or directories holding them (and ``papers.jsonl``); recorded in the index as
            its inputs (see :func:`recorded_inputs`).
        embed_model: a llama-index embedding model (384-d MiniLM by default).
        progress: show a tqdm progress bar on stderr.
        rebuild: build a new index from ``paths`` alone and switch to it (see :func:`ingest_papers`).
        may_remove: with ``rebuild``, the ids of indexed papers the caller agreed to lose (None: any).

    Returns:
        counts of papers, windows, and windows added/updated/removed/skipped, in ``seconds``.

    Raises:
        CorpusFormatError: an input file is malformed (nothing is written in that case).
        StoreNotReadyError: the existing index was built with other settings, or another ingest is
            writing to the same storage dir.
    """
    skipped: list[str] = []
    papers = read_papers(paths, skipped)  # parse everything first: a bad file aborts before any write
    return ingest_papers(
        settings,
        papers,
        embed_model,
        progress=progress,
        skipped_rows=skipped,
        inputs=paths,
        rebuild=rebuild,
        may_remove=may_remove,
    )


def ingest_papers(
    settings: Settings,
    papers: Sequence[Paper],
    embed_model: BaseEmbedding,
    *,
    progress: bool = True,
    skipped_rows: Sequence[str] = (),
    inputs: Sequence[Path] = (),
    rebuild: bool = False,
    may_remove: Collection[str] | None = None,
) -> IngestReport:
    """Index already-parsed ``papers`` (see :func:`assistant.ingest.corpus.read_papers`); :func:`ingest` without
    the reading, so a command line can check every file before it loads the embedding model.

    Everything happens under the writer lock, taken first: a writer refused by it has changed nothing. Then a
    rebuild killed earlier is finished or undone (:func:`recover_interrupted_rebuild`).

    With ``rebuild``, the papers are written to new collections (``<name>-rebuild``) while the index stays as it
    is for readers; only when all are written does the new index replace the old one (a switch of collection
    names taking milliseconds, and of the catalog in one transaction). A rebuild killed before that leaves the
    old index whole.

    Args:
        skipped_rows: input rows the reader skipped (``"file:line: reason"``), carried into the report.
        inputs: the paths the papers were read from; recorded in the index (absolute), so that
            ``ingest --rebuild`` can rebuild from them.
        rebuild: build a new index from ``papers`` alone (see above).
        may_remove: with ``rebuild``, ids of indexed papers the caller agreed to lose; if, under the lock, the
            rebuild would remove any other paper (another process added it since), nothing is done.

    Raises:
        StoreNotReadyError: as :func:`ingest`; or the index changed since ``may_remove`` was computed.
    """
    with writer_lock(settings):
        client = _open_client_or_move_damaged(settings) if rebuild else make_client(settings)
        recover_interrupted_rebuild(settings, client or make_client(settings))
        paths = [str(Path(p).resolve()) for p in inputs]
        if rebuild:
            if may_remove is not None:
                extra = [p.id for p in rebuild_losses(settings, papers) if p.id not in may_remove]
                if extra:
                    raise StoreNotReadyError(
                        f"The index changed while you were asked (now it also holds {_listed(extra)}); nothing was "
                        "rebuilt. Run the command again."
                    )
            report = _rebuild(settings, list(papers), embed_model, progress=progress, inputs=paths)
        else:
            report = _ingest(settings, list(papers), embed_model, progress=progress, inputs=paths)
    return replace(report, skipped_rows=tuple(skipped_rows))


def _listed(ids: Sequence[str], most: int = 10) -> str:
    more = f" and {len(ids) - most} more" if len(ids) > most else ""
    return ", ".join(ids[:most]) + more


def recorded_inputs(settings: Settings) -> list[Path]:
    """The inputs the index for ``settings`` was built from (every path given to ``assistant ingest`` since it
    was last rebuilt, absolute), [] when there is no index or it predates the record."""
    from assistant.errors import StoreNotReadyError as NotReady

    try:
        require_existing_storage(settings)
        return [Path(p) for p in PaperStore.open_for_read(settings).recorded_inputs()]
    except NotReady:
        return []


def rebuild_losses(settings: Settings, papers: Sequence[Paper]) -> list[Paper]:
    """The indexed papers a rebuild from ``papers`` alone would remove (in index order): those whose id is not
    among ``papers``' ids. An id of the old export scheme (``export.jsonl#bat-001``) whose paper comes back
    under its new id (``bat-001``) is not a loss. [] when there is no index."""
    from assistant.errors import StoreNotReadyError as NotReady

    try:
        require_existing_storage(settings)
        stored = PaperStore.open_for_read(settings).load_papers()
    except NotReady:
        return []
    new = {p.id for p in papers}
    return [p for pid, p in stored.items() if pid not in new and pid.split("#", 1)[-1] not in new]


def _rebuild(
    settings: Settings, papers: list[Paper], embed_model: BaseEmbedding, *, progress: bool, inputs: Sequence[str]
) -> IngestReport:
    """Build ``<name>-rebuild`` from ``papers``, mark it built, switch it in (see :func:`ingest_papers`)."""
    from assistant.index.catalog import Catalog, catalog_path
    from assistant.index.store import HEAD_ID

    client = make_client(settings)
    name = settings.collection_name()
    staging, retired = f"{name}{STAGING_SUFFIX}", f"{name}{RETIRED_SUFFIX}"
    lock = index_lock(settings)
    have = _existing(client)
    previous = 0
    if f"{name}_log" in have:  # generations keep growing across a rebuild: readers see a newer index
        with lock.exclusive():  # this client's first read of that log (store.PaperStore.load)
            head = client.get_collection(f"{name}_log", embedding_function=None).get(ids=[HEAD_ID])
        metas = head["metadatas"] or []
        previous = int((metas[0] or {}).get("generation", 0)) if metas else 0
    report = _ingest(
        settings, papers, embed_model, progress=progress, inputs=inputs, name=staging, first_generation=previous
    )
    with lock.exclusive():
        client.get_collection(f"{staging}_log", embedding_function=None).upsert(
            ids=[BUILT_ID], embeddings=[[1.0]], metadatas=[{"built": int(time.time())}]
        )
    # the switch: the catalog first (one transaction; readers keep reading the old one until it commits), then
    # the collection names (milliseconds; a reader opening meanwhile waits or reads the retired ones). All of it
    # under the index lock: a reader loads either the old collections or the new ones, never files being dropped.
    with lock.exclusive():
        new_id = str(client.get_collection(staging, embedding_function=None).id)
        Catalog(catalog_path(settings.storage.storage_dir, name), new_id, repair=True).replace_with(
            catalog_path(settings.storage.storage_dir, staging)
        )
        _remove_catalog(settings, staging)
        have = _existing(client)
        for current, old in zip(triple(name), triple(retired)):
            if current in have:
                _rename(client, current, old)
        for new, current in zip(triple(staging), triple(name)):
            _rename(client, new, current)
        _drop_collections(client, retired)
        client.get_collection(f"{name}_log", embedding_function=None).delete(ids=[BUILT_ID])
        if not settings.storage.chroma_host:
            remove_orphan_segment_dirs(settings.storage.storage_dir)
    logger.info("rebuilt %s: %d papers", name, report.papers)
    return report


def word_piece_counter(settings: Settings) -> Callable[[list[str]], list[int]]:
    """Texts -> number of word pieces each, by the embedding model's own tokenizer (``tokenizer.json`` of the
    model folder; the bundled MiniLM's for a model without one), without special tokens and without the
    model's truncation: what ``IngestReport.corpus_tokens`` and ``embedded_tokens`` count."""
    from tokenizers import Tokenizer

    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    try:
        folder = resolve_model_path(settings.embedding.model)
    except Exception:  # a remote model name: count with the bundled tokenizer (an estimate, said in the report docs)
        folder = resolve_model_path(BUNDLED_MINILM)
    path = folder / "tokenizer.json"
    if not path.is_file():
        path = resolve_model_path(BUNDLED_MINILM) / "tokenizer.json"
    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()

    def count(texts: list[str]) -> list[int]:
        return [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)] if texts else []

    return count


def _ingest(
    settings: Settings,
    papers: list[Paper],
    embed_model: BaseEmbedding,
    *,
    progress: bool,
    inputs: Sequence[str] = (),
    name: str | None = None,
    first_generation: int = 0,
) -> IngestReport:
    """Write ``papers`` into the collections ``name`` (default: the index's); ``first_generation``: the
    generation a new index starts from. Records ``inputs`` at the end (a rebuild's staging index: only them)."""
    from llama_index.core.schema import TextNode
    from tqdm import tqdm

    from assistant.index.catalog import Catalog, catalog_path

    t0 = time.perf_counter()
    info = store_info(settings, embed_model.get_text_embedding(PROBE_TEXT))  # model identity, size, probe vector
    store = PaperStore.open_for_write(settings, info, name=name)
    from assistant.ingest.steering import SteeringDetector, check_withheld

    catalog = Catalog(
        catalog_path(settings.storage.storage_dir, name or settings.collection_name()),
        store.collection_id,
        repair=True,
        withheld_check=check_withheld,
    )
    catalog.sync(store, rebuild_if_foreign=True, progress=progress)  # a stale or damaged catalog is rebuilt here
    count_pieces = word_piece_counter(settings)
    generation = max(store.generation(), first_generation)

    stored_papers = store.paper_hashes()
    stored_windows = store.window_hashes()
    windows_of: dict[str, list[str]] = {}  # paper id -> its stored window ids (ids are "<paper id>:<NNNN>")
    for wid in stored_windows:
        windows_of.setdefault(wid.rsplit(":", 1)[0], []).append(wid)
    plan = plan_sync(store.load_papers(), papers)  # removed, moved and old-scheme ids: assistant/ingest/identity.py
    gone = list(plan.gone)
    if gone:
        generation += 1
        store.delete_papers(gone, generation)
        store.set_generation(generation)

    todo: list[tuple[Paper, str, list[Window], list[str]]] = []
    total_windows = 0
    corpus_tokens = sum(count_pieces([f"{p.title} {p.text}" for p in papers]))
    for p in papers:
        sentences = split_sentences(p.text)
        windows = make_windows(p, sentences, settings.storage.window_sentences)
        total_windows += len(windows)
        h = paper_hash(p)
        if stored_papers.get(p.id) != h or p.id in plan.moved:
            todo.append((p, h, windows, sentences))

    # new or changed papers only: the others were checked when they were indexed. The parts that address the
    # assistant are kept with the paper (Paper.withheld): never answer text, evidence or highlights (issue 37).
    flagged = []
    checked = SteeringDetector().withheld_parts([p for p, _, _, _ in todo])
    for k, ((p, h, ws, ss), (parts, reasons)) in enumerate(zip(todo, checked)):
        todo[k] = (replace(p, withheld=parts), h, ws, ss)
        if reasons:
            flagged.append(p.id)
            logger.warning(
                "%s looks like it tries to steer the assistant (%s); indexed as quoted data only: %d part(s) of "
                "its record are withheld from answers and shown marked in its card",
                p.id,
                ", ".join(reasons),
                len(parts),
            )
    added = updated = removed = embedded_tokens = 0
    pending = [w for _, _, ws, _ in todo for w in ws if stored_windows.get(w.id) != w.content_hash]
    bar = tqdm(total=len(pending), desc="embedding sentences", unit="sent", disable=not progress or not pending)
    group_size = max(1, settings.storage.write_batch_size // WINDOWS_PER_PAPER_ESTIMATE)
    for g in range(0, len(todo), group_size):
        group = todo[g : g + group_size]
        new_windows: list[tuple[Window, str]] = []  # (window, the sentence it is centred on: what is embedded)
        stale: list[str] = []
        for p, _, windows, sentences in group:
            ids = {w.id for w in windows}
            stale += [wid for wid in windows_of.get(p.id, ()) if wid not in ids]
            for w in windows:
                old = stored_windows.get(w.id)
                if old != w.content_hash:
                    new_windows.append((w, sentences[w.index]))
                    if old is not None:
                        stale.append(w.id)
                        updated += 1
                    else:
                        added += 1
        removed += len([s for s in stale if s not in {w.id for w, _ in new_windows}])
        store.delete_windows(stale)
        for b in range(0, len(new_windows), settings.storage.write_batch_size):
            batch = new_windows[b : b + settings.storage.write_batch_size]
            texts = [sentence for _, sentence in batch]
            vectors = embed_model.get_text_embedding_batch(texts)
            embedded_tokens += sum(count_pieces(texts))
            nodes = [
                TextNode(
                    id_=w.id,
                    text=w.text,
                    embedding=v,
                    metadata={"paper_id": w.paper_id, "sentence": w.index, "content_hash": w.content_hash},
                )
                for (w, _), v in zip(batch, vectors)
            ]
            store.add_windows(nodes)  # under the index lock, for this one write call
            bar.update(len(batch))
        group_done = [(p, h) for p, h, windows, _ in group if windows]
        titles = [p.title for p, _ in group_done]
        title_vectors = embed_model.get_text_embedding_batch(titles) if titles else []
        embedded_tokens += sum(count_pieces(titles))
        generation += 1
        store.upsert_papers([p for p, _ in group_done], [h for _, h in group_done], title_vectors, generation)
        store.set_generation(generation)
        catalog.sync(store)
    bar.close()
    if store.generation() < generation:  # nothing written (a rebuild of papers that all have no window)
        store.set_generation(generation)
    catalog.sync(store)
    catalog.close()
    if inputs:
        store.record_inputs(inputs, replace=name is not None)

    report = IngestReport(
        papers=len(papers),
        windows=total_windows,
        added=added,
        updated=updated,
        removed=removed,
        skipped=total_windows - added - updated,
        collection=settings.collection_name(),
        seconds=time.perf_counter() - t0,
        flagged=tuple(flagged),
        embedded_tokens=embedded_tokens,
        corpus_tokens=corpus_tokens,
        papers_added=sum(1 for p, _, _, _ in todo if p.id not in stored_papers),
        papers_updated=sum(1 for p, _, _, _ in todo if p.id in stored_papers),
        papers_removed=len(gone),
    )
    logger.info(
        "ingest: %d papers -> %d windows: %d added, %d updated, %d removed, %d unchanged in %.1f s (%s)",
        report.papers,
        report.windows,
        report.added,
        report.updated,
        report.removed,
        report.skipped,
        report.seconds,
        store.location,
    )
    from assistant.index.index_lock import WAITS

    if store.lock.enabled and WAITS.waited["exclusive"]:  # readers were loading the index when a write came
        logger.info("index lock (writes, this process): %s", WAITS.summary("exclusive"))
    return report
