"""Figures per question kind of a set written for the answers issue (issue 41: ``kind`` field, eval/questions-6.jsonl)
from an ``assistant eval --json`` report.

    .venv/bin/python benchmarks/question_kinds.py REPORT.json QUESTIONS.jsonl [--show KIND ...]

Per kind:

- ``plain``, ``language``: facts hit, citation precision / recall (answerable items), refused (abstained or "not
  stated" although answerable);
- ``choice``: facts hit, citation precision / recall, and ``verdict named``: the answer text names the paper of the
  item's ``verdict`` (its short name, case-insensitive; "neither" items are read by hand: ``--show choice``);
- ``not_indexed``, ``not_stated``: said so (the answer abstains or says "not stated" and cites nothing);
- ``false_premise``: the premise's paper cited first and the correction's facts hit; whether the answer says the
  premise is wrong is read by hand (``--show false_premise`` prints each answer).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.3f}" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("questions", type=Path)
    ap.add_argument("--show", nargs="*", default=[], help="kinds whose answers are printed for reading")
    args = ap.parse_args()
    report = json.loads(args.report.read_text())
    rows = {r["id"]: r for r in map(json.loads, filter(str.strip, args.questions.read_text().splitlines()))}
    by_kind: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for item in report["items"]:
        q = rows[item["id"]]
        by_kind.setdefault(q.get("kind", q["type"]), []).append((q, item))
    for kind, pairs in by_kind.items():
        m = [i.get("metrics", {}) for _, i in pairs]
        facts = [x["facts_hit"] for x in m if x.get("facts_hit") is not None]
        prec = [x["citation_precision"] for x in m if x.get("citation_precision") is not None]
        rec = [x["citation_recall"] for x in m if x.get("citation_recall") is not None]
        said_so = [1.0 if i.get("abstained") and not i.get("cited_ids") else 0.0 for _, i in pairs]
        refused = [1.0 if i.get("abstained") else 0.0 for q, i in pairs if q.get("gold_ids")]
        line = f"{kind:14s} n={len(pairs):3d} facts={_mean(facts)} cit_P={_mean(prec)} cit_R={_mean(rec)}"
        if kind in ("not_indexed", "not_stated"):
            line += f" said_so={sum(said_so):.0f}/{len(pairs)}"
        else:
            line += f" refused={_mean(refused)}"
        if kind == "choice":
            named = [
                1.0 if q["verdict"].lower() in i.get("answer", "").lower() else 0.0
                for q, i in pairs
                if q.get("verdict", "neither") != "neither"
            ]
            line += f" verdict_named={sum(named):.0f}/{len(named)}"
        if kind == "false_premise":
            first = [1.0 for q, i in pairs if (i.get("cited_ids") or [None])[:1] == q["gold_ids"][:1]]
            line += f" paper_cited_first={sum(first):.0f}/{len(pairs)}"
        print(line)
    for kind in args.show:
        for q, i in by_kind.get(kind, []):
            print(f"\n[{q['id']} {kind}] {q['question']}\n  verdict/notes: {q.get('verdict', '')} {q['notes'][:200]}")
            print(f"  mode={i.get('mode')} notice={i.get('notice', '')[:200]!r}\n  answer: {i.get('answer', '')[:600]}")


if __name__ == "__main__":
    main()
