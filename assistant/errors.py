"""The few exceptions the assistant raises; each message says what happened and what to do."""

from __future__ import annotations


class AssistantError(Exception):
    """Base class: a problem the user can act on. The CLI exits 1 and the UI shows the message."""


class ConfigError(AssistantError):
    """A setting is invalid (names the field and its ``ASSISTANT_*`` variable)."""


class CorpusFormatError(AssistantError):
    """An input file cannot be parsed (names the file and line)."""


class StoreNotReadyError(AssistantError):
    """The index is missing, empty or built with other settings: run ``assistant ingest``."""


class WriterBusyError(StoreNotReadyError):
    """Another process holds the index's writer lock (an ingest, rebuild or delete is running); nothing was
    changed. Readers are not affected: they keep answering from the index as it is."""


class StorageEnvironmentError(StoreNotReadyError):
    """The index cannot be used for a cause outside it — its folder is read-only, its disk is full, the storage
    path is a file, Python's SQLite is too old — while the index itself may be healthy: the message names the
    cause and the fix, and nothing (``ingest --rebuild`` included) may move or drop the index because of it."""


class EmbeddingUnavailableError(AssistantError):
    """The embedding endpoint (``ASSISTANT_EMBED_BASE_URL``) could not be reached after retries, refused the
    request, or answered with vectors that cannot be used (names the URL, the model and what to do).

    Attributes:
        reason: ``"unreachable"`` (connection refused / reset / timed out, after retries), ``"http"`` (an error
            status), or ``"invalid"`` (wrong number of vectors, inconsistent dimension, not numbers).
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class LLMUnavailableError(AssistantError):
    """The LLM endpoint could not be reached, failed mid-stream or answered with an error (names base_url
    and model).

    Attributes:
        reason: ``"timeout"``, ``"unreachable"``, ``"connection"``, ``"http"``, ``"stream"``,
            ``"crashed"`` (the bundled server
            died, e.g. by SIGILL), ``"cancelled"`` (``ModelCalls.cancel``: the client that asked has gone) or
            ``"unavailable"`` (not started / not configured).
        summary: the message without its ``hint``.
    """

    def __init__(self, message: str, *, reason: str = "unavailable", hint: str = "") -> None:
        super().__init__(f"{message} {hint}".strip())
        self.reason = reason
        #: the message without the hint (what to check or do), for one-line notices
        self.summary = message
