"""Load test: N parallel conversations against a running UI through gradio_client for T seconds.

Each conversation cycles through (question, pronoun follow-up) pairs about one paper. First every pair
is answered *alone* (one conversation at a time) and kept as the reference; then under load every answer
is compared with that reference: the answer text must be identical (temperature 0), so a stream cut
short by another request, a mixed-up history or a fallback under load all count as "differs". Also
checks that every answer cites its conversation's paper. Prints errors, answers that differ from their
solo answer, mixed answers and the latency distribution. Not a test: run it against `assistant-ui`.

Usage: .venv/bin/python benchmarks/load_test.py --url http://127.0.0.1:7860/ [--conversations 8] [--seconds 120]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from assistant.offline import enforce_offline

PAIRS = [  # (question, follow-up, a word of the expected paper's reference title)
    ("Which paper introduces A-Bench?", "How many text-to-image models did they sample images from?", "A-Bench"),
    ("Which paper studies the numerical understanding of language models (NUPA)?", "How many tasks does it cover?",
     "Number Cookbook"),
    ("Which abstract introduces a State Machine Module (SMM)?", "What problem is it meant to help with?",
     "Local Patterns"),
    ("Which paper generates CAD code with vision-language models?", "What benchmark do the authors release?",
     "CAD Code"),
    ("Which paper proposes DUALFormer?", "How does it scale to large graphs?", "DUALFormer"),
    ("Which paper proposes LeReT?", "How much did it improve retrieval accuracy?", "Grounding by Trying"),
    ("Which paper controls Android apps on a phone?", "Which models did it beat?", "App Control"),
    ("Which paper proposes EM-LLM?", "Does it need fine-tuning?", "Episodic Memory"),
]


def _text(message: dict) -> str:
    content = message["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--url", default="http://127.0.0.1:7860/")
    ap.add_argument("--conversations", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=120.0)
    args = ap.parse_args()
    enforce_offline()
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    differs: list[str] = []
    mixed: list[str] = []
    lock = threading.Lock()

    def answer_body(message: dict) -> str:
        """The answer HTML without its timing line (which differs run to run)."""
        import re

        return re.sub(r"<small>answered by[^<]*</small>", "", _text(message))

    def solo(pair: tuple[str, str, str]) -> list[str]:
        client = Client(args.url, verbose=False, analytics_enabled=False, download_files=False)
        try:
            history: list[dict] = []
            out = []
            for q in pair[:2]:
                _, history = client.submit(q, "auto", history, api_name="/respond").result(timeout=300)
                out.append(answer_body(history[-1]))
            return out
        finally:
            client.close()

    used = sorted({i % len(PAIRS) for i in range(args.conversations)})
    reference = {p: solo(PAIRS[p]) for p in used}
    print(f"solo reference answers taken for {len(used)} question pairs", flush=True)
    stop_at = time.monotonic() + args.seconds

    def converse(i: int) -> int:
        question, follow_up, title = PAIRS[i % len(PAIRS)]
        client = Client(args.url, verbose=False, analytics_enabled=False, download_files=False)
        answered = 0
        try:
            while time.monotonic() < stop_at:
                history: list[dict] = []  # a new conversation each round
                client.predict(api_name="/new_chat")
                for turn, q in enumerate((question, follow_up)):
                    t0 = time.monotonic()
                    try:
                        _, history = client.submit(q, "auto", history, api_name="/respond").result(timeout=300)
                    except Exception as e:  # noqa: BLE001  # count and report every failure kind
                        with lock:
                            errors.append(f"conv {i}: {type(e).__name__}: {e}")
                        break
                    dt = time.monotonic() - t0
                    answer = _text(history[-1])
                    refs = answer.split("<ol class='refs'>", 1)[-1]
                    with lock:
                        latencies.append(dt)
                        if answer_body(history[-1]) != reference[i % len(PAIRS)][turn]:
                            differs.append(f"conv {i}: {q!r} differs from its solo answer")
                        if title not in refs:
                            mixed.append(f"conv {i}: {q!r} answer does not cite {title!r}")
                    answered += 1
        finally:
            client.close()
        return answered

    t0 = time.monotonic()
    with ThreadPoolExecutor(args.conversations) as pool:
        counts = list(pool.map(converse, range(args.conversations)))
    wall = time.monotonic() - t0
    lat = sorted(latencies)
    pct = lambda p: lat[min(len(lat) - 1, int(round(p * (len(lat) - 1))))] if lat else float("nan")  # noqa: E731
    print(f"{args.conversations} conversations for {wall:.0f} s: {sum(counts)} answers "
          f"({sum(counts) / wall:.2f}/s), errors {len(errors)}, answers differing from their solo answer "
          f"{len(differs)}, "
          f"answers not citing their conversation's paper {len(mixed)}")
    if lat:
        print(f"answer latency s: min {lat[0]:.1f}  p50 {pct(.5):.1f}  p90 {pct(.9):.1f}  p95 {pct(.95):.1f}  max "
              f"{lat[-1]:.1f}  mean {statistics.mean(lat):.1f}")
    for line in (errors + differs + mixed)[:20]:
        print("  ", line)
    return 1 if errors or differs or mixed else 0


if __name__ == "__main__":
    sys.exit(main())
