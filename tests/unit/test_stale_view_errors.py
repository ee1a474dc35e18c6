"""Which Chroma errors a reader treats as a stale view of the index (reopen and read again) and which stay real
errors (assistant/index/store.py ``is_stale_view_error``)."""

from __future__ import annotations

import pytest
from chromadb.errors import ChromaError, InternalError, NotFoundError

from assistant.index.store import is_stale_view_error


@pytest.mark.parametrize(
    "message",
    [
        "Error executing plan: Error finding id",
        "Error executing plan: Error getting embedding",
        "Error executing plan: Error sending backfill request to compactor: Failed to apply logs to the hnsw "
        "segment writer",
        "Missing metadata segment",
        "Collection abc does not exist.",
    ],
)
def test_errors_of_an_outdated_view_are_stale(message: str) -> None:
    assert is_stale_view_error(InternalError(message))


def test_a_missing_collection_is_stale_and_other_errors_are_real() -> None:
    assert is_stale_view_error(NotFoundError("gone"))
    assert not is_stale_view_error(ChromaError("disk I/O error"))
    assert not is_stale_view_error(RuntimeError("Error finding id"))  # not Chroma's: a bug of ours
