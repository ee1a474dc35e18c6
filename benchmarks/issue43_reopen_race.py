"""Issue 43 through the product's own reopen: reader processes call ``PaperRetriever._reopen`` (a new embedded
Chroma client and its first read of each collection, as a reader does when another process moved the index's
generation on) back to back, with one retrieval after each, while an `assistant ingest` process adds real corpus
abstracts to the same index. The chat reopens at most once a second; this reopens as fast as it can, so the
moments when a load meets the writer rewriting the vector files come hundreds of times a minute instead of a
few times an ingest. Before the index lock, a reader segfaulted in ``Collection.count()`` (exit -11) or failed
with "Error loading hnsw index"; with it, none may. Not a test; prints one summary line, exits 1 on a crash or
a failed read.

Usage: .venv/bin/python benchmarks/issue43_reopen_race.py [--papers 2000] [--readers 3]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the corpus helpers live in tests/support
FILE_LIMIT = 2 * 2**30  # a reader that loads half-written files could write a garbage index back


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


def reader(stop: Path) -> int:
    """Reopen and retrieve until ``stop`` exists; returns the number of failed reopens or retrievals."""
    from assistant.config import load_settings
    from assistant.index.embeddings import build_embed_model
    from assistant.retrieve.retrieval import PaperRetriever

    settings = load_settings()
    retriever = PaperRetriever.open(settings, build_embed_model(settings))
    reopens = failures = 0
    while not stop.exists():
        try:
            with retriever._sync_lock:
                retriever._reopen()
            retriever.retrieve("Which paper proposes A-Bench?")
        except Exception as e:  # noqa: BLE001 - counted and printed
            failures += 1
            print(f"reader failure: {type(e).__name__}: {str(e)[:200]}", flush=True)
        reopens += 1
    print(f"reader: {reopens} reopens, {failures} failed", flush=True)
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--papers", type=int, default=2000)
    ap.add_argument("--readers", type=int, default=3)
    ap.add_argument("--reader", type=Path, help=argparse.SUPPRESS)  # the stop file: run as one reader
    a = ap.parse_args()
    from assistant.offline import enforce_offline

    enforce_offline()
    if a.reader:
        return 3 if reader(a.reader) else 0
    import os

    from assistant.config import Settings
    from tests.support.reader_writer_stress import stress_rows
    from tests.support.writers import SEEDS, env_for, run, write_export

    tmp = Path(tempfile.mkdtemp(prefix="issue43-reopen-"))
    settings = Settings().updated(storage_dir=tmp / "index")
    env = env_for(settings)
    try:
        assert run(settings, "ingest", "--no-progress", str(SEEDS), timeout=600).returncode == 0
        batch = write_export(tmp / "batch.jsonl", stress_rows(a.papers))
        stop = tmp / "stop"
        me = [sys.executable, "-X", "faulthandler", __file__, "--reader", str(stop)]
        readers = [subprocess.Popen(me, cwd=REPO, env=env, preexec_fn=_limits) for _ in range(a.readers)]
        time.sleep(15)  # the readers load their models and open the index
        t0 = time.monotonic()
        writer = subprocess.run(
            [sys.executable, "-m", "assistant", "ingest", "--no-progress", str(batch)],
            cwd=REPO, env=env, capture_output=True, text=True, preexec_fn=_limits,
        )
        stop.touch()
        codes = [r.wait(timeout=600) for r in readers]
        locked = (settings.storage.storage_dir / ".index.lock").exists()
        print(
            f"{'with' if locked else 'without'} the index lock ({os.environ.get('PYTHONPATH') or REPO}): ingest of "
            f"{a.papers} papers exit {writer.returncode} in {time.monotonic() - t0:.0f} s, reader exits {codes}"
        )
        print("\n".join(line for line in writer.stderr.splitlines() if "index lock" in line) or "no write waited")
        if writer.returncode:
            print(writer.stderr[-2000:])
        return 0 if writer.returncode == 0 and not any(codes) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
