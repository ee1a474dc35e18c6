"""Seed files -> papers -> sentence windows -> embeddings -> Chroma; idempotent and resumable.

Each run compares content hashes with what is stored and embeds only new or changed windows, so a
second run adds 0 and a run after an interruption finishes the job. A paper record is written
after all its windows, so readers never see half a paper.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.chunking import make_windows, paper_hash
from assistant.text import split_sentences
from assistant.corpus import read_papers, suspicious_text
from assistant.errors import StoreNotReadyError
from assistant.store import PROBE_TEXT, PaperStore, make_client, require_existing_storage, store_info
from assistant.types import IngestReport, Paper, Window

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.config import Settings

logger = logging.getLogger(__name__)

#: Papers are committed in groups of about one write batch of windows (~8 windows per abstract), so an
#: interrupted ingest keeps every group finished before the interruption.
WINDOWS_PER_PAPER_ESTIMATE = 8


def _mean_unit(vectors: Sequence[Sequence[float]]) -> list[float]:
    dim = len(vectors[0])
    mean = [sum(v[i] for v in vectors) / len(vectors) for i in range(dim)]
    norm = sum(x * x for x in mean) ** 0.5 or 1.0
    return [x / norm for x in mean]


def delete_papers(settings: Settings, paper_ids: Sequence[str]) -> list[str]:
    """Remove papers (records and windows) by id, under the writer lock; returns the ids that were indexed.

    Raises:
        StoreNotReadyError: no index, or another ingest is writing.
    """
    require_existing_storage(settings)  # deleting never creates an index folder
    with writer_lock(settings):
        store = PaperStore.open_for_read(settings)
        indexed = store.paper_hashes()
        known = [pid for pid in paper_ids if pid in indexed]
        store.delete_papers(known)
    logger.info("deleted %d paper(s): %s", len(known), known)
    return known


def drop_index(settings: Settings) -> None:
    """Delete the collections for the current settings (``assistant ingest --rebuild``). A storage dir
    that cannot be opened is renamed to ``<dir>.damaged-<unix time>`` so a fresh index can be built."""
    try:
        client = make_client(settings)
    except StoreNotReadyError:
        if settings.chroma_host:
            raise
        aside = settings.storage_dir.with_name(f"{settings.storage_dir.name}.damaged-{int(time.time())}")
        settings.storage_dir.rename(aside)
        logger.warning("storage at %s could not be opened; moved it to %s and starting afresh", settings.storage_dir, aside)
        return
    name = settings.collection_name()
    for c in (name, f"{name}_papers"):
        try:
            client.delete_collection(c)
        except Exception:  # absent collection: nothing to drop
            logger.debug("collection %s absent", c)
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


def ingest(settings: Settings, paths: Sequence[Path], embed_model: BaseEmbedding, *,
           progress: bool = True) -> IngestReport:
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


def ingest_papers(settings: Settings, papers: Sequence[Paper], embed_model: BaseEmbedding, *, progress: bool = True,
                  skipped_rows: Sequence[str] = ()) -> IngestReport:
    """Index already-parsed ``papers`` (see :func:`assistant.corpus.read_papers`); :func:`ingest` without
    the reading, so a command line can check every file before it loads the embedding model.

    Args:
        skipped_rows: input rows the reader skipped (``"file:line: reason"``), carried into the report.

    Raises:
        StoreNotReadyError: as :func:`ingest`.
    """
    with writer_lock(settings):
        report = _ingest(settings, list(papers), embed_model, progress=progress)
    return replace(report, skipped_rows=tuple(skipped_rows))


def _ingest(settings: Settings, papers: list[Paper], embed_model: BaseEmbedding, *, progress: bool) -> IngestReport:
    from llama_index.core.schema import TextNode
    from tqdm import tqdm

    t0 = time.perf_counter()
    info = store_info(settings, embed_model.get_text_embedding(PROBE_TEXT))  # model identity, size, probe vector
    store = PaperStore.open_for_write(settings, info)

    stored_papers = store.paper_hashes()
    stored_windows = store.window_hashes()
    source_files = {p.source_file for p in papers}
    input_ids = {p.id for p in papers}
    gone = [pid for pid in stored_papers if pid.split("#")[0] in source_files and pid not in input_ids]
    store.delete_papers(gone)

    flagged = []
    for p in papers:
        reasons = suspicious_text(f"{p.title} {p.text}")
        if reasons:
            flagged.append(p.id)
            logger.warning("%s looks like it tries to steer the assistant (%s); indexed as quoted data only",
                           p.id, ", ".join(reasons))
    todo: list[tuple[Paper, str, list[Window]]] = []
    total_windows = 0
    for p in papers:
        windows = make_windows(p, split_sentences(p.text), settings.window_sentences)
        total_windows += len(windows)
        h = paper_hash(p)
        if stored_papers.get(p.id) != h:
            todo.append((p, h, windows))

    added = updated = removed = 0
    pending = [w for _, _, ws in todo for w in ws if stored_windows.get(w.id) != w.content_hash]
    bar = tqdm(total=len(pending), desc="embedding windows", unit="win", disable=not progress or not pending)
    group_size = max(1, settings.write_batch_size // WINDOWS_PER_PAPER_ESTIMATE)
    for g in range(0, len(todo), group_size):
        group = todo[g: g + group_size]
        new_windows: list[Window] = []
        stale: list[str] = []
        for p, _, windows in group:
            ids = {w.id for w in windows}
            stale += [wid for wid in stored_windows if wid.startswith(p.id + ":") and wid not in ids]
            for w in windows:
                old = stored_windows.get(w.id)
                if old != w.content_hash:
                    new_windows.append(w)
                    if old is not None:
                        stale.append(w.id)
                        updated += 1
                    else:
                        added += 1
        removed += len([s for s in stale if s not in {w.id for w in new_windows}])
        store.delete_windows(stale)
        for b in range(0, len(new_windows), settings.write_batch_size):
            batch = new_windows[b: b + settings.write_batch_size]
            vectors = embed_model.get_text_embedding_batch([w.text for w in batch])
            nodes = [
                TextNode(id_=w.id, text=w.text, embedding=v,
                         metadata={"paper_id": w.paper_id, "sentence": w.index, "content_hash": w.content_hash})
                for w, v in zip(batch, vectors)
            ]
            store.vector_store.add(nodes)
            bar.update(len(batch))
        embeddings = store.window_embeddings([p.id for p, _, _ in group])
        group_done = [(p, h) for p, h, _ in group if embeddings.get(p.id)]
        store.upsert_papers([p for p, _ in group_done], [h for _, h in group_done],
                            [_mean_unit([e for _, e in embeddings[p.id]]) for p, _ in group_done])
    bar.close()

    report = IngestReport(
        papers=len(papers), windows=total_windows, added=added, updated=updated, removed=removed,
        skipped=total_windows - added - updated, collection=settings.collection_name(),
        seconds=time.perf_counter() - t0,
        flagged=tuple(flagged),
    )
    logger.info(
        "ingest: %d papers -> %d windows: %d added, %d updated, %d removed, %d unchanged in %.1f s (%s)",
        report.papers, report.windows, report.added, report.updated, report.removed, report.skipped,
        report.seconds, store.location,
    )
    return report
