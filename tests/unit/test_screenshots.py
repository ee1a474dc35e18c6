"""The README's pictures of the chat exist, are PNGs, and are the ones the browser tests write."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_shows_a_cited_answer_a_comparison_table_and_a_topic_list() -> None:
    readme = (ROOT / "README.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((docs/screenshots/[^)]+\.png)\)", readme)
    assert {Path(p).name for p in shown} >= {"cited-answer.png", "comparison-table.png", "topic-list.png"}
    written = (ROOT / "tests" / "e2e" / "test_browser.py").read_text()
    for path in shown:
        data = (ROOT / path).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, path
        assert f'"{Path(path).name}"' in written, f"{path} is not written by a browser test"
