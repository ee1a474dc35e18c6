"""``python -m assistant.llm.bundled_server ARGS``: llama-cpp-python's OpenAI-compatible server (``python -m
llama_cpp.server ARGS``, the same arguments), with a RAM prompt cache that keeps only what a later prompt reuses.

llama-cpp-python 0.3.36's ``LlamaRAMCache`` keeps, beside the llama.cpp state of each prompt (its KV cache: about
28 KB a token for the bundled 1.5B model), the logits of every token of that prompt (``LlamaState.scores``: 151,936
floats a token, because the server computes every token's logits for log-probabilities): about 200-300 MB for a
read abstract, and it counts only the llama.cpp state against ``--cache_size``. With 2 GiB set, the bundled server
grew to 19 GB of RAM over 28 answers (measured, docs/results/issue59).

Those logits are never read again: a prompt restored from the cache always decodes at least its last token again
(``Llama.generate`` replays one token when the whole prompt is cached), and log-probabilities are read only for
generated tokens (the assistant never asks for the prompt's own, ``echo``). :class:`StateOnlyRAMCache` therefore
keeps one row of zeros in their place (``Llama.load_state`` broadcasts it) and counts every byte it keeps, so
``--cache_size`` bounds the cache's memory and holds about 15 MB a read abstract instead of ~250 MB.
"""

from __future__ import annotations

from typing import Any


def state_only_ram_cache() -> type[Any]:
    """``LlamaRAMCache`` that keeps each prompt's llama.cpp state and token ids but not its logits (module
    docstring), and whose ``cache_size`` counts all it keeps, in bytes, so eviction (least recently used first)
    keeps the cache under ``capacity_bytes``."""
    import numpy as np
    from llama_cpp.llama_cache import LlamaRAMCache

    class StateOnlyRAMCache(LlamaRAMCache):
        def __setitem__(self, key: Any, value: Any) -> None:
            vocabulary = value.scores.shape[1] if value.scores.ndim == 2 else 0
            value.scores = np.zeros((1, vocabulary), dtype=np.single)  # broadcast over the rows by load_state
            super().__setitem__(key, value)

        @property
        def cache_size(self) -> int:
            return sum(
                int(s.llama_state_size) + int(s.scores.nbytes) + int(s.input_ids.nbytes)
                for s in self.cache_state.values()
            )

    return StateOnlyRAMCache


def main() -> None:
    """Run ``llama_cpp.server`` as ``python -m llama_cpp.server`` would, with :func:`state_only_ram_cache` as its
    RAM cache (the server builds its cache from ``llama_cpp.LlamaRAMCache`` when it loads the model)."""
    import runpy

    import llama_cpp

    llama_cpp.LlamaRAMCache = state_only_ram_cache()  # type: ignore[misc]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
