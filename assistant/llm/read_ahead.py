"""Read the indexed papers ahead, while nobody is asking: each abstract's reading is then in the bundled model
server's prompt cache (RAM, and on disk across restarts: :mod:`assistant.llm.bundled_server`) before the first
question about it, so that question pays only for its own words (issue 59: "papers can be read ahead, the seeds
after ingest, in the background, and their states kept across restarts").

A reading is the prefix every question about one paper shares (:func:`assistant.llm.prompts.reading_messages`);
reading it ahead is one request of that prefix with :data:`~assistant.llm.prompts.READ_AHEAD` and one generated
token. On 2 cores a first reading takes 5-8 s, one already on disk well under a second.

An answer never waits for more than the one reading under way: a reading is sent only when the model has been
idle for ``quiet_s`` (no request in flight, none finished in that time), and the server handles one request at a
time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from assistant.errors import LLMUnavailableError

logger = logging.getLogger(__name__)


class IdleBackend(Protocol):
    """A chat backend that says how long it has been idle (:class:`assistant.service.BundledChatBackend`)."""

    def yes_probability(self, messages: Sequence[dict[str, str]]) -> float: ...

    def idle_s(self) -> float:
        """Seconds since its last request finished; 0.0 while one is in flight."""
        ...


class ReadAhead:
    """A daemon thread that reads ``sources`` (``(title, abstract)`` pairs, in order) into the model's prompt
    cache, one at a time, each when ``backend`` has been idle ``quiet_s`` seconds.

    Args:
        backend: the answering model's backend (its requests and idleness).
        sources: the papers to read, as ``(title, abstract)``; read lazily, so a callable is accepted too.
        quiet_s: seconds of model idleness before each reading.

    ``done`` and ``total`` count progress; :meth:`stop` ends it after the reading under way. A model that cannot be
    asked (:class:`LLMUnavailableError`) ends it, logged once: answers report that failure themselves.
    """

    def __init__(
        self,
        backend: IdleBackend,
        sources: Sequence[tuple[str, str]] | Callable[[], Sequence[tuple[str, str]]],
        quiet_s: float = 1.0,
    ) -> None:
        self._backend = backend
        self._sources = sources
        self._quiet_s = quiet_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="read-ahead", daemon=True)
        self.done = 0
        self.total = 0
        self.finished = threading.Event()

    def start(self) -> ReadAhead:
        """Start reading in the background; returns self."""
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop after the reading under way; waits at most ``timeout_s`` for it (0: not at all, e.g. when the model
        server is stopped next, which cuts it off)."""
        self._stop.set()
        if timeout_s > 0 and self._thread.is_alive():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        from assistant.llm.prompts import READ_AHEAD, reading_messages

        try:
            sources = self._sources() if callable(self._sources) else self._sources
            self.total = len(sources)
            t0 = time.monotonic()
            for source in sources:
                while not self._stop.is_set() and self._backend.idle_s() < self._quiet_s:
                    self._stop.wait(self._quiet_s / 4)
                if self._stop.is_set():
                    return
                self._backend.yes_probability(reading_messages(source, READ_AHEAD))
                self.done += 1
            logger.info("read %d papers ahead in %.0f s", self.done, time.monotonic() - t0)
        except LLMUnavailableError as e:
            if not self._stop.is_set():  # stopped on purpose: the cut-off reading is no news
                logger.warning("reading papers ahead stopped after %d: %s", self.done, str(e).splitlines()[0])
        finally:
            self.finished.set()
