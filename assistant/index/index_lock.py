"""The embedded index's reader/writer lock: every write to Chroma (a *batch*) is exclusive, and a reader's
first read through a new Chroma client is shared (issue 43).

Why: an embedded Chroma client (``PersistentClient``) loads a collection's vector index (HNSW files under the
storage folder) into memory at its first read of that collection, and replays Chroma's write log into it. A
writing process rewrites those files in place every ~1,000 records it adds (``hnsw:sync_threshold``), inside
the ``add`` / ``upsert`` / ``delete`` call. A reader loading them meanwhile read half-written files: Chroma's
Rust layer segfaulted in ``Collection.count()`` (``PaperRetriever._reopen``), or failed with "Error loading
hnsw index". So:

* each write batch (one Chroma write call: an upsert, a delete, creating, renaming or dropping collections, the
  switch of a rebuild) holds :data:`INDEX_LOCK_FILE` **exclusively** for that call only; embedding a batch
  happens outside it, so readers wait at most one write call (tens of milliseconds; a persist of a 100k-window
  index, about a second), never for the whole ingest;
* a reader holds it **shared** while a new client makes its first read of each collection
  (:meth:`assistant.index.store.PaperStore.load`): the load of the vector files and the replay of the log.

Writers are preferred: a writer first takes a gate file (``.index.lock.gate``) exclusively and keeps it while it
waits and writes; a reader passes the gate (shared, released at once) before it takes the lock. Readers that
come while a writer waits queue behind it, so however many readers load the index, a writer waits for the
loads under way only (without the gate, readers that held the lock back to back kept an ingest out for the
whole :data:`LOCK_TIMEOUT_S`: ``flock`` grants a shared lock while an exclusive one waits).

Queries do not hold it. After that first read a client answers from the vectors it holds in memory and from
Chroma's SQLite (which has its own locking); it never reads the vector files again (Chroma 1.5's local
executor backfills a collection once per client: rust/frontend/src/executor/local.rs, and its vector-index
cache holds RLIMIT_NOFILE / 5 indexes, so none is evicted and loaded again). Measured with
benchmarks/issue43_reader_writer_stress.py (3 reader processes answering back to back while 600 papers are
ingested, 2 shared cores): holding it only for the loads,
readers waited 0.06 s in all over 120 loads and the ingest waited once in 73 write calls (0.5 s); holding it
around every answer as well, an answer waited 0.1 ms median but 149 ms at p95 and 0.5 s at most, and the ingest
waited on 61 of its 73 write calls (6.3 s), for no safety gained.

A reader's load writes to the vector files only when it replays 1,000 or more log records (Chroma then saves
the index): never after a writer's completed write call (the writer saves at that threshold itself), only after
a writer was killed between logging a batch and applying it. Such a load holds the lock shared, not alone.

Within a process the lock is re-entrant per thread (a nested hold of the same or a weaker mode costs nothing);
a thread that holds it shared may not ask for it exclusively (that would wait for itself):
:class:`RuntimeError`. Threads of one process exclude each other like processes do (each hold opens its own
file description).

Client/server mode (``chroma_host``) takes no lock: the server serialises writes and readers hold no files.
Neither does a platform without ``fcntl`` (Windows): there the lock is a no-op; an embedded index on Windows
is not protected against a reader opening it mid-write (the writer lock of ``assistant/ingest/pipeline.py``
needs ``fcntl`` too).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from assistant.errors import StoreNotReadyError

try:
    import fcntl
except ImportError:  # Windows: no flock (see the module docstring)
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from assistant.config import Settings

logger = logging.getLogger(__name__)

#: The lock file in the storage dir (not the writer lock ``.ingest.lock``: that one is held for a whole ingest).
INDEX_LOCK_FILE = ".index.lock"
#: Suffix of the writers' gate beside the lock file (``.index.lock.gate``): writer preference, see ``_hold``.
GATE_SUFFIX = ".gate"
#: Both files, which a storage folder moved aside keeps (other processes hold them open).
LOCK_FILES = (INDEX_LOCK_FILE, f"{INDEX_LOCK_FILE}{GATE_SUFFIX}")
#: How long a hold waits for the lock before giving up (a write call or a first read takes well under this).
LOCK_TIMEOUT_S = 120.0
#: Longest sleep between two tries while the lock is held by another process (also the most a waiter is late).
POLL_MAX_S = 0.005
#: A wait longer than this is logged (INFO).
SLOW_WAIT_S = 1.0

Mode = Literal["shared", "exclusive"]


@dataclass
class LockWaits:
    """How long this process waited for the index lock, per mode: holds, holds that had to wait, seconds in
    all and the longest wait. Read by the ingest's closing log line and by benchmarks."""

    holds: dict[str, int] = field(default_factory=lambda: {"shared": 0, "exclusive": 0})
    waited: dict[str, int] = field(default_factory=lambda: {"shared": 0, "exclusive": 0})
    seconds: dict[str, float] = field(default_factory=lambda: {"shared": 0.0, "exclusive": 0.0})
    longest: dict[str, float] = field(default_factory=lambda: {"shared": 0.0, "exclusive": 0.0})

    def add(self, mode: Mode, seconds: float, had_to_wait: bool) -> None:
        with _stats_lock:
            self.holds[mode] += 1
            self.waited[mode] += had_to_wait
            self.seconds[mode] += seconds
            self.longest[mode] = max(self.longest[mode], seconds)

    def summary(self, mode: Mode) -> str:
        """``"N holds, M waited, S s in all (longest L ms)"`` for ``mode``."""
        return (
            f"{self.holds[mode]} holds, {self.waited[mode]} waited, {self.seconds[mode]:.2f} s in all "
            f"(longest {1000 * self.longest[mode]:.0f} ms)"
        )


