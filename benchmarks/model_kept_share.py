"""How often is anything the configured model writes kept? For each question the model is asked about,
whether at least one of its sentences passed the verifier (``Answer.mode == "generated"``), grouped by
intent and, for lookups, by what the question asks (which paper / a number / an acronym's expansion / what
a named thing is / other, from ``understand.question.analyze``). Also the seconds spent waiting for it.

Used to decide where the model is asked at all (issue 25.1: ask it only where its sentences have a real
chance of being kept). ``--ask-all`` asks the model for every lookup kind, whatever the strategy's rule
(``tuning.SMALL_MODEL_LOOKUP_KINDS``), so the kinds it skips are still measured. Each answer's own
question kind is that of its last turn. Not a test; prints a table.

Usage: ASSISTANT_STORAGE_DIR=... .venv/bin/python benchmarks/model_kept_share.py \
           [--questions eval/dev.jsonl eval/fresh.jsonl] [--ask-all]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from assistant.config import load_settings
from assistant.offline import enforce_offline


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", nargs="+", default=["eval/dev.jsonl", "eval/fresh.jsonl"])
    parser.add_argument("--ask-all", action="store_true", help="ask the model for every lookup kind")
    parser.add_argument(
        "--split",
        choices=["all", "val", "test"],
        default="all",
        help="frozen sets (eval/kept-seeds.jsonl): odd ids are test, even ids val",
    )
    args = parser.parse_args(argv)
    enforce_offline()
    import assistant.answer.lookup as lookup
    from assistant.answer.strategies import lookup_kind
    from assistant.service import build_assistant
    from assistant.understand.question import analyze

    if args.ask_all:
        lookup.SMALL_MODEL_LOOKUP_KINDS = None  # type: ignore[assignment]
    items = [json.loads(line) for p in args.questions for line in Path(p).read_text().splitlines() if line.strip()]
    if args.split != "all":
        odd = args.split == "test"
        items = [i for i in items if (int("".join(c for c in i["id"] if c.isdigit()) or 0) % 2 == 1) == odd]
    kept: dict[str, list[bool]] = defaultdict(list)
    waited: dict[str, list[float]] = defaultdict(list)
    with build_assistant(load_settings()) as assistant:
        print(f"model: {assistant.model_label}", flush=True)
        for item in items:
            if item.get("type") == "unanswerable":
                continue
            session = assistant.new_session()
            for question in item.get("turns") or [item["question"]]:
                answer = session.ask(question)
            if not answer.model_used:
                continue
            key = answer.intent + (f" / {lookup_kind(analyze(question))}" if answer.intent == "lookup" else "")
            kept[key].append(answer.mode == "generated")
            waited[key].append(answer.timings_ms.get("generate", 0.0) / 1000)
            print(
                f"{'kept' if kept[key][-1] else 'none':4s} {waited[key][-1]:5.1f} s  {key:24s} {question[:70]}",
                flush=True,
            )
    print(f"\n{'asked for':26s} {'answers':>7s} {'kept':>5s} {'share':>6s} {'mean wait s':>11s}")
    for key in sorted(kept):
        k, w = kept[key], waited[key]
        print(f"{key:26s} {len(k):7d} {sum(k):5d} {sum(k) / len(k):6.2f} {sum(w) / len(w):11.1f}")
    all_k = [x for k in kept.values() for x in k]
    if all_k:
        print(f"{'all':26s} {len(all_k):7d} {sum(all_k):5d} {sum(all_k) / len(all_k):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
