"""The bundled server's prompt cache counts what each kept state holds (assistant/llm/bundled_server.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from assistant.llm.bundled_server import measured_ram_cache


def state(logit_rows: int) -> SimpleNamespace:
    """A kept prompt as llama-cpp-python keeps it: a small llama.cpp state beside the logits of every token."""
    return SimpleNamespace(
        llama_state_size=100, scores=np.zeros((logit_rows, 10), dtype=np.float32), input_ids=np.zeros(4, np.intc)
    )


def test_the_logits_kept_beside_a_state_count_against_the_capacity() -> None:
    cache = measured_ram_cache()(capacity_bytes=1000)
    cache[(1, 2, 3)] = state(10)  # 100 + 400 + 16 bytes
    assert cache.cache_size == 516
    cache[(4, 5, 6)] = state(10)  # 1032 > 1000: the oldest goes (llama-cpp-python alone would count 200 and keep both)
    assert list(cache.cache_state) == [(4, 5, 6)] and cache.cache_size <= 1000
    assert (4, 5, 6, 7) in cache and (1, 2) not in cache  # found by longest token prefix, as before