_stats_lock = threading.Lock()
#: This process's lock waits since it started.
WAITS = LockWaits()
_held = threading.local()  # .modes: {lock path: the mode this thread holds it in}
#: One first read (load) at a time per process: several threads loading one collection at once replayed
#: Chroma's write log into one vector index twice (a segfault; see PaperRetriever._reopen).
_load_mutex = threading.Lock()


class IndexLock:
    """The reader/writer lock of one embedded index (see the module docstring); a no-op in client/server mode
    or without ``fcntl``. Build it with :func:`index_lock`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @property
    def enabled(self) -> bool:
        """False when holding it does nothing (client/server mode, no ``fcntl``)."""
        return self.path is not None

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the lock shared (a reader's first read through a new client). A storage folder where the lock
        file cannot be opened (read-only, and no writer ever made the file) has no writer: nothing is held then.

        Raises:
            StoreNotReadyError: another process held it exclusively for :data:`LOCK_TIMEOUT_S`.
        """
        with self._hold("shared"):
            yield

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the lock exclusively (one Chroma write call, or a few that belong together).

        Raises:
            StoreNotReadyError: readers or another writer held it for :data:`LOCK_TIMEOUT_S`.
            RuntimeError: this thread holds it shared (it would wait for itself).
            OSError: the lock file cannot be created (the storage folder is not writable).
        """
        with self._hold("exclusive"):
            yield

    @contextmanager
    def loading(self) -> Iterator[None]:
        """:meth:`shared`, and one thread of this process at a time: for a client's first read of its
        collections (:meth:`assistant.index.store.PaperStore.load`).

        Raises:
            StoreNotReadyError: as :meth:`shared`.
        """
        with self.shared(), _load_mutex:
            yield

    @contextmanager
    def _hold(self, mode: Mode) -> Iterator[None]:
        if self.path is None or fcntl is None:
            yield
            return
        modes: dict[str, Mode] = _held.__dict__.setdefault("modes", {})
        key = str(self.path)
        held = modes.get(key)
        if held is not None:  # nested in this thread: the outer hold covers it
            if held == "shared" and mode == "exclusive":
                raise RuntimeError(f"{self.path}: asked for exclusively by a thread that holds it shared")
            yield
            return
        lock = self._open(self.path, mode)
        if lock is None:  # a read-only folder that no writer ever locked
            yield
            return
        try:
            # the gate first: a writer holds it while it waits for the lock and while it writes; a reader only passes
            # it (shared, released at once). So readers that come while a writer waits queue behind that writer:
            # however many readers there are, a writer waits for the loads under way only.
            gate = self._open(self.path.with_name(f"{self.path.name}{GATE_SUFFIX}"), mode)
            try:
                t0 = time.perf_counter()
                waited = gate is not None and self._flock(gate, mode, t0)
                waited = self._flock(lock, mode, t0) or waited
                if gate is not None and mode == "shared":
                    fcntl.flock(gate, fcntl.LOCK_UN)
                seconds = time.perf_counter() - t0
                WAITS.add(mode, seconds, waited)
                if seconds > SLOW_WAIT_S:
                    logger.info("waited %.1f s for the %s index lock %s", seconds, mode, self.path)
                modes[key] = mode
                try:
                    yield
                finally:
                    del modes[key]
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    if gate is not None and mode == "exclusive":
                        fcntl.flock(gate, fcntl.LOCK_UN)
            finally:
                if gate is not None:
                    gate.close()
        finally:
            lock.close()

    @staticmethod
    def _open(path: Path, mode: Mode) -> IO[str] | None:
        """``path`` opened for flock; None for a reader when it can be neither created nor read (a read-only
        folder no writer ever locked). A writer's failure to create it is raised (OSError)."""
        if mode == "exclusive":
            path.parent.mkdir(parents=True, exist_ok=True)
            return open(path, "a+")  # noqa: SIM115 - closed by _hold
        try:
            return open(path, "a+")  # noqa: SIM115 - closed by _hold
        except OSError:
            try:
                return open(path)  # noqa: SIM115 - a read-only folder: flock works on a read-only file
            except OSError as e:
                logger.debug("no index lock at %s (%s): nothing writes there", path, e)
                return None

    def _flock(self, f: IO[str], mode: Mode, since: float) -> bool:
        """flock ``f`` in ``mode``, trying every few milliseconds until :data:`LOCK_TIMEOUT_S` after ``since``;
        True when it had to wait."""
        assert fcntl is not None
        flag = fcntl.LOCK_SH if mode == "shared" else fcntl.LOCK_EX
        pause = 0.0002
        waited = False
        while True:
            try:
                fcntl.flock(f, flag | fcntl.LOCK_NB)
                return waited
            except BlockingIOError:
                waited = True
                if time.perf_counter() - since > LOCK_TIMEOUT_S:
                    raise StoreNotReadyError(
                        f"The index lock {self.path} has been held by another process for over "
                        f"{LOCK_TIMEOUT_S:.0f} s (a write or a reader's first read takes well under a second). "
                        "If an assistant process hangs, stop it; then run the command again."
                    ) from None
                time.sleep(pause)
                pause = min(2 * pause, POLL_MAX_S)


#: The lock that does nothing (client/server mode; a store built without settings).
NO_LOCK = IndexLock(None)


def index_lock(settings: Settings) -> IndexLock:
    """The lock of the index for ``settings``: :data:`INDEX_LOCK_FILE` in its storage dir (embedded mode), or
    :data:`NO_LOCK` (client/server mode, or no ``fcntl``)."""
    if settings.storage.chroma_host or fcntl is None:
        return NO_LOCK
    return IndexLock(settings.storage.storage_dir / INDEX_LOCK_FILE)
