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
    # the one allowed exception: the CLI's lazy import of the UI inside `serve`
    assert offenders == ["cli.py: ui.app"]


def test_cli_imports_ui_only_inside_a_function() -> None:
    tree = ast.parse((REPO / "assistant" / "cli.py").read_text())
    top_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not any(getattr(n, "module", "") == "ui.app" for n in top_level)


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
