#!/usr/bin/env python
"""Write the Check-COVID *dev* split in the project's claims format, with its abstracts as an export to ingest.

    .venv/bin/python scripts/external_claims.py build/claims-ext
    .venv/bin/assistant --storage-dir build/idx-checkcovid ingest build/claims-ext/checkcovid-papers.jsonl
    .venv/bin/assistant --storage-dir build/idx-checkcovid eval-claims --claims build/claims-ext/checkcovid-dev.jsonl

Mapping (/work/shared/claims-external/README.md): ``supported`` -> label supported, kind ``finding``;
``unsupported`` (refuted) -> kind ``refuted``; ``nei`` -> kind ``nei`` (both "must not be shown as supported").
The question is "What does the study “<title>” find?" (it picks the two distractor papers; the claim itself
would be dropped as an echo of the question). The train split is training data
(scripts/train_verifier.py); the test split is kept back by the data's owners and is not here.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

EXTERNAL = Path("/work/shared/claims-external")
KINDS = {
    "supported": ("supported", "finding"),
    "unsupported": ("unsupported", "refuted"),
    "nei": ("unsupported", "nei"),
}


def main(out: Path, split: str = "dev") -> int:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "checkcovid-papers.jsonl").open("w", encoding="utf-8") as f:
        for line in (EXTERNAL / "checkcovid_corpus.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            abstract = re.sub(r"^Abstract\s+", "", " ".join(row["abstract"].split()))
            f.write(
                json.dumps(
                    {
                        "id": row["id"],
                        "title": row["title"],
                        "abstract": abstract,
                        "authors": row.get("authors") or [],
                        "url": row.get("url") or "",
                        "venue": row.get("venue") or "CORD-19",
                    }
                )
                + "\n"
            )
    n = 0
    with (out / f"checkcovid-{split}.jsonl").open("w", encoding="utf-8") as f:
        for line in (EXTERNAL / "checkcovid_claims_train_dev.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["split"] != split:
                continue
            label, kind = KINDS[row["label"]]
            sents = row["abstract_sentences"]
            support = " ... ".join(sents[i] for i in row.get("rationale_sentence_indices") or [] if i < len(sents))
            question = f"What does the study “{row['abstract_title'].rstrip('.')}” find?"
            f.write(
                json.dumps(
                    {
                        "id": row["id"],
                        "question": question,
                        "claim": row["claim"],
                        "paper_ids": [row["abstract_id"]],
                        "label": label,
                        "kind": kind,
                        "support": support,
                        "notes": f"Check-COVID {split}, {row['label']}",
                    }
                )
                + "\n"
            )
            n += 1
    print(f"wrote {n} claims and their abstracts to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/claims-ext")))
