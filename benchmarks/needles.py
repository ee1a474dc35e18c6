"""Recall@1/5/10 by question type for the frozen question sets on one or more indexes (issue 27, item 2).

For each ``--storage-dir`` (an index built with ``assistant ingest``: the 38 seeds alone, seeds + a 1k sample
of ../shared/corpus, seeds + the whole corpus), run ``evaluate_retrieval`` (no LLM) on each question file /
split, and print one Markdown table per set: rows = question type, columns = index, cells =
recall@1 / @5 / @10, plus retrieval latency p50 / p95 (ms). Gold ids missing from an index count as misses
(the 38-seed index has no corpus paper, so needles are skipped there unless ``--all``).

    .venv/bin/python benchmarks/needles.py --storage-dir /data/idx38 --storage-dir /data/idx10k \\
        --set eval/needles.jsonl:val --set eval/kept-seeds.jsonl:val --set eval/dev.jsonl --json out.json

``--set FILE[:SPLIT]``: a question file and optionally its split (``val`` / ``test``; eval/README.md). Test
splits are for final figures only: never tune on them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    """Run the sets on every index, print the tables; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--storage-dir", action="append", required=True, type=Path, help="an index (repeatable)")
    ap.add_argument("--set", action="append", required=True, dest="sets", help="FILE[:SPLIT] (repeatable)")
    ap.add_argument("--json", type=Path, help="write every report (per item) here")
    ap.add_argument("--all", action="store_true", help="also run sets whose gold papers are not all in an index")
    args = ap.parse_args(argv)

    from assistant.config import Settings
    from assistant.eval.evaluation import evaluate_retrieval, load_items
    from assistant.index.embeddings import build_embed_model
    from assistant.retrieve.retrieval import PaperRetriever

    ks = (1, 5, 10)
    sets = []
    for spec in args.sets:
        path, _, split = spec.partition(":")
        sets.append((spec, load_items(Path(path), split=split or None)))
    results: dict[str, dict[str, dict]] = {}
    for storage in args.storage_dir:
        settings = Settings().updated(storage_dir=storage)
        embed = build_embed_model(settings)
        t0 = time.perf_counter()
        retriever = PaperRetriever.open(settings, embed)
        n_papers = len(retriever.papers)
        label = f"{storage.name} ({n_papers:,} papers)"
        print(f"# {label}: opened in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        results[label] = {}
        for spec, items in sets:
            gold = {g for it in items for g in it.gold_ids}
            missing = gold - set(retriever.papers)
            if missing and len(missing) == len(gold) and not args.all:
                print(f"  {spec}: no gold paper in this index, skipped", file=sys.stderr)
                continue
            retriever.retrieve("warm up the retriever")  # first query loads lazily; not a measurement
            report = evaluate_retrieval(retriever, items, ks)
            report["missing_gold"] = sorted(missing)
            results[label][spec] = report
            o = report["overall"]
            print(
                f"  {spec}: n={o['n']} r@1 {o['recall@1']:.3f} r@5 {o['recall@5']:.3f} r@10 {o['recall@10']:.3f}"
                f" p50 {report['latency_ms']['retrieve']['p50']:.0f} ms",
                file=sys.stderr,
            )
    for spec, _ in sets:
        labels = [lab for lab in results if spec in results[lab]]
        if not labels:
            continue
        types = sorted({t for lab in labels for t in results[lab][spec]["by_type"]})
        print(f"\n**{spec}** — recall@1 / @5 / @10\n")
        print("| type | " + " | ".join(labels) + " |")
        print("|---|" + "---|" * len(labels))

        def cell(m: dict) -> str:
            if m.get("recall@1") is None:
                return "-"
            return f"{m['recall@1']:.2f} / {m['recall@5']:.2f} / {m['recall@10']:.2f} (n={m['n']})"

        for t in ["overall", *types]:
            row = []
            for lab in labels:
                rep = results[lab][spec]
                m = rep["overall"] if t == "overall" else rep["by_type"].get(t)
                row.append(cell(m) if m else "")
            print(f"| {t} | " + " | ".join(row) + " |")
        lat = [results[lab][spec]["latency_ms"]["retrieve"] for lab in labels]
        print("| retrieve p50 / p95 ms | " + " | ".join(f"{x['p50']:.0f} / {x['p95']:.0f}" for x in lat) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
