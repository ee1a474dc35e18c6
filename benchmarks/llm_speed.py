"""Prefill and decode speed (tokens/s) of the installed llama-cpp-python build on the bundled model.

Loads the bundled model (Qwen2.5-Coder-1.5B Q4_K_M) in-process (no server), evaluates a prompt of about
``--prompt-tokens``
tokens (prefill, batched: the code path that crashed with SIGILL on an AMX VM) and then decodes
``--decode-tokens`` tokens one at a time (greedy), ``--repeats`` times; prints the median of each and the
build's compiled CPU features (``llama_print_system_info``). Use it to compare the portable build with a
native one: run it with each build's Python (see docs/measurements.md).

Usage: .venv/bin/python benchmarks/llm_speed.py [--threads 2] [--prompt-tokens 256] [--decode-tokens 128]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="decode threads")
    ap.add_argument("--batch-threads", type=int, help="prompt (prefill) threads (default: --threads)")
    ap.add_argument("--prompt-tokens", type=int, default=256)
    ap.add_argument("--decode-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--label", default="installed build")
    ap.add_argument("--model", help="GGUF file (default: the bundled 1.5B model)")
    args = ap.parse_args()

    import llama_cpp

    if args.model:
        model = args.model
    else:
        from assistant.llm.local import bundled_gguf_path

        model = str(bundled_gguf_path())
    llm = llama_cpp.Llama(model_path=model, n_ctx=2048, n_threads=args.threads,
                          n_threads_batch=args.batch_threads or args.threads, n_batch=512, verbose=False)
    text = ("Graph transformers capture the locality and globality of graphs for node classification. " * 40)
    prompt = llm.tokenize(text.encode())[: args.prompt_tokens]
    prefill, decode = [], []
    for _ in range(args.repeats):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        prefill.append(len(prompt) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        n = 0
        for _tok in llm.generate([], temp=0.0, reset=False):  # continues after the evaluated prompt
            n += 1
            if n >= args.decode_tokens:
                break
        decode.append(n / (time.perf_counter() - t0))
    features = llama_cpp.llama_print_system_info().decode(errors="replace")
    print(json.dumps({"label": args.label, "threads": args.threads, "batch_threads": args.batch_threads or args.threads,
                      "prompt_tokens": len(prompt),
                      "prefill_tok_s": round(statistics.median(prefill), 1),
                      "decode_tok_s": round(statistics.median(decode), 1),
                      "llama_cpp_python": llama_cpp.__version__, "system_info": features.strip()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
