"""E2E fixtures: the real UI (``python -m ui --no-ingest``) as a subprocess over the session's
seeded index, on a free port, with the bundled model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.local_llm import free_port
from tests.support.servers import wait_for_http

UI_START_TIMEOUT_S = 120
#: Seconds the UI gets to shut down (it stops its model server) before it is killed.
UI_STOP_TIMEOUT_S = 20


def _children(pid: int) -> list[int]:
    """Direct child process ids of ``pid`` (Linux /proc; empty elsewhere or when it is gone)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return out


def _stop_leftover(pid: int) -> None:
    """SIGTERM, then SIGKILL, a child the UI started (its model server) if it outlived the UI."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if not Path(f"/proc/{pid}").exists() or "zombie" in _state(pid):
                return
            time.sleep(0.1)


def _state(pid: int) -> str:
    try:
        return next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State:")).lower()
    except (OSError, StopIteration):
        return ""


@pytest.fixture(scope="session")
def ui_url(seeded_settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """``python -m ui`` on a free port over the seeded index (one per test session, shared
    by the browser and API tests); yields its URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("ui") / "ui.log"
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage_dir), "ASSISTANT_UI_PORT": str(port)}
    env.pop("ASSISTANT_LLM_BASE_URL", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ui", "--no-ingest"], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_http(url, proc, timeout_s=UI_START_TIMEOUT_S, log=log)
        yield url
    finally:
        children = _children(proc.pid)  # the bundled model server: must not outlive the UI
        proc.terminate()
        try:
            proc.wait(timeout=UI_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        leftovers = [pid for pid in children if Path(f"/proc/{pid}").exists()]
        for pid in leftovers:
            _stop_leftover(pid)
        if proc.returncode not in (0, 130, -15, 143, None) or leftovers:
            print(f"UI exit code {proc.returncode}; children left running: {leftovers}\n{log.read_text()[-3000:]}")
