"""Item-by-item diff of two folders of ``--json`` reports written by ``benchmarks/behaviour_snapshot.sh``.

    .venv/bin/python benchmarks/behaviour_diff.py BEFORE_DIR AFTER_DIR

For ``assistant eval`` reports it compares each item's answer text, cited ids, mode, notice, abstention, deeper
ranking and dropped sentences; for ``assistant eval-claims`` reports every field of each claim but timings. It
prints each differing item (before / after) and the count per report, and exits 0 (a diff is a finding, not an
error). Used for issue 31's "behaviour unchanged" check (docs/evaluation.md, "Issue 31").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ANSWER_KEYS = ("answer", "cited_ids", "mode", "notice", "abstained", "retrieved_ids", "dropped")


def item_keys(item: dict[str, Any]) -> list[str]:
    """The fields of ``item`` compared: the answer fields, or for a claim every field but timings."""
    if "answer" in item:
        return list(ANSWER_KEYS)
    return [k for k in item if "ms" not in k and "latency" not in k]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = Path(argv[0]), Path(argv[1])
    total = differ = 0
    for f in sorted(before.glob("*.json")):
        g = after / f.name
        if not g.exists():
            print(f"{f.name}: missing in {after}")
            continue
        x, y = json.loads(f.read_text()), json.loads(g.read_text())
        n = 0
        for i, j in zip(x.get("items", []), y.get("items", [])):
            total += 1
            changed = [k for k in item_keys(i) if i.get(k) != j.get(k)]
            if changed:
                n += 1
                print(f"{f.name} {i.get('id')}: {changed}")
                for k in changed[:2]:
                    print(f"   before: {str(i.get(k))[:300]}\n   after:  {str(j.get(k))[:300]}")
        differ += n
        figures = "" if not n else f"; overall before {x.get('overall')} after {y.get('overall')}"
        print(f"{f.name}: {n} of {len(x.get('items', []))} items differ{figures}")
    print(f"TOTAL {differ} of {total} items differ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
