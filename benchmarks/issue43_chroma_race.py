"""Issue 43 at Chroma's level, without the assistant: one process adds random vectors to an embedded Chroma
collection (batches of 256, as the ingest writes windows) while reader processes open a fresh
``PersistentClient`` again and again and make its first read (``count()``, which loads the vector files and
replays the write log) and one query. Without a lock, readers segfault (exit code -11) or fail with "Error
loading hnsw index": the writer rewrites the vector files every ~1,000 records, in place, while they load.
``--lock`` runs the same with the index lock of assistant/index/index_lock.py (each ``add`` exclusive, each
first read shared): no reader may crash or fail. Not a test; prints one summary line and exits 1 on a crash
or a failed read.

Each process runs with a 2 GiB file-size limit (a reader that loads half-written files can also write a
garbage index back: once, unlocked, a 75 GB file filled the disk) and a 4 GiB address-space cap.

Usage: .venv/bin/python benchmarks/issue43_chroma_race.py [--lock] [--records 10240] [--readers 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FILE_LIMIT = 2 * 2**30
MEMORY_LIMIT = 4 * 2**30
DIMS = 384
COLLECTION = "race-windows"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _client(path: str) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    return chromadb.PersistentClient(path=path, settings=ChromaSettings(anonymized_telemetry=False))


def _lock(path: str, locked: bool) -> Any:
    from assistant.index.index_lock import INDEX_LOCK_FILE, NO_LOCK, IndexLock

    return IndexLock(Path(path) / INDEX_LOCK_FILE) if locked else NO_LOCK


def writer(path: str, records: int, batch: int, locked: bool) -> None:
    import numpy as np

    lock = _lock(path, locked)
    client = _client(path)
    with lock.exclusive():
        col = client.get_or_create_collection(COLLECTION, metadata={"hnsw:space": "cosine"}, embedding_function=None)
        start = col.count()
    rng = np.random.default_rng(start)
    for i in range(start, start + records, batch):
        vectors = rng.standard_normal((batch, DIMS)).astype(np.float32)
        ids = [f"w{i + j}" for j in range(batch)]
        with lock.exclusive():
            col.add(ids=ids, embeddings=vectors, metadatas=[{"n": i + j} for j in range(batch)])
    print(f"writer: {col.count()} records", flush=True)


def reader(path: str, stop: str, locked: bool) -> int:
    """Open, first-read and query until ``stop`` exists; returns the number of failed reads."""
    from chromadb.api.shared_system_client import SharedSystemClient

    lock = _lock(path, locked)
    opens = failures = 0
    while not os.path.exists(stop):
        client = _client(path)
        try:
            col = client.get_collection(COLLECTION, embedding_function=None)
            with lock.loading():
                col.count()
            col.query(query_embeddings=[[1.0] + [0.0] * (DIMS - 1)], n_results=3, include=[])
        except Exception as e:  # noqa: BLE001 - counted and printed
            failures += 1
            print(f"reader failure: {type(e).__name__}: {str(e)[:160]}", flush=True)
        finally:
            system = SharedSystemClient._identifier_to_system.pop(path, None)
            if system is not None:
                system.stop()
        opens += 1
    print(f"reader: {opens} opens, {failures} failed", flush=True)
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("role", nargs="?", default="main", choices=["main", "writer", "reader"])
    ap.add_argument("--dir", default="")
    ap.add_argument("--records", type=int, default=10240)
    ap.add_argument("--readers", type=int, default=3)
    ap.add_argument("--lock", action="store_true")
    ap.add_argument("--stop", default="")
    a = ap.parse_args()
    if a.role == "writer":
        writer(a.dir, a.records, 256, a.lock)
        return 0
    if a.role == "reader":
        return 3 if reader(a.dir, a.stop, a.lock) else 0
    tmp = Path(a.dir or tempfile.mkdtemp(prefix="issue43-race-"))
    db = tmp / "db"
    stop = tmp / "stop"
    me = [sys.executable, "-X", "faulthandler", __file__]
    flags = ["--dir", str(db)] + (["--lock"] if a.lock else [])
    try:
        subprocess.run([*me, "writer", *flags, "--records", "512"], check=True, preexec_fn=_limits)
        t0 = time.monotonic()
        w = subprocess.Popen([*me, "writer", *flags, "--records", str(a.records)], preexec_fn=_limits)
        readers = [
            subprocess.Popen([*me, "reader", *flags, "--stop", str(stop)], preexec_fn=_limits) for _ in range(a.readers)
        ]
        w.wait()
        stop.touch()
        codes = [r.wait(timeout=300) for r in readers]
        size = sum(f.stat().st_size for f in db.rglob("*") if f.is_file())
        print(
            f"{'locked' if a.lock else 'unlocked'}: writer exit {w.returncode}, reader exits {codes}, "
            f"{time.monotonic() - t0:.0f} s, index {size / 2**20:.0f} MiB"
        )
        return 0 if w.returncode == 0 and not any(codes) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
