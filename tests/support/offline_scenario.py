"""What tests/e2e/test_offline.py runs inside a network namespace with no route out, under strace: ``assistant
ingest``, ``assistant ask`` (bundled model), and ``assistant-ui`` answering one question through
``gradio_client``; writes ``{"ingest": rc, "ask": {...}, "ui": "<answer html>"}`` to ``argv[1]``.

The app processes get the caller's environment as given (the test removes the offline variables, so the app
must set them itself); only this driver's own gradio_client is told to stay offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def main(out: Path) -> int:
    app_env = dict(os.environ)
    result: dict[str, object] = {}
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "assistant", *a],
        env=app_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    ing = run("ingest", "--no-progress")
    result["ingest"] = {"rc": ing.returncode, "stderr": ing.stderr[-2000:]}
    ask = run("ask", "--json", "What does the State Machine Module (SMM) help with?")
    result["ask"] = {"rc": ask.returncode, "stdout": ask.stdout, "stderr": ask.stderr[-2000:]}

    port = int(os.environ.get("OFFLINE_UI_PORT", "7899"))
    ui = subprocess.Popen(
        [sys.executable, "-m", "ui", "--no-ingest", "--port", str(port)],
        env=app_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                if ui.poll() is not None or time.monotonic() > deadline:
                    result["ui"] = f"ui did not start (exit {ui.poll()})"
                    raise SystemExit(_write(out, result))
                time.sleep(0.5)
        os.environ.update(HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", GRADIO_ANALYTICS_ENABLED="False")
        from gradio_client import Client

        client = Client(url, verbose=False, analytics_enabled=False, download_files=False)
        _, history = client.predict(
            "What does the State Machine Module (SMM) help with?", "auto", [], api_name="/respond"
        )
        client.close()
        result["ui"] = json.dumps(history[-1]["content"]) if history else ""
        time.sleep(3)  # give background threads (analytics, version checks, telemetry) time to try
    finally:
        ui.terminate()
        ui.wait(timeout=20)
    return _write(out, result)


def _write(out: Path, result: dict[str, object]) -> int:
    out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
