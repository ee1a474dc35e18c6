"""End to end with the real bundled SmolLM2 server, real Chroma and real embeddings, on dev questions.
Assertions are structural: the gold paper is cited, every citation is a retrieved paper, off-corpus abstains."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assistant.service import Assistant, build_assistant

pytestmark = pytest.mark.llm

DEV_LOOKUPS = [  # (question from eval/dev.jsonl, gold paper id)
    ("Which paper makes a graph transformer scale to large graphs by running its global self-attention over the "
     "feature dimension instead of across nodes, and what is the model called?", "000_43469673d6f8aaa0.txt#1"),
    ("Which abstract introduces a State Machine Module (SMM), and what problem is it meant to help with?",
     "000_43469673d6f8aaa0.txt#2"),
    ("Which paper proposes a surrogate-based way to solve variational inequalities with deep learning, and what new "
     "reinforcement-learning algorithm variant comes out of it?", "000_43469673d6f8aaa0.txt#17"),
]


@pytest.fixture(scope="module")
def assistant(seeded_settings, embed_model) -> Iterator[Assistant]:  # type: ignore[no-untyped-def]
    with build_assistant(seeded_settings, embed_model=embed_model) as a:  # starts the bundled model server
        yield a


@pytest.mark.parametrize(("question", "gold"), DEV_LOOKUPS)
def test_gold_paper_is_cited(assistant: Assistant, question: str, gold: str) -> None:
    answer = assistant.ask(question)
    assert not answer.abstained
    assert gold in [c.paper.id for c in answer.citations]
    retrieved = {h.paper.id for h in answer.sources}
    assert all(c.paper.id in retrieved for c in answer.citations)
    assert all(s.citations for s in answer.sentences) and answer.text
    assert answer.model == "smollm2"
    assert answer.timings_ms["total"] > 0


def test_off_corpus_question_abstains(assistant: Assistant) -> None:
    answer = assistant.ask("What is the capital of France?")
    assert answer.abstained and not answer.citations
    assert "don't cover" in answer.text


def test_stream_reports_status_before_final(assistant: Assistant) -> None:
    kinds = [e.kind for e in assistant.stream("What benchmark does the CAD code generation paper release?")]
    assert kinds[0] == "status" and kinds[-1] == "final"


def _dev_items(*types: str) -> list[dict[str, object]]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "eval" / "dev.jsonl"
    return [row for row in map(json.loads, path.read_text().splitlines()) if row["type"] in types]


def test_dev_followups_and_comparisons_through_the_conversation_path(assistant: Assistant) -> None:
    """The follow-up and compare items of eval/dev.jsonl, run as real multi-turn conversations."""
    recalls = []
    for item in _dev_items("followup", "compare"):
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
