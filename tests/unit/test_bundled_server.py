"""The bundled server's prompt cache keeps only what a later prompt reuses, counts it, and keeps it on disk across
restarts (assistant/llm/bundled_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from assistant.llm.bundled_server import STATE_DIR_FLAG, STATE_DIR_MB_FLAG, _take, reading_cache


def state(logit_rows: int = 1, vocabulary: int = 10, size: int = 100) -> SimpleNamespace:
    """A kept prompt as ``reading_llama`` saves it: a small llama.cpp state beside one row of zeros for its logits."""
    return SimpleNamespace(
        llama_state_size=size,
        llama_state=b"s" * size,
        scores=np.zeros((logit_rows, vocabulary), dtype=np.float32),
        input_ids=np.zeros(4, np.intc),
    )


def test_what_is_kept_is_counted_logits_included() -> None:
    cache = reading_cache(min_new_tokens=1)(capacity_bytes=400)
    cache[(1, 2, 3)] = state()
    assert cache[(1, 2, 3, 4)].scores.shape == (1, 10)
    assert cache.cache_size == 100 + 40 + 16
    cache[(4, 5, 6)] = state(logit_rows=5)  # a state with several rows of logits (llama-cpp-python's own Llama)
    assert cache.cache_size == 316 and list(cache.cache_state) == [(4, 5, 6)]  # 472 bytes > 400: the oldest went


def test_eviction_keeps_ram_under_its_capacity_oldest_first() -> None:
    cache = reading_cache(min_new_tokens=1)(capacity_bytes=400)
    cache[(1, 2, 3)] = state()
    cache[(4, 5, 6)] = state()  # 312 bytes: both kept
    assert list(cache.cache_state) == [(1, 2, 3), (4, 5, 6)]
    cache[(7, 8, 9)] = state()  # 468 > 400: the oldest goes
    assert list(cache.cache_state) == [(4, 5, 6), (7, 8, 9)] and cache.cache_size <= 400
    assert (4, 5, 6, 7) in cache and (1, 2) not in cache  # found by longest token prefix, as before
    with pytest.raises(KeyError):
        cache[(1, 2)]


def test_a_reading_written_before_a_restart_is_restored_from_disk(tmp_path: Path) -> None:
    before = reading_cache(tmp_path / "states", 10 << 20, min_new_tokens=1)(capacity_bytes=1 << 20)
    before[(1, 2, 3, 4, 5)] = state()  # a paper read, with its first question
    # a new server: empty RAM
    after = reading_cache(tmp_path / "states", 10 << 20, min_new_tokens=1)(capacity_bytes=1 << 20)
    assert not after.cache_state
    restored = after[(1, 2, 3, 9)]  # the next question about the same paper
    assert restored.llama_state == b"s" * 100 and restored.scores.shape == (1, 10)
    assert list(after.cache_state) == [(1, 2, 3, 4, 5)]  # now in RAM too
    after[(1, 2, 7)] = state()
    assert after[(1, 2, 3, 8)].llama_state_size == 100  # the longer shared prefix wins, wherever it is kept


def test_the_disk_layer_keeps_to_its_size(tmp_path: Path) -> None:
    cache = reading_cache(tmp_path / "states", 200_000, min_new_tokens=1)(capacity_bytes=1 << 20)
    for i in range(30):
        cache[(i, i, i)] = state(size=20_000)
    assert cache.disk.volume() <= 400_000  # diskcache culls past size_limit (its SQLite file counts too)
    assert len(cache.disk) < 30 and (29, 29, 29) in cache.disk


def test_our_flags_are_taken_out_before_the_server_parses_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["prog", "--model", "m.gguf", STATE_DIR_FLAG, "/tmp/s", STATE_DIR_MB_FLAG, "64", "--port", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    assert _take(sys.argv, STATE_DIR_FLAG) == "/tmp/s" and _take(sys.argv, STATE_DIR_MB_FLAG) == "64"
    assert sys.argv == ["prog", "--model", "m.gguf", "--port", "1"] and _take(sys.argv, STATE_DIR_FLAG) == ""


def test_a_question_asked_of_a_kept_reading_is_not_kept_again(tmp_path: Path) -> None:
    cache = reading_cache(tmp_path / "states", 10 << 20, min_new_tokens=50)(capacity_bytes=1 << 20)
    reading = tuple(range(300))
    cache[(*reading, 1000)] = state()  # a paper read ahead: 301 new tokens, kept
    cache[(*reading, *range(2000, 2040))] = state()  # a yes/no check of it: 40 tokens beyond the kept reading
    assert list(cache.cache_state) == [(*reading, 1000)] and len(cache.disk) == 1
    assert cache[(*reading, 3000)].llama_state_size == 100  # the check restores the reading, as before
    other = tuple(range(5000, 5060))
    cache[other] = state()  # another paper's prompt: all new, kept
    assert other in cache.cache_state and len(cache.disk) == 2


def test_a_long_question_asked_of_a_kept_reading_is_not_kept_again(tmp_path: Path) -> None:
    cache = reading_cache(tmp_path / "states", 10 << 20, min_new_tokens=50)(capacity_bytes=1 << 20)
    system, reading = tuple(range(10)), tuple(range(10, 300))
    cache[(*system, *reading, 1000)] = state()  # a paper's first question
    # a question with its quoted sentences and the answer, 120 tokens beyond the kept reading: before, a second state
    # of the same paper (then a third, ...)
    cache[(*system, *reading, *range(2000, 2120))] = state()
    assert list(cache.cache_state) == [(*system, *reading, 1000)] and len(cache.disk) == 1
    assert cache[(*system, *reading, 3000)].llama_state_size == 100  # the next question restores the reading
    other = (*system, *range(5000, 5300))  # another paper: the same system prompt, then its own abstract
    cache[other] = state()
    assert other in cache.cache_state and len(cache.disk) == 2


def test_the_disk_evicts_the_state_used_least_recently(tmp_path: Path) -> None:
    size_limit = 400_000  # about 19 states: past it diskcache culls 10 at a time
    cache = reading_cache(tmp_path / "states", size_limit, min_new_tokens=1)(capacity_bytes=1)  # RAM keeps nothing
    cache[(0, 0, 0)] = state(size=20_000)  # a paper read first
    for i in range(1, 40):
        cache[(i, i, i)] = state(size=20_000)
        assert cache[(0, 0, 0, 1)].llama_state_size == 20_000  # and asked about again after each other paper
    assert (0, 0, 0) in cache.disk  # stored first, used last: kept (least recently stored eviction dropped it)
    assert cache.disk.volume() <= 2 * size_limit and (1, 1, 1) not in cache.disk
