"""Waiting for a server subprocess started by a test to answer HTTP."""

from __future__ import annotations

import contextlib
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def wait_for_http(url: str, proc: subprocess.Popen, *, timeout_s: float, log: Path | None = None,  # type: ignore[type-arg]
                  accept_http_errors: bool = False, poll_s: float = 0.5) -> None:
    """Poll ``url`` until it answers with a 2xx status (or any HTTP status when ``accept_http_errors``).

    Fails the test, with the end of ``log`` when given, if ``proc`` exits first or ``timeout_s`` seconds pass.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            if accept_http_errors:
                return
        except OSError:
            pass
        exited = proc.poll() is not None
        if exited or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            reason = f"exited with {proc.returncode}" if exited else f"did not answer within {timeout_s:.0f} s"
            pytest.fail(f"{url}: server {reason}\n{tail}")
        time.sleep(poll_s)


@contextlib.contextmanager
def chroma_server(data: Path) -> Iterator[int]:
    """A real ``chroma run`` server on a free loopback port, storing under ``data``; yields the port."""
    import shutil
    import sys

    from assistant.llm.local import free_port

    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        chroma = Path(shutil.which("chroma") or "chroma")
    port = free_port()
    log = data / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(chroma), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port",
                                 str(port)],
                                stdout=out, stderr=subprocess.STDOUT,
                                env={"ANONYMIZED_TELEMETRY": "False", "PATH": "/usr/bin:/bin"})
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc, timeout_s=60, log=log, poll_s=0.3)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=15)
