"""``python -m assistant.llm.bundled_server ARGS``: llama-cpp-python's OpenAI-compatible server (``python -m
llama_cpp.server ARGS``, the same arguments), with a prompt cache that keeps only what a later prompt reuses, in
RAM and, with ``--state_dir DIR --state_dir_mb N``, on disk, so a paper read before a restart is not read again.

llama-cpp-python 0.3.36's ``LlamaRAMCache`` keeps, beside the llama.cpp state of each prompt (its KV cache: about
28 KB a token for the bundled 1.5B model), the logits of every token of that prompt (``LlamaState.scores``: 151,936
floats a token, because the server computes every token's logits for log-probabilities): about 200-300 MB for a
read abstract, and it counts only the llama.cpp state against ``--cache_size``. With 2 GiB set, the bundled server
grew to 19 GB of RAM over 28 answers (measured, docs/results/issue59).

Those logits are never read again: a prompt restored from the cache always decodes at least its last token again
(``Llama.generate`` replays one token when the whole prompt is cached), and log-probabilities are read only for
generated tokens (the assistant never asks for the prompt's own, ``echo``). :func:`reading_cache` therefore keeps
one row of zeros in their place (``Llama.load_state`` broadcasts it) and counts every byte it keeps, so
``--cache_size`` bounds the cache's memory and holds about 15 MB a read abstract instead of ~250 MB.

The disk layer (``diskcache``, SQLite-indexed files; safe when several servers share the directory) keeps every
state written, least recently stored evicted past ``--state_dir_mb``. A prompt is restored from whichever layer
shares the longer token prefix with it; one restored from disk is kept in RAM too.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

#: Our arguments, taken out of ``sys.argv`` before llama_cpp.server parses the rest.
STATE_DIR_FLAG = "--state_dir"
STATE_DIR_MB_FLAG = "--state_dir_mb"


def reading_cache(state_dir: Path | None = None, state_dir_bytes: int = 0) -> type[Any]:
    """A ``LlamaRAMCache`` class (built by the server as ``cls(capacity_bytes=...)``) that keeps each prompt's
    llama.cpp state and token ids but not its logits (module docstring), whose ``cache_size`` counts all it keeps in
    RAM, in bytes (eviction, least recently used first, keeps RAM under ``capacity_bytes``), and that also writes
    each state to ``state_dir`` when given (at most ``state_dir_bytes`` there; older states evicted first).

    Raises:
        OSError: ``state_dir`` cannot be created (when the server builds its cache).
    """
    import numpy as np
    from llama_cpp.llama import Llama
    from llama_cpp.llama_cache import LlamaRAMCache

    class ReadingCache(LlamaRAMCache):
        def __init__(self, capacity_bytes: int = 2 << 30) -> None:
            super().__init__(capacity_bytes)
            self.disk: Any = None
            if state_dir is not None and state_dir_bytes > 0:
                import diskcache

                state_dir.mkdir(parents=True, exist_ok=True)
                self.disk = diskcache.Cache(
                    str(state_dir), size_limit=state_dir_bytes, eviction_policy="least-recently-stored"
                )

        def _on_disk(self, key: tuple[int, ...]) -> tuple[tuple[int, ...] | None, int]:
            """The disk's key sharing the longest token prefix with ``key``, and that length (None, 0: none)."""
            best: tuple[tuple[int, ...] | None, int] = (None, 0)
            if self.disk is None:
                return best
            for k in self.disk.iterkeys():
                n = Llama.longest_token_prefix(k, key)
                if n > best[1]:
                    best = (k, n)
            return best

        def __getitem__(self, key: Any) -> Any:
            key = tuple(key)
            in_ram = self._find_longest_prefix_key(key)
            ram_len = Llama.longest_token_prefix(in_ram, key) if in_ram is not None else 0
            on_disk, disk_len = self._on_disk(key)
            if on_disk is not None and disk_len > ram_len:
                value = self.disk.get(on_disk)
                if value is not None:  # another server may have evicted it meanwhile
                    self._keep(on_disk, value)
                    print(f"prompt cache: restored {disk_len} tokens from disk", file=sys.stderr, flush=True)
                    return value
            if in_ram is None:
                raise KeyError("Key not found")
            self.cache_state.move_to_end(in_ram)
            return self.cache_state[in_ram]

        def __contains__(self, key: Any) -> bool:
            return self._find_longest_prefix_key(tuple(key)) is not None or self._on_disk(tuple(key))[0] is not None

        def __setitem__(self, key: Any, value: Any) -> None:
            vocabulary = value.scores.shape[1] if value.scores.ndim == 2 else 0
            value.scores = np.zeros((1, vocabulary), dtype=np.single)  # broadcast over the rows by load_state
            key = tuple(key)
            self._keep(key, value)
            if self.disk is not None and key not in self.disk:
                self.disk.set(key, value)

        def _keep(self, key: tuple[int, ...], value: Any) -> None:
            """In RAM, most recent last; the oldest evicted past the capacity."""
            self.cache_state.pop(key, None)
            self.cache_state[key] = value
            while self.cache_size > self.capacity_bytes and self.cache_state:
                self.cache_state.popitem(last=False)

        @property
        def cache_size(self) -> int:
            return sum(
                int(s.llama_state_size) + int(s.scores.nbytes) + int(s.input_ids.nbytes)
                for s in self.cache_state.values()
            )

    return ReadingCache


def _take(argv: list[str], flag: str) -> str:
    """The value after ``flag`` in ``argv`` (both removed), or ""."""
    if flag not in argv:
        return ""
    i = argv.index(flag)
    value = argv[i + 1] if i + 1 < len(argv) else ""
    del argv[i : i + 2]
    return value


def main() -> None:
    """Run ``llama_cpp.server`` as ``python -m llama_cpp.server`` would, with :func:`reading_cache` as its RAM cache
    (the server builds its cache from ``llama_cpp.LlamaRAMCache`` when it loads the model); ``--state_dir DIR
    --state_dir_mb N`` (ours, removed before the server parses its arguments) add the disk layer."""
    import runpy

    import llama_cpp

    state_dir = _take(sys.argv, STATE_DIR_FLAG)
    state_mb = _take(sys.argv, STATE_DIR_MB_FLAG)
    llama_cpp.LlamaRAMCache = reading_cache(  # type: ignore[misc]
        Path(state_dir) if state_dir else None, int(state_mb or 0) << 20
    )
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
