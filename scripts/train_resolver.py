"""Train the turn resolver's candidate scorer (issue 42): P(a conversation turn is about this paper) from the
features of assistant/conversation/turn_features.py, on conversations generated over real corpus papers.

Steps (each resumable: a step whose output exists in ``--work`` is skipped):
1. sample ``--papers`` corpus abstracts (seeded; none of the 38 seed papers, by folded title) into an export file
   and index it (`assistant ingest`, a store of its own under ``--work``);
2. generate ``--conversations`` conversations over them (scripts/generate_conversations.py);
3. replay each conversation on an oracle history (each turn recorded as if answered with its gold papers) and
   write every turn's candidates, features and labels (``features.npz``);
4. fit logistic regressions and small MLPs on the training split (conversations by md5 of their id: 3/5 train,
   1/5 val to choose among them, 1/5 test), print turn figures on val and test, and write the scorer to
   ``--work``/resolver.npz (standardisation, layer weights, feature names, provenance; read by
   turn_features.CandidateScorer). It is not shipped: benchmarks/turn_resolution.py ``--scorer`` measures it
   against the rules of conversation/resolve.py first (docs/results/issue42/resolver-wiring-stop55.diff wires it
   in, with a card).

Usage: .venv/bin/python scripts/train_resolver.py [--work DIR] [--papers N] [--conversations N] [--seed S]
Defaults: build/training/resolver, 1,200 papers, 1,500 conversations, seed 42: about 5 min to index and 15 min to
replay on 2 cores (run alone).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from generate_conversations import generate  # noqa: E402

from assistant.config import Settings  # noqa: E402
from assistant.conversation.turn_features import (  # noqa: E402
    FEATURES,
    CandidateScorer,
    choose,
    record_oracle_turn,
    turn_candidates,
)
from assistant.ingest.corpus import read_papers  # noqa: E402
from assistant.lang.text import fold  # noqa: E402
from assistant.understand.parse import parse_question  # noqa: E402


def split_of(conversation_id: str) -> str:
    """``train`` / ``val`` / ``test`` by md5 of the conversation id (3/5, 1/5, 1/5)."""
    bucket = int(hashlib.md5(conversation_id.encode()).hexdigest(), 16) % 5
    return "test" if bucket == 0 else "val" if bucket == 1 else "train"


def sample_papers(work: Path, n: int, seed: int) -> Path:
    """Step 1: ``work/papers.jsonl`` (n corpus rows, no seed paper) indexed into ``work/storage``."""
    export = work / "papers.jsonl"
    storage = work / "storage"
    if not export.exists():
        seed_titles = {" ".join(fold(p.title).split()) for p in read_papers([REPO / "seeds"])}
        rows = []
        for path in sorted((REPO.parent / "shared" / "corpus").glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                if row.get("abstract") and " ".join(fold(row.get("title", "")).split()) not in seed_titles:
                    rows.append(row)
        rows = random.Random(seed).sample(rows, n)
        work.mkdir(parents=True, exist_ok=True)
        export.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = work / "indexed.ok"
    if not done.exists():
        env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(storage)}
        subprocess.run([sys.executable, "-m", "assistant", "ingest", str(export)], env=env, check=True, cwd=REPO)
        done.write_text("ok")
    return storage


def replay(work: Path, storage: Path, conversations: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Step 3: features and labels of every turn's candidates (``work/features.npz``)."""
    cache = work / "features.npz"
    fingerprint = hashlib.sha256(json.dumps(conversations, sort_keys=True).encode()).hexdigest()[:16]
    if cache.exists():
        data = dict(np.load(cache, allow_pickle=False))
        if tuple(data.get("features", np.asarray([])).tolist()) == FEATURES and str(
            data.get("fingerprint", "")
        ) == fingerprint:
            return data
        print(f"{cache}: replayed with other features or conversations; replaying again")
    from assistant.service import build_assistant

    settings = Settings().updated(storage_dir=storage)
    assistant = build_assistant(settings, start_llm=False)
    papers = assistant.retriever.papers
    min_similarity = settings.retrieval.min_similarity
    xs, ys, turn_ids, splits, kinds, gold_found = [], [], [], [], [], []
    t0 = time.monotonic()
    n_turn = 0
    for i, conv in enumerate(conversations):
        session = assistant.new_session()
        split = split_of(str(conv["id"]))
        for turn in conv["turns"]:
            gold = [pid for pid in turn["gold_ids"] if pid in papers]
            shown = [pid for pid in turn["shown_ids"] if pid in papers]
            question = parse_question(turn["question"])
            cands = turn_candidates(question, session, assistant.retriever, min_similarity)
            if turn["kind"] != "unanswerable" and gold:
                xs.append(cands.matrix)
                ys.append(np.asarray([pid in gold for pid in cands.ids], dtype=np.int8))
                turn_ids += [n_turn] * len(cands.ids)
                splits += [split] * len(cands.ids)
                kinds += [turn["kind"]] * len(cands.ids)
                gold_found.append(set(gold) <= set(cands.ids))
                n_turn += 1
            record_oracle_turn(session, turn["question"], question.text, [papers[pid] for pid in shown])
        if (i + 1) % 50 == 0:
            print(
                f"  replayed {i + 1}/{len(conversations)} conversations, {n_turn} turns, {time.monotonic() - t0:.0f} s"
            )
    data = {
        "x": np.concatenate(xs),
        "y": np.concatenate(ys),
        "turn": np.asarray(turn_ids),
        "split": np.asarray(splits),
        "kind": np.asarray(kinds),
        "gold_in_candidates": np.asarray(gold_found),
    }
    np.savez_compressed(
        cache,
        x=data["x"],
        y=data["y"],
        turn=data["turn"],
        split=data["split"],
        kind=data["kind"],
        gold_in_candidates=data["gold_in_candidates"],
        features=np.asarray(FEATURES),
        fingerprint=np.asarray(fingerprint),
    )
    return data


