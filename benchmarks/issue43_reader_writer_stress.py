"""Issue 43's reader/writer crash test at full size: rounds of tests/support/reader_writer_stress.py (3 reader
processes answering questions about seed papers while an `assistant ingest` process adds 2,000 real corpus
abstracts to the same index), embedded and through a real `chroma run` server, 20 rounds each by default.
A round passes when no reader crashed or failed and every answer equals the same question's answer alone.

Writes one line per round, the problems of a failed one, and a summary to
``docs/results/issue43/<variant>-<papers>p-<UTC time>.log`` (``--out``), and prints the same. A failed round's
folder (reader outputs and stderr, the index) is kept under the system temp dir and named in the log.

Usage: .venv/bin/python benchmarks/issue43_reader_writer_stress.py [--variant embedded|server|both]
       [--rounds N] [--papers N] [--readers N] [--lock-queries] [--keep-going] [--out DIR]
Defaults: both variants, ISSUE43_ROUNDS (20) rounds, ISSUE43_PAPERS (2000) papers, ISSUE43_READERS (3) readers.
Stops a variant at its first failed round unless --keep-going. Exit status 1 when any round failed.
A round of 2,000 papers took 6 to 9 minutes embedded and about 6 minutes through a server on 2 shared cores, so
the default run takes about 4 to 5 hours.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the round lives in tests/support


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
    a = ap.parse_args()
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
            passed = 0
            t0 = time.monotonic()
            for n in range(1, a.rounds + 1):
                work = Path(tempfile.mkdtemp(prefix=f"issue43-{variant}-{n}-"))
                result = run_round(
                    work, variant, papers=a.papers, readers=a.readers, lock_queries=a.lock_queries, log=log
                )
                log(f"round {n}/{a.rounds}: {result.line()}")
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
