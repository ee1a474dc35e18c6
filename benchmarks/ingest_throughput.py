"""Ingest throughput end to end (papers/s and windows/s, fresh index) next to the raw throughput of the
same embedding model on the same window texts (sentence-transformers ``encode``, same batch size).
The ratio ingest/raw is the figure (target >= 0.8). Also prints peak RSS. Not a test.

Usage: .venv/bin/python benchmarks/ingest_throughput.py [PATH ...]   (default: the seeds)
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

from assistant.offline import enforce_offline


def main() -> int:
    enforce_offline()
    import logging

    logging.basicConfig(level=logging.WARNING)
    from sentence_transformers import SentenceTransformer

    from assistant.chunking import make_windows, split_sentences
    from assistant.config import load_settings
    from assistant.corpus import read_papers
    from assistant.embeddings import build_embed_model, resolve_model_path
    from assistant.ingest import ingest

    settings = load_settings()
    paths = [Path(p) for p in sys.argv[1:]] or [settings.seeds_dir]
    papers = read_papers(paths)
    texts = [w.text for p in papers for w in make_windows(p, split_sentences(p.text), settings.window_sentences)]

    raw_model = SentenceTransformer(str(resolve_model_path(settings.embed_model)), device="cpu")
    raw_model.encode(texts[:64], batch_size=settings.embed_batch_size)  # warm-up
    t0 = time.perf_counter()
    raw_model.encode(texts, batch_size=settings.embed_batch_size, normalize_embeddings=True)
    raw_s = time.perf_counter() - t0

    embed = build_embed_model(settings)
    embed.get_text_embedding_batch(texts[:64])  # same warm-up
    with tempfile.TemporaryDirectory() as tmp:
        s = load_settings(storage_dir=Path(tmp))
        t0 = time.perf_counter()
        report = ingest(s, paths, embed, progress=False)
        ingest_s = time.perf_counter() - t0
    print(f"{len(papers)} papers, {len(texts)} windows, batch {settings.embed_batch_size}")
    print(f"raw encode : {raw_s:6.1f} s  {len(texts) / raw_s:6.1f} windows/s  {len(papers) / raw_s:6.2f} papers/s")
    print(f"ingest     : {ingest_s:6.1f} s  {report.windows / ingest_s:6.1f} windows/s  {report.papers / ingest_s:6.2f} papers/s "
          "(parse, split, embed, Chroma writes, paper records)")
    print(f"ratio ingest/raw: {raw_s / ingest_s:.2f}   peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
