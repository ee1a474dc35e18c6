"""Rebuild scripts/training-data/topic-membership.jsonl: the labelled (topic, paper) pairs with their features
(assistant/understand/learned.py topic_features) computed by the retriever over an index of the whole corpus.

The labels (40 topic requests; per topic the top 25 candidates and 16 sampled from ranks 26-300, judged by four
annotator sessions that never saw the code) are read from the existing file, so only the features are recomputed
(run it after changing ``topic_features``, then ``scripts/train_understanding.py topic``).

Usage: ``.venv/bin/python scripts/topic_membership_features.py INDEX_DIR`` where INDEX_DIR holds an index of
``../shared/corpus`` (``assistant ingest ../shared/corpus --storage-dir INDEX_DIR``, ~25 min).
"""

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from assistant.config import Settings  # noqa: E402
from assistant.index.embeddings import build_embed_model  # noqa: E402
from assistant.retrieve.retrieval import PaperRetriever  # noqa: E402
from assistant.understand.intents import topic_query  # noqa: E402
from assistant.understand.learned import TOPIC_FEATURES, topic_features  # noqa: E402

DATA = REPO / "scripts" / "training-data" / "topic-membership.jsonl"
if len(sys.argv) != 2:
    sys.exit(__doc__)
s = Settings().updated(storage_dir=sys.argv[1])
r = PaperRetriever.open(s, build_embed_model(s))
labels: dict[str, dict[str, tuple[int, str, str]]] = {}
for line in DATA.read_text().splitlines():
    o = json.loads(line)
    labels.setdefault(o["topic"], {})[o["paper_id"]] = (o["member"], o["annotator"], o["band"])
rows = []
for topic, lab in labels.items():
    q = topic_query(topic)
    hits = r.retrieve(q, top_k=300, candidate_k=400)
    feats = topic_features(q, hits)
    for rank, (h, f) in enumerate(zip(hits, feats)):
        if h.paper.id in lab:
            m, part, band = lab[h.paper.id]
            rows.append(
                {
                    "topic": topic,
                    "query": q,
                    "paper_id": h.paper.id,
                    "title": h.paper.title,
                    "rank": rank + 1,
                    "band": band,
                    "member": m,
                    "annotator": part,
                    "features": dict(zip(TOPIC_FEATURES, (round(float(v), 5) for v in f))),
                }
            )
    print(topic, sum(1 for x in rows if x["topic"] == topic), "of", len(lab), flush=True)
DATA.write_text("".join(json.dumps(x) + "\n" for x in rows))
