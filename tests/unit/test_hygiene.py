"""ruff (lint + format, line length 120, import order, unused names) and mypy (pydantic plugin) are clean on
``assistant/`` and ``ui/``: the configuration is in pyproject.toml, so this runs exactly what a developer runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_lint_is_clean() -> None:
    out = _run(str(BIN / "ruff"), "check", "assistant", "ui")
    assert out.returncode == 0, out.stdout[-4000:]


def test_ruff_format_is_clean() -> None:
    out = _run(str(BIN / "ruff"), "format", "--check", "assistant", "ui")
    assert out.returncode == 0, out.stdout[-4000:]


def test_mypy_is_clean() -> None:
    out = _run(sys.executable, "-m", "mypy")
    assert out.returncode == 0, out.stdout[-4000:]
