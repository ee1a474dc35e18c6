"""Paper ids that survive exports (real Chroma in a temp dir, real embeddings): the same export saved under a
new name updates the same papers, an updated abstract updates in place, `assistant delete` takes the id the
user knows, seed ids keep their form, and an index built with the old `<export file>#<id>` ids is migrated."""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.config import Settings
from assistant.index.store import PaperStore
from assistant.ingest.corpus import read_papers
from assistant.ingest.pipeline import ingest, ingest_papers
from tests.support.fake_openai_server import FakeOpenAIServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_seeds"
SEED_IDS = {f"tiny.txt#{i}" for i in (1, 2, 3)}
BATS = [
    {"id": "bat-001", "title": "Echolocation Calls Identify Bat Species",
     "abstract": "Bats navigate in darkness by echolocation. We record ultrasonic calls of forty bat species in the "
                 "wild. "
                 "A small convolutional classifier identifies the species from a single call with 94% accuracy. "
                 "The recordings are released for conservation surveys."},
    {"id": "bat-002", "title": "Fruit Bats Disperse Rainforest Seeds", "url": "https://arxiv.org/abs/2401.01234v1",
     "abstract": "Fruit bats carry seeds across fragmented rainforest. We tag two hundred bats with GPS collars. "
                 "Seeds travel up to twelve kilometres from the parent tree. Bats restore forest gaps faster than "
                 "birds."},
    {"id": "bat-003", "title": "White-Nose Syndrome in Hibernating Bats",
     "abstract": "White-nose syndrome kills hibernating bats in North America. We measure fungal load in three caves "
                 "over "
                 "four winters. Colonies with warmer roosts lose more bats. Cooling roosts may slow the disease."},
]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def setup(tmp_path: Path, embed_model):  # type: ignore[no-untyped-def]
    """Settings for a fresh index holding the tiny seeds and ``exports/export.jsonl`` (three bat papers)."""
    seeds = tmp_path / "seeds"
    shutil.copytree(FIXTURES, seeds)
    exports = tmp_path / "exports"
    exports.mkdir()
    export = _write(exports / "export.jsonl", BATS)
    settings = Settings().updated(storage_dir=tmp_path / "index")
    first = ingest(settings, [seeds, export], embed_model, progress=False)
    assert first.papers == 6
    return settings, seeds, export, first


def _papers(settings: Settings) -> dict:  # type: ignore[type-arg]
    return PaperStore.open_for_read(settings).load_papers()


def test_same_export_under_a_new_name_adds_nothing_and_answers_cite_one_id(  # type: ignore[no-untyped-def]
        setup, embed_model, scripted_assistant) -> None:
    settings, _seeds, export, first = setup
    assert set(_papers(settings)) == SEED_IDS | {"bat-001", "bat-002", "bat-003"}  # seed ids keep <file>#<position>
    renamed = export.with_name("export-v2.jsonl")
    shutil.copy(export, renamed)

    again = ingest(settings, [renamed], embed_model, progress=False)
    assert (again.added, again.updated, again.removed) == (0, 0, 0)
    papers = _papers(settings)
    assert len(papers) == 6 and papers["bat-001"].source_file == "export-v2.jsonl"  # moved in place
    store = PaperStore.open_for_read(settings)
    assert store.windows.count() == first.windows

    both = ingest(settings, [export.parent], embed_model, progress=False)  # the folder holds both files
    assert (both.papers, both.added, both.updated) == (3, 0, 0)
    assert len(both.skipped_rows) == 3 and all("also at" in r for r in both.skipped_rows)
    assert len(_papers(settings)) == 6

    reply = "A small convolutional classifier identifies the bat species from a single call with 94% accuracy [1]."
    with FakeOpenAIServer([reply] * 3) as server, scripted_assistant(server, settings=settings) as assistant:
        answer = assistant.ask("How accurately can a classifier identify bat species from one echolocation call?")
    assert [c.paper.id for c in answer.citations] == ["bat-001"]
    source_ids = [h.paper.id for h in answer.sources]
    assert len(source_ids) == len(set(source_ids)) and not any(".jsonl#" in i for i in source_ids)
    assert sum(h.paper.title == BATS[0]["title"] for h in answer.sources) == 1


