#!/usr/bin/env python
"""The verifier on real model output (issue 40): a labelling sheet of every sentence the model wrote, and its score.

    # 1. answer a fresh question set with the default bundled model; the report lists each answer's shown
    #    sentences (with the check that passed) and the model sentences the verifier dropped
    .venv/bin/assistant eval --questions eval/questions-4.jsonl --json build/q4.json
    # 2. one row per model-written sentence, with the abstracts a reader needs (cited, gold and top retrieved)
    .venv/bin/python benchmarks/verifier_labels.py sheet build/q4.json docs/results/issue40/sheet.jsonl
    # 3. a reader who has not seen the code adds "label": "supported" | "unsupported" to every row (instructions:
    #    docs/results/issue40/labelling.md), then
    .venv/bin/python benchmarks/verifier_labels.py score docs/results/issue40/labels.jsonl
    # or, blind to what the verifier did (stop 47): the reader gets sheet-blind.jsonl (no shown flag, no citation)
    # and adds "supported_by": [the listed abstracts that state every fact]; then
    .venv/bin/python benchmarks/verifier_labels.py score labels.jsonl --sheet sheet.jsonl

Score: ``shown_supported`` = share of the sentences shown as checked that the reader labelled supported (target
>= 0.97); ``supported_kept`` = share of the sentences labelled supported that were shown (target >= 0.85). A
shown sentence counts as supported only when its cited abstract supports it (``label``), a dropped one when any
listed abstract does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: Retrieved papers (besides the cited and gold ones) whose abstracts a row lists for a dropped sentence.
TOP_RETRIEVED = 3


def sheet(report: Path, out: Path) -> int:
    from assistant.ingest.corpus import read_papers

    papers = {p.id: p for p in read_papers([ROOT / "seeds"])}
    rows = []
    for item in json.loads(report.read_text())["items"]:
        if "error" in item:  # the answer raised: nothing was written
            continue
        listed = list(dict.fromkeys([*item["cited_ids"], *item["gold_ids"], *item["retrieved_ids"][:TOP_RETRIEVED]]))
        abstracts = {pid: f"{papers[pid].title}. {papers[pid].text}" for pid in listed if pid in papers}
        written = [(s, True) for s in item.get("sentences", []) if s["written_by"] == "model"]
        written += [({"text": t, "cited_ids": [], "check": "", "support_probability": None}, False)
                    for t in item["dropped"]]
        for k, (s, shown) in enumerate(written):
            rows.append({
                "sid": f"{item['id']}-{k}", "question": item["question"], "sentence": s["text"], "shown": shown,
                "check": s["check"], "support_probability": s["support_probability"], "cited_ids": s["cited_ids"],
                "abstracts": abstracts,
            })
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    # what the reader gets: no verifier decision, no citation, no probability (blind labelling, stop 47)
    blind = out.with_name(out.stem + "-blind.jsonl")
    keep = ("sid", "question", "sentence", "abstracts")
    blind.write_text("".join(json.dumps({k: r[k] for k in keep}, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} model sentences ({sum(r['shown'] for r in rows)} shown) from {report} -> {out}, {blind}")
    return 0


def blind_labels(sheet_path: Path, labels: Path) -> list[dict]:
    """Rows of ``sheet_path`` with ``label`` set from a blind reader's ``supported_by`` (the listed abstracts that
    state every fact of the sentence; empty: none): a shown sentence is supported when one of its cited papers is
    among them, a dropped one when any is."""
    by_sid = {r["sid"]: r for r in map(json.loads, labels.read_text().splitlines()) if r}
    rows = []
    for r in map(json.loads, filter(str.strip, sheet_path.read_text().splitlines())):
        got = by_sid.get(r["sid"])
        if got is None or not isinstance(got.get("supported_by"), list):
            raise SystemExit(f"error: {labels}: no 'supported_by' list for {r['sid']}")
        ok = set(got["supported_by"]) & set(r["cited_ids"]) if r["shown"] else set(got["supported_by"])
        rows.append({**r, "label": "supported" if ok else "unsupported"})
    return rows


def score(labels: Path, sheet_path: Path | None = None) -> int:
    rows = (
        blind_labels(sheet_path, labels)
        if sheet_path is not None
        else [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]
    )
    missing = [r["sid"] for r in rows if r.get("label") not in ("supported", "unsupported")]
    if missing:
        raise SystemExit(f"error: {labels}: rows without a label (supported|unsupported): {', '.join(missing[:10])}")
    shown = [r for r in rows if r["shown"]]
    supported = [r for r in rows if r["label"] == "supported"]
    out = {
        "sentences": len(rows),
        "shown": len(shown),
        "shown_supported": round(sum(r["label"] == "supported" for r in shown) / max(1, len(shown)), 3),
        "supported": len(supported),
        "supported_kept": round(sum(r["shown"] for r in supported) / max(1, len(supported)), 3),
        "shown_but_unsupported": [r["sid"] for r in shown if r["label"] == "unsupported"],
    }
    print(json.dumps(out, indent=2))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("sheet")
    a.add_argument("report", type=Path)
    a.add_argument("out", type=Path)
    b = sub.add_parser("score")
    b.add_argument("labels", type=Path)
    b.add_argument("--sheet", type=Path, help="the sheet a blind reader's supported_by labels refer to")
    args = ap.parse_args()
    return sheet(args.report, args.out) if args.cmd == "sheet" else score(args.labels, args.sheet)


if __name__ == "__main__":
    raise SystemExit(main())
