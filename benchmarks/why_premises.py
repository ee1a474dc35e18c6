"""Why-questions and their premises (issue 41: false premises of direction or rank said in words): every question
of eval/ (questions-6, a test set, left out) whose last sentence is a why-question ("Why does X score worse than
Y?", question.premises), answered by the real pipeline; prints whether the answer corrects the premise ("The question
assumes ...") and what it shows.

The sets label these questions: type ``adversarial`` is a premise written false on purpose; the claims sets'
why-questions (``claims-*.jsonl``) ask the reason for something their abstract states. So a correction is right on
the first and wrong on the second.

Usage: ``.venv/bin/python benchmarks/why_premises.py OUT`` (the bundled model; the index of ``ASSISTANT_STORAGE_DIR``);
writes ``OUT/why-premises.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.config import load_settings  # noqa: E402
from assistant.lang.text import split_sentences  # noqa: E402
from assistant.service import build_assistant  # noqa: E402
from assistant.understand.question import WHY_LEAD, premises  # noqa: E402

CORRECTION = "The question assumes"


def why_questions() -> list[dict[str, str]]:
    """The distinct why-questions of eval/ (not questions-6) and ../shared/eval, with their set and label."""
    seen: dict[str, dict[str, str]] = {}
    files = [p for p in sorted((REPO / "eval").glob("*.jsonl")) if p.name != "questions-6.jsonl"]
    for path in files + sorted((REPO.parent / "shared" / "eval").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            q = row.get("question")
            if not isinstance(q, str) or q in seen:
                continue
            parts = split_sentences(q)
            if WHY_LEAD.match(parts[-1] if parts else q):
                label = "false" if row.get("type") == "adversarial" else "true"
                seen[q] = {"question": q, "set": path.name, "premise_is": label, "premises": " | ".join(premises(q))}
    return list(seen.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    items = why_questions()
    with build_assistant(load_settings()) as assistant:
        for it in items:
            answer = assistant.ask(it["question"])
            it["corrected"] = str(answer.notice.startswith(CORRECTION) or CORRECTION in answer.notice)
            it["mode"] = answer.mode
            it["notice"] = answer.notice
            it["text"] = answer.text[:300]
            print(f"[{it['premise_is']}/{'corrected' if it['corrected'] == 'True' else 'answered'}] {it['question']}")
    rows = {
        label: {
            "n": sum(it["premise_is"] == label for it in items),
            "corrected": sum(it["premise_is"] == label and it["corrected"] == "True" for it in items),
        }
        for label in ("false", "true")
    }
    (args.out / "why-premises.json").write_text(json.dumps({"summary": rows, "items": items}, indent=1) + "\n")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
