"""The ranker seam (assistant/retrieve/rankers.py): one fusion loop, reciprocal rank or the list's own score."""

from __future__ import annotations

from assistant.retrieve.rankers import fuse
from assistant.tuning import RRF_K


def test_fuse_adds_reciprocal_ranks_or_scores_in_place() -> None:
    scored: dict[str, float] = {}
    fuse(scored, [("a", 0.5), ("b", 0.25)], None)  # fused by its own score
    assert scored == {"a": 0.5, "b": 0.25}
    fuse(scored, [("b", 9.0), ("c", 1.0)], 2.0)  # fused by rank
    assert scored == {"a": 0.5, "b": 0.25 + 2.0 / (RRF_K + 1), "c": 2.0 / (RRF_K + 2)}
    assert list(scored) == ["a", "b", "c"]  # insertion order kept (ties sort stably)
