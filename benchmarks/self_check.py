#!/usr/bin/env python
"""The second verifier design of issue 40, measured: the bundled 1.5B model judging a sentence against the
abstract it has just read.

The prompt is the abstract first, then the sentence and one question ("Is every fact of the sentence stated in
the abstract? Answer yes or no."); ``P(yes)`` comes from the next token's logits (yes/Yes against no/No). As in
the answer path, the abstract is a prefix the model has already evaluated, so a sentence costs only its own
tokens: each abstract is evaluated once, and each of its claims is timed from there (``suffix_ms``).

Data: validation claims only (rows with ``split == "val"`` of the frozen claim sets and eval/claims-dev.jsonl),
each against the full abstract of its first paper. The trained cross-encoder is scored on the same claims,
with the same gold evidence as its input (the sentences in ``support``, else the whole abstract), so the two
designs are compared on one set. Prints one JSON report; ``--out`` also writes it.

    nice -n 5 .venv/bin/python benchmarks/self_check.py --limit 80 --out docs/results/issue40/self-check.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SETS = [
    (ROOT / "eval" / "claims-dev.jsonl", None),
    (ROOT / "eval" / "claims-corpus.jsonl", "val"),
    (ROOT / "eval" / "claims-seeds-2.jsonl", "val"),
    (ROOT / "eval" / "claims-corpus-2.jsonl", "val"),
]
PAPER_FILES = [ROOT / "eval" / "claims-corpus-papers.jsonl", ROOT / "eval" / "claims-corpus-2-papers.jsonl"]
SYSTEM = "You check sentences about research papers against the paper's abstract. Answer with one word."
QUESTION = "Is every fact of this sentence stated in the abstract? Answer yes or no."


def papers() -> dict[str, tuple[str, str]]:
    """Paper id -> (title, abstract) for the seeds and the frozen claim corpora."""
    from assistant.ingest.corpus import read_papers

    out = {p.id: (p.title, p.text) for p in read_papers([ROOT / "seeds"])}
    for path in PAPER_FILES:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                out[row["id"]] = (row["title"], row["abstract"])
    return out


def claims(limit: int, seed: int) -> list[dict]:
    rows = []
    for path, split in SETS:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if split is None or row.get("split") == split:
                    rows.append(row)
    random.Random(seed).shuffle(rows)
    rows = rows[:limit] if limit else rows
    return sorted(rows, key=lambda r: r["paper_ids"][0])  # claims of one paper together: one prefix each


def metrics(labels: list[int], p: list[float], threshold: float) -> dict:
    from sklearn.metrics import roc_auc_score

    y, q = np.asarray(labels), np.asarray(p) >= threshold
    kept, dropped = float(q[y == 1].mean()), float((~q[y == 0]).mean())
    return {
        "threshold": threshold,
        "supported_kept": round(kept, 3),
        "unsupported_dropped": round(dropped, 3),
        "balanced_accuracy": round((kept + dropped) / 2, 3),
        "auc": round(float(roc_auc_score(y, p)), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from llama_cpp import Llama

    from assistant.config import Settings
    from assistant.ingest.chunking import split_sentences
    from assistant.llm.bundled import gguf_path
    from assistant.verify.support_model import load_support_model, model_meta

    texts = papers()
    rows = [r for r in claims(args.limit, args.seed) if r["paper_ids"][0] in texts]
    llm = Llama(
        model_path=str(gguf_path("qwen1.5b", Settings().embedding.model_cache_dir)),
        n_ctx=2048,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    vocab = llm.n_vocab()
    yes = [llm.tokenize(w.encode(), add_bos=False, special=False)[0] for w in ("yes", "Yes")]
    no = [llm.tokenize(w.encode(), add_bos=False, special=False)[0] for w in ("no", "No")]
    p_yes, suffix_ms, prefix_ms, current = [], [], [], None
    prefix_tokens: list[int] = []
    for r in rows:
        title, abstract = texts[r["paper_ids"][0]]
        prefix = f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\nAbstract of \"{title}\":\n{abstract}\n\n"
        full = f"{prefix}Sentence: {r['claim']}\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n"
        if current != prefix:
            t = time.perf_counter()
            llm.reset()
            prefix_tokens = llm.tokenize(prefix.encode(), add_bos=False, special=True)
            llm.eval(prefix_tokens)
            prefix_ms.append((time.perf_counter() - t) * 1000)
            current = prefix
        tokens = llm.tokenize(full.encode(), add_bos=False, special=True)
        same = len(prefix_tokens)
        while tokens[:same] != prefix_tokens[:same]:
            same -= 1
        t = time.perf_counter()
        llm.n_tokens = same
        llm.eval(tokens[same:])
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(vocab,)).astype(np.float64)
        suffix_ms.append((time.perf_counter() - t) * 1000)
        z = logits[yes + no]
        e = np.exp(z - z.max())
        p_yes.append(float(e[:2].sum() / e.sum()))
    labels = [int(r["label"] == "supported") for r in rows]

    model = load_support_model()
    pairs = []
    for r in rows:
        ev = [s for piece in (r.get("support") or "").split(" ... ") for s in split_sentences(piece)]
        pairs.append((r["claim"], ev or split_sentences(texts[r["paper_ids"][0]][1])))
    t = time.perf_counter()
    p_ce = [model.probabilities([pair])[0] for pair in pairs]
    ce_ms = (time.perf_counter() - t) * 1000 / len(pairs)
    threshold = float(model_meta().get("threshold", 0.5))
    report = {
        "claims": len(rows),
        "sets": [f"{p.name}{':' + s if s else ''}" for p, s in SETS],
        "self_check_1p5b": {
            "at_0.5": metrics(labels, p_yes, 0.5),
            "best_on_these": max(
                (metrics(labels, p_yes, t) for t in np.arange(0.05, 1.0, 0.05).round(2)),
                key=lambda m: m["balanced_accuracy"],
            ),
            "suffix_ms_p50": round(float(np.median(suffix_ms)), 1),
            "suffix_ms_p95": round(float(np.percentile(suffix_ms, 95)), 1),
            "abstract_prefix_ms_p50": round(float(np.median(prefix_ms)), 1),
        },
        "cross_encoder_int8": {
            "at_shipped_threshold": metrics(labels, p_ce, threshold),
            "ms_per_claim": round(ce_ms, 1),
        },
        "threads": args.threads,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
