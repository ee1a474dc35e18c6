"""JSONL and CSV exports as input: fields, aliases, ids that survive renames, bad rows skipped with file:line
warnings, the same id in two exports, and how `assistant delete` finds the id a user types."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from assistant.ingest.corpus import read_papers
from assistant.ingest.identity import abstract_key, plan_sync, resolve_ids
from assistant.types import Paper


def test_jsonl_export(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = [
        {"id": "abc123", "title": "Sock Sorter", "abstract": "We sort socks  by colour.",
         "authors": ["Ann Lee", "Bo Chen"],
         "url": "https://openreview.net/forum?id=abc123", "venue": "ICLR 2026"},
        {"summary": "A paper with only a summary field about rivers.", "authors": "Cy Dee; Eve Fox",
         "url": "javascript:x"},
        {"title": "No abstract here"},
        {"id": "abc123", "abstract": "Duplicate id."},
    ]
    f = tmp_path / "export.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    with caplog.at_level(logging.WARNING):
        first, second = read_papers([f])
    assert (first.id, first.title, first.text, first.authors, first.venue) == (
        "abc123", "Sock Sorter", "We sort socks by colour.", ("Ann Lee", "Bo Chen"), "ICLR 2026")
    assert first.url == "https://openreview.net/forum?id=abc123" and (first.source_file,
                                                                      first.position) == ("export.jsonl", 1)
    assert second.id == abstract_key("a paper with only a summary field about rivers.") and second.title_derived
    # not guessed from the file name, which changes when an export is renamed
    # and second.authors == ("Cy Dee", "Eve Fox") and second.url == ""
    assert second.venue == ""
    for line in (3, 4, 5):
        assert f"export.jsonl:{line}: skipped" in caplog.text


def test_csv_export_and_directory_mix(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('id,Title,Abstract,Authors,URL\n7,Fish,"Fish swim, mostly.",Ann Lee and Bo '
                                    'Chen,http://x.org/7\n')
    (tmp_path / "s.txt").write_text("Venue\n\nA seed abstract about birds.")
    (tmp_path / "papers.jsonl").write_text("")  # metadata file: not an input
    papers = read_papers([tmp_path])
    assert [p.id for p in papers] == ["7", "s.txt#1"]
    assert (papers[0].source_file, papers[0].position) == ("a.csv", 2)
    assert papers[0].authors == ("Ann Lee", "Bo Chen") and papers[0].text == "Fish swim, mostly."


@pytest.mark.parametrize(("row", "expected"), [
    ({"id": "  bat-001 "}, "bat-001"),  # own id: trimmed, case kept
    ({"id": "BAT-001"}, "BAT-001"),
    ({"id": "http://arxiv.org/abs/2401.01234v2"}, "arxiv:2401.01234"),  # an own id that is a link: its identifier
    ({"openreview_id": "rJ4km2R5t7", "doi": "10.5555/x"}, "openreview:rJ4km2R5t7"),
    ({"url": "https://openreview.net/forum?id=rJ4km2R5t7"}, "openreview:rJ4km2R5t7"),
    ({"arxiv": "arXiv:2401.01234v3", "doi": "10.5555/ABC"}, "arxiv:2401.01234"),
    ({"url": "https://arxiv.org/pdf/hep-th/9901001v1.pdf"}, "arxiv:hep-th/9901001"),
    ({"doi": "https://doi.org/10.5555/ABC.1"}, "doi:10.5555/abc.1"),
    ({"link": "https://doi.org/10.1145/3292500.3330701"}, "doi:10.1145/3292500.3330701"),
    ({"url": "https://example.org/paper/5"}, abstract_key("We  study BATS.")),
])
def test_export_ids_do_not_depend_on_the_file_name(tmp_path: Path, row: dict[str, str], expected: str) -> None:
    for name in ("export.jsonl", "export-v2.jsonl"):
        (tmp_path / name).write_text(json.dumps({**row, "abstract": "We  study BATS."}) + "\n")
        assert [p.id for p in read_papers([tmp_path / name])] == [expected]


def test_an_id_of_the_file_based_form_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    f.write_text(json.dumps({"id": "x.txt#1", "abstract": "A."}) + "\n" + json.dumps({"id": "ok",
                                                                                      "abstract": "B."}) + "\n")
    skipped: list[str] = []
    assert [p.id for p in read_papers([f], skipped)] == ["ok"]
    assert skipped == ["e.jsonl:1: id 'x.txt#1' has the form of a file-based id (<file>#<n>); give the row another id"]


def test_the_same_id_in_two_exports_keeps_the_newer_file_and_names_both(tmp_path: Path) -> None:
    import os

    old, new = tmp_path / "monthly-1.jsonl", tmp_path / "monthly-2.jsonl"
    old.write_text(json.dumps({"id": "bat-001", "abstract": "Old text."}) + "\n"
                   + json.dumps({"id": "bat-002", "abstract": "Two."}) + "\n")
    new.write_text("\n" + json.dumps({"id": "bat-001", "abstract": "New text."}) + "\n")
    os.utime(old, ns=(1_000_000_000, 1_000_000_000))
    skipped: list[str] = []
    papers = read_papers([tmp_path], skipped)
    assert sorted((p.id, p.text, p.source_file) for p in papers) == [
        ("bat-001", "New text.", "monthly-2.jsonl"), ("bat-002", "Two.", "monthly-1.jsonl")]
    assert skipped == ["monthly-1.jsonl:1: id 'bat-001' also at monthly-2.jsonl:2 (kept that row: its file is newer)"]
    os.utime(new, ns=(1, 1))  # now the first file is the newer one
    skipped.clear()
    assert {p.id: p.text for p in read_papers([tmp_path], skipped)}["bat-001"] == "Old text."
    assert skipped == ["monthly-2.jsonl:2: id 'bat-001' also at monthly-1.jsonl:1 (kept that row: its file is newer)"]


def _paper(pid: str, source: str, text: str = "Text.", title: str = "T", url: str = "") -> Paper:
    return Paper(pid, "V", title, (), url, text, source, 1)


def test_resolve_ids_finds_what_the_user_knows_and_suggests_close_ids() -> None:
    stored = {p.id: p for p in [
        _paper("bat-002", "e.jsonl", url="https://arxiv.org/abs/2401.01234v1"),
        _paper("doi:10.5555/abc", "e.jsonl"),
        _paper("000_43469673d6f8aaa0.txt#1", "000_43469673d6f8aaa0.txt"),
        _paper("old.jsonl#bat-009", "old.jsonl"),  # an index built before ids stopped naming the file
    ]}
    r = resolve_ids(["bat-002", "https://doi.org/10.5555/ABC", "000_43469673d6f8aaa0.txt#1", "bat-009", "BAT-02",
                     "zzz"], stored)
    assert r.ids == ["bat-002", "doi:10.5555/abc", "000_43469673d6f8aaa0.txt#1", "old.jsonl#bat-009"]
    assert resolve_ids(["2401.01234v3"], stored).ids == ["bat-002"]  # by the arXiv link of the paper
    assert r.missing == {"BAT-02": [], "zzz": []} and not r.ambiguous  # never suggests what it removes
    r = resolve_ids(["BAT-02", "zzz"], stored)
    assert r.missing["BAT-02"][0] == "bat-002" and r.missing["zzz"] == [] and not r.ids
    two = {**stored, "old2.jsonl#bat-009": _paper("old2.jsonl#bat-009", "old2.jsonl")}
    assert resolve_ids(["bat-009"], two).ambiguous == {"bat-009": ["old.jsonl#bat-009", "old2.jsonl#bat-009"]}


def test_plan_sync_removes_only_papers_of_the_files_ingested(caplog: pytest.LogCaptureFixture) -> None:
    stored = {p.id: p for p in [_paper("a", "m1.jsonl"), _paper("b", "m1.jsonl"), _paper("s.txt#1", "s.txt")]}
    with caplog.at_level(logging.WARNING):
        plan = plan_sync(stored, [_paper("a", "m2.jsonl")])  # m2 replaces m1, passed alone
    assert (plan.gone, plan.moved) == ([], {"a"})
    assert "1 other(s) of m1.jsonl were not in the files ingested and stay indexed (b)" in caplog.text
    assert "assistant delete b" in caplog.text
    plan = plan_sync(stored, [_paper("a", "m1.jsonl")])  # the same file again without b: b is removed
    assert (plan.gone, plan.moved) == (["b"], set())


def test_plan_sync_migrates_old_scheme_ids(caplog: pytest.LogCaptureFixture) -> None:
    stored = {p.id: p for p in [
        _paper("export.jsonl#bat-001", "export.jsonl", "One."),
        _paper("export.jsonl#7", "export.jsonl", "Row seven without id."),
        _paper("other.csv#x1", "other.csv", "Elsewhere."),
        _paper("rows.csv#3", "rows.csv", "Row three."),  # 3 may have been a line number: only the abstract tells
    ]}
    with caplog.at_level(logging.WARNING):
        plan = plan_sync(stored, [_paper("bat-001", "export-v2.jsonl", "One."),
                                  _paper(abstract_key("Row seven without id."), "export-v2.jsonl",
                                         "Row seven without  id."),
                                  _paper("3", "numbers.csv", "Another paper.")])
    assert sorted(plan.gone) == ["export.jsonl#7", "export.jsonl#bat-001"]
    assert plan.legacy_left == ["other.csv#x1", "rows.csv#3"]
    assert ("from other.csv, rows.csv still have ids of the old" in caplog.text
            and "ingest those files again" in caplog.text)
