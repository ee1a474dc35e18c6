"""Issue 44 item 5: venue and year words in a question narrow the search for one paper ("the ICML 2024 paper
about ...").

Set: the frozen ``eval/descriptions-1.jsonl`` (120 descriptions of real corpus papers written blind, 30 per venue;
each row's ``venue`` is its corpus file), each asked three ways over one index that holds the whole corpus:

* ``plain``: the description as written, searched as the product searches a lookup;
* ``venue words, not narrowed``: the description with its conference and year ("the ICML 2024 paper: ..."), searched
  for as text (the search before this change: ``retrieve(aspects=True)``);
* ``venue words, narrowed``: the same question through ``strategy.one_paper_search`` (the search now).

Nothing here was fitted: the narrowing is an exact rule (the venue words are read from the index), so val and test
are both reported. Prints recall@1 / @5 / @20 and search ms p50 / p95 per split, and per venue for the narrowed run.

Usage: ``.venv/bin/python benchmarks/venue_narrowing.py --storage-dir build/pool-index [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: corpus file stem -> how a researcher names its conference.
VENUES = {"iclr2024": "ICLR 2024", "iclr2025": "ICLR 2025", "icml2024": "ICML 2024", "neurips2024": "NeurIPS 2024"}
KS = (1, 5, 20)


def phrased(question: str, venue: str) -> str:
    """The description with its venue named as a researcher would."""
    return f"the {venue} paper: {question}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--storage-dir", type=Path, required=True)
    ap.add_argument("--json", type=Path, help="per-item ranks")
    args = ap.parse_args()

    from assistant.answer.strategy import one_paper_search
    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model
    from assistant.retrieve.retrieval import PaperRetriever

    settings = Settings().updated(storage_dir=args.storage_dir)
    retriever = PaperRetriever.open(settings, build_embed_model(settings))
    items = [json.loads(line) for line in (REPO / "eval" / "descriptions-1.jsonl").read_text().splitlines() if line]
    missing = [i["id"] for i in items if not all(g in retriever.papers for g in i["gold_ids"])]
    if missing:
        print(f"gold papers not in {args.storage_dir}: {missing}", file=sys.stderr)
        return 1

    def rank(run: str, item: dict) -> tuple[int | None, float]:
        q = item["question"]
        named = phrased(q, VENUES[item["venue"]])
        t0 = time.perf_counter()
        if run == "plain":
            hits = one_paper_search(retriever, q, q, top_k=max(KS))
        elif run == "venue words, not narrowed":
            hits = retriever.retrieve(named, max(KS), aspects=True)
        else:
            hits = one_paper_search(retriever, named, named, top_k=max(KS))
        ms = (time.perf_counter() - t0) * 1000
        ids = [h.paper.id for h in hits]
        gold = item["gold_ids"][0]
        return (ids.index(gold) + 1 if gold in ids else None), ms

    runs = ("plain", "venue words, not narrowed", "venue words, narrowed")
    rows = []
    for item in items:
        for run in runs:
            r, ms = rank(run, item)
            rows.append({"id": item["id"], "split": item["split"], "venue": item["venue"], "kind": item.get("kind"),
                         "run": run, "rank": r, "ms": round(ms, 1)})

    def line(part: list[dict]) -> str:
        rec = " / ".join(f"{sum(1 for x in part if x['rank'] and x['rank'] <= k) / len(part):.2f}" for k in KS)
        ms = sorted(x["ms"] for x in part)
        p50, p95 = statistics.median(ms), ms[int(0.95 * len(ms))]
        return f"n {len(part):3d}  recall@1/5/20 {rec}  ms p50 {p50:.0f} p95 {p95:.0f}"

    for split in ("val", "test"):
        print(f"\ndescriptions-1 {split}")
        for run in runs:
            print(f"  {run:28s} {line([x for x in rows if x['split'] == split and x['run'] == run])}")
    print("\nnarrowed, both splits, by venue")
    for venue in VENUES:
        part = [x for x in rows if x["venue"] == venue]
        print(f"  {venue:12s} not narrowed {line([x for x in part if x['run'] == runs[1]])}")
        print(f"  {'':12s} narrowed     {line([x for x in part if x['run'] == runs[2]])}")
    if args.json:
        args.json.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
