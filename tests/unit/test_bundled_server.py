"""The bundled server's prompt cache keeps only what a later prompt reuses, counts it, and keeps it on disk across
restarts (assistant/llm/bundled_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from assistant.llm.bundled_server import STATE_DIR_FLAG, STATE_DIR_MB_FLAG, _take, reading_cache


def state(logit_rows: int, vocabulary: int = 10, size: int = 100) -> SimpleNamespace:
    """A kept prompt as llama-cpp-python keeps it: a small llama.cpp state beside the logits of every token."""
    return SimpleNamespace(
        llama_state_size=size,
        llama_state=b"s" * size,
        scores=np.ones((logit_rows, vocabulary), dtype=np.float32),
        input_ids=np.zeros(4, np.intc),
    )


def test_the_logits_of_a_prompt_are_not_kept_and_what_is_kept_is_counted() -> None:
    cache = reading_cache()(capacity_bytes=400)
    cache[(1, 2, 3)] = state(1000)  # 40 kB of logits: kept as one row of zeros
    kept = cache[(1, 2, 3, 4)]
    assert kept.scores.shape == (1, 10) and not kept.scores.any()
    assert cache.cache_size == 100 + 40 + 16
    target = np.full((5, 10), 7.0, dtype=np.float32)
    target[:3, :] = kept.scores.copy()  # how Llama.load_state restores it: broadcast over the prompt's rows
    assert not target[:3].any() and (target[3:] == 7.0).all()


def test_eviction_keeps_ram_under_its_capacity_oldest_first() -> None:
    cache = reading_cache()(capacity_bytes=400)
    cache[(1, 2, 3)] = state(1000)
    cache[(4, 5, 6)] = state(1000)  # 312 bytes: both kept (llama-cpp-python's cache would hold 80 kB of logits)
    assert list(cache.cache_state) == [(1, 2, 3), (4, 5, 6)]
    cache[(7, 8, 9)] = state(1000)  # 468 > 400: the oldest goes
    assert list(cache.cache_state) == [(4, 5, 6), (7, 8, 9)] and cache.cache_size <= 400
    assert (4, 5, 6, 7) in cache and (1, 2) not in cache  # found by longest token prefix, as before
    with pytest.raises(KeyError):
        cache[(1, 2)]


def test_a_reading_written_before_a_restart_is_restored_from_disk(tmp_path: Path) -> None:
    before = reading_cache(tmp_path / "states", 10 << 20)(capacity_bytes=1 << 20)
    before[(1, 2, 3, 4, 5)] = state(1000)  # a paper read, with its first question
    after = reading_cache(tmp_path / "states", 10 << 20)(capacity_bytes=1 << 20)  # a new server: empty RAM
    assert not after.cache_state
    restored = after[(1, 2, 3, 9)]  # the next question about the same paper
    assert restored.llama_state == b"s" * 100 and restored.scores.shape == (1, 10)
    assert list(after.cache_state) == [(1, 2, 3, 4, 5)]  # now in RAM too
    after[(1, 2, 7)] = state(10)
    assert after[(1, 2, 3, 8)].llama_state_size == 100  # the longer shared prefix wins, wherever it is kept


def test_the_disk_layer_keeps_to_its_size(tmp_path: Path) -> None:
    cache = reading_cache(tmp_path / "states", 200_000)(capacity_bytes=1 << 20)
    for i in range(30):
        cache[(i, i, i)] = state(10, size=20_000)
    assert cache.disk.volume() <= 400_000  # diskcache culls past size_limit (its SQLite file counts too)
    assert len(cache.disk) < 30 and (29, 29, 29) in cache.disk


def test_our_flags_are_taken_out_before_the_server_parses_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["prog", "--model", "m.gguf", STATE_DIR_FLAG, "/tmp/s", STATE_DIR_MB_FLAG, "64", "--port", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    assert _take(sys.argv, STATE_DIR_FLAG) == "/tmp/s" and _take(sys.argv, STATE_DIR_MB_FLAG) == "64"
    assert sys.argv == ["prog", "--model", "m.gguf", "--port", "1"] and _take(sys.argv, STATE_DIR_FLAG) == ""
