"""Build scripts/training-data/stated.jsonl for the "stated" model (assistant/answer/extractive.py
``stated_probability``): does a paper's abstract state what a question about it asks?

Data (written by annotator sessions that never saw the code, about 150 real abstracts: ML papers of
../shared/corpus and CORD-19 abstracts of Check-COVID):
* stated: the questions of scripts/training-data/answer-questions.jsonl (each answered by a sentence of its
  abstract);
* not stated: scripts/training-data/unanswerable-questions.jsonl (details the abstract does not give: hardware,
  learning rates, unmentioned extensions, numbers and names it leaves out, comparisons it never makes).
Each question is scored against its own paper as the answer path does (retriever.hits_for, then
verify.answerable.answerability with the bundled embedding model).

Usage: ``.venv/bin/python scripts/stated_features.py --index IDX10K --covid-index CC_IDX`` (the indexes of
scripts/answer_sentence_features.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.answer.extractive import STATED_FEATURES, stated_features  # noqa: E402
from assistant.config import Settings  # noqa: E402
from assistant.index.embeddings import CachedEmbedder, build_embed_model  # noqa: E402
from assistant.retrieve.retrieval import PaperRetriever  # noqa: E402
from assistant.understand.question import analyze  # noqa: E402
from assistant.verify.answerable import answerability  # noqa: E402

DATA = REPO / "scripts" / "training-data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument("--covid-index", required=True)
    args = ap.parse_args()
    model = build_embed_model(Settings())
    embed = CachedEmbedder(model)
    retrievers = [PaperRetriever.open(Settings().updated(storage_dir=d), model) for d in (args.index, args.covid_index)]
    rows = []
    for name, label in (("answer-questions.jsonl", 1), ("unanswerable-questions.jsonl", 0)):
        for line in (DATA / name).read_text().splitlines():
            q = json.loads(line)
            r = next((r for r in retrievers if q["doc_id"] in r.papers), None)
            if r is None:
                continue
            hits = r.hits_for(q["question"], [q["doc_id"]])
            if not hits:
                continue
            facts = analyze(q["question"])
            verdict = answerability(q["question"], facts, hits, embed)
            feats = stated_features(q["question"], facts, hits, verdict)
            rows.append(
                {
                    "question": q["question"],
                    "doc_id": q["doc_id"],
                    "stated": label,
                    "kind": q.get("kind", ""),
                    "features": dict(zip(STATED_FEATURES, (round(float(v), 5) for v in feats))),
                }
            )
    (DATA / "stated.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"wrote {len(rows)} rows")


if __name__ == "__main__":
    main()
