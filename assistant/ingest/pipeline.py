"""Seed files -> papers -> sentence windows -> embeddings -> Chroma; idempotent and resumable.

Each run compares content hashes with what is stored and embeds only new or changed windows, so a
second run adds 0 and a run after an interruption finishes the job. A paper record is written
after all its windows, so readers never see half a paper.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import StorageEnvironmentError, StoreNotReadyError
from assistant.index.store import PROBE_TEXT, PaperStore, make_client, require_existing_storage, store_info
from assistant.ingest.chunking import make_windows, paper_hash
from assistant.ingest.corpus import read_papers
from assistant.ingest.identity import plan_sync
from assistant.lang.text import split_sentences
from assistant.types import IngestReport, Paper, Window

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.config import Settings

logger = logging.getLogger(__name__)

#: Papers are committed in groups of about one write batch of windows (~8 windows per abstract), so an
#: interrupted ingest keeps every group finished before the interruption.
WINDOWS_PER_PAPER_ESTIMATE = 8


def delete_papers(settings: Settings, paper_ids: Sequence[str]) -> list[str]:
    """Remove papers (records and windows) by id, under the writer lock; returns the ids that were indexed.

    Raises:
        StoreNotReadyError: no index, or an ingest is writing (then nothing is removed; the message says to
            wait for that ingest to finish and run the delete again).
    """
    require_existing_storage(settings)  # deleting never creates an index folder
    with _delete_lock(settings, paper_ids):
        store = PaperStore.open_for_read(settings)
        indexed = store.paper_hashes()
        known = [pid for pid in paper_ids if pid in indexed]
        if known:
            generation = store.generation() + 1
            store.delete_papers(known, generation)
            store.set_generation(generation)
            from assistant.index.catalog import open_catalog

            open_catalog(settings, store, repair=True).sync(store, rebuild_if_foreign=True)
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
            holder = (settings.storage_dir / ".ingest.lock").read_text().strip()
        raise StoreNotReadyError(
            f"Nothing removed: an ingest ({holder or 'another process'}) is writing to {settings.storage_dir}. "
            f"Wait for the ingest to finish, then run `assistant delete {' '.join(paper_ids)}` again."
        ) from e
    with stack:
        yield


def drop_index(settings: Settings) -> None:
    """Delete the collections for the current settings (``assistant ingest --rebuild``). A storage dir
    that cannot be opened is renamed to ``<dir>.damaged-<unix time>`` so a fresh index can be built."""
    try:
        client = make_client(settings)
    except StorageEnvironmentError:
        raise  # read-only, full disk, old SQLite: the index is not damaged; moving it aside would not help
    except StoreNotReadyError:
        if settings.chroma_host:
            raise
        aside = settings.storage_dir.with_name(f"{settings.storage_dir.name}.damaged-{int(time.time())}")
        settings.storage_dir.rename(aside)
        logger.warning(
            "storage at %s could not be opened; moved it to %s and starting afresh", settings.storage_dir, aside
        )
        return
    name = settings.collection_name()
    for c in (name, f"{name}_papers", f"{name}_log"):
        try:
            client.delete_collection(c)
        except Exception:  # absent collection: nothing to drop
            logger.debug("collection %s absent", c)
    from assistant.index.catalog import catalog_path

    for suffix in ("", "-wal", "-shm"):
        Path(f"{catalog_path(settings.storage_dir, name)}{suffix}").unlink(missing_ok=True)
    if not settings.chroma_host:
        remove_orphan_segment_dirs(settings.storage_dir)


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


@contextmanager
def writer_lock(settings: Settings) -> Iterator[None]:
    """Hold an exclusive, non-blocking lock on the storage dir for the duration of an ingest.

    Embedded mode only (in client/server mode run a single ingest writer, see README).

    Raises:
        StoreNotReadyError: another process is ingesting into the same storage dir.
    """
    if settings.chroma_host:
        yield
        return
    import fcntl

    settings.storage_dir.mkdir(parents=True, exist_ok=True)
    path = settings.storage_dir / ".ingest.lock"
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            f.seek(0)
            raise StoreNotReadyError(
                f"Another ingest ({f.read().strip() or 'unknown process'}) is writing to {settings.storage_dir}. "
                "Wait for it to finish, then run ingest again."
            ) from e
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}")
        f.flush()
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ingest(
    settings: Settings, paths: Sequence[Path], embed_model: BaseEmbedding, *, progress: bool = True
) -> IngestReport:
    """Index the abstracts in ``paths`` (files or directories) into the store for ``settings``.

    Args:
        settings: storage location, window size, batch sizes.
        paths: seed ``.txt`` files or directories holding them (and ``papers.jsonl``).
        embed_model: a llama-index embedding model (384-d MiniLM by default).
        progress: show a tqdm progress bar on stderr.

    Returns:
        counts of papers, windows, and windows added/updated/removed/skipped, in ``seconds``.

    Raises:
        CorpusFormatError: an input file is malformed (nothing is written in that case).
        StoreNotReadyError: the existing index was built with other settings, or another ingest is
            writing to the same storage dir.
    """
    skipped: list[str] = []
    papers = read_papers(paths, skipped)  # parse everything first: a bad file aborts before any write
    return ingest_papers(settings, papers, embed_model, progress=progress, skipped_rows=skipped)


def ingest_papers(
    settings: Settings,
    papers: Sequence[Paper],
    embed_model: BaseEmbedding,
    *,
    progress: bool = True,
    skipped_rows: Sequence[str] = (),
) -> IngestReport:
    """Index already-parsed ``papers`` (see :func:`assistant.ingest.corpus.read_papers`); :func:`ingest` without
    the reading, so a command line can check every file before it loads the embedding model.

    Args:
        skipped_rows: input rows the reader skipped (``"file:line: reason"``), carried into the report.

    Raises:
        StoreNotReadyError: as :func:`ingest`.
    """
    with writer_lock(settings):
        report = _ingest(settings, list(papers), embed_model, progress=progress)
    return replace(report, skipped_rows=tuple(skipped_rows))


def word_piece_counter(settings: Settings) -> Callable[[list[str]], list[int]]:
    """Texts -> number of word pieces each, by the embedding model's own tokenizer (``tokenizer.json`` of the
    model folder; the bundled MiniLM's for a model without one), without special tokens and without the
    model's truncation: what ``IngestReport.corpus_tokens`` and ``embedded_tokens`` count."""
    from tokenizers import Tokenizer

    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    try:
        folder = resolve_model_path(settings.embed_model)
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


