"""The self-check on the sentences the answering model actually writes (issue 59: "at least 150 sentences the model
wrote, labelled blind against the abstracts: shown-and-supported >= 0.97, supported-and-shown >= 0.90").

Set: ``eval/written-sentences-1.jsonl`` (297 sentences: every sentence the bundled 1.5B model wrote in two runs of
questions-8, kept or dropped, deduplicated; labelled ``supported`` / ``unsupported`` against the abstracts of the
paper(s) it was checked against by two annotator sessions that saw no code, no probability and not whether it was
shown; 31 sentences labelled by both, 31 agreements). ``split`` is the questions-8 item's.

Usage::

    ASSISTANT_SELF_CHECK_PROBABILITY=0 .venv/bin/assistant eval-claims \\
        --claims eval/written-sentences-1.jsonl --json build/written-t0.json
    .venv/bin/python benchmarks/written_sentences.py build/written-t0.json [--split val]

The report must come from a run at threshold 0, so every sentence the exact checks let through carries the model's
``P(yes)``. A sentence is shown at threshold ``t`` when every exact check passed and ``P(yes) >= t`` (a title match
has none), as the answerer decides. Prints, per split and threshold: sentences shown, shown-and-supported (the share
of shown sentences that are supported) and supported-and-shown (the share of supported sentences shown).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GRID = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def shown(item: dict[str, Any], t: float) -> bool:
    """Shown at threshold ``t``: every exact check passed and, when the model was asked, ``P(yes) >= t``."""
    return bool(item["kept"]) and (item["verdict"] != "supported" or item["probability"] >= t)


def curve(items: list[dict[str, Any]], t: float) -> tuple[int, float, float]:
    """``(shown, shown-and-supported, supported-and-shown)`` of ``items`` at ``t``."""
    on = [i for i in items if shown(i, t)]
    supported = [i for i in items if i["label"] == "supported"]
    precision = sum(i["label"] == "supported" for i in on) / max(1, len(on))
    recall = sum(shown(i, t) for i in supported) / max(1, len(supported))
    return len(on), precision, recall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="eval-claims --json report over the set, run at threshold 0")
    ap.add_argument("--set", type=Path, default=REPO / "eval" / "written-sentences-1.jsonl")
    ap.add_argument("--split", action="append", help="split(s) to print (default: val and test)")
    args = ap.parse_args()
    rows = {r["id"]: r for r in map(json.loads, args.set.read_text().splitlines())}
    items = json.loads(args.report.read_text())["items"]
    assert all("verdict" in i for i in items), f"{args.report}: not an eval-claims report"
    items = [{**i, "label": rows[i["id"]]["label"]} for i in items]  # the set's labels decide
    split_of = {sid: r["split"] for sid, r in rows.items()}
    for split in args.split or ["val", "test"]:
        of = [i for i in items if split_of[i["id"]] == split]
        n_sup = sum(i["label"] == "supported" for i in of)
        print(f"{split}: {len(of)} sentences, {n_sup} supported")
        print("  threshold  shown  shown_and_supported  supported_and_shown")
        for t in GRID:
            n, precision, recall = curve(of, t)
            print(f"  {t:9.2f}  {n:5d}  {precision:19.3f}  {recall:19.3f}")


if __name__ == "__main__":
    main()
