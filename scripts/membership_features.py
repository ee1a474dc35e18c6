"""The membership features (scripts/membership_model.py FEATURES) of every labelled pair of
``scripts/training-data/membership.jsonl.gz``, computed by the product's own retriever over an index of the training
pool, so the combined decision is fitted on exactly what it reads at run time.

For each topic: the question as typed loses its frame (``intents.topic_query``), the retriever's
``answer.topic_candidates`` candidates are fetched as a listing fetches them, the labelled papers it did not fetch
are added (``PaperRetriever.hits_for``), and :func:`membership_features` is computed over them all.

    .venv/bin/python benchmarks/corpus_slice.py ...   # (the pool: scripts/topic_membership_data.py pool())
    .venv/bin/python scripts/membership_features.py build/pool-index build/membership-features.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()

    from membership_model import FEATURES, membership_features

    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.understand.intents import topic_query

    settings = Settings().updated(storage_dir=args.index)
    retriever = PaperRetriever.open(settings, build_embed_model(settings))
    a = settings.answer
    from membership_model import read_labelled

    rows = read_labelled()
    by_topic: dict[str, list[dict]] = {}
    for r in rows:
        by_topic.setdefault(r["topic_id"], []).append(r)
    done = 0
    with args.out.open("w") as f:
        for n, (tid, pairs) in enumerate(by_topic.items(), start=1):
            query = topic_query(pairs[0]["request"])
            hits = retriever.retrieve(query, top_k=a.topic_candidates, candidate_k=a.topic_candidate_windows)
            have = {h.paper.id for h in hits}
            hits += retriever.hits_for(query, [r["paper_id"] for r in pairs if r["paper_id"] not in have])
            feats = membership_features(query, hits)
            index = {h.paper.id: i for i, h in enumerate(hits)}
            for r in pairs:
                if r["paper_id"] not in index:
                    continue
                i = index[r["paper_id"]]
                f.write(json.dumps({"pair_id": r["pair_id"], "topic_id": tid, "member": r["member"],
                                    "fetched": r["paper_id"] in have,
                                    "features": dict(zip(FEATURES, (round(float(v), 5) for v in feats[i])))}) + "\n")
                done += 1
            print(f"  {n}/{len(by_topic)} {query[:60]!r}: {len(pairs)} pairs", file=sys.stderr, flush=True)
    print(f"{done} of {len(rows)} pairs -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