def _ingest(settings: Settings, papers: list[Paper], embed_model: BaseEmbedding, *, progress: bool) -> IngestReport:
    from llama_index.core.schema import TextNode
    from tqdm import tqdm

    from assistant.index.catalog import open_catalog

    t0 = time.perf_counter()
    info = store_info(settings, embed_model.get_text_embedding(PROBE_TEXT))  # model identity, size, probe vector
    store = PaperStore.open_for_write(settings, info)
    catalog = open_catalog(settings, store, repair=True)
    catalog.sync(store, rebuild_if_foreign=True, progress=progress)  # a stale or damaged catalog is rebuilt here
    count_pieces = word_piece_counter(settings)
    generation = store.generation()

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
        windows = make_windows(p, sentences, settings.window_sentences)
        total_windows += len(windows)
        h = paper_hash(p)
        if stored_papers.get(p.id) != h or p.id in plan.moved:
            todo.append((p, h, windows, sentences))

    from assistant.ingest.steering import SteeringDetector

    # new or changed papers only: the others were checked when they were indexed
    flagged = []
    new_papers = [p for p, _, _, _ in todo]
    for p, reasons in zip(new_papers, SteeringDetector().reasons_many([f"{p.title} {p.text}" for p in new_papers])):
        if reasons:
            flagged.append(p.id)
            logger.warning(
                "%s looks like it tries to steer the assistant (%s); indexed as quoted data only",
                p.id,
                ", ".join(reasons),
            )
    added = updated = removed = embedded_tokens = 0
    pending = [w for _, _, ws, _ in todo for w in ws if stored_windows.get(w.id) != w.content_hash]
    bar = tqdm(total=len(pending), desc="embedding sentences", unit="sent", disable=not progress or not pending)
    group_size = max(1, settings.write_batch_size // WINDOWS_PER_PAPER_ESTIMATE)
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
        for b in range(0, len(new_windows), settings.write_batch_size):
            batch = new_windows[b : b + settings.write_batch_size]
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
            store.vector_store.add(nodes)
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
    catalog.sync(store)
    catalog.close()

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
    return report
