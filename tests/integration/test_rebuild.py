"""`assistant ingest --rebuild` says what it will do and never drops papers silently: it rebuilds from the inputs
recorded in the index (every path ingested since the last rebuild), or lists the indexed papers the given inputs
would lose and asks (y/N on a terminal; --yes for scripts; anything else refused in one line naming --yes, nothing
changed). A rebuild builds new collections and switches them in; killed at any point of the switch, readers still
read a whole index (the old or the rebuilt one) and the next writer finishes the switch."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.config import Settings
from assistant.index.store import PaperStore, forget_embedded_client
from assistant.ingest import pipeline
from assistant.ingest.pipeline import ingest
from assistant.retrieve.retrieval import PaperRetriever
from tests.support.writers import corpus_rows, export_ids, index_papers, write_export

TINY = {f"tiny.txt#{i}" for i in (1, 2, 3)}


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _collection_id(settings: Settings) -> str:
    forget_embedded_client(settings)
    return PaperStore.open_for_read(settings).collection_id


@pytest.fixture
def indexed(tmp_path: Path, seeds: Path, embed_model):  # type: ignore[no-untyped-def]
    """An index of the tiny seeds plus a 4-paper export of real abstracts, built by two ingests."""
    settings = Settings().updated(storage_dir=tmp_path / "index")
    export = write_export(tmp_path / "export.jsonl", corpus_rows(100, 4))
    ingest(settings, [seeds], embed_model, progress=False)
    ingest(settings, [export], embed_model, progress=False)
    assert index_papers(settings, embed_model) == TINY | export_ids(export)
    return settings, seeds, export


def test_rebuild_without_paths_rebuilds_from_every_recorded_input(indexed, embed_model, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    settings, seeds, export = indexed
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal: nothing may be asked
    before = _collection_id(settings)
    assert main(["ingest", "--rebuild", "--no-progress", "--storage-dir", str(settings.storage.storage_dir)]) == 0
    out, err = capsys.readouterr()
    assert f"Rebuilding from the inputs recorded in the index: {seeds.resolve()}, {export.resolve()}" in err
    assert "no paper removed" in out
    assert index_papers(settings, embed_model) == TINY | export_ids(export)  # 7 before, 7 after
    assert _collection_id(settings) != before  # really rebuilt
    assert not [d for d in settings.storage.storage_dir.iterdir() if "rebuild" in d.name or "retired" in d.name]


def test_rebuild_that_would_drop_papers_is_refused_without_yes(indexed, embed_model, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    settings, seeds, export = indexed
    before = _collection_id(settings)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert (
        main(["ingest", "--rebuild", "--no-progress", str(seeds), "--storage-dir", str(settings.storage.storage_dir)])
        == 1
    )
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --rebuild would remove 4 indexed paper(s)"), err
    assert "Pass --yes" in lines[0] and "nothing was changed" in lines[0] and out == ""
    assert sorted(export_ids(export))[0] in lines[0]  # names the papers
    assert _collection_id(settings) == before and index_papers(settings, embed_model) == TINY | export_ids(export)

    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))  # a terminal: the list, then the question; "n" keeps all
    assert (
        main(["ingest", "--rebuild", "--no-progress", str(seeds), "--storage-dir", str(settings.storage.storage_dir)])
        == 1
    )
    out, err = capsys.readouterr()
    assert "would not have these 4 paper(s)" in err and "remove them? [y/N]" in err and "cancelled" in err
    for pid in export_ids(export):
        assert pid in err
    assert _collection_id(settings) == before

    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    assert (
        main(["ingest", "--rebuild", "--no-progress", str(seeds), "--storage-dir", str(settings.storage.storage_dir)])
        == 0
    )
    out, err = capsys.readouterr()
    assert "removed 4 paper(s) not in them: " in out
    assert index_papers(settings, embed_model) == TINY

    # the index now records only what rebuilt it: a rebuild without paths keeps the 3 papers, asks nothing
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert (
        main(["ingest", "--rebuild", "--no-progress", "--json", "--storage-dir", str(settings.storage.storage_dir)])
        == 0
    )
    out, _ = capsys.readouterr()
    assert '"removed_papers": []' in out and index_papers(settings, embed_model) == TINY


def test_rebuild_with_yes_lists_what_it_removed(indexed, embed_model, capsys) -> None:  # type: ignore[no-untyped-def]
    settings, seeds, export = indexed
    assert (
        main(
            [
                "ingest",
                "--rebuild",
                "--yes",
                "--no-progress",
                str(seeds),
                "--storage-dir",
                str(settings.storage.storage_dir),
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert "would not have these 4 paper(s)" in err  # said on stderr, not asked
    assert f"removed 4 paper(s) not in them: {', '.join(p for p in sorted(export_ids(export)))}" in out or all(
        pid in out for pid in export_ids(export)
    )
    assert index_papers(settings, embed_model) == TINY


class _Killed(Exception):
    pass


@pytest.mark.parametrize("step", ["catalog", 1, 3, 5])
def test_a_rebuild_killed_in_its_switch_leaves_a_whole_index(step, indexed, embed_model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The switch is: the catalog (one transaction), then 6 renames (the index's 3 collections to -retired, the
    rebuilt 3 to the index's names). Stopped before any of them, a reader reads a whole index (the old or the
    rebuilt one) and the next writer finishes the switch (the rebuilt collections were complete)."""
    settings, seeds, export = indexed
    old, new = TINY | export_ids(export), TINY
    renames = {"n": 0}
    real_rename, real_replace = (
        pipeline._rename,
        pipeline.Catalog.replace_with if hasattr(pipeline, "Catalog") else None,
    )

    def rename(client, a, b):  # type: ignore[no-untyped-def]
        if step != "catalog" and renames["n"] == step:
            raise _Killed(f"killed before rename {step}")
        renames["n"] += 1
        real_rename(client, a, b)

    from assistant.index import catalog as catalog_module

    real_replace = catalog_module.Catalog.replace_with

    def replace(self, source):  # type: ignore[no-untyped-def]
        if step == "catalog":
            raise _Killed("killed before the catalog switch")
        real_replace(self, source)

    monkeypatch.setattr(pipeline, "_rename", rename)
    monkeypatch.setattr(catalog_module.Catalog, "replace_with", replace)
    with pytest.raises(_Killed):
        ingest(settings, [seeds], embed_model, progress=False, rebuild=True)
    monkeypatch.undo()

    forget_embedded_client(settings)
    reader = PaperRetriever.open(settings, embed_model)  # a reader started now
    assert set(reader.papers) in (old, new)
    assert reader.retrieve("dual graph transformer feature dimensions")[0].paper.id == "tiny.txt#1"

    ingest(settings, [seeds], embed_model, progress=False)  # the next writer finishes the switch (the build was done)
    assert index_papers(settings, embed_model) == new
    names = {c.name for c in pipeline.make_client(settings).list_collections()}
    assert not [n for n in names if n.endswith(("-rebuild", "-retired")) or "-rebuild_" in n or "-retired_" in n]
