"""JSONL and CSV exports as input: fields, aliases, ids, bad rows skipped with file:line warnings."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from assistant.corpus import read_papers


def test_jsonl_export(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = [
        {"id": "abc123", "title": "Sock Sorter", "abstract": "We sort socks  by colour.", "authors": ["Ann Lee", "Bo Chen"],
         "url": "https://openreview.net/forum?id=abc123", "venue": "ICLR 2026"},
        {"summary": "A paper with only a summary field about rivers.", "authors": "Cy Dee; Eve Fox", "url": "javascript:x"},
        {"title": "No abstract here"},
        {"id": "abc123", "abstract": "Duplicate id."},
    ]
    f = tmp_path / "export.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    with caplog.at_level(logging.WARNING):
        first, second = read_papers([f])
    assert (first.id, first.title, first.text, first.authors, first.venue) == (
        "export.jsonl#abc123", "Sock Sorter", "We sort socks by colour.", ("Ann Lee", "Bo Chen"), "ICLR 2026")
    assert first.url == "https://openreview.net/forum?id=abc123"
    assert second.id == "export.jsonl#2" and second.title_derived and second.authors == ("Cy Dee", "Eve Fox") and second.url == ""
    for line in (3, 4, 5):
        assert f"export.jsonl:{line}: skipped" in caplog.text


def test_csv_export_and_directory_mix(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('id,Title,Abstract,Authors,URL\n7,Fish,"Fish swim, mostly.",Ann Lee and Bo Chen,http://x.org/7\n')
    (tmp_path / "s.txt").write_text("Venue\n\nA seed abstract about birds.")
    (tmp_path / "papers.jsonl").write_text("")  # metadata file: not an input
    papers = read_papers([tmp_path])
    assert [p.id for p in papers] == ["a.csv#7", "s.txt#1"]
    assert papers[0].authors == ("Ann Lee", "Bo Chen") and papers[0].text == "Fish swim, mostly."
