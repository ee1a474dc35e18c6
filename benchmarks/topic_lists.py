"""Topic lists against exhaustive gold lists (issue 45): list precision, recall, empty answers, latency.

Each question of a topic set (``eval/topics-1.jsonl``: ``scope`` "seeds" or "slice-1k") is asked of an index of its
scope, the whole list on one page (``Page(0, 200)``), as ``assistant ask`` asks it. Per question: the listed paper
ids (the answer's citations) against ``gold_ids``; the candidate recall (gold papers among the retriever's
``answer.topic_candidates`` for the topic, which bounds the list's recall); whether the answer text is empty;
seconds. Prints the means by split and kind, and writes every answer to ``--json``.

    .venv/bin/python benchmarks/topic_lists.py --scope seeds --storage-dir storage --json build/topics-seeds.json
    .venv/bin/python benchmarks/corpus_slice.py build/slice-1k.jsonl
    .venv/bin/assistant ingest --storage-dir build/slice-1k-index build/slice-1k.jsonl
    .venv/bin/python benchmarks/topic_lists.py --scope slice-1k --storage-dir build/slice-1k-index

Only ``--split val`` may be looked at while changing anything; the test split is reported once, after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, default=REPO / "eval" / "topics-1.jsonl")
    ap.add_argument("--scope", required=True, choices=["seeds", "slice-1k"])
    ap.add_argument("--storage-dir", type=Path, required=True)
    ap.add_argument("--split", choices=["val", "test", "all"], default="all")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from assistant.config import Settings
    from assistant.service import build_assistant
    from assistant.types import Page
    from assistant.understand.intents import topic_query

    items = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    items = [it for it in items if it.get("scope") == args.scope and args.split in ("all", it["split"])]
    settings = Settings().updated(storage_dir=args.storage_dir)
    a = settings.answer
    rows = []
    with build_assistant(settings, start_llm=False) as assistant:
        assistant.ask("warm-up: which papers are about graphs?", page=Page(0, 5))
        for it in items:
            t0 = time.perf_counter()
            ans = assistant.ask(it["question"], page=Page(0, 200))
            secs = time.perf_counter() - t0
            listed = list(dict.fromkeys(c.paper.id for c in ans.citations))
            if ans.listing is not None and ans.listing.total == 0:  # the near papers it left out, not a list
                listed = []
            gold = set(it["gold_ids"])
            cands = assistant.retriever.retrieve(topic_query(it["question"]), top_k=a.topic_candidates,
                                                 candidate_k=a.topic_candidate_windows)
            kind = (re.match(r"\[kind: (\w+)\]", it.get("notes", "")) or [None, "?"])[1]
            rows.append({
                "id": it["id"], "split": it["split"], "kind": kind, "question": it["question"],
                "intent": ans.intent, "listed": listed, "gold": sorted(gold),
                "precision": len(gold & set(listed)) / len(listed) if listed else 0.0,
                "recall": len(gold & set(listed)) / len(gold),
                "candidate_recall": len(gold & {h.paper.id for h in cands}) / len(gold),
                "empty_text": not ans.text.strip(), "seconds": round(secs, 3),
                "total": ans.listing.total if ans.listing else None,
            })
            print(f"{it['id']} {it['split']:4} P {rows[-1]['precision']:.2f} R {rows[-1]['recall']:.2f} "
                  f"cand {rows[-1]['candidate_recall']:.2f} n {len(listed):2} gold {len(gold):2} {secs:.2f}s "
                  f"{ans.intent}", flush=True)

    def show(label: str, part: list[dict]) -> None:
        if not part:
            return
        secs = sorted(r["seconds"] for r in part)
        p95 = secs[min(len(secs) - 1, round(0.95 * (len(secs) - 1)))]
        print(f"{label:14} n {len(part):2}  precision {statistics.mean(r['precision'] for r in part):.3f}  "
              f"recall {statistics.mean(r['recall'] for r in part):.3f}  "
              f"candidate recall {statistics.mean(r['candidate_recall'] for r in part):.3f}  "
              f"empty {sum(r['empty_text'] for r in part)}  p50 {statistics.median(secs):.2f}s  p95 {p95:.2f}s")

    print(f"\nscope {args.scope}, load {os.getloadavg()[0]:.2f}")
    for split in ("val", "test"):
        show(split, [r for r in rows if r["split"] == split])
    show("all", rows)
    for kind in sorted({r["kind"] for r in rows}):
        show(f"  {kind}", [r for r in rows if r["kind"] == kind])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
