"""Real Chroma in a temp dir: idempotent re-ingest, reopening from disk, updates, settings mismatch,
and an interrupted ingest that leaves the previous index usable and is completed by the next run."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.errors import CorpusFormatError, StoreNotReadyError
from assistant.index.store import PaperStore
from assistant.ingest.pipeline import ingest
from assistant.retrieve.retrieval import PaperRetriever

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_seeds"


def test_reingest_adds_nothing_and_reopens_from_disk(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    settings = Settings().updated(storage_dir=tmp_path / "index")
    first = ingest(settings, [seeds], embed_model, progress=False)
    assert first.papers == 3 and first.added == first.windows > 3
    second = ingest(settings, [seeds], embed_model, progress=False)
    assert (second.added, second.updated, second.removed, second.skipped) == (0, 0, 0, first.windows)
    # a fresh client in a new store object reads the same data back from disk
    store = PaperStore.open_for_read(settings)
    papers = store.load_papers()
    assert set(papers) == {f"tiny.txt#{i}" for i in (1, 2, 3)}
    assert papers["tiny.txt#1"].title == "DUALFormer: Dual Graph Transformer"
    assert store.windows.count() == first.windows
    hits = PaperRetriever.open(settings,
                               embed_model).retrieve("dual graph transformer feature dimension self-attention")
    assert hits[0].paper.id == "tiny.txt#1" and hits[0].evidence


def test_changed_abstract_is_updated_and_shrunk_file_removes_paper(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [seeds], embed_model, progress=False)
    f = seeds / "tiny.txt"
    blocks = f.read_text().split("\n\n")
    blocks[2] = blocks[2] + " We add one more sentence about tropical fruit ripening."
    f.write_text("\n\n".join(blocks[:3]))  # paper 3 removed, paper 2 changed
    report = ingest(settings, [seeds], embed_model, progress=False)
    assert report.papers == 2 and report.added >= 1
    store = PaperStore.open_for_read(settings)
    assert set(store.load_papers()) == {"tiny.txt#1", "tiny.txt#2"}
    assert not any(i.startswith("tiny.txt#3:") for i in store.window_hashes())
    assert "tropical fruit" in store.load_papers()["tiny.txt#2"].text


def test_missing_index_and_other_settings_give_clear_errors(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(StoreNotReadyError, match="assistant ingest"):
        PaperStore.open_for_read(Settings().updated(storage_dir=tmp_path / "empty"))
    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [seeds], embed_model, progress=False)
    other = Settings().updated(storage_dir=tmp_path / "index", window_sentences=5)
    assert other.collection_name() != settings.collection_name()
    with pytest.raises(StoreNotReadyError, match="other settings"):
        PaperStore.open_for_read(other)


def test_an_index_of_an_older_layout_is_named_as_such(tmp_path: Path) -> None:
    """Storage left by an older version (same model and windows, layout v1: no ``schema`` in its metadata):
    the reader says so and how to build the index this version reads, instead of "other settings"."""
    from assistant.index.store import make_client

    settings = Settings().updated(storage_dir=tmp_path / "index")
    settings.storage.storage_dir.mkdir()
    old = f"{settings.storage.collection_prefix}_0123456789"
    make_client(settings).create_collection(old, metadata={"embed_model": settings.embed_identity(),
                                                           "window_sentences": 3},
                                            embedding_function=None)
    with pytest.raises(StoreNotReadyError) as e:
        PaperStore.open_for_read(settings)
    msg = str(e.value)
    assert f"found {old}, built for the same model by an older version of the assistant" in msg
    assert "Run `assistant ingest` to build the index this version reads" in msg and "other settings" not in msg


def test_bad_input_writes_nothing_and_keeps_index(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [seeds], embed_model, progress=False)
    (seeds / "broken.txt").write_bytes(b"\xff\xfe broken")
    with pytest.raises(CorpusFormatError, match="broken.txt"):  # named directly: an error, nothing written
        ingest(settings, [seeds / "tiny.txt", seeds / "broken.txt"], embed_model, progress=False)
    assert len(PaperStore.open_for_read(settings).load_papers()) == 3
    report = ingest(settings, [seeds], embed_model, progress=False)  # inside a folder: listed and skipped
    assert any("broken.txt: whole file not indexed" in row for row in report.skipped_rows)
    assert report.papers == 3 and len(PaperStore.open_for_read(settings).load_papers()) == 3


class _Interrupt(Exception):
    pass


def test_interrupted_ingest_keeps_index_usable_and_next_run_completes(  # type: ignore[no-untyped-def]
        tmp_path: Path, seeds: Path, embed_model, monkeypatch) -> None:
    settings = Settings().updated(storage_dir=tmp_path / "index", write_batch_size=4)
    full = ingest(settings, [seeds], embed_model, progress=False)
    f = seeds / "tiny.txt"
    f.write_text(f.read_text() + "\n\nA brand new abstract about reinforcement learning for chip placement. It uses "
                                 "graphs. It beats baselines by 5%.")

    calls = {"n": 0}
    original = PaperStore.upsert_papers

    def crash_before_papers(self, *a, **k):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        raise _Interrupt("killed")

    monkeypatch.setattr(PaperStore, "upsert_papers", crash_before_papers)
    with pytest.raises(_Interrupt):
        ingest(settings, [seeds], embed_model, progress=False)
    monkeypatch.setattr(PaperStore, "upsert_papers", original)
    # the old index still answers, and the half-written paper is invisible
    store = PaperStore.open_for_read(settings)
    assert set(store.load_papers()) == {f"tiny.txt#{i}" for i in (1, 2, 3)}
    PaperRetriever.open(settings, embed_model).retrieve("chip placement")
    report = ingest(settings, [seeds], embed_model, progress=False)
    assert report.added == 0 and report.papers == 4  # windows were already written; only the record was missing
    assert len(PaperStore.open_for_read(settings).load_papers()) == 4
    assert report.windows > full.windows


def test_second_writer_fails_fast_with_clear_message(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    from assistant.ingest.pipeline import writer_lock

    settings = Settings().updated(storage_dir=tmp_path / "index")
    with writer_lock(settings):  # another process/thread is ingesting
        with pytest.raises(StoreNotReadyError, match="Another ingest"):
            ingest(settings, [seeds], embed_model, progress=False)
    assert ingest(settings, [seeds], embed_model, progress=False).papers == 3  # lock released afterwards


def test_damaged_storage_gives_clear_error_and_rebuild_recovers(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    from assistant.ingest.pipeline import drop_index

    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [seeds], embed_model, progress=False)
    (settings.storage.storage_dir / "chroma.sqlite3").write_bytes(b"\x00garbage" * 20)
    with pytest.raises(StoreNotReadyError, match="--rebuild"):
        PaperStore.open_for_read(settings)
    drop_index(settings)
    assert ingest(settings, [seeds], embed_model, progress=False).added > 0
    assert len(PaperStore.open_for_read(settings).load_papers()) == 3
    assert list(tmp_path.glob("index.damaged-*"))  # the damaged copy is kept aside


def test_reads_are_paged(tmp_path: Path, seeds: Path, embed_model, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Large collections are read page by page (an unpaged get fails with 'too many SQL variables')."""
    import assistant.index.store as store_module

    settings = Settings().updated(storage_dir=tmp_path / "index")
    report = ingest(settings, [seeds], embed_model, progress=False)
    monkeypatch.setattr(store_module, "READ_PAGE_SIZE", 4)
    store = PaperStore.open_for_read(settings)
    windows = sum(map(len, store.window_texts(list(store.paper_hashes())).values()))
    assert len(store.window_hashes()) == windows == report.windows > 8
    assert len(store.load_papers()) == 3
    assert PaperRetriever.open(settings, embed_model).retrieve("dual graph transformer")[0].paper.id == "tiny.txt#1"


