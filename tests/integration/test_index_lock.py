"""The index's reader/writer lock (assistant/index/index_lock.py, issue 43): a write call waits for a reader's
first read, a reader's first read waits for a write call, holds nest within a thread, a hold gives up with a
clear message after the timeout, and client/server mode takes no lock. Threads stand in for processes here:
each hold opens its own file description, so threads exclude each other as processes do."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.errors import StoreNotReadyError
from assistant.index import index_lock as index_lock_module
from assistant.index.index_lock import INDEX_LOCK_FILE, NO_LOCK, index_lock
from assistant.index.store import PaperStore, forget_embedded_client
from assistant.ingest.pipeline import ingest

HOLD_S = 0.6


@contextmanager
def _held_elsewhere(hold: AbstractContextManager[None], seconds: float = HOLD_S) -> Iterator[None]:
    """Hold ``hold`` in another thread for ``seconds``; yields once it is held."""
    taken = threading.Event()

    def run() -> None:
        with hold:
            taken.set()
            time.sleep(seconds)

    t = threading.Thread(target=run)
    t.start()
    assert taken.wait(10)
    try:
        yield
    finally:
        t.join()


@pytest.fixture
def settings(tmp_path: Path, seeds: Path, embed_model) -> Settings:  # type: ignore[no-untyped-def]
    s = Settings().updated(storage_dir=tmp_path / "index")
    ingest(s, [seeds], embed_model, progress=False)
    return s


def test_a_first_read_waits_for_a_write_call_and_a_write_call_for_a_first_read(settings: Settings) -> None:
    lock = index_lock(settings)
    assert (settings.storage.storage_dir / INDEX_LOCK_FILE).is_file()  # the ingest made it
    forget_embedded_client(settings)  # a new client: open_for_read makes its first read of each collection
    with _held_elsewhere(lock.exclusive()):  # a writer's write call
        t0 = time.monotonic()
        store = PaperStore.open_for_read(settings)
        assert time.monotonic() - t0 >= HOLD_S - 0.1
    with _held_elsewhere(lock.shared()):  # a reader loading the index
        t0 = time.monotonic()
        store.set_generation(store.generation())
        assert time.monotonic() - t0 >= HOLD_S - 0.1
    t0 = time.monotonic()
    store.set_generation(store.generation())  # nobody holds it: no wait
    assert time.monotonic() - t0 < 0.3


def test_readers_share_it_and_holds_nest_within_a_thread(settings: Settings) -> None:
    lock = index_lock(settings)
    with _held_elsewhere(lock.shared()):
        t0 = time.monotonic()
        with lock.shared():  # another reader at the same time: no wait
            assert time.monotonic() - t0 < 0.3
    with lock.exclusive(), lock.exclusive(), lock.shared():  # nested in the writer's own thread: covered
        pass
    with lock.shared(), pytest.raises(RuntimeError, match="holds it shared"):
        with lock.exclusive():  # would wait for itself
            pass
    with _held_elsewhere(lock.exclusive(), 0.0):  # everything above was released
        pass


def test_readers_that_come_while_a_writer_waits_queue_behind_it(settings: Settings) -> None:
    """Writer preference (the gate): a stream of overlapping readers cannot keep a writer out."""
    lock = index_lock(settings)
    order: list[str] = []

    def write() -> None:
        with lock.exclusive():
            order.append("writer")
            time.sleep(0.2)

    def read() -> None:
        with lock.shared():
            order.append("late reader")

    with _held_elsewhere(lock.shared(), HOLD_S):  # a reader loading the index
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.2)  # the writer waits for that reader now
        late = threading.Thread(target=read)
        late.start()
        time.sleep(0.1)
        assert order == []  # the late reader queues behind the waiting writer, although the lock is only shared
    writer.join()
    late.join()
    assert order == ["writer", "late reader"]


def test_a_hold_gives_up_after_the_timeout_with_a_clear_message(settings: Settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(index_lock_module, "LOCK_TIMEOUT_S", 0.2)
    lock = index_lock(settings)
    with _held_elsewhere(lock.exclusive()):
        with pytest.raises(StoreNotReadyError, match="held by another process"):
            with lock.shared():
                pass


def test_client_server_mode_and_a_store_without_settings_take_no_lock(tmp_path: Path) -> None:
    settings = Settings().updated(chroma_host="127.0.0.1", chroma_port=1, storage_dir=tmp_path / "replica")
    lock = index_lock(settings)
    assert lock is NO_LOCK and not lock.enabled
    with lock.exclusive(), lock.shared():
        pass
    assert not (tmp_path / "replica").exists()
