"""How well ``conversation.described_margin`` (``tuning.DESCRIBED_MARGIN``) tells a follow-up that describes
another paper from one that stays on the paper in focus, on questions nobody wrote as follow-ups.

Every one-paper question of eval/dev.jsonl (lookup, fact, summary, paraphrase, adversarial) is asked as a
follow-up twice over: with its own paper in focus (it must stay: its description strength must be below the
margin) and with each of ``--others`` random other papers in focus (it describes its own paper: it should move
there, and never to a third paper). The strength is ``ChatSession.description_strength`` over
``Answerer.describes`` (profile cosines), as ``ChatSession.resolve`` computes it. Prints, per margin, the share
of "stay" cases wrongly moved, of "move" cases moved to the right paper, and moved to a wrong one.

These dev questions name or describe their paper on purpose, so "move" is easier here than for a terse
follow-up; the hard "stay" cases are detail questions ("how many baselines did they compare against?"), which
the margin was set against on the dev follow-ups and the val conversations (tuning.py).

Usage: ``.venv/bin/python benchmarks/resolution_margin.py [--others 3]`` after ``assistant ingest`` (no LLM;
about 10 s on a laptop CPU).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from assistant.config import Settings
from assistant.service import build_assistant

REPO = Path(__file__).resolve().parent.parent
KINDS = ("lookup", "fact", "summary", "paraphrase", "adversarial")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=REPO / "eval" / "dev.jsonl")
    parser.add_argument("--others", type=int, default=3, help="random other papers put in focus per question")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = [r for r in rows if r.get("type") in KINDS and len(r.get("gold_ids") or []) == 1]
    settings = Settings()
    described_margin = settings.conversation.described_margin
    with build_assistant(settings, start_llm=False) as assistant:
        session = assistant.new_session()
        papers = sorted(assistant.retriever.papers)
        stay: list[float] = []
        move: list[tuple[float, bool]] = []
        for item in items:
            question, gold = item["question"], item["gold_ids"][0]
            sims = assistant.retriever.describes(question, [gold])
            stay.append(session.description_strength(sims, [gold])[1])
            for other in rng.sample([p for p in papers if p != gold], args.others):
                sims = assistant.retriever.describes(question, [other, gold])
                best, strength = session.description_strength(sims, [other])
                move.append((strength, best == gold))
    print(f"{len(items)} questions, {len(move)} asked with another paper in focus (current margin {described_margin})")
    print("margin  stay_moved  move_right  move_wrong")
    for margin in sorted({0.3, 0.35, 0.4, described_margin, 0.46, 0.5}):
        stay_moved = sum(s >= margin for s in stay) / len(stay)
        right = sum(s >= margin and ok for s, ok in move) / len(move)
        wrong = sum(s >= margin and not ok for s, ok in move) / len(move)
        print(f"{margin:6.2f}  {stay_moved:10.3f}  {right:10.3f}  {wrong:10.3f}")


if __name__ == "__main__":
    main()
