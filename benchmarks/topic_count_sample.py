"""Topic lists at conference scale against a labelled sample (issue 45 item 3: "the count measured against a
labelled sample").

The sample: ``scripts/training-data/membership.jsonl.gz``'s pairs of the 160 training topics (``tr*``), each topic's
top 30 and 10 random ranks 31-300 of a BM25 + MiniLM ranking of the training pool (the corpus without the seeds
and the 1k test slice, 8,884 papers), labelled by annotator sessions that saw no code. The shipped list decision
never trained on them (its classifier was fitted on the 1,625 older pairs), so they measure it.

For each topic the request is asked as a topic list (``intent="topic"``, the whole list on one page) of an index of
that pool, and compared with the labels:

* precision: listed papers labelled members / listed papers that carry a label;
* recall of the top 30: labelled members of the sample's top 30 that are listed;
* the count: the list's total beside the sample's estimate of the members in the top 300 (the top 30's members +
  the deep sample's member rate x 270).

    .venv/bin/python benchmarks/topic_count_sample.py build/pool-index [--limit N] [--json OUT]

(The pool index: ``scripts/topic_membership_data.py`` ``pool()`` written as JSONL, then ``assistant ingest``.)
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
sys.path.insert(0, str(REPO / "scripts"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from assistant.config import Settings
    from assistant.service import build_assistant
    from assistant.types import Page

    by_topic: dict[str, list[dict]] = {}
    from membership_model import read_labelled

    for r in read_labelled():
        if r["topic_id"].startswith("tr"):
            by_topic.setdefault(r["topic_id"], []).append(r)
    topics = sorted(by_topic)[: args.limit or None]
    out = []
    with build_assistant(Settings().updated(storage_dir=args.index), start_llm=False) as assistant:
        for tid in topics:
            pairs = by_topic[tid]
            t0 = time.perf_counter()
            ans = assistant.ask(pairs[0]["request"], intent="topic", page=Page(0, 300))
            secs = time.perf_counter() - t0
            listed = {c.paper.id for c in ans.citations}
            if ans.listing is not None and ans.listing.total == 0:
                listed = set()
            label = {r["paper_id"]: r["member"] for r in pairs}
            top = [r for r in pairs if r["rank"] <= 30]
            deep = [r for r in pairs if r["rank"] > 30]
            labelled = [p for p in listed if p in label]
            top_members = [r["paper_id"] for r in top if r["member"]]
            estimate = len(top_members) + (sum(r["member"] for r in deep) / len(deep) * 270 if deep else 0.0)
            out.append({
                "topic_id": tid, "request": pairs[0]["request"], "total": ans.listing.total if ans.listing else 0,
                "precision": sum(label[p] for p in labelled) / len(labelled) if labelled else None,
                "top30_recall": sum(p in listed for p in top_members) / len(top_members) if top_members else None,
                "estimated_members_top300": round(estimate, 1), "seconds": round(secs, 3),
            })
    prec = [r["precision"] for r in out if r["precision"] is not None]
    rec = [r["top30_recall"] for r in out if r["top30_recall"] is not None]
    times = sorted(r["seconds"] for r in out)
    under = sum(r["total"] < 0.5 * r["estimated_members_top300"] for r in out)
    estimated = statistics.median(r["estimated_members_top300"] for r in out)
    print(f"{len(out)} topics over {args.index}: precision {statistics.mean(prec):.3f} (labelled listed papers), "
          f"top-30 recall {statistics.mean(rec):.3f}; listed total median {statistics.median(r['total'] for r in out)} "
          f"vs estimated members in the top 300 median {estimated}; "
          f"lists under half the estimate: {under}; p50 {statistics.median(times):.2f} s, "
          f"p95 {times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]:.2f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
