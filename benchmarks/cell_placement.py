"""Comparison-table cell placement: how often the role assigned to an abstract sentence
(``intents.sentence_roles``) is one of its labelled roles, on eval/cell-roles.jsonl.

The file labels every sentence of 14 seed abstracts (problem / approach / data / result / other; a sentence
may have two acceptable roles). Split ``fit``: the 6 abstracts the rules were written on; ``check``: 3
abstracts labelled before the rules were first run on them (then 0.75; five misses led to general cue
fixes, so "check" is no longer unseen); ``test``: 5 abstracts labelled and frozen in issue 26 before the
rules were run on them (the held-out figure; 0.791 when frozen). Since issue 23 the roles come from a trained
classifier that saw none of these sentences (test 0.930, fit 0.768, check 0.900; docs/models/understanding.md).
Also prints the placement precision: of the sentences put under a column (role not ``other``), the share whose
labels include that column's role.

Usage: ``.venv/bin/python benchmarks/cell_placement.py [--verbose]`` (the role classifier only, < 2 s).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from assistant.ingest.corpus import read_papers
from assistant.lang.text import split_sentences
from assistant.understand.intents import COLUMN_ROLES, sentence_roles

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=REPO / "eval" / "cell-roles.jsonl")
    parser.add_argument("--verbose", action="store_true", help="print every misplaced sentence")
    args = parser.parse_args()
    papers = {p.id: p for p in read_papers([REPO / "seeds"])}
    rows = [json.loads(line) for line in args.labels.read_text().splitlines() if line.strip()]
    by_paper: dict[str, dict[int, dict]] = defaultdict(dict)
    for r in rows:
        by_paper[r["paper_id"]][r["sentence_index"]] = r
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # right, sentences, right placed, placed
    for pid, labels in by_paper.items():
        sentences = split_sentences(papers[pid].text)
        roles = sentence_roles(sentences)
        split = next(iter(labels.values()))["split"]
        for i, r in labels.items():
            ok = roles[i] in r["roles"]
            stats[split][0] += ok
            stats[split][1] += 1
            if not ok and args.verbose:
                print(f"  {split} {pid} #{i}: {roles[i]} (labelled {'/'.join(r['roles'])}): {sentences[i][:100]}")
            if roles[i] in COLUMN_ROLES.values():
                stats[split][3] += 1
                stats[split][2] += ok
    print(f"{'split':<6} {'sentences':>9} {'role accuracy':>13} {'placed':>6} {'placement precision':>19}")
    for split, (right, n, good, placed) in sorted(stats.items()):
        print(f"{split:<6} {n:>9} {right / n:>13.3f} {placed:>6} {good / placed:>19.3f}")


if __name__ == "__main__":
    main()
