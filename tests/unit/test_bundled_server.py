"""The bundled server's prompt cache keeps only what a later prompt reuses, and counts it (llm/bundled_server.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from assistant.llm.bundled_server import state_only_ram_cache


def state(logit_rows: int, vocabulary: int = 10) -> SimpleNamespace:
    """A kept prompt as llama-cpp-python keeps it: a small llama.cpp state beside the logits of every token."""
    return SimpleNamespace(
        llama_state_size=100,
        scores=np.ones((logit_rows, vocabulary), dtype=np.float32),
        input_ids=np.zeros(4, np.intc),
    )


def test_the_logits_of_a_prompt_are_not_kept_and_what_is_kept_is_counted() -> None:
    cache = state_only_ram_cache()(capacity_bytes=400)
    cache[(1, 2, 3)] = state(1000)  # 40 kB of logits: kept as one row of zeros
    kept = cache[(1, 2, 3, 4)]
    assert kept.scores.shape == (1, 10) and not kept.scores.any()
    assert cache.cache_size == 100 + 40 + 16
    target = np.full((5, 10), 7.0, dtype=np.float32)
    target[:3, :] = kept.scores.copy()  # how Llama.load_state restores it: broadcast over the prompt's rows
    assert not target[:3].any() and (target[3:] == 7.0).all()


def test_eviction_keeps_the_cache_under_its_capacity_oldest_first() -> None:
    cache = state_only_ram_cache()(capacity_bytes=400)
    cache[(1, 2, 3)] = state(1000)
    cache[(4, 5, 6)] = state(1000)  # 312 bytes: both kept (llama-cpp-python's cache would hold 80 kB of logits)
    assert list(cache.cache_state) == [(1, 2, 3), (4, 5, 6)]
    cache[(7, 8, 9)] = state(1000)  # 468 > 400: the oldest goes
    assert list(cache.cache_state) == [(4, 5, 6), (7, 8, 9)] and cache.cache_size <= 400
    assert (4, 5, 6, 7) in cache and (1, 2) not in cache  # found by longest token prefix, as before
