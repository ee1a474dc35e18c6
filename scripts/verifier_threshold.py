#!/usr/bin/env python
"""Choose the self-check threshold on validation claims only (issue 40) and print the curve.

    benchmarks/verifier_claims.sh build/claims-t0 0     # validation sets at threshold 0
    .venv/bin/python scripts/verifier_threshold.py build/claims-t0/*val*.json

Each report must come from a run at threshold 0, so every claim the exact checks let through carries the model's
``P(yes)`` (``probability``) and its ``verdict`` (``constraint`` when an exact check failed). A claim is kept at
threshold ``t`` when no exact check failed and its probability is at least ``t``; a supported claim counts only
when kept and cited to one of its papers. Among the thresholds with no wrong-paper citation on the pooled
validation claims, the one maximising balanced accuracy (mean of supported kept and unsupported dropped) is
chosen (ties: the higher one) and printed; the setting's default (``VerifySettings.self_check_probability``) is
then set to it by hand.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def rates(items: list[dict], t: float) -> tuple[float, float, int]:
    sup = [i for i in items if i["label"] == "supported"]
    uns = [i for i in items if i["label"] == "unsupported"]

    def kept(i: dict) -> bool:
        # run at threshold 0, ``kept`` means every exact check passed; a title match has no probability
        return bool(i["kept"]) and (i["verdict"] != "supported" or i["probability"] >= t)

    sk = sum(kept(i) and any(c in i["paper_ids"] for c in i["cited_ids"]) for i in sup) / max(1, len(sup))
    ud = sum(not kept(i) for i in uns) / max(1, len(uns))
    wrong = sum(kept(i) and any(c not in i["paper_ids"] for c in i["cited_ids"]) for i in items)
    return sk, ud, wrong


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", type=Path, nargs="+", help="eval-claims --json reports run at threshold 0")
    args = ap.parse_args()
    items = []
    for path in args.reports:
        report = json.loads(path.read_text())
        assert all("verdict" in i for i in report["items"]), f"{path}: not an eval-claims report"
        items += report["items"]
    grid = [round(0.05 * k, 2) for k in range(1, 20)]
    best = (-1.0, 0.0)
    print(f"{len(items)} validation claims from {', '.join(str(p) for p in args.reports)}")
    print("threshold  supported_kept  unsupported_dropped  balanced  wrong_paper")
    for t in grid:
        sk, ud, wrong = rates(items, t)
        bal = (sk + ud) / 2
        print(f"{t:9.2f}  {sk:14.3f}  {ud:19.3f}  {bal:8.3f}  {wrong:11d}")
        if wrong == 0 and bal >= best[0]:
            best = (bal, t)
    print(f"chosen threshold {best[1]:.2f} (balanced accuracy {best[0]:.3f} on validation)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
