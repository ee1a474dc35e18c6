"""End to end with the real bundled 1.5B model (Qwen2.5-Coder-1.5B-Instruct, the default writer), real Chroma and
real embeddings: the model writes the answer, the verifier keeps its sentences, and the answer says which ones it
wrote. Slow (a cold model load is ~45 s on 2 cores), so one server for the module and few questions; the rest of
the suite runs the 135M model (tests/conftest.py sets ``ASSISTANT_LLM_BUNDLED=smollm2`` unless told otherwise)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assistant.answer.render import answer_to_dict
from assistant.service import Assistant, build_assistant

pytestmark = pytest.mark.llm

DUALFORMER = "000_43469673d6f8aaa0.txt#1"


@pytest.fixture(scope="module")
def assistant(seeded_settings, embed_model) -> Iterator[Assistant]:  # type: ignore[no-untyped-def]
    settings = seeded_settings.updated(llm_bundled="qwen1.5b", llm_timeout_s=180.0)
    with build_assistant(settings, embed_model=embed_model) as a:  # starts the 1.5B model server
        yield a


def test_the_model_writes_a_verified_answer_to_a_number_question(assistant: Assistant) -> None:
    """eval/dev.jsonl q012: the 1.5B model refused this one with the refusal sentence in the prompt."""
    answer = assistant.ask("How many datasets was DUALFormer evaluated on?")
    assert answer.model == "qwen1.5b" and answer.model_used and answer.mode == "generated", answer
    written = [s for s in answer.sentences if s.by_model]
    assert written and all(s.citations for s in written)
    assert "eleven" in answer.text.lower()
    assert [c.paper.id for c in answer.citations][0] == DUALFORMER
    shown = answer_to_dict(answer)
    assert {s["written_by"] for s in shown["sentences"]} >= {"model"}
    assert shown["model_used"] is True


def test_a_summary_is_written_and_cited(assistant: Assistant) -> None:
    answer = assistant.ask("Summarize the DUALFormer paper", intent="summary")
    assert answer.mode in ("generated", "extractive") and answer.citations
    assert answer.citations[0].paper.id == DUALFORMER
    assert all(s.citations == (1,) for s in answer.sentences)
