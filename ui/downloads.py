"""Export files for the download buttons: written under one temp folder, one sub-folder per content
(so identical exports are written once and names stay ``conversation.md`` / ``references.bib``); folders
older than :data:`MAX_AGE_S` are pruned on each write. No gradio import."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

#: Export folders older than this are deleted (the browser has long fetched the file by then).
MAX_AGE_S = 6 * 3600
FOLDER = "paper-assistant-exports"


def export_root() -> Path:
    """``<system temp>/paper-assistant-exports`` (created if missing)."""
    root = Path(tempfile.gettempdir()) / FOLDER
    root.mkdir(parents=True, exist_ok=True)
    return root


def prune(root: Path, max_age_s: float = MAX_AGE_S) -> None:
    """Delete export folders under ``root`` older than ``max_age_s``."""
    cutoff = time.time() - max_age_s
    for child in root.iterdir():
        try:
            if child.is_dir() and child.stat().st_mtime < cutoff:
                shutil.rmtree(child, ignore_errors=True)
        except OSError:
            pass


def write_export(name: str, content: str, root: Path | None = None) -> Path:
    """Write ``content`` to ``<root>/<sha1 of content>/<name>`` (atomically) and return the path."""
    root = root or export_root()
    prune(root)
    folder = root / hashlib.sha1(content.encode()).hexdigest()[:20]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if not path.exists():
        tmp = folder / f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(content, encoding="utf-8")
        tmp.replace(path)
    os.utime(folder)  # keep it from being pruned while in use
    return path