def test_updated_abstract_in_a_renamed_export_updates_in_place(setup, embed_model, caplog, capsys) -> None:  # type: ignore[no-untyped-def]
    settings, _seeds, export, _first = setup
    changed = dict(BATS[0], abstract=BATS[0]["abstract"] + " Calls recorded in rain are harder to classify.")
    renamed = _write(export.with_name("export-2026-02.jsonl"), [changed, BATS[1]])  # bat-003 left out
    with caplog.at_level(logging.WARNING):
        report = ingest(settings, [renamed], embed_model, progress=False)
    assert report.updated == 4 and report.added == 1 and report.removed == 0  # bat-001: 4 windows changed, 1 new
    papers = _papers(settings)
    assert len(papers) == 6 and "rain" in papers["bat-001"].text
    assert papers["bat-001"].source_file == papers["bat-002"].source_file == "export-2026-02.jsonl"
    # bat-003 was only in the old file, which was not ingested: it stays, and the warning says how to remove it
    assert papers["bat-003"].source_file == "export.jsonl"
    assert "assistant delete bat-003" in caplog.text

    capsys.readouterr()
    assert main(["--storage-dir", str(settings.storage.storage_dir), "delete", "bat-003"]) == 0
    assert "Removed 1 paper(s): bat-003." in capsys.readouterr().out
    assert set(_papers(settings)) == SEED_IDS | {"bat-001", "bat-002"}
    assert not any(w.startswith("bat-003:") for w in PaperStore.open_for_read(settings).window_hashes())


def test_delete_takes_the_id_the_user_knows(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    settings, *_ = setup
    d = ["--storage-dir", str(settings.storage.storage_dir), "delete"]
    capsys.readouterr()
    assert main([*d, "bat-002", "tiny.txt#2", "BAT-01"]) == 0
    out = capsys.readouterr().out
    assert "Removed 2 paper(s): bat-002, tiny.txt#2." in out
    assert "Not indexed: BAT-01 (did you mean bat-001" in out
    assert set(_papers(settings)) == {"tiny.txt#1", "tiny.txt#3", "bat-001", "bat-003"}
    assert main([*d, "bat-002"]) == 1
    assert "none of these ids are indexed" in capsys.readouterr().out


def test_delete_by_arxiv_id_of_the_paper_link(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    settings, *_ = setup
    capsys.readouterr()
    assert main(["--storage-dir", str(settings.storage.storage_dir), "delete", "arXiv:2401.01234v2"]) == 0
    assert "Removed 1 paper(s): bat-002 (for arXiv:2401.01234v2)." in capsys.readouterr().out


def test_an_index_with_old_export_ids_is_migrated_by_the_next_ingest(  # type: ignore[no-untyped-def]
        tmp_path: Path, embed_model, caplog, capsys) -> None:
    seeds = tmp_path / "seeds"
    shutil.copytree(FIXTURES, seeds)
    export = _write(tmp_path / "export.jsonl", BATS)
    other = _write(tmp_path / "other.jsonl", [{"id": "cat-1",
                                               "abstract": "Cats sleep sixteen hours a day. We count naps."}])
    settings = Settings().updated(storage_dir=tmp_path / "index")
    # what the previous version wrote: export papers named <file name>#<id>
    old = [replace(p, id=f"{p.source_file}#{p.id}") if not p.source_file.endswith(".txt") else p
           for p in read_papers([seeds, export, other])]
    ingest_papers(settings, old, embed_model, progress=False)
    assert set(_papers(settings)) == SEED_IDS | {"export.jsonl#bat-001", "export.jsonl#bat-002", "export.jsonl#bat-003",
                                                 "other.jsonl#cat-1"}
    capsys.readouterr()
    assert main(["--storage-dir", str(settings.storage.storage_dir), "delete", "bat-003"]) == 0  # the bare id finds it
    assert "Removed 1 paper(s): export.jsonl#bat-003 (for bat-003)." in capsys.readouterr().out

    renamed = export.rename(export.with_name("export-v2.jsonl"))
    with caplog.at_level(logging.WARNING):
        report = ingest(settings, [seeds, renamed], embed_model, progress=False)
    assert report.papers == 6 and report.added > 0
    assert set(_papers(settings)) == SEED_IDS | {"bat-001", "bat-002", "bat-003", "other.jsonl#cat-1"}
    assert "other.jsonl" in caplog.text and "ingest that file again" in caplog.text
    caplog.clear()
    ingest(settings, [other], embed_model, progress=False)
    assert set(_papers(settings)) == SEED_IDS | {"bat-001", "bat-002", "bat-003", "cat-1"}
    windows = PaperStore.open_for_read(settings).window_hashes()
    assert not any(".jsonl#" in w for w in windows)
