"""How full comparison tables are, and how often a cell's sentence plays its column's role, on abstracts of
any field (issue 23: "comparisons of two non-ML abstracts fill at least half their cells with the right
sentences").

For every pair of papers in an export (JSON Lines, the project's export format), build the comparison table
exactly as a "compare X and Y" answer does (``intents.comparison_table``; equal relevance for every sentence) and
print the share of filled cells per column. Where role labels exist (``--labels``: lines
``{"doc_id", "sentences", "roles": "PADRO..."}``, e.g. the held-out CORD-19 abstracts of
scripts/training-data/sentence-roles.jsonl) it also prints how many filled cells hold a sentence labelled with
that column's role ("right sentence").

    .venv/bin/python benchmarks/comparison_fill.py eval/battery-export.jsonl
    .venv/bin/python benchmarks/comparison_fill.py --labels scripts/training-data/sentence-roles.jsonl \\
        --source checkcovid --held-out

No model is asked; seconds on 2 cores.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LETTER = {"problem": "P", "approach": "A", "data / setting": "D", "key result": "R"}


def main(argv: list[str] | None = None) -> int:
    """Print fill (and, with labels, right-sentence) shares per column; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export", nargs="?", type=Path, help="a JSON Lines export (id, title, abstract)")
    ap.add_argument("--labels", type=Path, help="role-labelled abstracts instead of an export")
    ap.add_argument("--source", default="", help="with --labels: only rows of this source (e.g. checkcovid)")
    ap.add_argument("--held-out", action="store_true", help="with --labels: only the training script's held-out rows")
    args = ap.parse_args(argv)
    if (args.export is None) == (args.labels is None):
        ap.error("give an export file or --labels, not both")

    from assistant.lang.text import split_sentences
    from assistant.types import Paper, PaperHit
    from assistant.understand.intents import comparison_table

    docs: list[tuple[str, tuple[str, ...], str]] = []  # id, sentences, role letters ("" = unlabelled)
    if args.labels:
        for line in args.labels.read_text().splitlines():
            r = json.loads(line)
            held = int(hashlib.md5(r["doc_id"].encode()).hexdigest(), 16) % 5 == 0
            if (args.source and r["source"] != args.source) or (args.held_out and not held):
                continue
            docs.append((r["doc_id"], tuple(r["sentences"]), r["roles"]))
    else:
        for line in args.export.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                docs.append((str(r["id"]), tuple(split_sentences(r["abstract"])), ""))

    def hit(doc: tuple[str, tuple[str, ...], str]) -> PaperHit:
        paper = Paper(doc[0], "", doc[0], (), "", " ".join(doc[1]), "", 0)
        return PaperHit(paper, 1.0, 0.5, (), doc[1], tuple(0.5 for _ in doc[1]))

    filled: dict[str, list[int]] = {c: [0, 0, 0] for c in LETTER}  # filled, cells, right
    for a, b in itertools.combinations(docs, 2):
        table = comparison_table([hit(a), hit(b)])
        for doc, row in zip((a, b), table.rows):
            for col, cell in zip(table.columns, row.cells):
                filled[col][1] += 1
                if cell is None:
                    continue
                filled[col][0] += 1
                if doc[2]:
                    last = max(i for i, s in enumerate(doc[1]) if cell.text.endswith(s))  # the cell ends with it
                    filled[col][2] += doc[2][last] == LETTER[col]
    pairs = len(docs) * (len(docs) - 1) // 2
    print(f"{len(docs)} abstracts, {pairs} pairs")
    print(f"{'column':<15} {'filled':>7}" + (f" {'right of filled':>15}" if args.labels else ""))
    for col, (f, n, right) in filled.items():
        extra = f" {right / max(1, f):>15.3f}" if args.labels else ""
        print(f"{col:<15} {f / max(1, n):>7.3f}{extra}")
    f, n, right = (sum(v[i] for v in filled.values()) for i in range(3))
    print(f"{'all':<15} {f / max(1, n):>7.3f}" + (f" {right / max(1, f):>15.3f}" if args.labels else ""))
    if args.labels:
        print(f"cells filled with a sentence of the column's role: {right / max(1, n):.3f} of all cells")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
