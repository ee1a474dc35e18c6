"""Which papers each turn of a conversation means, scored without the language model (issue 42): the turn
resolver alone, on conversation files with per-turn gold papers (``eval/conversations*.jsonl``, or the
generator's output, scripts/generate_conversations.py).

Each conversation runs through one :class:`~assistant.conversation.session.ChatSession` state. Per turn the
resolver's decision (``ChatSession.resolve``: the rules of conversation/resolve.py) is turned into the papers
the answer would be about: the papers in focus when it names some; else the retriever's top papers for the query
it built (as many as the turn has gold papers, at least one); none when it asks back. Then an oracle answer
citing the turn's gold papers (in their order) is recorded, so each turn is scored on a correct history and
errors do not cascade. Turns without gold papers (``unanswerable``) are recorded but not scored. ``--scorer
FILE`` also scores a learned candidate scorer alone (``resolver.npz`` of scripts/train_resolver.py: its papers
with P >= 0.5, else the search's best), to compare it with the rules.

Prints, per turn kind and overall: turns, exact set match, paper precision and recall, questions asked back,
and the resolver's time per turn (p50/p95 ms, with the machine's load). ``--json OUT`` writes every turn.
A ``which_of_them`` turn's gold papers are the answer (those that meet the criterion), while the resolver's job is
the papers to choose among: read its recall, not its exact match.

Usage: .venv/bin/python benchmarks/turn_resolution.py [--conversations FILE ...] [--scorer FILE] [--json OUT]
after ``assistant ingest`` (the index must hold the files' papers; no LLM; seconds on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from assistant.config import Settings
from assistant.conversation.turn_features import CandidateScorer, choose, record_oracle_turn, turn_candidates
from assistant.service import build_assistant
from assistant.understand.parse import parse_question

REPO = Path(__file__).resolve().parent.parent


def load_scorer(path: Path) -> CandidateScorer:
    """The learned candidate scorer (scripts/train_resolver.py); its feature names must be today's."""
    try:
        return CandidateScorer(dict(np.load(path, allow_pickle=False)))
    except ValueError as e:
        raise SystemExit(f"{path}: {e}") from e


def top_papers(assistant: Any, query: str, n: int) -> list[str]:
    """The ids of the retriever's ``n`` best papers for ``query``."""
    return [h.paper.id for h in assistant.retriever.retrieve(query, top_k=n)][:n]


def score_file(assistant: Any, path: Path, scorer: CandidateScorer | None = None) -> list[dict[str, Any]]:
    """Every turn of ``path`` resolved on an oracle history: ``{conversation, kind, question, gold, got, ms,
    clarify}``, with ``learned`` and ``learned_ms`` (the scorer's papers: those with P >= 0.5, else the search's
    best for the question) when ``scorer`` is given."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: list[dict[str, Any]] = []
    papers = assistant.retriever.papers
    for row in rows:
        session = assistant.new_session()
        for turn in row["turns"]:
            question, gold = turn["question"], list(turn.get("gold_ids") or [])
            t0 = time.perf_counter()
            resolution = session.resolve(question)
            ms = (time.perf_counter() - t0) * 1000
            if resolution.clarify:
                got: list[str] = []
            elif resolution.focus_ids:
                got = list(resolution.focus_ids)
            else:
                got = top_papers(assistant, resolution.query, max(1, len(gold)))
            learned: dict[str, Any] = {}
            if scorer is not None:
                t1 = time.perf_counter()
                q = parse_question(question)
                cands = turn_candidates(q, session, assistant.retriever, assistant.settings.retrieval.min_similarity)
                p = scorer.probabilities(cands.matrix)
                chosen = choose(cands.ids, p.tolist()) or top_papers(assistant, question, max(1, len(gold)))
                learned = {"learned": chosen, "learned_ms": round((time.perf_counter() - t1) * 1000, 1)}
            out.append(
                {
                    "conversation": row["id"],
                    "file": path.name,
                    "kind": turn.get("kind", ""),
                    "question": question,
                    "gold": gold,
                    "got": got,
                    "ms": round(ms, 1),
                    "clarify": bool(resolution.clarify),
                    **learned,
                }
            )
            record_oracle_turn(session, question, resolution.query, [papers[pid] for pid in gold if pid in papers])
    return out


def summarise(turns: list[dict[str, Any]], got: str = "got", ms_key: str = "ms") -> list[str]:
    """One line per kind and an overall line, for the papers under ``got`` (``learned``: the scorer's)."""
    turns = [{**t, "got": t[got], "ms": t[ms_key], "clarify": t["clarify"] and got == "got"} for t in turns]
    scored = [t for t in turns if t["gold"]]
    kinds = sorted({t["kind"] for t in scored})
    lines = [f"{'kind':15} {'turns':>5} {'exact':>6} {'prec':>6} {'recall':>6} {'asked':>5}"]
    for kind in [*kinds, "overall"]:
        group = [t for t in scored if kind in ("overall", t["kind"])]
        exact = sum(set(t["got"]) == set(t["gold"]) for t in group) / len(group)
        prec = statistics.mean(len(set(t["got"]) & set(t["gold"])) / len(t["got"]) if t["got"] else 0.0 for t in group)
        rec = statistics.mean(len(set(t["got"]) & set(t["gold"])) / len(t["gold"]) for t in group)
        asked = sum(t["clarify"] for t in group)
        lines.append(f"{kind:15} {len(group):5d} {exact:6.3f} {prec:6.3f} {rec:6.3f} {asked:5d}")
    ms = sorted(t["ms"] for t in turns)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines.append(f"resolver time per turn: p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms (load {load:.2f})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--conversations",
        nargs="+",
        type=Path,
        default=[REPO / "eval" / f"conversations{s}.jsonl" for s in ("", "-2", "-3")],
    )
    parser.add_argument("--json", type=Path, help="write every scored turn here")
    parser.add_argument("--scorer", type=Path, help="also score a learned candidate scorer (resolver.npz)")
    args = parser.parse_args()
    assistant = build_assistant(Settings(), start_llm=False)
    scorer = load_scorer(args.scorer) if args.scorer else None
    for path in args.conversations:
        turns = score_file(assistant, path, scorer)
        print(f"== {path.name}: the rules (conversation/resolve.py)")
        print("\n".join(summarise(turns)))
        if scorer is not None:
            print(f"== {path.name}: the learned scorer ({args.scorer})")
            print("\n".join(summarise(turns, "learned", "learned_ms")))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            with args.json.open("a", encoding="utf-8") as f:
                f.writelines(json.dumps(t) + "\n" for t in turns)


if __name__ == "__main__":
    main()
