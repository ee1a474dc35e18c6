"""The bundled model server's own speed, without the app. For 6 seed papers: a first reading (a yes/no ask, one
token), 4 yes/no checks asked non-streamed and 4 streamed, then one check of each paper after the others were read
(its reading restored from the prompt cache), and 3 summaries streamed (first token, tokens/s). Prints the timings
and writes ``build/diag/server-speed-LABEL.json`` (top log-probabilities and texts, to compare two server
versions' outputs). Not a test; run it alone on the machine.

Usage: .venv/bin/python benchmarks/server_speed.py LABEL [MODULE]

MODULE is the server module run as ``python -m MODULE`` (default ``assistant.llm.bundled_server``). To time another
version, copy its ``bundled_server.py`` under another name into a folder and put that folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from openai import OpenAI

from assistant.answer.strategies import SummaryStrategy
from assistant.ingest.corpus import read_papers
from assistant.lang.text import split_sentences
from assistant.llm.local import LocalLLMServer, bundled_gguf_path
from assistant.llm.prompts import READ_WRITE, read_check_messages, reading_messages

Top = list[tuple[str, float]]


def check(client: Any, messages: list[dict[str, str]], stream: bool) -> tuple[float, Top]:
    """Seconds for one yes/no check (one token, 20 alternatives) and its top 3 log-probabilities."""
    t = time.perf_counter()
    top: Top = []
    kwargs: dict[str, Any] = {"max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": 20}
    if stream:
        for chunk in client.chat.completions.create(model="qwen", messages=messages, stream=True, **kwargs):
            content = chunk.choices[0].logprobs.content if chunk.choices and chunk.choices[0].logprobs else None
            if content and not top:
                top = [(x.token, round(x.logprob, 4)) for x in content[0].top_logprobs][:3]
    else:
        reply = client.chat.completions.create(model="qwen", messages=messages, **kwargs)
        top = [(x.token, round(x.logprob, 4)) for x in reply.choices[0].logprobs.content[0].top_logprobs][:3]
    return time.perf_counter() - t, top


def stream_write(client: Any, messages: list[dict[str, str]], max_tokens: int = 300) -> dict[str, Any]:
    """One streamed answer at temperature 0: ``{"s": seconds in all, "first": seconds to the first token, "tokens":
    streamed pieces (one token each), "text"}``. Also used by benchmarks/decode_speed.py."""
    t = time.perf_counter()
    first, text, tokens = 0.0, "", 0
    for chunk in client.chat.completions.create(model="qwen", messages=messages, max_tokens=max_tokens, temperature=0,
                                                stream=True):
        delta = chunk.choices[0].delta.content if chunk.choices else None
        if delta:
            first = first or time.perf_counter() - t
            text += delta
            tokens += 1
    return {"s": time.perf_counter() - t, "first": first, "tokens": tokens, "text": text}


def main() -> None:
    label = sys.argv[1]
    module = sys.argv[2] if len(sys.argv) > 2 else "assistant.llm.bundled_server"
    papers = read_papers([Path("seeds")])[:6]
    cmd = [sys.executable, "-m", module, "--model", str(bundled_gguf_path()), "--model_alias", "qwen",
           "--host", "127.0.0.1", "--port", "{port}", "--n_ctx", "4096", "--n_threads", "1", "--n_threads_batch", "2",
           "--verbose", "False", "--interrupt_requests", "False",
           "--cache", "True", "--cache_type", "ram", "--cache_size", str(2048 << 20)]
    out: dict[str, Any] = {"label": label, "read": [], "check": [], "check_stream": [], "restored": [], "write": []}
    with LocalLLMServer(command=cmd) as server:
        client: Any = OpenAI(base_url=server.base_url, api_key="x")
        for p in papers:
            source = (p.title, p.text)
            seconds, _ = check(client, read_check_messages(source, "x"), False)
            out["read"].append(seconds)
            for sentence in split_sentences(p.text)[:4]:
                out["check"].append(check(client, read_check_messages(source, sentence), False))
                out["check_stream"].append(check(client, read_check_messages(source, sentence + " It is new."), True))
            print(label, p.id, f"read {seconds:.2f} s", "checks", [round(s, 2) for s, _ in out["check"][-4:]],
                  "streamed", [round(s, 2) for s, _ in out["check_stream"][-4:]], flush=True)
        for p in papers:
            out["restored"].append(check(client, read_check_messages((p.title, p.text), split_sentences(p.text)[-1]),
                                         False))
        for p in papers[:3]:
            ask = READ_WRITE.format(question="Summarize this paper.", task=SummaryStrategy.task, picked="")
            w = stream_write(client, reading_messages((p.title, p.text), ask))
            total, first, pieces = w["s"], w["first"], w["tokens"]
            out["write"].append({"s": total, "first": first, "pieces": pieces, "text": w["text"]})
            print(label, p.id, f"summary {total:.2f} s, first token {first:.2f} s, {pieces / (total - first):.1f} "
                  "tokens/s", flush=True)
    for kind in ("read", "check", "check_stream", "restored"):
        times = [x if isinstance(x, float) else x[0] for x in out[kind]]
        print(label, kind, f"median {statistics.median(times):.3f} s, sum {sum(times):.2f} s")
    target = Path("build/diag") / f"server-speed-{label}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
