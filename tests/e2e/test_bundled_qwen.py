"""End to end with the real bundled 1.5B model (Qwen2.5-Coder-1.5B-Instruct, the writer), real Chroma and real
embeddings, on dev questions: the model writes the answer, its self-check keeps its sentences, and the answer says
which ones it wrote. Slow (an answer takes ~10-30 s on 2 cores), so one server for the test session
(``local_llm``) and few questions. Assertions on retrieval are structural: the gold paper is cited, every citation is
a retrieved paper, an off-corpus question abstains."""

from __future__ import annotations

import pytest

from assistant.answer.render import answer_to_dict
from assistant.service import Assistant

pytestmark = pytest.mark.llm

DUALFORMER = "000_43469673d6f8aaa0.txt#1"


DEV_LOOKUPS = [  # (question from eval/dev.jsonl, gold paper id)
    ("Which paper makes a graph transformer scale to large graphs by running its global self-attention over the "
     "feature dimension instead of across nodes, and what is the model called?", DUALFORMER),
    ("Which abstract introduces a State Machine Module (SMM), and what problem is it meant to help with?",
     "000_43469673d6f8aaa0.txt#2"),
]


@pytest.fixture(scope="module")
def assistant(bundled_assistant: Assistant) -> Assistant:
    return bundled_assistant


@pytest.mark.parametrize(("question", "gold"), DEV_LOOKUPS)
def test_gold_paper_is_cited(assistant: Assistant, question: str, gold: str) -> None:
    answer = assistant.ask(question)
    assert not answer.abstained
    assert gold in [c.paper.id for c in answer.citations]
    retrieved = {h.paper.id for h in answer.sources}
    assert all(c.paper.id in retrieved for c in answer.citations)
    assert all(s.citations for s in answer.sentences) and answer.text
    assert answer.timings_ms["total"] > 0


def test_off_corpus_question_abstains(assistant: Assistant) -> None:
    answer = assistant.ask("What is the capital of France?")
    assert answer.abstained and not answer.citations
    assert "don't cover" in answer.text


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


def test_stream_reports_status_before_final(assistant: Assistant) -> None:
    kinds = [e.kind for e in assistant.stream("What benchmark does the CAD code generation paper release?")]
    assert kinds[0] == "status" and kinds[-1] == "final"


def _dev_items(*types: str) -> list[dict[str, object]]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "eval" / "dev.jsonl"
    return [row for row in map(json.loads, path.read_text().splitlines()) if row["type"] in types]


@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
def test_dev_followups_and_comparisons_through_the_conversation_path(assistant: Assistant) -> None:
    """The follow-up items and the first two compare items of eval/dev.jsonl, run as real multi-turn conversations
    (each answer takes 10-30 s with the 1.5B model on 2 cores; comparisons are also asked in the browser tests)."""
    recalls = []
    for item in _dev_items("followup") + _dev_items("compare")[:2]:
        session = assistant.new_session()
        turns = item.get("turns") or [item["question"]]
        for turn in turns:  # type: ignore[attr-defined]
            answer = session.ask(str(turn))
        gold = set(item["gold_ids"])  # type: ignore[call-overload]
        cited = {c.paper.id for c in answer.citations}
        assert cited, item["id"]
        recalls.append(len(cited & gold) / len(gold))
        if item["type"] == "compare":
            assert answer.comparison is not None and len(answer.comparison.rows) >= 2, item["id"]
    assert sum(recalls) / len(recalls) >= 0.75, recalls


def test_the_server_keeps_each_read_paper(local_llm) -> None:  # type: ignore[no-untyped-def]
    """The bundled server runs with its RAM prompt cache at the configured size: each paper's reading is kept for the
    next question about it (what that saves is measured by benchmarks/answer_latency.py, not asserted)."""
    from assistant.config import Settings

    assert local_llm._proc is not None
    argv = open(f"/proc/{local_llm._proc.pid}/cmdline", "rb").read().split(b"\0")
    size = str(Settings().llm.prompt_cache_mb << 20).encode()
    assert argv[argv.index(b"--cache") + 1] == b"True" and argv[argv.index(b"--cache_size") + 1] == size


def test_a_paper_read_before_a_restart_is_restored_from_disk(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two bundled servers one after the other on the same state folder (``ASSISTANT_LLM_PROMPT_STATE_DISK_MB``):
    the second restores the first one's reading of a seed abstract from disk instead of reading it again, and the
    restored reading answers as the fresh one did (the last token is decoded again, in another batch split: P(yes)
    may move by a few hundredths, never more)."""
    import json

    from assistant.llm.client import OpenAIChatBackend
    from assistant.llm.local import LocalLLMServer
    from assistant.llm.prompts import READ_CHECK, reading_messages

    paper = json.loads(open("seeds/papers.jsonl").readline())
    text = open("seeds/000_43469673d6f8aaa0.txt").read().split("\n\n")[1]
    messages = reading_messages((paper["title"], text), READ_CHECK.format(sentence="The paper proposes a benchmark."))
    asked = []
    for _ in range(2):
        with LocalLLMServer(prompt_cache_mb=256, prompt_state_disk_mb=256, prompt_state_dir=tmp_path) as server:
            asked.append(OpenAIChatBackend(server.base_url, "k", server.model, timeout_s=120).yes_probability(messages))
            log = server.log_tail(20_000)
        assert ("restored" in log) == (len(asked) == 2), log[-2000:]
    assert any(tmp_path.iterdir())
    assert abs(asked[0] - asked[1]) < 0.1, asked
