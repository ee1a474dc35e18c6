"""Adapt the bundled MiniLM to scientific abstracts by contrastive training on the real corpus (issue 27, item 1).

Pairs (anchor -> positive), built by code from ../shared/corpus/*.jsonl, ICML 2024 held out entirely:
title -> abstract, contribution sentence ("we propose / introduce / present ...") -> abstract, and a sentence
-> its two neighbours. Loss: MultipleNegativesRankingLoss (cross-entropy over 20 x cosine, in-batch
negatives; a plain torch loop, so the `datasets` package that sentence-transformers' fit() needs is not
required). Seeded (``--seed``); CPU torch. Writes a sentence-transformers folder that
``ASSISTANT_EMBED_MODEL=<folder>`` uses (the index fingerprint then changes; ``assistant ingest`` builds a new index).

    .venv/bin/python scripts/train_embedding.py --out /tmp/minilm-sci --steps 300 --batch 32

Status (issue 27 session): not yet run to the end. On the shared 2-core machine (load average 12) one step of
batch 32 took over 50 s, so no trained model exists and nothing is shipped; ``--eval`` was checked on a small
subset only.

Evaluation: ``--eval`` embeds one text per paper (title + abstract, truncated at the model's 256 word
pieces) of every corpus paper and the seeds with both models and reports recall@1/5/10 of the val questions
of eval/needles.jsonl, eval/kept-seeds.jsonl and eval/dev.jsonl (paper-level dense ranking only; test
splits are not read). This is a model-vs-model comparison, not the app's fused retrieval.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
HELD_OUT = "icml2024.jsonl"
_CONTRIB = re.compile(r"\b(?:we (?:propose|introduce|present)|this paper|in this (?:paper|work))\b", re.I)


def _rows(files: list[Path]) -> list[dict]:
    out = []
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if (r.get("abstract") or "").strip():
                out.append(r)
    return out


def pairs(rows: list[dict], rng: random.Random) -> list[tuple[str, str]]:
    """(anchor, positive) pairs: title -> abstract; contribution sentence -> abstract; sentence -> neighbours."""
    sys.path.insert(0, str(REPO))
    from assistant.lang.text import split_sentences

    out = []
    for r in rows:
        abstract = r["abstract"].strip()
        out.append((r["title"], abstract))
        sents = split_sentences(abstract)
        contrib = [s for s in sents if _CONTRIB.search(s)]
        if contrib:
            out.append((contrib[0], abstract))
        if len(sents) >= 3:
            i = rng.randrange(1, len(sents) - 1)
            out.append((sents[i], f"{sents[i - 1]} {sents[i + 1]}"))
    rng.shuffle(out)
    return out


def train(out: Path, steps: int, batch: int, seed: int, max_len: int) -> None:
    """Fine-tune the bundled MiniLM for ``steps`` steps of ``batch`` pairs; save to ``out``."""
    import torch
    from sentence_transformers import SentenceTransformer

    sys.path.insert(0, str(REPO))
    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = random.Random(seed)
    files = sorted(p for p in CORPUS.glob("*.jsonl") if p.name != HELD_OUT)
    data = pairs(_rows(files), rng)[: steps * batch]
    print(f"{len(data)} pairs from {', '.join(f.name for f in files)} ({HELD_OUT} held out)", file=sys.stderr)
    model = SentenceTransformer(str(resolve_model_path(BUNDLED_MINILM)), device="cpu")
    model.max_seq_length = max_len
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: min(1.0, (i + 1) / warmup) * max(0.0, (steps - i) / max(1, steps - warmup))
    )
    scale = 20.0  # MultipleNegativesRankingLoss: cross-entropy over scaled cosine, in-batch negatives

    def embed(texts: list[str]) -> torch.Tensor:
        features = model.tokenize(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    t0 = time.perf_counter()
    for step in range(steps):
        chunk = data[step * batch : (step + 1) * batch]
        if len(chunk) < batch:
            break
        a = embed([x for x, _ in chunk])
        p = embed([y for _, y in chunk])
        loss = torch.nn.functional.cross_entropy(scale * a @ p.T, torch.arange(len(chunk)))
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        if step % 10 == 0:
            print(
                f"step {step}/{steps} loss {loss.item():.3f} {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    print(f"trained {steps} steps in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    model.eval()
    model.max_seq_length = 256
    model.save(str(out))
    (out / "MODEL_CARD.md").write_text(
        f"# MiniLM adapted to ML abstracts\n\nBase: all-MiniLM-L6-v2 (bundled). MultipleNegativesRankingLoss, "
        f"{steps} steps x batch {batch}, max_seq_length {max_len} in training, seed {seed}. Pairs: title->abstract, "
        f"contribution sentence->abstract, sentence->neighbours from {', '.join(f.name for f in files)}; "
        f"{HELD_OUT} never seen.\n",
        encoding="utf-8",
    )


def evaluate(models: list[str]) -> None:
    """Paper-level dense recall@1/5/10 on the val questions, for each model folder (or ``bundled``)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    sys.path.insert(0, str(REPO))
    from assistant.eval.evaluation import load_items
    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    rows = _rows(sorted(CORPUS.glob("*.jsonl")))
    from assistant.ingest.corpus import read_papers

    seed_papers = read_papers([REPO / "seeds"])
    texts = {r["id"]: f"{r['title']}. {r['abstract']}" for r in rows}
    for p in seed_papers:
        texts[p.id] = f"{p.title}. {p.text}"
    ids = list(texts)
    items = []
    for spec in ("eval/needles.jsonl", "eval/kept-seeds.jsonl"):
        items += [it for it in load_items(REPO / spec, split="val") if it.type not in ("topic", "unanswerable")]
    items += [it for it in load_items(REPO / "eval/dev.jsonl") if it.type not in ("topic", "unanswerable")]
    for name in models:
        path = resolve_model_path(BUNDLED_MINILM) if name == "bundled" else Path(name)
        model = SentenceTransformer(str(path), device="cpu")
        t0 = time.perf_counter()
        doc = model.encode([texts[i] for i in ids], batch_size=64, normalize_embeddings=True, show_progress_bar=True)
        q = model.encode([it.question for it in items], normalize_embeddings=True)
        ranks = np.argsort(-(q @ doc.T), axis=1)[:, :10]
        by_type: dict[str, list[list[float]]] = {}
        for it, rk in zip(items, ranks):
            got = [ids[j] for j in rk]
            rec = [len(set(it.gold_ids) & set(got[:k])) / len(it.gold_ids) for k in (1, 5, 10)]
            by_type.setdefault("overall", []).append(rec)
            by_type.setdefault(it.type, []).append(rec)
        print(f"{name} ({time.perf_counter() - t0:.0f} s, {len(ids)} papers):")
        for t, recs in by_type.items():
            m = np.mean(recs, axis=0)
            print(f"  {t:12s} n={len(recs):3d}  r@1 {m[0]:.3f}  r@5 {m[1]:.3f}  r@10 {m[2]:.3f}")


def main() -> int:
    """Train and/or evaluate (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="output model folder (train)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--max-len", type=int, default=128, help="max word pieces per text in training")
    ap.add_argument("--eval", nargs="*", metavar="MODEL", help="evaluate these folders ('bundled' = MiniLM)")
    args = ap.parse_args()
    if args.out:
        train(args.out, args.steps, args.batch, args.seed, args.max_len)
    if args.eval is not None:
        evaluate(args.eval or ["bundled"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
