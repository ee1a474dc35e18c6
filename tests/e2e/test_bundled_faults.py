"""The real bundled model server under faults and concurrency (issue 11): killed with SIGKILL in the middle
of an answer (the user gets the verified sentences so far plus cited passages, the next question restarts
it), and 2 or 4 concurrent streams, each of which must finish whole and unmixed (llama-cpp-python's server cuts a
running stream short when another request arrives unless ``--interrupt_requests False``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from openai import OpenAI

from assistant.service import Assistant, build_assistant

pytestmark = pytest.mark.llm

DUALFORMER = "000_43469673d6f8aaa0.txt#1"
QUESTIONS = [  # dev-style questions about four different papers
    "Summarize the DUALFormer paper.",
    "Which abstract introduces a State Machine Module (SMM), and what problem is it meant to help with?",
    "Which paper introduces A-Bench, and what does it evaluate?",
    "Which paper proposes EM-LLM, and does it need fine-tuning?",
]


@pytest.fixture(scope="module")
def assistant(seeded_settings, embed_model) -> Iterator[Assistant]:  # type: ignore[no-untyped-def]
    with build_assistant(seeded_settings, embed_model=embed_model) as a:
        yield a


@pytest.mark.slow  # with the others of the slow tier: ./scripts/test.sh --all (CI)
def test_bundled_server_killed_mid_answer(assistant: Assistant) -> None:
    server = assistant._llm_server
    assert server is not None and server.is_running()
    backend = assistant.answerer._backend
    real_stream = backend.stream
    killed: list[bool] = []

    def stream_then_kill(messages, max_tokens=None):  # type: ignore[no-untyped-def]
        for i, delta in enumerate(real_stream(messages, max_tokens)):
            yield delta
            if i == 3 and not killed:  # a few tokens in: SIGKILL the real server process
                server._proc.kill()
                killed.append(True)

    backend.stream = stream_then_kill  # type: ignore[method-assign]
    session = assistant.new_session()
    try:
        answer = session.ask("On how many real-world datasets was DUALFormer evaluated?")
    finally:
        backend.stream = real_stream  # type: ignore[method-assign]
    assert killed and answer.model_used
    assert ("killed by SIGKILL in the middle of the answer" in answer.notice
            and "Showing the most relevant passages" in answer.notice)
    assert answer.sentences and all(s.citations for s in answer.sentences)
    assert answer.citations[0].paper.id == DUALFORMER
    nxt = session.ask("How many real-world datasets was it compared on?")  # the next model question: server restarted
    assert server.is_running()
    assert "SIGKILL" not in nxt.notice and nxt.citations


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9-]+", text.lower()))


def _overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' lower-cased word sets, in [0, 1]."""
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / max(1, len(wa | wb))


@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
@pytest.mark.parametrize("parallel", [2, 4])
def test_concurrent_streams_finish_whole_and_unmixed(assistant: Assistant, parallel: int) -> None:
    """Each of 2 or 4 streams sent at once ends with the server's finish reason (none cut short by the next
    request) and is closest, word for word, to the same prompt's answer sent alone (none mixed with another).

    Not word-for-word equality: llama-cpp-python reuses the KV cache of the previous prompt's prefix, and
    where that prefix ends changes how the rest is batched and so the last bits of the logits; one greedy
    token can then differ (seen with 2 and with 4 streams in CI runs)."""
    server = assistant._llm_server
    assert server is not None
    server.ensure_running()
    client = OpenAI(base_url=server.base_url, api_key="not-needed", timeout=120)

    def ask(question: str) -> tuple[str, str | None]:
        text, finish = [], None
        for chunk in client.chat.completions.create(
            model=server.model, messages=[{"role": "user", "content": f"In two sentences: {question}"}],
            temperature=0.0, max_tokens=160, stream=True,
        ):
            if chunk.choices:
                text.append(chunk.choices[0].delta.content or "")
                finish = chunk.choices[0].finish_reason or finish
        return "".join(text), finish

    questions = QUESTIONS[:parallel]
    solo = [ask(q) for q in questions]
    with ThreadPoolExecutor(parallel) as pool:  # all sent at once
        together = list(pool.map(ask, questions))
    assert all(finish in ("stop", "length") and len(text) > 40 for text, finish in solo + together), together
    for i, (text, _) in enumerate(together):
        overlaps = [_overlap(text, s) for s, _ in solo]
        assert max(range(parallel), key=overlaps.__getitem__) == i, (i, overlaps, text)

    if parallel > 2:  # the whole answer path for two only (suite time)
        return
    # the same through the whole answer path (what parallel chats do): the same paper, mode and notice
    alone = [assistant.new_session().ask(q) for q in questions]
    with ThreadPoolExecutor(parallel) as pool:
        loaded = list(pool.map(lambda q: assistant.new_session().ask(q), questions))
    for a, b in zip(alone, loaded):
        assert b.sentences and all(s.citations for s in b.sentences)
        assert (b.citations[0].paper.id, b.mode, b.notice) == (a.citations[0].paper.id, a.mode, a.notice)
