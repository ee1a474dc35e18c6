"""Ingest, ask (bundled model) and serve in subprocesses whose non-loopback sockets and DNS are blocked:
everything works and no outbound connection is even attempted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant.llm.local import free_port
from tests.support.servers import wait_for_http

pytestmark = pytest.mark.llm

GUARD = Path(__file__).resolve().parents[1] / "support" / "netguard"
CLEAN_ENV_KEYS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "GRADIO_ANALYTICS_ENABLED",
                  "ANONYMIZED_TELEMETRY", "TIKTOKEN_CACHE_DIR", "ASSISTANT_LLM_BASE_URL")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV_KEYS}  # the app must set these itself
    env.update(PYTHONPATH=str(GUARD), NETGUARD_LOG=str(tmp_path / "net.log"), ASSISTANT_STORAGE_DIR=str(tmp_path / "index"))
    return env


def test_ingest_ask_and_serve_make_no_outbound_connection(tmp_path: Path) -> None:
    env = _env(tmp_path)
    run = lambda *a: subprocess.run([sys.executable, "-m", "assistant", *a], env=env, capture_output=True, text=True, timeout=300)  # noqa: E731
    ing = run("ingest", "--no-progress")
    assert ing.returncode == 0, ing.stderr[-3000:]
    ask = run("ask", "--json", "What does the State Machine Module (SMM) help with?")
    assert ask.returncode == 0, ask.stderr[-3000:]
    data = json.loads(ask.stdout)
    assert data["citations"] and not data["abstained"]

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ui", "--no-ingest", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", proc, timeout_s=120)
        time.sleep(3)  # give background threads (analytics, version checks) time to try
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    log = tmp_path / "net.log"
    attempts = log.read_text() if log.exists() else ""
    assert attempts == "", f"outbound attempts:\n{attempts}"
