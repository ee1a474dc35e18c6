"""Facts about the bundled seeds for end-to-end assertions."""

from __future__ import annotations

import json
from pathlib import Path

PAPERS_JSONL = Path(__file__).resolve().parents[2] / "seeds" / "papers.jsonl"


def url_of(seed_file: str, position: int) -> str:
    """The ``url`` of a seed paper in ``seeds/papers.jsonl``."""
    for line in PAPERS_JSONL.read_text().splitlines():
        row = json.loads(line)
        if row["seed_file"] == seed_file and row["position"] == position:
            return str(row["url"])
    raise LookupError(seed_file, position)
