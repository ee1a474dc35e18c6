"""The contract every ranker of ``PaperRetriever.rankers`` keeps (assistant/retrieve/rankers.py), checked on the
real index of seeds/ over the dev questions: a new ranker (README, "Where a change goes") is held to it without a
test of its own.

* it ranks known papers only, each once, and gives the same list for the same query twice;
* it matters: leaving it out changes the top 10 of at least one dev question (the retrieval gate cannot see a
  ranker whose weight is too low to move anything: such a ranker is dead code), unless its weight is 0 (a
  ranker its setting switches off).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant.retrieve.query import Query
from assistant.retrieve.rankers import Pool, Ranked, Ranker

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "eval" / "dev.jsonl"


class _Spy:
    """A ranker that records what the wrapped one returns (same weight and stage)."""

    def __init__(self, inner: Ranker) -> None:
        self.inner = inner
        self.weight = inner.weight
        self.stage = inner.stage
        self.calls: list[tuple[str, Ranked]] = []

    def __call__(self, query: Query, pool: Pool) -> Ranked:
        ranked = self.inner(query, pool)
        self.calls.append((query.text, list(ranked)))
        return ranked


@pytest.fixture(scope="module")
def retriever(seeded_settings, embed_model) -> Any:  # type: ignore[no-untyped-def]
    from assistant.retrieve.retrieval import PaperRetriever

    return PaperRetriever.open(seeded_settings, embed_model)


@pytest.fixture(scope="module")
def questions() -> list[str]:
    from assistant.eval.evaluation import load_items

    return [item.question for item in load_items(DEV)]


def _top10(retriever: Any, questions: list[str]) -> list[list[str]]:
    return [[h.paper.id for h in retriever.retrieve(q, 10, aspects=True)] for q in questions]


def test_every_ranker_ranks_known_papers_once_and_deterministically(retriever: Any, questions: list[str]) -> None:
    rankers = list(retriever.rankers)
    spies = [_Spy(r) for r in rankers]
    retriever.rankers = spies
    try:
        _top10(retriever, questions)
        _top10(retriever, questions)
    finally:
        retriever.rankers = rankers
    known = set(retriever.papers)
    for spy in spies:
        name = type(spy.inner).__name__
        assert spy.calls, f"{name} was never called"
        half = len(spy.calls) // 2
        for (question, ranked), (_, again) in zip(spy.calls[:half], spy.calls[half:], strict=True):
            ids = [pid for pid, _ in ranked]
            assert set(ids) <= known, f"{name} ranked unknown papers for {question!r}: {sorted(set(ids) - known)}"
            assert len(ids) == len(set(ids)), f"{name} ranked a paper twice for {question!r}"
            assert ranked == again, f"{name} gave another list for the same query {question!r}"


def test_every_ranker_changes_some_ranking(retriever: Any, questions: list[str]) -> None:
    rankers = list(retriever.rankers)
    baseline = _top10(retriever, questions)
    idle = []
    try:
        for i, ranker in enumerate(rankers):
            if ranker.weight == 0:
                continue  # switched off by its setting (``retrieval.paper_vector_weight`` is fitted to 0)
            retriever.rankers = rankers[:i] + rankers[i + 1 :]
            if _top10(retriever, questions) == baseline:
                idle.append(f"{type(ranker).__name__} (weight {ranker.weight})")
    finally:
        retriever.rankers = rankers
    assert not idle, f"leaving these rankers out changes no dev question's top 10: {idle}"
