"""The storage environment of the embedded index, checked without opening Chroma: the index path is (or can
become) a folder, Python's SQLite is new enough, and a failure whose cause lies outside the index (a full disk,
a read-only folder, a vector-size mismatch) is explained in one line (:func:`explain_failure`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import StorageEnvironmentError, StoreNotReadyError

if TYPE_CHECKING:
    from assistant.config import Settings


def store_location(settings: Settings) -> str:
    """Where the index lives, for messages: ``chroma://host:port`` for a server, else the storage folder."""
    if settings.storage.chroma_host:
        return f"chroma://{settings.storage.chroma_host}:{settings.storage.chroma_port}"
    return str(settings.storage.storage_dir)


def require_existing_storage(settings: Settings) -> None:
    """In embedded mode the storage folder must already exist for reading: readers never create one.

    Raises:
        StorageEnvironmentError: the storage path (or a folder above it) is a file.
        StoreNotReadyError: it does not exist; the message says to run ``assistant ingest``.
    """
    if settings.storage.chroma_host:
        return
    check_storage_path(settings)
    d = settings.storage.storage_dir
    if not d.is_dir():
        raise StoreNotReadyError(
            f"No index: {d} does not exist. Run `assistant ingest` (with the same --storage-dir) first."
        )


#: Where the storage path comes from, as a user would set it.
STORAGE_SETTING = "--storage-dir / ASSISTANT_STORAGE_DIR"
#: Chroma's lowest SQLite (chromadb/__init__.py refuses older ones at import, with colour codes in the text).
MIN_SQLITE = (3, 35, 0)
#: Free bytes below which a storage failure is put down to a full disk (a full disk leaves a few KiB at most;
#: Chroma then reports it in other words, e.g. "Error in compaction").
DISK_FULL_BYTES = 8 * 1024 * 1024
_READ_ONLY_TEXT = re.compile(r"readonly database|read-only file system|permission denied|not permitted", re.I)
_DISK_FULL_TEXT = re.compile(r"no space left|disk is full|database or disk is full|disk quota", re.I)


def check_storage_path(settings: Settings) -> None:
    """Embedded mode: the storage path is a folder, or can become one (nothing on the way is a file). Cheap.

    Raises:
        StorageEnvironmentError: names the path, the setting and what to do; the file is never touched.
    """
    if settings.storage.chroma_host:
        return
    d = settings.storage.storage_dir
    for p in (d, *d.parents):
        if p.exists():
            if not p.is_dir():
                which = "is a file" if p == d else f"is inside {p}, which is a file"
                raise StorageEnvironmentError(
                    f"The index folder {d} ({STORAGE_SETTING}) {which}, not a folder. Pass a folder for the index "
                    "(it is created if missing); the file is left as it is."
                )
            return


def check_sqlite() -> None:
    """Python's SQLite is new enough for Chroma (:data:`MIN_SQLITE`); checked before ``import chromadb``.

    Raises:
        StorageEnvironmentError: names the version found and what to do.
    """
    import sqlite3

    if tuple(sqlite3.sqlite_version_info) < MIN_SQLITE:
        need = ".".join(map(str, MIN_SQLITE))
        raise StorageEnvironmentError(
            f"This Python uses SQLite {sqlite3.sqlite_version}, but the index (Chroma) needs SQLite {need} or newer. "
            "Run the assistant with a Python built with a newer SQLite (a newer OS, or a python.org / conda / uv "
            "Python) and re-run scripts/setup.sh; the index is not touched."
        )


def _nearest_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path("/")


def storage_failure(error: BaseException, settings: Settings) -> StorageEnvironmentError | None:
    """The cause of a failure to read or write the embedded index, when it lies outside the index: a full
    disk (ENOSPC, SQLite's "disk is full", or under :data:`DISK_FULL_BYTES` free on the index's disk whatever
    the message) or a read-only folder (EROFS/EACCES/EPERM, SQLite's "readonly database", or a folder or index
    file this process cannot write). None when neither applies (client/server mode included).

    Returns:
        A :class:`StorageEnvironmentError` whose one-line message names the folder, the cause and the fix.
    """
    if settings.storage.chroma_host:
        return None
    import errno
    import os
    import shutil

    d = settings.storage.storage_dir
    text = f"{error} {error.__cause__ or ''}"
    code = getattr(error, "errno", None)
    try:
        free = shutil.disk_usage(_nearest_existing(d)).free
    except OSError:
        free = -1
    if isinstance(error, OSError):  # an OS error is the index's only when it is about a file of the index
        if error.filename is None:  # stdout, a pipe: only a nearly full index disk makes it the index's
            if not 0 <= free < DISK_FULL_BYTES:
                return None
        elif not Path(os.path.abspath(error.filename)).is_relative_to(os.path.abspath(d)):
            return None
    if code in (errno.ENOSPC, errno.EDQUOT) or _DISK_FULL_TEXT.search(text) or 0 <= free < DISK_FULL_BYTES:
        return StorageEnvironmentError(
            f"The disk holding the index folder {d} is full "
            f"({max(free, 0) / 2**20:.1f} MiB free; {type(error).__name__}). "
            "Free some space, or pass a folder on another disk with --storage-dir, then run the command again: "
            "the index is not damaged, what was committed is kept and the next `assistant ingest` resumes."
        )
    files = [p for p in (d, d / "chroma.sqlite3") if p.exists()]
    unwritable = [p for p in files if not os.access(p, os.W_OK)]
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or _READ_ONLY_TEXT.search(text) or unwritable:
        where = _nearest_existing(d)
        return StorageEnvironmentError(
            f"The index folder {where} is read-only for this process ({short_error(error)}); the index is not damaged, "
            "but Chroma writes to its folder even to read (its SQLite journal). Make the folder writable for this "
            "user (remount it read-write, or `chmod -R u+w` it), or copy it to a writable place and pass that "
            "with --storage-dir."
        )
    return None


_DIMENSION_TEXT = re.compile(r"dimension", re.I)


def explain_failure(error: BaseException, settings: Settings) -> StoreNotReadyError | None:
    """A user-facing error for a failure met while using the index, when its cause is known: the cases of
    :func:`storage_failure`, and Chroma's vector-size error (a query vector of another size than the index's:
    the embedding model changed under the same name or folder). None otherwise (then it is a bug to report).
    ``AssistantError``s are already user-facing and are returned as they are."""
    from assistant.errors import AssistantError

    if isinstance(error, AssistantError):
        return error if isinstance(error, StoreNotReadyError) else None
    cause = storage_failure(error, settings)
    if cause is not None:
        return cause
    if type(error).__name__ == "InvalidArgumentError" and _DIMENSION_TEXT.search(str(error)):
        return StoreNotReadyError(
            f"The index at {store_location(settings)} holds vectors of another size than the embedding model "
            f"{settings.embed_identity()} now makes ({short_error(error)}): the model changed under the same name or "
            "folder. Put back the model that built the index, or run `assistant ingest --rebuild` to rebuild the "
            "index with this one."
        )
    return None


def short_error(error: BaseException) -> str:
    """``Type: first line of the message`` (at most 160 characters), for one-line errors."""
    import os

    text = (getattr(error, "strerror", None) or str(error)).strip().splitlines()[0] if str(error).strip() else ""
    text = text.replace(os.linesep, " ")
    return f"{type(error).__name__}: {text[:160]}" if text else type(error).__name__
