"""Answer quality by split and kind from ``assistant eval --json`` reports, side by side (issue 59's figures).

Reads one or more reports (``NAME=PATH``) of the same question file and prints, for each split (``val``, ``test``,
all) and each kind of question (the item's ``type``; unanswerable items by their ``unanswerable_kind``: not stated /
not indexed; items with a ``lang`` as ``other language``), the mean of each answer metric, one column per report:
citation precision and recall, facts, false "not stated"/"not indexed" on answerable items, correct abstentions,
quote fallbacks (the model wrote, nothing passed, quotes were shown), summary parts, and the whole answer's time
(p50 / p95 of ``timings_ms.total``, first text p50).

Usage: ``.venv/bin/python benchmarks/answer_table.py --questions eval/questions-8.jsonl old=build/eval8-old.json
new=build/eval8-new.json``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

METRICS = (
    ("citation_precision", "cit P"),
    ("citation_recall", "cit R"),
    ("facts_hit", "facts"),
    ("false_abstention", "false abst."),
    ("abstention_accuracy", "abst. right"),
    ("quote_fallback", "quotes"),
    ("summary_problem", "sum: problem"),
    ("summary_method", "sum: method"),
    ("summary_result", "sum: result"),
)


def kind(item: dict[str, Any]) -> str:
    """The kind a question is reported under."""
    if item.get("lang"):
        return "other language"
    if item["type"] == "unanswerable":
        return str(item.get("unanswerable_kind") or "unanswerable").replace("_", " ")
    return str(item["type"])


def mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "-"


def pct(values: list[float], q: float) -> float:
    xs = sorted(values)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("reports", nargs="+", help="NAME=PATH of an `assistant eval --json` report")
    args = ap.parse_args()
    items = {
        o["id"]: o for o in (json.loads(line) for line in args.questions.read_text().splitlines() if line.strip())
    }
    reports = {}
    for spec in args.reports:
        name, _, path = spec.partition("=")
        reports[name] = {r["id"]: r for r in json.loads(Path(path).read_text())["items"]}
    names = list(reports)
    for split in ("val", "test", "all"):
        ids = [i for i, o in items.items() if split == "all" or o.get("split") == split]
        groups: dict[str, list[str]] = {"all": ids}
        for i in ids:
            groups.setdefault(kind(items[i]), []).append(i)
        print(f"\n## split {split} ({len(ids)} questions)\n")
        head = "| kind | n | metric | " + " | ".join(names) + " |"
        print(head)
        print("|" + "---|" * (3 + len(names)))
        for group, gids in groups.items():
            for key, label in METRICS:
                cells = []
                for name in names:
                    values = [
                        reports[name][i]["metrics"].get(key)
                        for i in gids
                        if i in reports[name] and reports[name][i]["metrics"].get(key) is not None
                    ]
                    cells.append(mean([float(v) for v in values]))
                if any(c != "-" for c in cells):
                    print(f"| {group} | {len(gids)} | {label} | " + " | ".join(cells) + " |")
            cells = []
            for name in names:
                totals = [reports[name][i]["timings_ms"].get("total", 0) / 1000 for i in gids if i in reports[name]]
                texts = [
                    reports[name][i]["timings_ms"].get("first_text", 0) / 1000
                    for i in gids
                    if i in reports[name] and reports[name][i]["timings_ms"].get("first_text")
                ]
                first = f"{statistics.median(texts):.2f}" if texts else "-"
                cells.append(f"{pct(totals, 0.5):.1f} / {pct(totals, 0.95):.1f} s (text {first})")
            print(f"| {group} | {len(gids)} | total p50 / p95 | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
