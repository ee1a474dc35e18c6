"""Issue 43's reader/writer crash test at full size: rounds of tests/support/reader_writer_stress.py (3 reader
processes answering questions about seed papers while an `assistant ingest` process adds 2,000 real corpus
abstracts to the same index), embedded and through a real `chroma run` server, 20 rounds each by default.
A round passes when no reader crashed or failed and every answer equals the same question's answer alone.

Writes one line per round, the problems of a failed one, and a summary to
``docs/results/issue43/<variant>-<papers>p-<UTC time>.log`` (``--out``), and prints the same. A failed round's
folder (reader outputs and stderr, the index) is kept under the system temp dir and named in the log.

Usage: .venv/bin/python benchmarks/issue43_reader_writer_stress.py [--variant embedded|server|both]
       [--rounds N] [--papers N] [--readers N] [--lock-queries] [--keep-going] [--out DIR]
       [--resume] [--minutes M]
Defaults: both variants, ISSUE43_ROUNDS (20) rounds, ISSUE43_PAPERS (2000) papers, ISSUE43_READERS (3) readers.
Stops a variant at its first failed round unless --keep-going. Exit status 1 when any round failed.
A round of 2,000 papers took 6 to 9 minutes embedded and about 6 minutes through a server on 2 shared cores, so
the default run takes about 4 to 5 hours.

Resumable across sessions: every finished round of the default shape (2,000 papers, 3 readers, no
--lock-queries) is appended to ``docs/results/issue43/campaign.jsonl`` with a hash of the code it ran
(:data:`CODE_PATHS`). ``--resume`` counts the passed rounds in a row already there for the current code and runs
only the rest; ``--minutes M`` starts no round after M minutes (a session's slice). A change to that code starts
the count again; a failed round resets it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the round lives in tests/support


LEDGER = REPO / "docs" / "results" / "issue43" / "campaign.jsonl"
#: What a round exercises: the index, ingest and retrieval code, the pinned versions and the round's own files.
CODE_PATHS = (
    "assistant/index",  # the store, the index lock, the catalog
    "assistant/ingest",  # the writer
    "assistant/retrieve",  # the reader's retriever and its reopen
    "pyproject.toml",  # the chromadb and llama-index versions
    "tests/support/reader_writer_stress.py",
    "tests/support/stress_reader.py",
    "tests/support/writers.py",
)


def code_hash() -> str:
    """A 12-hex-digit hash of the working tree's files under :data:`CODE_PATHS` (tracked and untracked)."""
    listed = subprocess.run(
        ["git", "ls-files", "-s", "--cached", "--others", "--exclude-standard", *CODE_PATHS],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    files = sorted(line.split("\t")[-1] for line in listed if line.strip())
    digest = hashlib.sha256()
    for name in files:
        path = REPO / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def passed_in_a_row(variant: str, code: str, ledger: Path = LEDGER) -> int:
    """Passed rounds of ``variant`` at the end of ``ledger``, run on ``code`` (a failure or other code ends the
    run of passes)."""
    rows = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()] if ledger.exists() else []
    count = 0
    for row in reversed([r for r in rows if r["variant"] == variant]):
        if row["code"] != code or not row["ok"]:
            break
        count += 1
    return count


def main() -> int:
    from assistant.offline import enforce_offline

    enforce_offline()
    from tests.support.reader_writer_stress import PAPERS, READERS, run_round

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--variant", choices=["embedded", "server", "both"], default="both")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ISSUE43_ROUNDS", "20")))
    ap.add_argument("--papers", type=int, default=int(os.environ.get("ISSUE43_PAPERS", str(PAPERS))))
    ap.add_argument("--readers", type=int, default=int(os.environ.get("ISSUE43_READERS", str(READERS))))
    ap.add_argument("--lock-queries", action="store_true", help="readers hold the index lock around each answer")
    ap.add_argument("--keep-going", action="store_true", help="run every round even after a failed one")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "results" / "issue43")
    ap.add_argument("--resume", action="store_true", help="count the ledger's passed rounds in a row for this code")
    ap.add_argument("--minutes", type=float, default=0.0, help="start no round after this many minutes (0: no limit)")
    a = ap.parse_args()
    ledgered = a.papers == 2000 and a.readers == 3 and not a.lock_queries  # the shape
    code = code_hash()
    started = time.monotonic()
    os.chdir(REPO)
    a.out.mkdir(parents=True, exist_ok=True)
    failed = False
    for variant in ["embedded", "server"] if a.variant == "both" else [a.variant]:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        log_path = a.out / f"{variant}-{a.papers}p{'-lockqueries' if a.lock_queries else ''}-{stamp}.log"
        with log_path.open("w", encoding="utf-8") as log_file:

            def log(text: str, log_file: TextIO = log_file) -> None:
                line = f"{time.strftime('%H:%M:%S')} {text}"
                print(line, flush=True)
                log_file.write(line + "\n")
                log_file.flush()

            log(
                f"issue 43 reader/writer stress, {variant}: {a.rounds} rounds x {a.papers} papers, {a.readers} "
                f"readers{', lock held around each answer' if a.lock_queries else ''}; commit "
                f"{os.popen('git rev-parse --short HEAD 2>/dev/null').read().strip()} (+ working tree), "
                f"{os.cpu_count()} CPUs"
            )
            passed = passed_in_a_row(variant, code) if a.resume and ledgered else 0
            if passed:
                log(f"resumed: {passed} rounds in a row already passed on code {code} (campaign.jsonl)")
            t0 = time.monotonic()
            for n in range(passed + 1, a.rounds + 1):
                if a.minutes and time.monotonic() - started > a.minutes * 60:
                    log(f"stopped: {a.minutes:g} minutes spent; run again with --resume to go on")
                    break
                load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
                work = Path(tempfile.mkdtemp(prefix=f"issue43-{variant}-{n}-"))
                result = run_round(
                    work, variant, papers=a.papers, readers=a.readers, lock_queries=a.lock_queries, log=log
                )
                log(f"round {n}/{a.rounds}: {result.line()}")
                if ledgered:
                    row = {
                        "variant": variant,
                        "ok": result.ok,
                        "round": n,
                        "code": code,
                        "utc": stamp,
                        "load_at_start": round(load, 2),
                        "result": result.line(),
                    }
                    with LEDGER.open("a", encoding="utf-8") as ledger:
                        ledger.write(json.dumps(row) + "\n")
                if result.ok:
                    passed += 1
                    shutil.rmtree(work, ignore_errors=True)
                    continue
                failed = True
                for problem in result.problems():
                    log(f"  {problem}")
                log(f"  kept: {work}")
                if not a.keep_going:
                    break
            log(
                f"{variant}: {passed} of {a.rounds} rounds passed in {(time.monotonic() - t0) / 60:.1f} min "
                f"({'all passed' if passed == a.rounds else 'NOT all passed'})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
