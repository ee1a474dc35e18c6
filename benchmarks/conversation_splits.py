"""Per-split scores of a conversation eval report (issue 60): citation precision and recall, facts and compare facts
averaged over the answerable turns of each split (``val`` / ``test``, the conversation's ``split`` field), as the eval
scores each turn. ``assistant eval`` prints the scores of all turns together; the frozen sets are read per split.

Usage: .venv/bin/python benchmarks/conversation_splits.py eval/conversations-5.jsonl REPORT.json [REPORT.json ...]
(each REPORT from ``assistant eval --questions eval/conversations-5.jsonl --json REPORT.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(part) if part else 0.0


def split_scores(conversations: Path, report: Path) -> dict[str, dict[str, float]]:
    """``{split: {"n", "citation_precision", "citation_recall", "facts", "compare_facts"}}`` for ``report``; a turn
    that cites nothing has citation precision 0."""
    split = {}
    for line in conversations.read_text(encoding="utf-8").splitlines():
        if line.strip():
            c = json.loads(line)
            split[c["id"]] = c.get("split", "")
    items: list[dict[str, Any]] = json.loads(report.read_text(encoding="utf-8"))["items"]
    out = {}
    for name in sorted({*split.values()}):
        turns = [i for i in items if split.get(i["id"].split(".")[0]) == name and i["gold_ids"]]
        if not turns:
            continue
        facts = [sum(i["facts_hit"]) / len(i["facts_hit"]) for i in turns if i.get("answer_facts")]
        compare = [sum(i["facts_hit"]) / len(i["facts_hit"]) for i in turns if i.get("answer_facts")
                   and i["type"] == "compare"]
        out[name] = {
            "n": len(turns),
            "citation_precision": sum(_share(set(i["cited_ids"]), set(i["gold_ids"])) for i in turns) / len(turns),
            "citation_recall": sum(_share(set(i["gold_ids"]), set(i["cited_ids"])) for i in turns) / len(turns),
            "facts": sum(facts) / len(facts) if facts else float("nan"),
            "compare_facts": sum(compare) / len(compare) if compare else float("nan"),
        }
    return out


def main() -> None:
    conversations, *reports = (Path(a) for a in sys.argv[1:])
    for report in reports:
        for name, s in split_scores(conversations, report).items():
            print(f"{report.name:28s} {name:5s} n={s['n']:3.0f} cit_prec={s['citation_precision']:.3f} "
                  f"cit_rec={s['citation_recall']:.3f} facts={s['facts']:.3f} compare_facts={s['compare_facts']:.3f}")


if __name__ == "__main__":
    main()
