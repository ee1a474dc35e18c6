"""LLM endpoint faults: slow (timeout), empty stream, nonsense, invented citation numbers, a dead bundled
server. Each gives a clear notice and the cited extractive answer, and the next question works."""

from __future__ import annotations

import time

import pytest

from assistant.llm.client import OpenAIChatBackend
from assistant.service import build_assistant
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.timing import time_bound_s

Q = "Which graph transformer runs global self-attention on the feature dimension?"
DUALFORMER = "000_43469673d6f8aaa0.txt#1"


def test_slow_endpoint_times_out_then_next_question_works(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAIServer([5.0,
                           "DUALFormer performs the global self-attention module on feature dimensions."]) as server:
        backend = OpenAIChatBackend(server.base_url, "k", "scripted", timeout_s=1.0)
        with build_assistant(seeded_settings, embed_model=embed_model, backend=backend) as assistant:
            t0 = time.monotonic()
            slow = assistant.ask(Q)
            assert time.monotonic() - t0 < time_bound_s(1.0, 1.0)  # the 1 s timeout, not the 5 s reply; scales
            assert slow.mode == "extractive" and "timed out" in slow.notice
            assert slow.citations[0].paper.id == DUALFORMER
            ok = assistant.ask(Q)
    assert ok.mode == "generated" and ok.citations[0].paper.id == DUALFORMER


def test_empty_and_nonsense_streams_fall_back_to_cited_evidence(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    replies: list[str | int | float] = ["", "}}}{{{ ]]] lorem [99] [1][2][3] <source> ipsum", "[42] [7]."]
    with FakeOpenAIServer(replies) as server:
        backend = OpenAIChatBackend(server.base_url, "k", "scripted", timeout_s=10)
        with build_assistant(seeded_settings, embed_model=embed_model, backend=backend) as assistant:
            for _ in replies:
                answer = assistant.ask(Q)
                # the cited answer from the abstracts, saying plainly that nothing the model wrote passed (issue 41)
                assert answer.mode == "extractive" and answer.model_used and answer.sentences
                assert "could be checked" in answer.notice
                assert [c.paper.id for c in answer.citations] == [DUALFORMER]
                assert all(s.citations == (1,) for s in answer.sentences)


@pytest.mark.slow  # with the others of the slow tier: ./scripts/test.sh --all (CI)
def test_dead_bundled_model_server_is_restarted(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    with build_assistant(seeded_settings, embed_model=embed_model) as assistant:  # bundled model
        server = assistant._llm_server
        assert server is not None and server.is_running()
        server._proc.kill()  # type: ignore[union-attr]
        server._proc.wait()  # type: ignore[union-attr]
        answer = assistant.ask("On how many real-world datasets was DUALFormer evaluated?")  # the small model is asked
        assert server.is_running()
        assert not answer.notice.startswith("The language model failed")
        assert answer.citations[0].paper.id == DUALFORMER


def test_truncated_stream_keeps_only_verified_sentences(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    from tests.support.fake_openai_server import TRUNCATE

    reply = ("DUALFormer performs the global self-attention module on feature dimensions. "
             "It also reduces intra-class variance and enhances the discriminability of node representations. ") * 2
    with FakeOpenAIServer([TRUNCATE + reply,
                           "DUALFormer performs the global self-attention module on feature dimensions."]) as server:
        backend = OpenAIChatBackend(server.base_url, "k", "scripted", timeout_s=10)
        with build_assistant(seeded_settings, embed_model=embed_model, backend=backend) as assistant:
            cut = assistant.ask(Q)
            assert cut.citations and cut.citations[0].paper.id == DUALFORMER
            assert all(s.citations == (1,) for s in cut.sentences)
            assert assistant.ask(Q).mode == "generated"  # the next question works
