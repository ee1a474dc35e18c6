#!/usr/bin/env bash
# Run every benchmark in sequence (each prints its own table). Needs the index: `assistant ingest` first.
# The load test needs a running UI: pass its URL as $1 to include it (e.g. http://127.0.0.1:7860/).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
echo "== answer latency (dev questions)"; $PY benchmarks/answer_latency.py --questions eval/dev.jsonl --limit 42
echo "== scale: 38, 1k, 12k, 100k papers (start-up, fused retrieval, RSS, index size)"; $PY benchmarks/scale.py --sizes 38,1000,12000,100000 --keep "${BENCH_DIR:-/tmp/assistant-bench}"
echo "== real-embedding ingest of 12k abstracts, SIGKILL halfway, resume"; $PY benchmarks/scale.py real-ingest --papers 12000
echo "== ingest throughput and embedding work"; $PY benchmarks/ingest_throughput.py
echo "== embedding runtime (onnx vs torch)"; $PY benchmarks/embedding_runtime.py
echo "== ablations"; $PY benchmarks/ablation.py --questions eval/dev.jsonl
echo "== scale-out pieces"; $PY benchmarks/scale_out.py
if [ $# -ge 1 ]; then echo "== load test"; $PY benchmarks/load_test.py --url "$1" --conversations 8 --seconds 120; fi
