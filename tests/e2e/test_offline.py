"""Ingest, ask (bundled model) and the UI answering a question, run in a network namespace with no route out
(only ``lo`` up) and traced with ``strace -f``: everything works and no process — Python or native code
(onnxruntime, Chroma's Rust core, llama.cpp) — sends a DNS query or tries a non-loopback connection.

The Python-level guard (tests/support/netguard) is loaded too: it names the Python caller of an attempt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from assistant.llm.local import free_port
from tests.support import nettrace

REPO = Path(__file__).resolve().parents[2]
GUARD = REPO / "tests" / "support" / "netguard"
CLEAN_ENV_KEYS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "GRADIO_ANALYTICS_ENABLED",
                  "ANONYMIZED_TELEMETRY", "TIKTOKEN_CACHE_DIR", "ASSISTANT_LLM_BASE_URL", "ORT_DISABLE_TELEMETRY",
                  "DO_NOT_TRACK")

needs_isolation = pytest.mark.skipif(bool(nettrace.unavailable()), reason=nettrace.unavailable() or "ok")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV_KEYS}  # the app must set these itself
    env.update(PYTHONPATH=f"{GUARD}{os.pathsep}{REPO}", NETGUARD_LOG=str(tmp_path / "net.log"),
               ASSISTANT_STORAGE_DIR=str(tmp_path / "index"))
    return env


def _traced(tmp_path: Path, argv: list[str], env: dict[str, str],
            timeout: int = 60) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    trace = tmp_path / f"trace-{len(list(tmp_path.glob('trace-*')))}.txt"
    proc = subprocess.run(nettrace.isolated(argv, trace), env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)
    return proc, nettrace.attempts(trace)


@needs_isolation
def test_the_trace_catches_python_and_native_lookups(tmp_path: Path) -> None:
    """The check can fail: a planted Python lookup, a native resolver call (glibc through ctypes, as a C
    library would make it) and a connection attempt are each caught."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    planted = {
        "python getaddrinfo": "import socket\ntry: socket.getaddrinfo('example.com', 443)\nexcept OSError: pass",
        "native getaddrinfo": "import ctypes, ctypes.util\nlibc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
                              "res = ctypes.c_void_p()\nlibc.getaddrinfo(b'example.org', b'80', None, "
                              "ctypes.byref(res))",
        "connect": "import socket\ntry: socket.create_connection(('93.184.216.34', 80), timeout=2)\nexcept OSError: "
                   "pass",
    }
    for what, code in planted.items():
        proc, found = _traced(tmp_path, [sys.executable, "-c", code], env)
        assert proc.returncode == 0, (what, proc.stderr[-2000:])
        assert found, f"{what} was not caught"
    proc, found = _traced(tmp_path, [sys.executable, "-c", "import socket; socket.getaddrinfo('127.0.0.1', 80)"], env)
    assert found == [], found  # loopback is allowed


@needs_isolation
@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
def test_a_bare_onnxruntime_session_is_silent_after_enforce_offline(tmp_path: Path) -> None:
    """onnxruntime's native telemetry client resolves mobile.events.data.microsoft.com by itself (seen with
    1.32.0 on Linux); the switches in assistant/offline.py stop it. Without them the trace must see it."""
    code = ("import sys, time, glob\n"
            "if sys.argv[1] == 'on':\n    from assistant.offline import enforce_offline; enforce_offline()\n"
            "import onnxruntime as ort, numpy as np\n"
            "from assistant.config import load_settings\n"
            "from assistant.index.onnx_embedding import ensure_export\n"
            "from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path\n"
            "folder = ensure_export(resolve_model_path(BUNDLED_MINILM), load_settings().embedding.model_cache_dir)\n"
            "sess = ort.InferenceSession(str(next(folder.glob('*.onnx'))), providers=['CPUExecutionProvider'])\n"
            "sess.run(None, {i.name: np.ones((1, 8), dtype=np.int64) for i in sess.get_inputs()})\n"
            "time.sleep(float(sys.argv[2]))\n")
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV_KEYS}
    env["PYTHONPATH"] = str(REPO)
    proc, found = _traced(tmp_path, [sys.executable, "-c", code, "on", "12"], env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert found == [], "\n".join(found)
    # the control: without the switches the same script must be seen resolving (else the check proves little);
    # it was seen on this machine, but not in every clean clone (the telemetry client decides when to send), so
    # a silent control is reported as a warning; the harness's own catching is proven by the tests above.
    for wait_s in ("20",):
        proc, found = _traced(tmp_path, [sys.executable, "-c", code, "off", wait_s], env, timeout=240)
        assert proc.returncode == 0, proc.stderr[-2000:]
        if found:
            return
    warnings.warn("onnxruntime made no lookup without the switches in this run: the control proved nothing",
                  stacklevel=1)


@pytest.mark.llm
@needs_isolation
@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
def test_ingest_ask_and_the_ui_make_no_outbound_attempt(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env["OFFLINE_UI_PORT"] = str(free_port())
    out = tmp_path / "result.json"
    proc, found = _traced(tmp_path, [sys.executable, str(REPO / "tests" / "support" / "offline_scenario.py"), str(out)],
                          env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["ingest"]["rc"] == 0, result["ingest"]
    assert result["ask"]["rc"] == 0, result["ask"]
    data = json.loads(result["ask"]["stdout"])
    assert data["citations"] and not data["abstained"]
    assert "answered by" in result["ui"] and "[1]" in result["ui"], result["ui"][:500]
    python_level = (tmp_path / "net.log").read_text() if (tmp_path / "net.log").exists() else ""
    assert found == [] and python_level == "", "outbound attempts:\n" + "\n".join(found) + "\n" + python_level
