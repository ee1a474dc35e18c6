"""Embedding runtime: ONNX (onnxruntime, assistant/index/onnx_embedding.py) vs torch (sentence-transformers via
llama-index ``HuggingFaceEmbedding``), same bundled MiniLM. Prints, per runtime:

* cold start in a fresh process: importing llama-index's embedding base (shared by both), importing the
  runtime's class, loading the model, the first query; and the whole process's wall time;
* single-query latency (p50/p95 ms) over the dev questions after 5 warm-up queries, optionally with one
  core kept busy by a spinning process (``--busy``: as when the bundled LLM server decodes);
* batch throughput over the seed sentence windows (what ``ingest`` embeds), batch 64: texts per second
  of wall time, and texts per CPU-second of the process (all its threads; steadier on a shared machine).

Each measurement runs in its own subprocess so that one runtime's threads or imports never affect the
other. Needs a valid ONNX export (``scripts/setup.sh`` writes it; otherwise it is made first and its
time printed). Not a test.

Usage: .venv/bin/python benchmarks/embedding_runtime.py [--threads 2] [--runs 3] [--busy]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from assistant.offline import enforce_offline

REPO = Path(__file__).resolve().parent.parent

COLD = """
import json, sys, time
t0 = time.perf_counter()
import llama_index.core.base.embeddings.base
t1 = time.perf_counter()
from assistant.config import load_settings
from assistant.index.embeddings import resolve_model_path
s = load_settings()
path = resolve_model_path(s.embedding.model)
if sys.argv[1] == "onnx":
    from assistant.index.onnx_embedding import OnnxEmbedding, export_dir
    t2 = time.perf_counter()
    m = OnnxEmbedding(export_dir(path, s.embedding.model_cache_dir), threads=int(sys.argv[2]))
else:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    t2 = time.perf_counter()
    m = HuggingFaceEmbedding(model_name=str(path), device="cpu", normalize=True)
t3 = time.perf_counter()
m.get_query_embedding("Which paper scales graph transformers to large graphs?")
t4 = time.perf_counter()
print(json.dumps({"llama_index": t1 - t0, "import": t2 - t1, "load": t3 - t2, "first_query": t4 - t3}))
"""


def _worker(runtime: str, threads: int, questions: list[str], texts: list[str], busy: bool) -> dict[str, float]:
    """Latency and throughput of one runtime, in this (fresh) process."""
    from assistant.config import load_settings
    from assistant.index.embeddings import resolve_model_path

    settings = load_settings()
    path = resolve_model_path(settings.embedding.model)
    if runtime == "onnx":
        from assistant.index.onnx_embedding import OnnxEmbedding, export_dir

        model = OnnxEmbedding(
            export_dir(path, settings.embedding.model_cache_dir), threads=threads, embed_batch_size=64
        )
    else:
        import torch
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding

        torch.set_num_threads(threads)
        model = HuggingFaceEmbedding(model_name=str(path), device="cpu", normalize=True, embed_batch_size=64)
    for q in questions[:5]:
        model.get_query_embedding(q)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        times = []
        for q in questions:
            t0 = time.perf_counter()
            model.get_query_embedding(q)
            times.append(time.perf_counter() - t0)
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
    times.sort()
    model.get_text_embedding_batch(texts[:64])  # warm-up
    passes, cpu = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        model.get_text_embedding_batch(texts)
        passes.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"p50_ms": 1000 * statistics.median(times), "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
            "texts_per_s": len(texts) / statistics.median(passes),
            "texts_per_cpu_s": len(texts) / statistics.median(cpu)}


def _inputs() -> tuple[list[str], list[str]]:
    from assistant.config import load_settings
    from assistant.ingest.chunking import make_windows, split_sentences
    from assistant.ingest.corpus import read_papers

    settings = load_settings()
    questions = [
        q
        for line in (REPO / "eval" / "dev.jsonl").read_text().splitlines()
        if line.strip()
        if (q := json.loads(line).get("question"))
    ]
    papers = read_papers([settings.storage.seeds_dir])
    texts = [
        w.text for p in papers for w in make_windows(p, split_sentences(p.text), settings.storage.window_sentences)
    ]
    return questions, texts


def main() -> int:
    enforce_offline()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2,
                    help="threads of both runtimes (onnx intra-op; torch.set_num_threads)")
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per runtime for the cold start (median)")
    ap.add_argument("--busy", action="store_true", help="keep one core busy during the latency measurement")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    questions, texts = _inputs()
    if args.worker:
        print(json.dumps(_worker(args.worker, args.threads, questions, texts, args.busy)))
        return 0

    from assistant.config import load_settings
    from assistant.index.embeddings import resolve_model_path
    from assistant.index.onnx_embedding import ensure_export, read_valid_export

    settings = load_settings()
    path = resolve_model_path(settings.embedding.model)
    if read_valid_export(path, settings.embedding.model_cache_dir) is None:
        t0 = time.perf_counter()
        ensure_export(path, settings.embedding.model_cache_dir)
        print(f"one-time ONNX export: {time.perf_counter() - t0:.1f} s (in-process, torch imported)")

    print(f"load average {os.getloadavg()[0]:.2f} (before); {settings.embedding.model}, {args.threads} threads, "
          f"{len(questions)} queries, {len(texts)} windows, batch 64"
          + (", one core busy during the latency runs" if args.busy else ""))
    print("| runtime | llama-index import s | runtime import s | model load s | first query ms | process wall s "
          "| query p50 ms | query p95 ms | batch texts/s | batch texts/CPU-s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for runtime in ("onnx", "torch"):
        cold = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", COLD, runtime, str(args.threads)], capture_output=True,
                                 text=True,
                                 check=True)
            cold.append({**json.loads(out.stdout.strip().splitlines()[-1]), "wall": time.perf_counter() - t0})
        c = {k: statistics.median(r[k] for r in cold) for k in cold[0]}
        cmd = [sys.executable, __file__, "--worker", runtime, "--threads",
               str(args.threads)] + (["--busy"] if args.busy else [])
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        w = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {runtime} | {c['llama_index']:.2f} | {c['import']:.2f} | {c['load']:.2f} | "
              f"{1000 * c['first_query']:.0f} "
              f"| {c['wall']:.2f} | {w['p50_ms']:.1f} | {w['p95_ms']:.1f} | {w['texts_per_s']:.1f} | "
              f"{w['texts_per_cpu_s']:.1f} |")
    print(f"load average {os.getloadavg()[0]:.2f} (after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
