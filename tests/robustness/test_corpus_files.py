"""Messy corpus files: duplicates, an enormous abstract, papers.jsonl rows with nulls/lists/unknown ids
or broken JSON. Each is skipped with a warning naming file and line, or indexed sensibly."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.index.store import PaperStore
from assistant.ingest.corpus import read_papers
from assistant.ingest.pipeline import ingest

ABSTRACT = "We propose a tiny network for sorting socks. It matches pairs by colour. It beats baselines by 7%."


def test_duplicated_abstract_is_skipped_with_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "d.txt").write_text(f"Venue\n\n{ABSTRACT}\n\nAnother abstract about fish.\n\n{ABSTRACT}")
    with caplog.at_level(logging.WARNING):
        papers = read_papers([tmp_path])
    assert [p.id for p in papers] == ["d.txt#1", "d.txt#2"]
    assert "d.txt:7: skipped, abstract 3 repeats abstract 1" in caplog.text
    skipped: list[str] = []  # what `assistant ingest` lists in its summary instead of logging
    assert len(read_papers([tmp_path], skipped=skipped)) == 2
    assert skipped == ["d.txt:7: abstract 3 repeats abstract 1"]


def test_metadata_rows_with_nulls_lists_unknown_ids_and_bad_json(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "m.txt").write_text(f"Venue\n\n{ABSTRACT}\n\nAnother abstract about fish and rivers.")
    rows = [
        json.dumps({"seed_file": "m.txt", "position": 1, "title": None, "authors": None, "url": ["x"]}),
        json.dumps({"seed_file": "m.txt", "position": 2, "title": ["a", "list"], "authors": "Ann Lee, Bo Chen",
                    "url": "ftp://x"}),
        json.dumps({"seed_file": "other.txt", "position": 1, "title": "Unknown paper"}),
        json.dumps({"seed_file": "m.txt", "position": None}),
        "{broken json",
        json.dumps(["not", "an", "object"]),
    ]
    (tmp_path / "papers.jsonl").write_text("\n".join(rows))
    with caplog.at_level(logging.WARNING):
        one, two = read_papers([tmp_path])
    assert one.title_derived and one.authors == () and one.url == ""
    assert two.title_derived and two.authors == ("Ann Lee", "Bo Chen") and two.url == ""  # only http(s) links
    assert "papers.jsonl:4" in caplog.text and "papers.jsonl:5" in caplog.text and "papers.jsonl:6" in caplog.text


def test_enormous_abstract_is_indexed_in_bounded_windows(tmp_path: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    big = " ".join(f"Sentence {i} describes step {i} of a very long method for sorting socks." for i in range(600))
    (seeds / "big.txt").write_text(f"Venue\n\n{big}\n\n{ABSTRACT}")
    settings = Settings().updated(storage_dir=tmp_path / "index")
    report = ingest(settings, [seeds], embed_model, progress=False)
    assert report.papers == 2 and report.windows >= 600
    store = PaperStore.open_for_read(settings)
    assert max(len(d) for d in store.windows.get(include=["documents"])["documents"]) < 2000
