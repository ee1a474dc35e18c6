"""``python -m assistant.llm.bundled_server ARGS``: llama-cpp-python's OpenAI-compatible server (``python -m
llama_cpp.server ARGS``, the same arguments), with a RAM prompt cache whose size counts what each kept state holds.

llama-cpp-python 0.3.36's ``LlamaRAMCache`` counts only the llama.cpp state of each kept prompt against
``--cache_size``, not the logits it copies beside it (``LlamaState.scores``: one row of the vocabulary's 151,936
floats per token, because the server keeps the logits of every token for log-probabilities): about 200 MB a read
abstract. With 2 GiB set, the bundled server grew to 19 GB of RAM over 28 answers (measured,
docs/results/issue59). :class:`MeasuredRAMCache` counts both, so ``--cache_size`` bounds the cache's memory.
"""

from __future__ import annotations

from typing import Any


def measured_ram_cache() -> type[Any]:
    """``LlamaRAMCache`` whose ``cache_size`` is each kept state's llama.cpp state plus its logits and token ids, in
    bytes, so eviction (oldest first) keeps the whole cache under ``capacity_bytes``."""
    from llama_cpp.llama_cache import LlamaRAMCache

    class MeasuredRAMCache(LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(
                int(s.llama_state_size) + int(s.scores.nbytes) + int(s.input_ids.nbytes)
                for s in self.cache_state.values()
            )

    return MeasuredRAMCache


def main() -> None:
    """Run ``llama_cpp.server`` as ``python -m llama_cpp.server`` would, with :func:`measured_ram_cache` as its RAM
    cache (the server builds its cache from ``llama_cpp.LlamaRAMCache`` when it loads the model)."""
    import runpy

    import llama_cpp

    llama_cpp.LlamaRAMCache = measured_ram_cache()  # type: ignore[misc]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