def test_delete_paper_by_id(tmp_path: Path, seeds: Path, embed_model, capsys) -> None:  # type: ignore[no-untyped-def]
    from assistant.cli import main

    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [seeds], embed_model, progress=False)
    assert main(["--storage-dir", str(settings.storage.storage_dir), "delete", "tiny.txt#2", "nope#1"]) == 0
    assert "Removed 1 paper(s): tiny.txt#2" in capsys.readouterr().out
    store = PaperStore.open_for_read(settings)
    assert set(store.load_papers()) == {"tiny.txt#1", "tiny.txt#3"}
    assert not any(i.startswith("tiny.txt#2:") for i in store.window_hashes())
    assert main(["--storage-dir", str(settings.storage.storage_dir), "delete", "nope#1"]) == 1


def test_rebuild_leaves_no_folders_of_the_dropped_collections(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    from assistant.ingest.pipeline import drop_index

    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [seeds], embed_model, progress=False)
    folders = lambda: sorted(p.name for p in settings.storage.storage_dir.iterdir() if p.is_dir())  # noqa: E731
    before = folders()
    assert len(before) == 3  # one vector segment per collection (windows, papers, log)
    for _ in range(2):
        drop_index(settings)
        ingest(settings, [seeds], embed_model, progress=False)
        now = folders()
        assert len(now) == 3 and not set(now) & set(before)  # the old ones are gone, not piled up
        before = now
    assert len(PaperStore.open_for_read(settings).load_papers()) == 3


def test_ask_and_delete_never_create_an_index_folder(tmp_path: Path) -> None:
    from assistant.ingest.pipeline import delete_papers

    settings = Settings().updated(storage_dir=tmp_path / "nothing-here")
    with pytest.raises(StoreNotReadyError, match="does not exist. Run `assistant ingest`"):
        PaperStore.open_for_read(settings)
    with pytest.raises(StoreNotReadyError, match="does not exist"):
        delete_papers(settings, ["x#1"])
    assert not settings.storage.storage_dir.exists()
