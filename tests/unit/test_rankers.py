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


def test_aspect_coverage_embeds_the_question_clauses_in_one_call_once_per_turn() -> None:
    """The clauses of a one-paper question are embedded by one call (one ONNX run, not one per clause: 3 clauses were
    17 of a lookup's 82 ms at 10k), and a turn's second ranking reuses them from the turn's memo."""
    import numpy as np

    from assistant.retrieve.query import Query
    from assistant.retrieve.rankers import AspectCoverage, Pool
    from assistant.understand.turn import TurnCache

    calls: list[list[str]] = []

    def embed(query: Query, texts: list[str]) -> list[list[float]]:
        def batch(missing: list[str]) -> list[list[float]]:
            calls.append(list(missing))
            return [[1.0, 0.0] if "graph" in t else [0.0, 1.0] for t in missing]

        assert query.cache is not None
        return query.cache.get_many("query", texts, batch)

    question = "Which paper trains a graph network on molecules, and how fast is its sampling?"
    query = Query(question, [1.0, 0.0], TurnCache())
    vectors = {  # pid -> (sentence vectors, window vectors, sentences)
        "a": (np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32), np.eye(2, dtype=np.float32), ["s1", "s2"]),
        "b": (np.array([[1.0, 0.0]], dtype=np.float32), np.array([[1.0, 0.0]], dtype=np.float32), ["s1"]),
    }
    pool = Pool(None, None, {}, aspects=True, vectors=vectors)
    ranker = AspectCoverage(embed, 1.0, 3)
    first = ranker(query, pool)
    assert len(calls) == 1 and len(calls[0]) >= 2  # every clause in one call
    assert [pid for pid, _ in first] == ["a", "b"]  # "a" covers both clauses
    assert ranker(query, pool) == first and len(calls) == 1  # the turn's memo: embedded once
