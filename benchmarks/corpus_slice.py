"""Write a fixed 1k-paper slice of ../shared/corpus/ for conference-scale list tests (issue 45).

The slice is every corpus paper with a non-empty abstract, titles deduplicated (the first row of a title wins,
in file order), seed papers dropped by title, ordered by md5 of the paper id; the first N rows (default 1000)
are written in the export format (id, title, abstract, authors, url, venue), one JSON object per line.

    .venv/bin/python benchmarks/corpus_slice.py build/slice-1k.jsonl
    .venv/bin/assistant ingest --storage-dir build/slice-1k-index build/slice-1k.jsonl

The same N always gives the same rows: the slice depends only on the corpus files and seeds/papers.jsonl.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SEED_RECORDS = REPO / "seeds" / "papers.jsonl"
FIELDS = ("id", "title", "abstract", "authors", "url", "venue")


def _norm(title: str) -> str:
    return " ".join(title.lower().split())


def corpus_slice(n: int, corpus: Path = CORPUS, seeds: Path = SEED_RECORDS) -> list[dict]:
    """The first ``n`` corpus papers by md5 of their id (seeds and repeated titles removed).

    Returns a list of dicts with the export fields. Raises FileNotFoundError when ``corpus`` has no ``*.jsonl``.
    """
    files = sorted(corpus.glob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"{corpus}: no *.jsonl corpus files")
    seen = {_norm(json.loads(line)["title"]) for line in seeds.read_text().splitlines() if line.strip()}
    rows = []
    for f in files:
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            key = _norm(row.get("title", ""))
            if not row.get("abstract", "").strip() or not key or key in seen:
                continue
            seen.add(key)
            rows.append({k: row.get(k, "") for k in FIELDS})
    rows.sort(key=lambda r: hashlib.md5(r["id"].encode()).hexdigest())
    return rows[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    rows = corpus_slice(args.n)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    venues: dict[str, int] = {}
    for r in rows:
        venues[r["venue"]] = venues.get(r["venue"], 0) + 1
    print(f"{args.out}: {len(rows)} papers; by venue {venues}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
