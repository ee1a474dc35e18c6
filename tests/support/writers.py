"""Real writer and reader processes against one index, for the tests of overlapping writers and of readers
while another process writes: exports of real abstracts (../shared/corpus or the repo's seeds), `assistant`
subprocesses, waiting for the writer lock, and a check that the index is whole (Chroma and catalog agree)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from assistant.config import Settings
from tests.support.shared import SHARED

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"
CORPUS = SHARED / "corpus" / "iclr2024.jsonl"  # real abstracts nobody here wrote (../shared beside the repo)
#: Scripted model reply for `ask` processes (the answer path runs; nothing here is about the model).
REPLY = "The paper proposes a method and evaluates it [1]."


def corpus_rows(start: int, count: int) -> list[dict[str, Any]]:
    """``count`` real abstracts (rows of the corpus export) from row ``start``; the corpus must hold them."""
    lines = CORPUS.read_text(encoding="utf-8").splitlines()[start : start + count]
    assert len(lines) == count, f"{CORPUS} has fewer than {start + count} rows"
    return [json.loads(line) for line in lines]


def write_export(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write ``rows`` as a JSONL export (id, title, abstract, authors, url) and return its path."""
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            keep = {k: r[k] for k in ("id", "title", "abstract", "authors", "url") if k in r}
            f.write(json.dumps(keep) + "\n")
    return path


def env_for(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of an `assistant` subprocess on ``settings``' index (embedded or a Chroma server)."""
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(settings.storage.storage_dir), **extra}
    if settings.storage.chroma_host:
        env |= {
            "ASSISTANT_CHROMA_HOST": settings.storage.chroma_host,
            "ASSISTANT_CHROMA_PORT": str(settings.storage.chroma_port),
        }
    return env


def start(settings: Settings, *args: str, **extra: str) -> subprocess.Popen[str]:
    """Start ``python -m assistant ARGS`` (stdin closed: never a terminal)."""
    return subprocess.Popen(
        [sys.executable, "-m", "assistant", *args],
        env=env_for(settings, **extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(settings: Settings, *args: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m assistant ARGS`` to the end (stdin closed)."""
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args],
        env=env_for(settings, **extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for_lock(settings: Settings, proc: subprocess.Popen[str], timeout_s: float = 120) -> None:
    """Wait until ``proc`` holds the writer lock of ``settings.storage.storage_dir`` (the lock file names its pid)."""
    lock = settings.storage.storage_dir / ".ingest.lock"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the writer exited ({proc.returncode}) before taking the lock: {proc.stderr.read()}")  # type: ignore[union-attr]
        if lock.exists() and lock.read_text().strip() == f"pid {proc.pid}":
            return
        time.sleep(0.05)
    raise AssertionError(f"the writer did not take the lock within {timeout_s} s")


def index_papers(settings: Settings, embed_model: Any) -> set[str]:
    """The ids of the papers of the index for ``settings``, after checking that it is whole: Chroma's paper
    records and the catalog (as a fresh reader syncs it) hold the same papers, every paper has all its windows
    (one per sentence) and every vector can be read. Reads through a new Chroma client (what is on disk)."""
    from assistant.index.store import PaperStore, forget_embedded_client
    from assistant.retrieve.retrieval import PaperRetriever

    if not settings.storage.chroma_host:
        forget_embedded_client(settings)
    store = PaperStore.open_for_read(settings)
    ids = set(store.paper_hashes())
    retriever = PaperRetriever.open(settings, embed_model)
    assert set(retriever.papers) == ids, "the catalog and Chroma disagree"
    counts = {pid: len(retriever.sentences_of(pid)) for pid in ids}
    vectors = store.sentence_vectors(counts)  # every window's vector is readable
    incomplete = [pid for pid, n in counts.items() if len(vectors.get(pid, [])) != n or n == 0]
    assert not incomplete, f"papers without all their windows: {incomplete[:5]}"
    assert set(store.title_vectors(list(ids))) == ids
    return ids


def seed_ids() -> set[str]:
    """The ids of the 38 seed papers (``<file>#<position>``)."""
    from assistant.ingest.corpus import read_papers

    return {p.id for p in read_papers([SEEDS])}


def export_ids(path: Path) -> set[str]:
    """The paper ids an export file gives."""
    from assistant.ingest.corpus import read_papers

    return {p.id for p in read_papers([path])}
