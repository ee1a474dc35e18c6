"""Reading papers ahead (assistant/llm/read_ahead.py): each paper once, only while the model is idle, stoppable."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from assistant.errors import LLMUnavailableError
from assistant.llm.prompts import READ_AHEAD, reading_messages
from assistant.llm.read_ahead import ReadAhead

SOURCES = [("Paper A", "We study A. It works."), ("Paper B", "We study B."), ("Paper C", "We study C.")]


class Backend:
    """Records what it was asked; ``busy`` makes it report no idleness (an answer in flight)."""

    model = "scripted"

    def __init__(self, fail_at: int = -1) -> None:
        self.asked: list[Sequence[dict[str, str]]] = []
        self.busy = threading.Event()
        self.fail_at = fail_at

    def idle_s(self) -> float:
        return 0.0 if self.busy.is_set() else 60.0

    def close(self) -> None:
        self.closed = True

    def yes_probability(self, messages: Sequence[dict[str, str]]) -> float:
        if len(self.asked) == self.fail_at:
            raise LLMUnavailableError("The bundled LLM server was killed by SIGKILL.", reason="crashed")
        self.asked.append(messages)
        return 0.5


def test_each_paper_is_read_once_in_order_with_the_prefix_its_questions_share() -> None:
    backend = Backend()
    ahead = ReadAhead(backend, SOURCES, quiet_s=0.01).start()
    assert ahead.finished.wait(5)
    assert backend.asked == [reading_messages(s, READ_AHEAD) for s in SOURCES]
    assert (ahead.done, ahead.total) == (3, 3)
    # a later question about paper A shares everything before its ask: the server reuses the reading
    question = reading_messages(SOURCES[0], "Question: what is A?")
    assert question[0] == backend.asked[0][0]
    assert question[1]["content"].split("\n\n")[0] == backend.asked[0][1]["content"].split("\n\n")[0]


def test_nothing_is_read_while_an_answer_asks_the_model() -> None:
    backend = Backend()
    backend.busy.set()
    ahead = ReadAhead(backend, SOURCES, quiet_s=0.01).start()
    time.sleep(0.3)
    assert backend.asked == []  # waiting for the model to be idle
    backend.busy.clear()
    assert ahead.finished.wait(5) and len(backend.asked) == 3


def test_stop_ends_it_and_a_model_that_cannot_be_asked_ends_it_quietly() -> None:
    backend = Backend()
    backend.busy.set()
    ahead = ReadAhead(backend, SOURCES, quiet_s=0.01).start()
    ahead.stop(timeout_s=5)
    assert ahead.finished.is_set() and backend.asked == []

    failing = Backend(fail_at=1)
    ahead = ReadAhead(failing, lambda: SOURCES, quiet_s=0.01).start()
    assert ahead.finished.wait(5)
    assert ahead.done == 1 and len(failing.asked) == 1  # stopped at the failure, nothing raised


def test_a_closed_bundled_backend_never_restarts_the_server() -> None:
    """The assistant closing stops the read-ahead without waiting and closes its backend: a reading that was about to
    be sent fails instead of starting the model server again (service.BundledChatBackend.close)."""
    import pytest

    from assistant.config import Settings
    from assistant.service import BundledChatBackend

    class Server:
        model = "qwen1.5b"
        started = 0

        def ensure_running(self) -> None:
            self.started += 1

    server = Server()
    backend = BundledChatBackend(server, Settings())  # type: ignore[arg-type]
    assert backend.idle_s() >= 0.0
    backend.close()
    with pytest.raises(LLMUnavailableError) as e:
        backend.yes_probability(reading_messages(SOURCES[0], READ_AHEAD))
    assert e.value.reason == "cancelled" and server.started == 0
    assert backend.idle_s() >= 0.0  # the failed request is not left in flight