def turn_scores(data: dict[str, np.ndarray], p: np.ndarray, split: str) -> dict[str, float]:
    """Per turn of ``split``: exact set match of :func:`choose` and the share of turns whose gold papers were
    all among the candidates (the ceiling)."""
    mask = data["split"] == split
    turns = np.unique(data["turn"][mask])
    exact = 0
    by_kind: dict[str, list[int]] = {}
    for t in turns:
        rows = np.nonzero(data["turn"] == t)[0]
        ids = [str(r) for r in rows]
        chosen = set(choose(ids, p[rows].tolist()))
        gold = {str(r) for r in rows if data["y"][r]}
        hit = int(chosen == gold)
        exact += hit
        by_kind.setdefault(str(data["kind"][rows[0]]), []).append(hit)
    out = {"turns": float(len(turns)), "exact": exact / max(1, len(turns))}
    out.update({f"exact_{k}": sum(v) / len(v) for k, v in sorted(by_kind.items())})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--work", type=Path, default=REPO / "build" / "training" / "resolver")
    ap.add_argument("--papers", type=int, default=1200)
    ap.add_argument("--conversations", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    from assistant.offline import enforce_offline

    enforce_offline()
    storage = sample_papers(a.work, a.papers, a.seed)
    conversations = generate(read_papers([a.work / "papers.jsonl"], skipped=[]), a.conversations, a.seed)
    data = replay(a.work, storage, conversations)
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    x, y, split = data["x"], data["y"], data["split"]
    train = split == "train"
    mean = x[train].mean(axis=0)
    scale = np.where(x[train].std(axis=0) > 1e-6, x[train].std(axis=0), 1.0)
    xs = (x - mean) / scale
    ceiling = float(np.mean(data["gold_in_candidates"]))
    print(f"{len(np.unique(data['turn']))} turns, {len(y)} candidates; gold among the candidates in {ceiling:.3f}")
    candidates: list[tuple[str, Any]] = [
        (f"logistic C={c}", LogisticRegression(C=c, max_iter=5000, random_state=a.seed)) for c in (0.1, 1.0, 10.0)
    ] + [
        (
            f"mlp {h} alpha={alpha}",
            MLPClassifier(hidden_layer_sizes=(h,), alpha=alpha, max_iter=400, random_state=a.seed),
        )
        for h in (16, 32)
        for alpha in (1e-4, 1e-2)
    ]
    best = None
    for name, model in candidates:
        model.fit(xs[train], y[train])
        scores = turn_scores(data, model.predict_proba(xs)[:, 1], "val")
        print(f"  {name}: val exact {scores['exact']:.3f} on {scores['turns']:.0f} turns")
        if best is None or scores["exact"] > best[0]:
            best = (scores["exact"], name, model)
    assert best is not None
    _, name, model = best
    test = turn_scores(data, model.predict_proba(xs)[:, 1], "test")
    print(f"test ({name}): " + ", ".join(f"{k} {v:.3f}" for k, v in test.items()))
    meta = {
        "data": f"{a.conversations} conversations generated over {a.papers} corpus papers (seed {a.seed})",
        "model": name,
        "test_exact": f"{test['exact']:.3f} on {test['turns']:.0f} held-out turns (generated)",
    }
    if isinstance(model, LogisticRegression):
        layers = [(model.coef_.T, model.intercept_)]
    else:
        layers = list(zip(model.coefs_, model.intercepts_))
    arrays = {f"w{i}": w.astype(np.float32) for i, (w, _) in enumerate(layers)}
    arrays |= {f"b{i}": b.astype(np.float32) for i, (_, b) in enumerate(layers)}
    out = a.work / "resolver.npz"
    np.savez(
        out,
        mean=mean.astype(np.float32),
        scale=scale.astype(np.float32),
        features=np.asarray(FEATURES),
        meta=np.asarray(json.dumps(meta)),
        **arrays,
    )
    check = CandidateScorer(dict(np.load(out, allow_pickle=False))).probabilities(x[:50])
    assert np.allclose(check, model.predict_proba(xs[:50])[:, 1], atol=1e-4), "the saved scorer disagrees"
    print(f"wrote {out} ({out.stat().st_size} bytes): {meta}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
