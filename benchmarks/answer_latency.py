"""Answer latency with the configured LLM (bundled SmolLM2 by default): time to status (sources shown),
to first token, to the full verified answer, per question. Prints a table; not a test.

Usage: .venv/bin/python benchmarks/answer_latency.py [--questions eval/dev.jsonl] [--limit 3] [--warmup-s 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from assistant.config import load_settings
from assistant.offline import enforce_offline

DEFAULT_QUESTIONS = [
    "Which paper makes a graph transformer scale to large graphs by running its global self-attention over the feature dimension?",
    "What benchmark does the CAD code generation paper release, and how many prompts does it have?",
    "What is SPA in the LLM alignment paper?",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--questions", type=Path, help="a question file in the eval format (default: 3 built-in questions)")
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--warmup-s", type=float, default=10.0, help="wait after start-up so background cache warming does not skew timings")
    args = ap.parse_args()
    enforce_offline()
    from assistant.service import build_assistant

    questions = DEFAULT_QUESTIONS
    if args.questions:
        rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
        questions = [r.get("question") or r["turns"][0] for r in rows]
    questions = questions[: args.limit]
    t0 = time.perf_counter()
    with build_assistant(load_settings()) as assistant:
        print(f"start-up (index + embedder + LLM server): {time.perf_counter() - t0:.1f} s; model {assistant.model_label}")
        time.sleep(args.warmup_s)
        rows_out = []
        for q in questions:
            t = time.perf_counter()
            status = first = None
            final = None
            for ev in assistant.stream(q):
                if ev.kind == "status" and status is None:
                    status = time.perf_counter() - t
                if ev.kind == "final":
                    final = ev.answer
            total = time.perf_counter() - t
            assert final is not None
            ft = final.timings_ms.get("first_token")
            first = ft / 1000 if ft else None
            rows_out.append((q, status, first, total, final.mode, len(final.citations)))
    print(f"{'status s':>9} {'1st tok s':>9} {'total s':>8}  mode        cites  question")
    for q, s, f, tot, mode, nc in rows_out:
        print(f"{(s or 0):9.2f} {(f or 0):9.2f} {tot:8.2f}  {mode:10s} {nc:5d}  {q[:70]}")
    totals = [r[3] for r in rows_out]
    firsts = [r[2] for r in rows_out if r[2]]
    print(f"median: first token {statistics.median(firsts) if firsts else float('nan'):.2f} s, total {statistics.median(totals):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
