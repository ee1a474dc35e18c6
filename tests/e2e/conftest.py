"""E2E fixtures: the real UI (``python -m assistant serve --no-ingest``) as a subprocess over the session's
seeded index, on a free port, with the bundled model."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.local_llm import free_port

UI_START_TIMEOUT_S = 120


@pytest.fixture(scope="session")
def ui_url(seeded_settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """``python -m assistant serve`` on a free port over the seeded index (one per test session, shared
    by the browser and API tests); yields its URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("ui") / "ui.log"
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage_dir), "ASSISTANT_UI_PORT": str(port)}
    env.pop("ASSISTANT_LLM_BASE_URL", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "assistant", "serve", "--no-ingest"], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + UI_START_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"UI exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"UI did not start in {UI_START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.returncode not in (0, -15, 143, None):
            print(log.read_text()[-3000:])
