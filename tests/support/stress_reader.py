"""One reader process of the reader/writer stress test (tests/support/reader_writer_stress.py, issue 43): opens
the index named by the environment (``ASSISTANT_STORAGE_DIR``, ``ASSISTANT_CHROMA_HOST``/``PORT``) the way the
chat does (``build_assistant``, a scripted model at ``--llm-base-url``) and asks the questions of
``--questions`` (a JSON list), each as the first turn of a new conversation, round and round from
``--offset``, until the file ``--until`` exists (``--once``: each question once). Writes one JSON line per
answer to ``--out``: ``{"q", "answer", "t0", "t1", "error"}`` (``answer``: :func:`answer_key`), then a last
line ``{"waits": ...}`` with this process's index-lock waits.

A segfault ends the process with a negative exit code, which the parent reads; any exception while answering
is recorded in ``error`` and the loop goes on.

``--lock-queries`` holds the index lock shared around each whole answer (a measurement of what that would
cost; the product holds it only while a new Chroma client loads the index): ``lock_wait`` per line.

Run: ``python -X faulthandler -m tests.support.stress_reader --questions Q.json --out OUT --llm-base-url URL``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def answer_key(answer: Any) -> dict[str, Any]:
    """What two answers to one question must share to count as the same answer: the answer mode, the text the
    user reads (with its [n] markers) and the ids of the cited papers, in order. The other retrieved papers
    (``sources``) are left out: they are the question's nearest papers, which a larger index changes."""
    return {"mode": answer.mode, "text": answer.text, "cited": [c.paper.id for c in answer.citations]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="one reader of the reader/writer stress test")
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--llm-base-url", required=True)
    ap.add_argument("--until", type=Path)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--once", action="store_true")
    ap.add_argument("--lock-queries", action="store_true")
    a = ap.parse_args(argv)

    from assistant.offline import enforce_offline

    enforce_offline()
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    from assistant.config import load_settings
    from assistant.index.index_lock import WAITS, index_lock
    from assistant.llm.client import OpenAIChatBackend
    from assistant.service import build_assistant

    questions: list[str] = json.loads(a.questions.read_text(encoding="utf-8"))
    settings = load_settings()
    lock = index_lock(settings)
    backend = OpenAIChatBackend(a.llm_base_url, "k", "scripted", timeout_s=60)
    with build_assistant(settings, backend=backend) as assistant, a.out.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"ready": time.time()}) + "\n")
        out.flush()
        i = a.offset
        while True:
            if a.once and i - a.offset >= len(questions):
                break
            if not a.once and a.until is not None and a.until.exists():
                break
            q = questions[i % len(questions)]
            i += 1
            t0 = time.time()
            row: dict[str, Any] = {"q": q, "t0": t0}
            try:
                if a.lock_queries:
                    with lock.shared():
                        row["lock_wait"] = time.time() - t0
                        row["answer"] = answer_key(assistant.ask(q))
                else:
                    row["answer"] = answer_key(assistant.ask(q))
            except Exception as e:  # noqa: BLE001 - every failure is recorded for the parent
                row["error"] = f"{type(e).__name__}: {e}"[:2000]
            row["t1"] = time.time()
            out.write(json.dumps(row) + "\n")
            out.flush()
        out.write(json.dumps({"waits": {"holds": WAITS.holds, "seconds": WAITS.seconds, "longest": WAITS.longest}}))
        out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
