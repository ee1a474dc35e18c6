"""Seed parsing: header, blocks, ids, metadata join, and clear errors naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import CorpusFormatError
from assistant.ingest.corpus import INPUT_READERS, derive_title, parse_seed_text, read_papers

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_seeds"
REPO_SEEDS = Path(__file__).resolve().parents[2] / "seeds"


def test_parse_header_and_blocks() -> None:
    venue, abstracts = parse_seed_text("ICLR 2025 Papers\n\nFirst  abstract\nwraps.\n\n\nSecond one.", "x.txt")
    assert venue == "ICLR 2025 Papers"
    assert [(p, t) for p, _, t in abstracts] == [(1, "First abstract wraps."), (2, "Second one.")]
    assert abstracts[1][1] == 7  # line number of the second block


def test_real_seeds_give_38_papers_with_ids_and_metadata() -> None:
    papers = read_papers([REPO_SEEDS])
    assert len(papers) == 38
    first = papers[0]
    assert first.id == "000_43469673d6f8aaa0.txt#1"
    assert first.title == "DUALFormer: Dual Graph Transformer"
    assert first.url.startswith("https://")
    assert first.venue == "ICLR 2025 Papers"
    assert len({p.id for p in papers}) == 38
    assert all(p.title and not p.title_derived for p in papers)


def test_paper_without_metadata_gets_derived_title() -> None:
    papers = read_papers([FIXTURES / "tiny.txt"])
    assert len(papers) == 3
    assert not papers[0].title_derived and papers[0].authors
    third = papers[2]
    assert third.title_derived and third.title == derive_title(third.text)
    assert third.url == "" and third.authors == ()


def test_mismatched_metadata_row_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Venue\n\nAlpha beta gamma delta epsilon zeta eta theta iota.")
    (tmp_path / "papers.jsonl").write_text(json.dumps({"seed_file": "a.txt", "position": 1, "title": "Wrong",
                                                       "first_words": "Something else entirely"}) + "\nnot json\n")
    (paper,) = read_papers([tmp_path])
    assert paper.title_derived


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"This first line is a long abstract without any header line before it, which is wrong.\nmore text",
         "missing header"),
        (b"Header only\n\n", "no abstracts"),
        (b"\x00\x01binary", "binary"),
        (b"Venue\n\nCaf\xe9 au lait", "not valid UTF-8"),
    ],
)
def test_bad_files_name_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    with pytest.raises(CorpusFormatError, match=message) as err:
        read_papers([bad])
    assert "bad.txt" in str(err.value)


def test_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes("\ufeffVenue X\r\n\r\nOne abstract here.\r\n\r\nTwo abstract here.".encode())
    papers = read_papers([f])
    assert [p.text for p in papers] == ["One abstract here.", "Two abstract here."]
    assert papers[0].venue == "Venue X"


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError, match="no such file"):
        read_papers([tmp_path / "nope"])


def test_a_named_file_of_an_unknown_format_names_it_and_the_formats(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("Venue\n\nAn abstract here.", encoding="utf-8")
    unknown = r"notes\.md: not an input format \(\.md\); supported: seed \.txt, "
    with pytest.raises(CorpusFormatError, match=unknown) as e:
        read_papers([notes])
    assert all(suffix in str(e.value) for suffix in INPUT_READERS)  # every registered format is named
    assert ".jsonl" in INPUT_READERS and ".csv" in INPUT_READERS
    (tmp_path / "a.txt").write_text("Venue\n\nAn abstract here.", encoding="utf-8")
    assert [p.source_file for p in read_papers([tmp_path])] == ["a.txt"]  # a directory's other files are not inputs
