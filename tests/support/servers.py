"""Waiting for a server subprocess started by a test to answer HTTP."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
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
