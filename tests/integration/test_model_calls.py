"""The model requests of one answer as a whole (``llm/client.ModelCalls``, issue 43.5), against the scripted
OpenAI-compatible server: their usage is what the server reports (else an estimate), and a cancel cuts a stream
off at once, from another thread, while its read is blocked (the server sees the connection close)."""

from __future__ import annotations

import threading
import time

import pytest

from assistant.errors import LLMUnavailableError
from assistant.llm.client import ModelCalls, OpenAIChatBackend, Usage, estimate_tokens
from tests.support.fake_openai_server import PACED, FakeOpenAIServer, prompt_tokens

MESSAGES = [{"role": "user", "content": "Say three sentences."}]


def _backend(llm: FakeOpenAIServer) -> OpenAIChatBackend:
    return OpenAIChatBackend(llm.base_url, "not-needed", "scripted", timeout_s=30)


def test_usage_is_what_the_server_reports_summed_over_threads() -> None:
    with FakeOpenAIServer(["Alpha beta gamma.", "Delta."]) as llm:
        backend, calls = _backend(llm), ModelCalls()

        def ask() -> None:
            with calls.active():
                "".join(backend.stream(MESSAGES))

        threads = [threading.Thread(target=ask) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with calls.active():
            backend.yes_probability(MESSAGES)
        assert all(r["stream_options"] == {"include_usage": True} for r in llm.requests)
        # each stream: its prompt and one token per event, as reported; the self-check: its prompt and 1
        assert calls.usage == Usage(3 * prompt_tokens({"messages": MESSAGES}), 3 + 1 + 1)
        assert calls.usage.as_dict()["total_tokens"] == calls.usage.prompt_tokens + calls.usage.completion_tokens
        "".join(backend.stream(MESSAGES))  # outside any ModelCalls: counted nowhere
        assert calls.usage.completion_tokens == 5


def test_a_server_that_reports_no_usage_is_estimated() -> None:
    with FakeOpenAIServer(["TRUNCATE:One two three four five six seven."]) as llm:
        calls = ModelCalls()
        with calls.active():
            "".join(_backend(llm).stream(MESSAGES))  # cut before its usage event
        assert calls.usage == Usage(estimate_tokens(MESSAGES[0]["content"]), 3)


def test_cancel_cuts_a_blocked_stream_off_at_once() -> None:
    with FakeOpenAIServer([PACED + "First sentence here. Second one. Third one. Fourth one."]) as llm:
        calls = ModelCalls()
        got: list[str] = []
        with calls.active(), pytest.raises(LLMUnavailableError) as cancelled:
            for delta in _backend(llm).stream(MESSAGES):
                got.append(delta)
                threading.Timer(0.3, calls.cancel).start()  # while the next read waits (sentences 1.5 s apart)
                asked = time.monotonic() + 0.3
        assert cancelled.value.reason == "cancelled" and got == ["First sentence here. "]
        assert time.monotonic() - asked < 1.0
        deadline = time.monotonic() + 5
        while not llm.hangups and time.monotonic() < deadline:
            time.sleep(0.02)
        assert llm.hangups and llm.hangups[0] - asked < 1.0 and llm.finished == 0
        with calls.active(), pytest.raises(LLMUnavailableError):  # and refuses new requests
            next(_backend(llm).stream(MESSAGES))
        assert len(llm.requests) == 1
