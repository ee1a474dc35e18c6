"""Ingest throughput end to end (papers/s and windows/s, fresh index) next to the raw throughput of the
same embedding model on the same texts the ingest embeds (every sentence and every title once), with the
same runtime and batch size. The ratio ingest/raw is the figure (target >= 0.8), and the embedding work
``embedded_tokens / corpus_tokens`` of the ingest report (target <= 1.5). Also prints peak RSS. Not a test.

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
    from assistant.config import load_settings
    from assistant.index.embeddings import build_embed_model
    from assistant.ingest.corpus import read_papers
    from assistant.ingest.pipeline import ingest
    from assistant.lang.text import split_sentences

    settings = load_settings()
    paths = [Path(p) for p in sys.argv[1:]] or [settings.storage.seeds_dir]
    papers = read_papers(paths)
    texts = [s for p in papers for s in split_sentences(p.text)] + [p.title for p in papers]

    embed = build_embed_model(settings)  # the configured runtime (ONNX by default)
    embed.get_text_embedding_batch(texts[:64])  # warm-up
    t0 = time.perf_counter()
    for b in range(0, len(texts), settings.embedding.batch_size):
        embed.get_text_embedding_batch(texts[b: b + settings.embedding.batch_size])
    raw_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        s = load_settings(storage_dir=Path(tmp))
        t0 = time.perf_counter()
        report = ingest(s, paths, embed, progress=False)
        ingest_s = time.perf_counter() - t0
    print(f"{len(papers)} papers, {report.windows} windows, {len(texts)} texts embedded (sentences + titles), batch "
          f"{settings.embedding.batch_size}")
    print(f"raw encode : {raw_s:6.1f} s  {len(texts) / raw_s:6.1f} texts/s  {len(papers) / raw_s:6.2f} papers/s")
    print(f"ingest     : {ingest_s:6.1f} s  {report.windows / ingest_s:6.1f} windows/s  "
          f"{report.papers / ingest_s:6.2f} papers/s "
          "(parse, split, embed, Chroma writes, paper records)")
    print(f"embedding work: {report.embedded_tokens} / {report.corpus_tokens} word pieces = "
          f"{report.embedded_tokens / report.corpus_tokens:.2f}")
    print(f"ratio ingest/raw: {raw_s / ingest_s:.2f}   peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
