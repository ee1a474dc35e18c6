"""Answer latency with the configured LLM (the bundled 1.5B model by default): time to status (sources shown),
to the first cited text (the answer built from the abstracts, or a comparison table), to the model's first
token, to the full verified answer, per question. Prints a table; not a test.

Usage: .venv/bin/python benchmarks/answer_latency.py [--questions eval/dev.jsonl] [--limit 3] [--followup TEXT]
[--read-ahead]

The bundled server keeps read prompts on disk across runs (``ASSISTANT_LLM_PROMPT_STATE_DISK_MB``); set it to 0 for
a run that starts with nothing read.

The first answer is timed like every other: there is no start-up warm-up to wait for any more (stored
sentence vectors are primed per question), so the old 10 s pause before timing was removed (issue 26.5).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from assistant.config import load_settings
from assistant.offline import enforce_offline

DEFAULT_QUESTIONS = [
    "Which paper makes a graph transformer scale to large graphs by running its global self-attention over the feature "
    "dimension?",
    "What benchmark does the CAD code generation paper release, and how many prompts does it have?",
    "What is SPA in the LLM alignment paper?",
]


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--questions", type=Path, help="a question file in the eval format (default: 3 built-in questions)")
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument(
        "--followup",
        default="",
        help="after each question, ask this in the same chat (e.g. 'What is its main result?'): a follow-up about "
        "a paper already read; its times are printed apart",
    )
    ap.add_argument(
        "--read-ahead",
        action="store_true",
        help="start as the UI and `serve` do, reading every paper ahead (ASSISTANT_LLM_READ_AHEAD_PAPERS), and time "
        "the questions only once that is done; prints how long it took",
    )
    args = ap.parse_args()
    enforce_offline()
    from assistant.service import build_assistant

    questions = DEFAULT_QUESTIONS
    if args.questions:
        rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
        questions = [r.get("question") or r["turns"][0] for r in rows]
    questions = questions[: args.limit]
    t0 = time.perf_counter()
    with build_assistant(load_settings(), read_ahead=args.read_ahead) as assistant:
        print(f"start-up (index + embedder + LLM server): {time.perf_counter() - t0:.1f} s; model "
              f"{assistant.model_label}")
        if args.read_ahead:
            t1 = time.perf_counter()
            ahead = assistant.read_ahead
            if ahead is None:
                print("read-ahead: off (more papers than ASSISTANT_LLM_READ_AHEAD_PAPERS, or no bundled model)")
            else:
                ahead.finished.wait()
                print(f"read-ahead: {ahead.done} of {ahead.total} papers in {time.perf_counter() - t1:.1f} s")
        rows_out = []
        followups = []
        turns = [(q, args.followup) for q in questions]
        for q, followup in turns:
            chat = assistant.new_session()
            for asked in [q, followup] if followup else [q]:
                rows_out.append(_timed(chat.stream(asked), asked))
                if asked is followup:
                    followups.append(rows_out.pop())
        rss = {"app": _rss_mib(os.getpid())}
        for child in _children(os.getpid()):
            rss[f"model server (pid {child})"] = _rss_mib(child)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average after the run: {load}")
    _table("questions", rows_out)
    if followups:
        _table(f"follow-ups ({args.followup!r}, same chat)", followups)
    for name, mib in rss.items():
        print(f"RSS {name}: {mib:.0f} MiB (peak for the app: {_peak_mib():.0f} MiB)" if name == "app"
              else f"RSS {name}: {mib:.0f} MiB")
    return 0


def _timed(events, q: str) -> tuple:
    """Drain one answer's events: (question, status s, first model token s, total s, mode, citations, first text s,
    checks after the model's last token s, model sentences kept, model sentences dropped)."""
    t = time.perf_counter()
    status = text = None
    final = None
    for ev in events:
        if ev.kind == "status" and status is None:
            status = time.perf_counter() - t
        if text is None and ev.answer is not None and (ev.answer.sentences or ev.answer.comparison):
            text = time.perf_counter() - t
        if ev.kind == "final":
            final = ev.answer
    total = time.perf_counter() - t
    assert final is not None
    ft = final.timings_ms.get("first_token")
    first = ft / 1000 if ft else None
    checks = final.timings_ms.get("check_after_stream", 0.0) / 1000
    kept = sum(1 for s in final.sentences if s.by_model)
    return (q, status, first, total, final.mode, len(final.citations), text if text is not None else total, checks,
            kept, len(final.dropped))


def _table(title: str, rows_out: list) -> None:
    print(f"\n{title}")
    print(f"{'status s':>9} {'text s':>7} {'1st tok s':>9} {'total s':>8} {'checks s':>8} kept/dropped  mode        "
          "cites  question")
    for q, s, f, tot, mode, nc, tx, ck, kept, dropped in rows_out:
        print(f"{(s or 0):9.2f} {tx:7.2f} {(f or 0):9.2f} {tot:8.2f} {ck:8.2f} {kept:5d}/{dropped:<6d}  {mode:10s} "
              f"{nc:5d}  {q[:70]}")
    totals = [r[3] for r in rows_out]
    firsts = [r[2] for r in rows_out if r[2]]
    statuses = sorted(r[1] or 0 for r in rows_out)
    firsts_sorted = sorted(r[2] for r in rows_out if r[2])
    totals_sorted = sorted(r[3] for r in rows_out)
    texts_sorted = sorted(r[6] for r in rows_out)
    pct = lambda xs, p: xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))] if xs else float("nan")  # noqa: E731
    print(f"p50/p95: status {pct(statuses, .5):.2f}/{pct(statuses, .95):.2f} s, first cited text "
          f"{pct(texts_sorted, .5):.2f}/{pct(texts_sorted, .95):.2f} s, first token "
          f"{pct(firsts_sorted, .5):.2f}/{pct(firsts_sorted, .95):.2f} s, total "
          f"{pct(totals_sorted, .5):.2f}/{pct(totals_sorted, .95):.2f} s")
    checks_sorted = sorted(r[7] for r in rows_out)
    print(f"checks after the model's last token p50/p95: {pct(checks_sorted, .5):.2f}/{pct(checks_sorted, .95):.2f} s; "
          f"model sentences kept/dropped: {sum(r[8] for r in rows_out)}/{sum(r[9] for r in rows_out)}")
    print(f"median: first token {statistics.median(firsts) if firsts else float('nan'):.2f} s, total "
          f"{statistics.median(totals):.2f} s")


if __name__ == "__main__":
    sys.exit(main())
