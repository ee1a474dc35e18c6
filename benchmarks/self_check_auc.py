"""AUC of the self-check's P(yes) on the validation claims, per run of ``benchmarks/verifier_claims.sh OUT 0``.

Reads ``OUT/{claims-dev,corpus,corpus2,seeds2}-val.json`` (``assistant eval-claims --json``) for each ``OUT`` given
and prints, over the claims that reach the model (verdict ``supported`` or ``not_stated``: the exact checks did not
decide them first), the area under the ROC curve of P(yes) for supported against unsupported claims, overall and per
set. A threshold-free figure for comparing prompts (docs/results/issue59); ``scripts/verifier_threshold.py`` prints
the operating points.

Usage: ``.venv/bin/python benchmarks/self_check_auc.py OUT [OUT ...]``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SETS = ("claims-dev-val", "corpus-val", "corpus2-val", "seeds2-val")


def auc(pos: list[float], neg: list[float]) -> float:
    """Area under the ROC curve: P(a positive scores above a negative), ties counting half; nan without both."""
    if not pos or not neg:
        return float("nan")
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def main(outs: list[str]) -> int:
    for out in outs:
        all_pos: list[float] = []
        all_neg: list[float] = []
        per_set = []
        for name in SETS:
            path = Path(out) / f"{name}.json"
            if not path.exists():
                per_set.append("-")
                continue
            items = [i for i in json.loads(path.read_text())["items"] if i["verdict"] in ("supported", "not_stated")]
            pos = [i["probability"] for i in items if i["label"] == "supported"]
            neg = [i["probability"] for i in items if i["label"] != "supported"]
            all_pos += pos
            all_neg += neg
            per_set.append(f"{auc(pos, neg):.3f}")
        print(f"{out}: {len(all_pos) + len(all_neg)} claims reach the model, AUC {auc(all_pos, all_neg):.3f} "
              f"(per set {' / '.join(SETS)}: {' / '.join(per_set)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
