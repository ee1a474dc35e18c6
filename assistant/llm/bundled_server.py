"""``python -m assistant.llm.bundled_server ARGS``: llama-cpp-python's OpenAI-compatible server (``python -m
llama_cpp.server ARGS``, the same arguments), with a prompt cache that keeps only what a later prompt reuses, in
RAM and, with ``--state_dir DIR --state_dir_mb N``, on disk, so a paper read before a restart is not read again.

The server computes every token's logits (``logits_all``, needed for log-probabilities), and llama-cpp-python 0.3.36
keeps and copies them: 151,936 floats a token in ``Llama.scores``, copied whole into each saved state (its
``LlamaRAMCache`` counted only the llama.cpp state against ``--cache_size``: with 2 GiB set, the bundled server grew
to 19 GB of RAM over 28 answers) and written back, with a scan of the whole ``n_ctx`` x vocabulary array, by each
restore. Those logits are never read again: a prompt restored from the cache always decodes at least its last token
again (``Llama.generate`` replays one token when the whole prompt is cached), and log-probabilities are read only
for generated tokens (the assistant never asks for the prompt's own, ``echo``). So the server runs
:func:`reading_llama`, which computes and keeps only the logits that are read and saves a state with one row of
zeros in their place, and :func:`reading_cache`, which counts every byte it keeps, so ``--cache_size`` bounds the
cache's memory (about 15 MB a read abstract instead of ~250 MB). Measured on 2 cores (docs/results/issue59): an
abstract read in 5.4 s instead of 6.5 s, a yes/no check of a read abstract in 0.66 s instead of 1.13 s (2.1 s
before the client streamed it), with the same generated text.

llama-cpp-python saves the state of every request; the cache keeps one only when it holds a new reading: at least
:data:`KEEP_MIN_NEW_TOKENS` tokens, none of whose first ``KEEP_MIN_NEW_TOKENS`` is shared with a state already kept
(a chat template and a system prompt are shorter). So it keeps one state per paper read, not one for every long
question asked of a reading it already keeps (those filled the disk with several states of the same paper and pushed
other papers' readings out: docs/results/issue59, stop 73). The disk layer (``diskcache``, SQLite-indexed files;
safe when several servers share the directory) keeps every state kept, the least recently used evicted past
``--state_dir_mb``. A prompt is restored from whichever layer shares the longer token prefix with it; one restored
from disk is kept in RAM too. Each prompt logs one line, ``prompt cache: N-token prompt, M read``: how many of its
tokens the model read (the rest came from a kept state or the last request's).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

#: A prompt's state is kept only when it shares fewer than this many tokens with any state already kept and holds at
#: least this many beyond them (about 5 s of reading on 2 cores): a new reading, not a question asked of one.
#: llama-cpp-python saves the state of every request; kept whole, the yes/no checks of a read abstract (each its
#: reading plus 40-80 tokens, about 12 MB) pushed the readings themselves out of the 2 GB on disk within a few dozen
#: answers, and so did the longer asks (a question with its quoted sentences and the answer, 250-400 tokens).
KEEP_MIN_NEW_TOKENS = 256
#: Our arguments, taken out of ``sys.argv`` before llama_cpp.server parses the rest.
STATE_DIR_FLAG = "--state_dir"
STATE_DIR_MB_FLAG = "--state_dir_mb"


def reading_cache(
    state_dir: Path | None = None, state_dir_bytes: int = 0, min_new_tokens: int = KEEP_MIN_NEW_TOKENS
) -> type[Any]:
    """A ``LlamaRAMCache`` class (built by the server as ``cls(capacity_bytes=...)``) that keeps each prompt's
    state as :func:`reading_llama` saves it (no logits: module docstring), whose ``cache_size`` counts all it keeps in
    RAM, in bytes (eviction, least recently used first, keeps RAM under ``capacity_bytes``), and that also writes
    each state to ``state_dir`` when given (at most ``state_dir_bytes`` there; the least recently used evicted
    first). A state is kept only when it is a new reading: the longest token prefix it shares with a kept state is
    shorter than ``min_new_tokens`` and its tokens extend that prefix by at least ``min_new_tokens``.

    Raises:
        OSError: ``state_dir`` cannot be created (when the server builds its cache).
    """
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
                    str(state_dir), size_limit=state_dir_bytes, eviction_policy="least-recently-used"
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

        def _kept_prefix(self, key: tuple[int, ...]) -> int:
            """The longest token prefix ``key`` shares with a state kept in RAM or on disk (0: none)."""
            in_ram = self._find_longest_prefix_key(key)
            ram_len = Llama.longest_token_prefix(in_ram, key) if in_ram is not None else 0
            return max(ram_len, self._on_disk(key)[1])

        def __contains__(self, key: Any) -> bool:
            return self._find_longest_prefix_key(tuple(key)) is not None or self._on_disk(tuple(key))[0] is not None

        def __setitem__(self, key: Any, value: Any) -> None:
            key = tuple(key)
            kept = self._kept_prefix(key)
            if kept >= min_new_tokens or len(key) - kept < min_new_tokens:
                return  # a question asked of a kept reading: restoring that reading and reading the question is cheap
            self._keep(key, value)
            if self.disk is not None:  # not on disk either: a key kept there shares all its tokens with a kept state
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


def reading_llama() -> type[Any]:
    """A ``llama_cpp.Llama`` class that computes and keeps logits only where they are read.

    llama-cpp-python 0.3.36 with ``logits_all`` (the server's default, needed for log-probabilities) computes the
    output layer for every prompt token (151,936 logits a token, about 15% of the bundled model's work per token)
    and copies them into ``Llama.scores``; ``save_state`` copies every prompt row again (300-450 MB for a read
    abstract), and ``load_state`` writes them back and scans the rest of the ``n_ctx`` x vocabulary array (2.5 GB at
    4,096 tokens: about 0.7 s a restored prompt, measured). Log-probabilities are read only for generated tokens,
    each from the row of the token before it (the prompt's last, then each generated one), and the assistant never
    asks for the prompt's own (``echo``). So this class asks llama.cpp for the last token's logits of each batch
    only and keeps that row, saves one row of zeros as a state's scores (what :func:`reading_cache` kept anyway),
    and restores a state without touching the scores. Generated text and its log-probabilities are the same.
    """
    import ctypes

    import llama_cpp
    import numpy as np
    from llama_cpp.llama import Llama, LlamaState

    class ReadingLlama(Llama):
        #: Tokens the model has read (prompt and generated), for the per-prompt log line.
        tokens_read = 0

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
            """``Llama.generate``, logging before the first generated token how many of the prompt's tokens were
            read (the rest came from a restored state or the last request's): ``prompt cache: N-token prompt, M
            read`` on stderr."""
            tokens = list(tokens)
            start, logged = self.tokens_read, False
            for token in super().generate(tokens, *args, **kwargs):
                if not logged:
                    print(
                        f"prompt cache: {len(tokens)}-token prompt, {self.tokens_read - start} read",
                        file=sys.stderr,
                        flush=True,
                    )
                    logged = True
                yield token

        def eval(self, tokens: Any) -> None:
            self.tokens_read += len(tokens)
            if not self._logits_all:
                super().eval(tokens)
                return
            self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
            for i in range(0, len(tokens), self.n_batch):
                batch = tokens[i : min(len(tokens), i + self.n_batch)]
                n_past, n_tokens = self.n_tokens, len(batch)
                self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)  # the last token's logits only
                self._ctx.decode(self._batch)
                self.input_ids[n_past : n_past + n_tokens] = batch
                self.scores[n_past + n_tokens - 1, :] = np.ctypeslib.as_array(
                    self._ctx.get_logits(), shape=(self._n_vocab,)
                )
                self.n_tokens += n_tokens
                self._requires_eval = False

        def save_state(self) -> Any:
            size = llama_cpp.llama_state_get_size(self._ctx.ctx)
            buffer = (ctypes.c_uint8 * int(size))()
            n_bytes = llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size)
            if int(n_bytes) > int(size):
                raise RuntimeError("Failed to copy llama state data")
            return LlamaState(
                scores=np.zeros((1, self._n_vocab), dtype=np.single),
                input_ids=self.input_ids.copy(),
                n_tokens=self.n_tokens,
                llama_state=ctypes.string_at(buffer, int(n_bytes)),
                llama_state_size=n_bytes,
                seed=self._seed,
            )

        def load_state(self, state: Any) -> None:
            self.input_ids = state.input_ids.copy()
            self.n_tokens = state.n_tokens
            self._requires_eval = True
            self._seed = state.seed
            data = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
            if llama_cpp.llama_state_set_data(self._ctx.ctx, data, state.llama_state_size) != state.llama_state_size:
                raise RuntimeError("Failed to set llama state data")

    return ReadingLlama


def _take(argv: list[str], flag: str) -> str:
    """The value after ``flag`` in ``argv`` (both removed), or ""."""
    if flag not in argv:
        return ""
    i = argv.index(flag)
    value = argv[i + 1] if i + 1 < len(argv) else ""
    del argv[i : i + 2]
    return value


def main() -> None:
    """Run ``llama_cpp.server`` as ``python -m llama_cpp.server`` would, with :func:`reading_llama` as its model class
    and :func:`reading_cache` as its RAM cache (the server builds both from ``llama_cpp.Llama`` and
    ``llama_cpp.LlamaRAMCache`` when it loads the model); ``--state_dir DIR
    --state_dir_mb N`` (ours, removed before the server parses its arguments) add the disk layer."""
    import runpy

    import llama_cpp

    state_dir = _take(sys.argv, STATE_DIR_FLAG)
    state_mb = _take(sys.argv, STATE_DIR_MB_FLAG)
    llama_cpp.LlamaRAMCache = reading_cache(  # type: ignore[misc]
        Path(state_dir) if state_dir else None, int(state_mb or 0) << 20
    )
    llama_cpp.Llama = reading_llama()  # type: ignore[misc]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
