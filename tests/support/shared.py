"""Where the team's shared data lives (``../shared`` beside the repository, as in CI): the real corpus
and the external labelled claims. Tests that need it fail with a clear message when it is missing (they
are never skipped: CI always has it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def shared_path(*parts: str) -> Path:
    """``../shared/<parts>``; raises AssertionError naming the path when it is absent."""
    path = SHARED.joinpath(*parts)
    assert path.exists(), f"{path} is missing: these tests read the shared data that CI lays beside the repository"
    return path


def corpus_rows() -> Iterator[dict[str, object]]:
    """Every row with a non-empty abstract of ``../shared/corpus/*.jsonl`` (~9.9k real abstracts)."""
    for path in sorted(shared_path("corpus").glob("*.jsonl")):
        with path.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if row.get("abstract"):
                    yield row
