"""``ASSISTANT_LLM_JUDGE``: in the capable profile the configured model also judges each sentence the local
verifier keeps, against the evidence it is aligned to (assistant/verify/judge.py). Scripted server, real
index, real embeddings, real support model: agreement keeps the sentence, disagreement drops it, a malformed
verdict (or none) leaves the local verifier's decision."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assistant.verify.judge import JUDGE_SYSTEM, parse_verdict
from tests.support.fake_openai_server import FakeOpenAIServer

DUALFORMER = "000_43469673d6f8aaa0.txt#1"
Q = "Which graph transformer runs global self-attention on the feature dimension?"
TRUE = "DUALFormer performs the global self-attention module on feature dimensions [1]."


def scripted(verdict: str) -> Any:
    """The answer request gets TRUE; every judge request gets ``verdict``."""

    def reply(payload: dict[str, Any]) -> str:
        return verdict if payload["messages"][0]["content"] == JUDGE_SYSTEM else TRUE

    return reply


def judge_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["messages"][0]["content"] == JUDGE_SYSTEM]


@pytest.mark.parametrize(
    ("verdict", "kept"),
    [
        ('{"supported": true, "reason": "stated in the evidence"}', True),  # agreement
        ('```json\n{"supported": true}\n```', True),  # a fenced verdict is still strict JSON
        ('{"supported": false, "reason": "the evidence says nothing about this"}', False),  # disagreement
        ("Yes, this is supported.", True),  # malformed: the local verifier decides (it keeps TRUE)
        ('{"supported": "yes"}', True),  # wrong type: malformed
    ],
)
def test_judge_agrees_disagrees_or_is_ignored(scripted_assistant, verdict: str, kept: bool) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAIServer(scripted(verdict)) as server, scripted_assistant(
        server, llm_profile="capable", llm_judge=True
    ) as assistant:
        answer = assistant.ask(Q)
    asked = judge_requests(server)
    assert asked, "the judge was not asked"
    evidence = asked[0]["messages"][1]["content"]
    assert "SENTENCE:\nDUALFormer performs" in evidence and "feature dimension" in evidence.split("EVIDENCE:")[1]
    generated = [s for s in answer.sentences if "performs the global self-attention module" in s.text]
    if kept:
        assert answer.mode == "generated" and generated and generated[0].citations == (1,)
        assert answer.citations[0].paper.id == DUALFORMER
    else:
        assert not generated and any("performs the global self-attention" in d for d in answer.dropped)
        assert answer.citations and answer.citations[0].paper.id == DUALFORMER  # the extractive answer follows


def test_judge_endpoint_failure_leaves_the_local_decision(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    replies: list[str | int | float] = [TRUE, 500, 500, 500, 500]
    with FakeOpenAIServer(replies) as server, scripted_assistant(
        server, llm_profile="capable", llm_judge=True
    ) as assistant:
        answer = assistant.ask(Q)
    assert answer.mode == "generated" and answer.citations[0].paper.id == DUALFORMER


def test_judge_is_off_by_default(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAIServer(scripted('{"supported": false}')) as server, scripted_assistant(
        server, llm_profile="capable"
    ) as assistant:
        answer = assistant.ask(Q)
    assert not judge_requests(server) and answer.mode == "generated"


def test_parse_verdict_is_strict() -> None:
    assert parse_verdict('{"supported": true, "reason": "ok"}') is not None
    assert parse_verdict(json.dumps({"supported": False})).supported is False  # type: ignore[union-attr]
    for bad in ("", "true", '{"supported": 1}', '{"supported": true, "reason": 3}', '[{"supported": true}]',
                'Sure! {"supported": true}'):
        assert parse_verdict(bad) is None, bad
