"""The language step (assistant/understand/language.py) on every question of this project's question sets: how many
English questions it would translate (each costs two model calls and changes nothing), how many questions in other
languages it reads in English, what it costs, and the translations themselves (to read).

A question is labelled not English when its set says so (``kind == "language"``, eval/test-multilingual.jsonl);
every other question is labelled English. No threshold is fitted here: langid's top language and the model's
P(yes) >= 0.5 are the decisions.

Usage: ``.venv/bin/python benchmarks/language_step.py OUT [--base-url URL]`` (the bundled qwen1.5b on loopback when
no URL); writes ``OUT/language-step.json`` and prints the counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.llm.client import OpenAIChatBackend  # noqa: E402
from assistant.llm.local import LocalLLMServer  # noqa: E402
from assistant.understand.language import english_reading, identify_language  # noqa: E402


def questions() -> list[dict[str, str]]:
    """Every distinct question text of eval/*.jsonl and ../shared/eval/dev.jsonl, with its set and label."""
    seen: dict[str, dict[str, str]] = {}
    files = sorted((REPO / "eval").glob("*.jsonl")) + [REPO.parent / "shared" / "eval" / "dev.jsonl"]
    for path in files:
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            q = row.get("question")
            if isinstance(q, str) and q.strip() and q not in seen:
                other = row.get("kind") == "language" or "multilingual" in path.name
                seen[q] = {"question": q, "set": path.name, "label": "other" if other else "en"}
    return list(seen.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--base-url", default="")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    items = questions()
    t0 = time.perf_counter()
    for it in items:
        it["langid"] = identify_language(it["question"])
    langid_ms = (time.perf_counter() - t0) * 1000 / len(items)

    def run(backend: OpenAIChatBackend) -> None:
        for it in items:
            if it["langid"] == "en":
                continue
            t = time.perf_counter()
            reading = english_reading(backend, it["question"])
            it["ms"] = f"{(time.perf_counter() - t) * 1000:.0f}"
            it["english"] = reading.english if reading else ""

    if args.base_url:
        run(OpenAIChatBackend(args.base_url, "k", "qwen1.5b", timeout_s=120))
    else:
        with LocalLLMServer(bundled="qwen1.5b") as server:
            run(OpenAIChatBackend(server.base_url, "k", server.model, timeout_s=120))

    en = [it for it in items if it["label"] == "en"]
    other = [it for it in items if it["label"] == "other"]
    summary = {
        "questions": len(items),
        "english": len(en),
        "other": len(other),
        "langid_ms_per_question": round(langid_ms, 2),
        "english_langid_not_en": sum(it["langid"] != "en" for it in en),
        "english_translated": sum(bool(it.get("english")) for it in en),
        "other_langid_en": sum(it["langid"] == "en" for it in other),
        "other_translated": sum(bool(it.get("english")) for it in other),
        "ms_model_step_p50": sorted(float(it["ms"]) for it in items if "ms" in it)[
            len([it for it in items if "ms" in it]) // 2
        ]
        if any("ms" in it for it in items)
        else 0.0,
    }
    (args.out / "language-step.json").write_text(json.dumps({"summary": summary, "items": items}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    for it in items:
        if "ms" in it:
            print(f"[{it['label']}/{it['langid']}] {it['question']!r} -> {it.get('english', '')!r}")


if __name__ == "__main__":
    main()
