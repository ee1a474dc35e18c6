"""The bundled model server's decode speed on answer-shaped requests, without the app: for 6 seed papers, a reading
(one yes/no token), then 3 streamed answers of up to 300 tokens at temperature 0 (a summary, the method, the
results; prompts.READ_WRITE). Prints per answer the seconds to the first token and of decoding, and the tokens/s
over all 18; writes ``build/diag/decode-LABEL.json`` (the texts, to compare two settings). Not a test; run it alone
(or beside ``yes > /dev/null`` to see one busy core's effect).

Usage: .venv/bin/python benchmarks/decode_speed.py LABEL [--decode-threads N] [--draft N]

``--decode-threads``: the server's ``--n_threads`` (token-by-token decoding; the prompt always uses 2).
``--draft N``: llama-cpp-python's prompt-lookup speculative decoding with N draft tokens; the shipped
``ReadingLlama`` keeps only each batch's last logits, so a draft run needs its eval to keep every row of a short
batch (docs/measurements.md, "Threads under contention", stop 68).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from openai import OpenAI
from server_speed import stream_write  # benchmarks/ (this script's folder)

from assistant.answer.strategies import SummaryStrategy
from assistant.ingest.corpus import read_papers
from assistant.llm.local import LocalLLMServer, bundled_gguf_path
from assistant.llm.prompts import READ_WRITE, read_check_messages, reading_messages

ASKS = ("Summarize this paper.", "What method does this paper propose, and how does it work?",
        "What are the main results?")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("label")
    ap.add_argument("--decode-threads", type=int, default=1)
    ap.add_argument("--draft", type=int, default=0)
    args = ap.parse_args()
    cmd = [sys.executable, "-m", "assistant.llm.bundled_server", "--model", str(bundled_gguf_path()),
           "--model_alias", "qwen", "--host", "127.0.0.1", "--port", "{port}", "--n_ctx", "4096",
           "--n_threads", str(args.decode_threads), "--n_threads_batch", "2", "--verbose", "False",
           "--interrupt_requests", "False", "--cache", "True", "--cache_type", "ram", "--cache_size", str(2048 << 20)]
    if args.draft:
        cmd += ["--draft_model", "prompt-lookup-decoding", "--draft_model_num_pred_tokens", str(args.draft)]
    out: list[dict[str, Any]] = []
    with LocalLLMServer(command=cmd) as server:
        client: Any = OpenAI(base_url=server.base_url, api_key="x")
        for p in read_papers([Path("seeds")])[:6]:
            source = (p.title, p.text)
            client.chat.completions.create(model="qwen", messages=read_check_messages(source, "x"), max_tokens=1,
                                           temperature=0)
            for q in ASKS:
                task = SummaryStrategy.task if q.startswith("Summ") else "Answer in two or three sentences."
                w = stream_write(client, reading_messages(source, READ_WRITE.format(question=q, task=task, picked="")))
                out.append({"id": p.id, "ask": q, **w, "decode": w["s"] - w["first"]})
                print(args.label, p.id, q[:20], f"first {w['first']:.2f} s, decode {w['s'] - w['first']:.2f} s, "
                      f"{w['tokens']} tokens", flush=True)
    decode = [o["decode"] for o in out]
    tokens = sum(o["tokens"] for o in out)
    print(f"{args.label}: decode {sum(decode):.1f} s in all, median {statistics.median(decode):.2f} s, "
          f"{tokens} tokens, {tokens / sum(decode):.1f} tokens/s")
    target = Path("build/diag") / f"decode-{args.label}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
