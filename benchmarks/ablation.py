"""Retrieval and abstention ablations on a question file, without the LLM (seconds per variant).

For each variant (settings overrides) it ingests the seeds into that variant's collection if needed
(idempotent), ranks papers for every item (follow-ups: last turn + earlier turns, as in
``assistant eval --retrieval-only``), and applies the answerer's abstention test. Prints a Markdown
table: recall@1/3/5/10, abstention accuracy on unanswerable items, false abstention on the others.

Usage: .venv/bin/python benchmarks/ablation.py [--questions eval/dev.jsonl]   (also eval/test.jsonl: held-out)
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from assistant.offline import enforce_offline


def default_label() -> str:
    """The default row's label, from the code's defaults (tests/unit/test_docs.py checks docs/ablation.md)."""
    from assistant.config import Settings

    d = Settings.model_construct()
    return (f"default: {d.retrieval.mode}, {d.storage.window_sentences}-sentence windows, "
            f"min_similarity {d.retrieval.min_similarity:g}")


VARIANTS: list[tuple[str, dict[str, object]]] = [
    ("default", {}),
    ("dense only", {"retrieval_mode": "dense"}),
    ("BM25 only", {"retrieval_mode": "bm25"}),
    ("1-sentence windows", {"window_sentences": 1}),
    ("5-sentence windows", {"window_sentences": 5}),
    ("min_similarity 0.20", {"min_similarity": 0.20}),
    ("min_similarity 0.35", {"min_similarity": 0.35}),
    ("candidate_k 20", {"candidate_k": 20}),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--questions", type=Path, default=Path("eval/dev.jsonl"))
    args = ap.parse_args()
    enforce_offline()
    logging.basicConfig(level=logging.WARNING)
    from assistant.answer.answerer import abstains
    from assistant.config import load_settings
    from assistant.eval.evaluation import load_items, retrieval_only_query
    from assistant.eval.metrics import recall_at_k
    from assistant.index.embeddings import CachedEmbedder, build_embed_model
    from assistant.ingest.pipeline import ingest
    from assistant.retrieve.retrieval import PaperRetriever

    items = load_items(args.questions)
    embed = build_embed_model(load_settings())
    print("| variant | recall@1 | recall@3 | recall@5 | recall@10 | abstention acc. | false abstention |")
    print("|---|---|---|---|---|---|---|")
    for name, overrides in VARIANTS:
        name = default_label() if name == "default" else name
        settings = load_settings(**overrides)
        ingest(settings, [settings.storage.seeds_dir], embed, progress=False)
        embedder = CachedEmbedder(embed)
        retriever = PaperRetriever.open(settings, embed, sentence_embedder=embedder)
        recalls: dict[int, list[float | None]] = {k: [] for k in (1, 3, 5, 10)}
        abstain_ok, false_abstain = [], []
        for item in items:
            query = retrieval_only_query(item)
            hits = retriever.retrieve(query, top_k=10)
            ids = [h.paper.id for h in hits]
            abstained = abstains(retriever, settings.retrieval.min_similarity, query, hits[: settings.retrieval.top_k])
            if item.gold_ids:
                for k in recalls:
                    recalls[k].append(recall_at_k(item.gold_ids, ids, k))
                false_abstain.append(abstained)
            else:
                abstain_ok.append(abstained)
        mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
        print(f"| {name} | " + " | ".join(f"{mean(recalls[k]):.3f}" for k in (1, 3, 5, 10))
              + f" | {mean(abstain_ok):.2f} | {mean(false_abstain):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
