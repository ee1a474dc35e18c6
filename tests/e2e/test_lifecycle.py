"""The bundled model server never outlives the app: stopped on SIGTERM (clean shutdown) and on SIGKILL
(Linux parent-death signal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant.llm.local import free_port
from tests.support.servers import wait_for_http

pytestmark = pytest.mark.llm


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.split()[2] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_model_server_stops_with_the_app(seeded_settings, sig: int) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage.storage_dir)}
    env.pop("ASSISTANT_LLM_BASE_URL", None)
    app = subprocess.Popen([sys.executable, "-m", "ui", "--no-ingest", "--port", str(port)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", app, timeout_s=120)
        servers = [p for p in _children(app.pid)
                   if "bundled_server" in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")]
        assert len(servers) == 1
        app.send_signal(sig)
        app.wait(timeout=30)
        deadline = time.monotonic() + 15
        while _alive(servers[0]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(servers[0]), "model server outlived the app"
    finally:
        if app.poll() is None:
            app.kill()
