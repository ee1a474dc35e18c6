"""Which paper of a choice fits, decided by reading each paper alone (issue 59 item 4, issue 60 item 2).

A choice ("qNBO or AdamCB, which one relies on BFGS?") needs a verdict: which of the papers the question asks for.
Today the model writes it from the papers' parts, having read only those parts. This benchmark measures the other
way the issue names: each paper's own reading is asked whether that paper fits, and ``P(yes)`` is read from the
log-probabilities (:data:`READ_FITS`, one token).

Data: the choice questions of ``eval/choices-1.jsonl`` and ``eval/questions-8.jsonl`` (written blind, frozen), each
paper labelled from the writer's note: "ONE: <id> …" (the first paper named fits), "BOTH" (every paper fits),
"NEITHER" (none); a questions-8 note without a prefix names the paper that fits first. ``--split`` picks the split
(validation only while anything is chosen on it).

Usage: ``.venv/bin/python benchmarks/choice_fit.py [--split val] [--base-url URL]`` (default: the bundled qwen1.5b
started on loopback). Prints each pair's ``P(yes)``, then AUC and accuracy at 0.5 over pairs, and the questions whose
papers are all decided right, and for questions one paper fits, how often that paper's ``P(yes)`` is the highest.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.ingest.corpus import read_papers  # noqa: E402
from assistant.llm.client import OpenAIChatBackend  # noqa: E402
from assistant.llm.local import LocalLLMServer  # noqa: E402
from assistant.llm.prompts import reading_messages  # noqa: E402

#: Whether one paper of a choice fits, asked of that paper's reading alone (fixed before the first run; it opens as the
#: product's ``prompts.READ_CELL`` does). Not in the product: see docs/results/issue59 (stop 71).
READ_FITS = (
    "The user asks which of several papers fits this: {question}\nDoes this abstract state that this paper fits it? "
    "Answer yes or no."
)
SETS = ("eval/choices-1.jsonl", "eval/questions-8.jsonl")
SHORT_ID = re.compile(r"\b(\d{3})#(\d+)\b")


def labelled_pairs(split: str) -> list[dict[str, Any]]:
    """``{"id", "question", "paper", "fits"}`` per (choice question, paper) of ``split``, labelled from the notes."""
    out = []
    for name in SETS:
        for line in (REPO / name).read_text().splitlines():
            q = json.loads(line)
            if q.get("type") != "choice" or q.get("split") != split:
                continue
            papers = q["paper_ids_about"]
            by_short = {f"{pid[:3]}#{pid.rsplit('#', 1)[1]}": pid for pid in papers}
            notes = q["notes"]
            kind = notes.split(":", 1)[0].strip().split()[0] if ":" in notes.split("#", 1)[0] else "ONE"
            first = next((by_short[m.group(0)] for m in SHORT_ID.finditer(notes) if m.group(0) in by_short), None)
            for pid in papers:
                fits = kind == "BOTH" or (kind == "ONE" and pid == first)
                out.append({"id": q["id"], "question": q["question"], "paper": pid, "fits": fits})
    return out


def auc(scores: list[float], labels: list[bool]) -> float:
    """Area under the ROC curve (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="val")
    ap.add_argument("--base-url", default="", help="an OpenAI-compatible server (default: start the bundled qwen1.5b)")
    args = ap.parse_args()
    papers = {p.id: p for p in read_papers([REPO / "seeds"])}
    pairs = labelled_pairs(args.split)

    def run(backend: OpenAIChatBackend) -> None:
        for pair in pairs:
            paper = papers[pair["paper"]]
            ask = READ_FITS.format(question=" ".join(pair["question"].split()))
            t = time.perf_counter()
            pair["p_yes"] = backend.yes_probability(reading_messages((paper.title, paper.text), ask))
            pair["seconds"] = time.perf_counter() - t
            print(f"{pair['id']}\t{pair['fits']:d}\t{pair['p_yes']:.3f}\t{pair['seconds']:.1f}s\t{paper.title[:60]}")

    if args.base_url:
        run(OpenAIChatBackend(args.base_url, "k", "qwen1.5b", timeout_s=120))
    else:
        with LocalLLMServer(bundled="qwen1.5b") as server:
            run(OpenAIChatBackend(server.base_url, "k", server.model, timeout_s=120))
    scores, labels = [p["p_yes"] for p in pairs], [p["fits"] for p in pairs]
    right = [(p["p_yes"] >= 0.5) == p["fits"] for p in pairs]
    questions: dict[str, bool] = {}
    for p, ok in zip(pairs, right, strict=True):
        questions[p["id"]] = questions.get(p["id"], True) and ok
    one: dict[str, list[dict[str, Any]]] = {}
    for p in pairs:
        one.setdefault(p["id"], []).append(p)
    single = [ps for ps in one.values() if sum(p["fits"] for p in ps) == 1]
    top = sum(max(ps, key=lambda p: p["p_yes"])["fits"] for ps in single)
    print(
        f"\n{args.split}: {len(pairs)} pairs ({sum(labels)} fit) over {len(questions)} questions; "
        f"AUC {auc(scores, labels):.3f}; accuracy at 0.5 {sum(right) / len(right):.3f}; "
        f"questions with every paper right {sum(questions.values())}/{len(questions)}; "
        f"one paper fits: it has the highest P(yes) in {top}/{len(single)}; "
        f"seconds per ask p50 {sorted(p['seconds'] for p in pairs)[len(pairs) // 2]:.1f}"
    )


if __name__ == "__main__":
    main()
