"""Retrieval latency (p50/p95) of dense, BM25 and fused retrieval at several corpus sizes, plus the
retriever's build time and the process RSS.

Corpora: the 38 real seed papers (embedded with MiniLM), and deterministic synthetic corpora of N
papers: each paper gets 8 windows of text sampled (seeded) from the seed abstracts' sentences and
*stored synthetic vectors* (seeded random unit vectors, not MiniLM embeddings: embedding 100k papers
would take hours on 2 cores). Queries are the dev questions, embedded for real. Not a test.

Usage: .venv/bin/python benchmarks/retrieval_latency.py [--sizes 1000,10000] [--queries 42]
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from assistant.offline import enforce_offline

WINDOWS_PER_PAPER = 8
DIM = 384


def _synthetic(settings, n_papers: int, sentences: list[str], embed_dims: int) -> None:  # type: ignore[no-untyped-def]
    from llama_index.core.schema import TextNode

    from assistant.store import PaperStore, StoreInfo
    from assistant.types import Paper

    rng = random.Random(n_papers)
    store = PaperStore.open_for_write(settings, StoreInfo(settings.embed_model, embed_dims, settings.window_sentences))
    batch_nodes, batch_papers = [], []

    def vec() -> list[float]:
        v = [rng.gauss(0, 1) for _ in range(embed_dims)]
        norm = sum(x * x for x in v) ** 0.5
        return [x / norm for x in v]

    for i in range(n_papers):
        pid = f"synthetic.txt#{i + 1}"
        body = [rng.choice(sentences) for _ in range(WINDOWS_PER_PAPER)]
        for j in range(WINDOWS_PER_PAPER):
            text = " ".join(body[max(0, j - 1): j + 2])
            batch_nodes.append(TextNode(id_=f"{pid}:{j:04d}", text=text, embedding=vec(),
                                        metadata={"paper_id": pid, "sentence": j, "content_hash": ""}))
        batch_papers.append(Paper(pid, "Synthetic", f"Synthetic paper {i + 1}", (), "", " ".join(body), "synthetic.txt", i + 1))
        if len(batch_nodes) >= 4000 or i == n_papers - 1:
            store.vector_store.add(batch_nodes)
            store.upsert_papers(batch_papers, ["x"] * len(batch_papers), [vec() for _ in batch_papers])
            batch_nodes, batch_papers = [], []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000", help="synthetic corpus sizes (papers), comma-separated")
    ap.add_argument("--queries", type=int, default=42)
    args = ap.parse_args()
    enforce_offline()
    import logging

    logging.basicConfig(level=logging.WARNING)
    from assistant.chunking import split_sentences
    from assistant.config import load_settings
    from assistant.corpus import read_papers
    from assistant.embeddings import build_embed_model
    from assistant.evaluation import load_items
    from assistant.ingest import ingest
    from assistant.retrieval import PaperRetriever

    base = load_settings()
    embed = build_embed_model(base)
    questions = [i.question for i in load_items(Path("eval/dev.jsonl"))][: args.queries]
    sentences = [s for p in read_papers([base.seeds_dir]) for s in split_sentences(p.text)]
    print("| papers | windows | mode | build s | p50 ms | p95 ms | RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    sizes = [38] + [int(x) for x in args.sizes.split(",") if x]
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(storage_dir=Path(tmp))
            if n == 38:
                ingest(settings, [settings.seeds_dir], embed, progress=False)
            else:
                _synthetic(settings, n, sentences, DIM)
            for mode in ("dense", "bm25", "fused"):
                s = load_settings(storage_dir=Path(tmp), retrieval_mode=mode)
                t0 = time.perf_counter()
                retriever = PaperRetriever.open(s, embed)
                build = time.perf_counter() - t0
                for q in questions[:3]:
                    retriever.retrieve(q)  # warm-up
                lat = []
                for q in questions:
                    t = time.perf_counter()
                    retriever.retrieve(q)
                    lat.append((time.perf_counter() - t) * 1000)
                lat.sort()
                p = lambda f: lat[min(len(lat) - 1, int(round(f * (len(lat) - 1))))]  # noqa: E731
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                windows = retriever._store.windows.count()
                print(f"| {n} | {windows} | {mode} | {build:.1f} | {p(.5):.0f} | {p(.95):.0f} | {rss:.0f} |", flush=True)
                del retriever
    return 0


if __name__ == "__main__":
    sys.exit(main())
