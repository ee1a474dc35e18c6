"""Process-wide switches that keep every library offline (docs/offline-stack.md, "Network traps").

Called by entry points (CLI, UI, tests) before heavy imports; importing this module changes nothing.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",  # huggingface_hub: never contact the hub
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",  # gradio_client telemetry
    "HF_DATASETS_OFFLINE": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",  # gradio analytics / version check
    "ANONYMIZED_TELEMETRY": "False",  # chromadb posthog telemetry
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # no "Loading weights" bars on every command
    "TRANSFORMERS_VERBOSITY": "error",
    # onnxruntime >= 1.2x ships a 1DS telemetry client in its native library that resolves
    # mobile.events.data.microsoft.com from a background thread (also on Linux, also for a bare
    # InferenceSession); only this variable, read when the library starts, stops it:
    # onnxruntime.disable_telemetry_events() after import leaves the lookups in place (measured, 1.32.0).
    "ORT_DISABLE_TELEMETRY": "1",
}


def enforce_offline() -> None:
    """Set the env vars above (unless already set), point tiktoken at llama-index's bundled cache, and switch
    off onnxruntime's telemetry events when it is already imported (the variable covers a later import)."""
    import sys

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    ort = sys.modules.get("onnxruntime")
    if ort is not None and hasattr(ort, "disable_telemetry_events"):
        ort.disable_telemetry_events()
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        spec = find_spec("llama_index.core")
        if spec and spec.submodule_search_locations:
            cache = Path(next(iter(spec.submodule_search_locations))) / "_static" / "tiktoken_cache"
            if cache.is_dir():
                os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
