"""The core never imports the UI, and importing any core module has no side effects (no files, no sockets)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = sorted((REPO / "assistant").rglob("*.py"))


def test_core_does_not_import_ui_or_gradio() -> None:
    offenders = []
    for path in CORE:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("ui", "gradio")]
    assert offenders == []  # no exception: the UI owns its launch (ui/cli.py)


def test_ui_settings_are_not_core_settings() -> None:
    """Host, port and login belong to the UI package (ui/settings.py), not to the core Settings."""
    from assistant.config import Settings
    from ui.settings import UISettings

    assert not [f for f in Settings.model_fields if f.startswith("ui_")]
    assert set(UISettings.model_fields) == {"host", "port", "auth"}


def test_importing_every_core_module_has_no_side_effects(tmp_path: Path) -> None:
    modules = [f"assistant.{p.stem}" for p in CORE if p.stem not in ("__init__", "__main__")]
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise SystemExit('socket used at import time')\n"
        "socket.socket.connect = refuse\nsocket.create_connection = refuse\nsocket.getaddrinfo = refuse\n"
        f"import importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
        "import os\nassert not os.listdir('.'), os.listdir('.')\nprint('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
    assert list(tmp_path.iterdir()) == []
