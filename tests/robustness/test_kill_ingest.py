"""`kill -9` in the middle of an ingest leaves a consistent, usable index; the next run completes it
without duplicates."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from assistant.config import Settings
from assistant.index.store import PaperStore

REPO = Path(__file__).resolve().parents[2]


def test_kill_9_mid_ingest_then_resume(tmp_path: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    from assistant.retrieve.retrieval import PaperRetriever

    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(tmp_path / "index"), "ASSISTANT_WRITE_BATCH_SIZE": "8"}
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "ingest", str(REPO / "seeds")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # wait until some windows are written, then kill -9
        chunk = proc.stderr.read(64)
        if not chunk:
            break
        seen += chunk
        if "embedding sentences:" in seen and "/297" in seen and any(f" {n}/297" in seen for n in range(16, 200)):
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, seen[-2000:]

    settings = Settings().updated(storage_dir=tmp_path / "index", write_batch_size=8)
    store = PaperStore.open_for_read(settings)  # the papers committed before the kill are usable
    partial = store.load_papers()
    assert 0 < len(partial) < 38
    retriever = PaperRetriever.open(settings, embed_model)
    assert retriever.retrieve("graph transformer")
    assert set(retriever.papers) <= set(partial)  # the catalog holds only committed papers (synced up to the head)

    again = subprocess.run([sys.executable, "-m", "assistant", "ingest", "--no-progress", str(REPO / "seeds")], env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    store = PaperStore.open_for_read(settings)
    assert len(store.load_papers()) == 38
    ids = store.windows.get()["ids"]
    assert len(ids) == len(set(ids)) == 297  # complete, no duplicates
    retriever.refresh(force=True)
    assert len(retriever.papers) == 38  # the catalog caught up too
    third = subprocess.run([sys.executable, "-m", "assistant", "ingest", "--no-progress", str(REPO / "seeds")], env=env,
                           capture_output=True, text=True, timeout=300)
    assert "0 added" in third.stdout  # the summary is a result: stdout
