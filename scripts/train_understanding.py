"""Train the small classifiers that read questions and abstracts (assistant/understand/learned.py).

Each is a logistic regression over hashed word/character n-grams plus a few dense features
(assistant/lang/classifier.py); data, splits and held-out figures go to docs/models/understanding.md.

* ``roles``: the role of an abstract sentence for the comparison table and summaries (problem / approach /
  data / result / other). Data: ``scripts/training-data/sentence-roles.jsonl``, every sentence of 278 abstracts
  (238 real ML papers of ``../shared/corpus``, 4 venues, and 40 CORD-19 abstracts of Check-COVID), labelled by
  two annotator sessions that never saw the product's code or rules (2,238 sentences). Held out: every fifth
  abstract by a hash of its id (whole abstracts, so no sentence of a test abstract is trained on); the frozen
  ``test`` split of eval/cell-roles.jsonl (seed abstracts, labelled in issue 26) is scored by
  benchmarks/cell_placement.py.
* ``intent``: what a question asks (lookup / summary / compare / choice / topic / metadata). Data:
  ``scripts/training-data/intent-questions.jsonl``: 2,700 questions written in many styles (typos, terse,
  rambling, vague recollections, chat follow-ups, minimal pairs, singular vs plural, described comparisons,
  non-ML subjects, "they" meaning a paper's authors) by five annotator sessions that never saw the code, about
  500 real corpus papers. Held out:
  every fifth question by hash. (Questions composed by code from templates were tried as extra data and
  lowered accuracy on the val split of eval/kept-seeds.jsonl, 0.885 -> 0.731, so they are not used.)
* ``topic``: does a candidate paper belong in a topic list? Data: ``scripts/training-data/topic-membership.jsonl``
  (40 topic requests x 41 candidates retrieved from the 9.9k-paper corpus: the top 25 and 16 sampled from ranks
  26-300, labelled by four annotator sessions that never saw the code);
  features from the retriever (assistant/understand/learned.py ``topic_features``). Held out: every fifth topic.

* ``answer``: which sentence of an abstract answers a question. Data: ``scripts/training-data/answer-sentences.jsonl``
  (features of every sentence for 900 written questions about 150 real abstracts, three blind writers, and 717
  Check-COVID train claims; built by scripts/answer_sentence_features.py). Held out: every fifth paper.

(The ``stated`` model, "does an abstract state what a question asks?", was replaced in issue 41 by the answering
model's own reading: assistant/verify/verifiers.py ``stated_probability``, measured on the same questions,
``scripts/training-data/stated.jsonl``, by benchmarks/stated_check.py.)

Run: ``.venv/bin/python scripts/train_understanding.py [roles|intent|topic|answer ...]`` (seed 23; about
4 min on 2 cores). Writes ``assistant/understand/models/<name>.npz`` (fitted on the training split only, so the held-out
figures can be re-measured: tests/unit/test_understanding.py) and prints held-out accuracy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.lang.classifier import TextClassifier, hashed_ngrams  # noqa: E402
from assistant.understand import learned  # noqa: E402

SEED = 23
DATA = REPO / "scripts" / "training-data"
OUT = REPO / "assistant" / "understand" / "models"
ROLE_LETTERS = {"P": "problem", "A": "approach", "D": "data", "R": "result", "O": "other"}


def held_out(key: str, every: int = 5) -> bool:
    """Deterministic split: True for about one key in ``every`` (md5 of the key)."""
    return int(hashlib.md5(key.encode()).hexdigest(), 16) % every == 0


def fit(x: object, y: list[str], c: float, weights: dict[str, float] | str | None = "balanced") -> Any:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=3000, class_weight=weights, random_state=SEED)
    model.fit(x, y)
    return model


def report(name: str, gold: list[str], pred: list[str]) -> dict[str, float]:
    """Accuracy and per-class recall, printed."""
    acc = sum(g == p for g, p in zip(gold, pred)) / max(1, len(gold))
    per = {}
    for c in sorted(set(gold)):
        idx = [i for i, g in enumerate(gold) if g == c]
        per[c] = sum(pred[i] == c for i in idx) / len(idx)
    print(
        f"{name}: accuracy {acc:.3f} on {len(gold)}; recall per class "
        + ", ".join(f"{c} {v:.2f}" for c, v in per.items())
    )
    return {"accuracy": acc, **per}


# --- roles ----------------------------------------------------------------------------------------------
def train_roles() -> None:
    rows = [json.loads(line) for line in (DATA / "sentence-roles.jsonl").read_text().splitlines() if line.strip()]
    train_x: list[tuple[list[str], int]] = []
    texts, dense, labels, test_mask = [], [], [], []
    for r in rows:
        sents = r["sentences"]
        feats = learned.role_features(sents)
        for i, s in enumerate(sents):
            texts.append(learned.role_text(sents, i))
            dense.append(feats[i])
            labels.append(ROLE_LETTERS[r["roles"][i]])
            test_mask.append(held_out(r["doc_id"]))
    del train_x
    dense_arr = np.asarray(dense, dtype=np.float32)
    x = _stack(texts, dense_arr, learned.ROLE_HASH_FEATURES, learned.ROLE_DENSE_SCALE)
    tr = [i for i, t in enumerate(test_mask) if not t]
    te = [i for i, t in enumerate(test_mask) if t]
    print(f"roles: {len(tr)} training sentences, {len(te)} held out ({Counter(labels)})")
    best = None
    for c in (0.3, 1.0, 3.0, 10.0):
        m = fit(x[tr], [labels[i] for i in tr], c)
        pred = list(m.predict(x[te]))
        acc = report(f"  C={c}", [labels[i] for i in te], pred)["accuracy"]
        if best is None or acc > best[0]:
            best = (acc, c, m)
    assert best is not None
    # C is chosen on the held-out abstracts (not on any eval/ file). The shipped model is the one fitted on the
    # training split only, so tests/unit/test_understanding.py can re-measure it on the held-out abstracts.
    model = best[2]
    meta = {
        "data": "scripts/training-data/sentence-roles.jsonl (2,238 sentences, 278 abstracts, blind annotators)",
        "held_out_accuracy": f"{best[0]:.3f} (every fifth abstract by md5 of its id; C={best[1]})",
        "seed": str(SEED),
    }
    clf = TextClassifier.from_sklearn(
        model, tuple(model.classes_), learned.ROLE_HASH_FEATURES, dense_arr.shape[1], learned.ROLE_DENSE_SCALE, meta
    )
    OUT.mkdir(parents=True, exist_ok=True)
    clf.save(OUT / "roles.npz")
    print(f"roles: wrote {OUT / 'roles.npz'} ({(OUT / 'roles.npz').stat().st_size / 1e6:.2f} MB)")


def _stack(texts: list[str], dense: np.ndarray, n_features: int, scale: float) -> Any:
    from scipy.sparse import csr_matrix, hstack

    parts = []
    if n_features:
        parts.append(hashed_ngrams(texts, n_features))
    if dense.shape[1]:
        parts.append(csr_matrix(dense * scale))
    return hstack(parts).tocsr()


# --- intent ---------------------------------------------------------------------------------------------
def train_intent() -> None:
    rows = [json.loads(line) for line in (DATA / "intent-questions.jsonl").read_text().splitlines() if line.strip()]
    train = [r for r in rows if not held_out(r["text"])]
    test = [r for r in rows if held_out(r["text"])]
    print(f"intent: {len(train)} training questions, {len(test)} held out ({Counter(r['intent'] for r in rows)})")

    def features(batch: list[dict[str, str]]) -> object:
        return hashed_ngrams([learned.intent_text(r["text"]) for r in batch], learned.INTENT_HASH_FEATURES)

    best = None
    for c in (1.0, 3.0, 10.0, 30.0):
        m = fit(features(train), [r["intent"] for r in train], c)
        pred = list(m.predict(features(test)))
        acc = report(f"  C={c}", [r["intent"] for r in test], pred)["accuracy"]
        for writer in sorted({r["writer"] for r in test}):
            idx = [i for i, r in enumerate(test) if r["writer"] == writer]
            print(f"    {writer}: {sum(pred[i] == test[i]['intent'] for i in idx) / len(idx):.3f} on {len(idx)}")
        if best is None or acc > best[0]:
            best = (acc, c, m)
    assert best is not None
    acc, c, model = best  # fitted on the training split only (the held-out questions stay unseen)
    meta = {
        "data": f"scripts/training-data/intent-questions.jsonl ({len(rows)} questions by four blind writer sessions)",
        "held_out_accuracy": f"{acc:.3f} (every fifth question by md5 of its text; C={c})",
        "seed": str(SEED),
    }
    clf = TextClassifier.from_sklearn(model, tuple(model.classes_), learned.INTENT_HASH_FEATURES, 0, 1.0, meta)
    OUT.mkdir(parents=True, exist_ok=True)
    clf.save(OUT / "intent.npz")
    print(f"intent: wrote {OUT / 'intent.npz'} ({(OUT / 'intent.npz').stat().st_size / 1e6:.2f} MB)")


# --- topic membership ----------------------------------------------------------------------------------
def train_topic() -> None:
    rows = [json.loads(line) for line in (DATA / "topic-membership.jsonl").read_text().splitlines() if line.strip()]
    x = np.asarray([[r["features"][f] for f in learned.TOPIC_FEATURES] for r in rows], dtype=np.float32)
    y = [str(r["member"]) for r in rows]
    test = [held_out(r["topic"]) for r in rows]
    tr = [i for i, t in enumerate(test) if not t]
    te = [i for i, t in enumerate(test) if t]
    n_topics = len({r["topic"] for r in rows})
    n_test = len({r["topic"] for r in rows if held_out(r["topic"])})
    print(
        f"topic: {len(tr)} training pairs, {len(te)} held out ({n_test} of {n_topics} topics); members {y.count('1')}"
    )
    best = None
    for c in (0.1, 1.0, 10.0):
        m = fit(x[tr], [y[i] for i in tr], c, weights=None)
        pred = list(m.predict(x[te]))
        gold = [y[i] for i in te]
        tp = sum(p == g == "1" for p, g in zip(pred, gold))
        prec, rec = tp / max(1, pred.count("1")), tp / max(1, gold.count("1"))
        acc = report(f"  C={c}", gold, pred)["accuracy"]
        print(f"    member precision {prec:.3f} recall {rec:.3f}")
        if best is None or acc > best[0]:
            best = (acc, c, prec, rec, m)
    assert best is not None
    acc, c, prec, rec, model = best  # fitted on the training topics only
    meta = {
        "data": f"scripts/training-data/topic-membership.jsonl ({len(rows)} labelled pairs, {n_topics} topics)",
        "held_out_accuracy": f"{acc:.3f}, member P/R {prec:.3f}/{rec:.3f} (every fifth topic; C={c})",
        "seed": str(SEED),
    }
    clf = TextClassifier.from_sklearn(model, tuple(model.classes_), 0, x.shape[1], 1.0, meta)
    OUT.mkdir(parents=True, exist_ok=True)
    clf.save(OUT / "topic.npz")
    print(f"topic: wrote {OUT / 'topic.npz'}")


# --- answer sentence -----------------------------------------------------------------------------------
def train_answer() -> None:
    rows = [json.loads(line) for line in (DATA / "answer-sentences.jsonl").read_text().splitlines() if line.strip()]
    written = [r for r in rows if r["source"] == "written-question"]
    test = [r for r in written if held_out(r["doc_id"])]

    def stack(batch: list[dict]) -> tuple[np.ndarray, list[str]]:
        x = [f for r in batch for f in r["features"]]  # rows in ANSWER_FEATURES order
        y = [str(int(i in r["answers"])) for r in batch for i in range(len(r["features"]))]
        return np.asarray(x, dtype=np.float32), y

    def top1(batch: list[dict], score: object) -> float:
        """Share of questions whose best-scored sentence is one of its answers."""
        right = 0
        for r in batch:
            s = score(r)  # type: ignore[operator]
            right += int(int(np.argmax(s)) in r["answers"])
        return right / max(1, len(batch))

    rule = top1(test, lambda r: r["rule_scores"])
    print(f"answer: {len(written)} written questions ({len(test)} held out), {len(rows) - len(written)} claims")
    print(f"  hand-weighted score (extractive.score_sentences) top-1 on held-out: {rule:.3f}")
    best = None
    for with_claims in (False, True):
        train = [r for r in rows if not (r["source"] == "written-question" and held_out(r["doc_id"]))]
        if not with_claims:
            train = [r for r in train if r["source"] == "written-question"]
        x, y = stack(train)
        for c in (0.1, 1.0, 10.0):
            m = fit(x, y, c)
            col = list(m.classes_).index("1")
            acc = top1(test, lambda r: m.predict_proba(stack([r])[0])[:, col])
            print(f"  claims={with_claims} C={c}: top-1 {acc:.3f}")
            if best is None or acc > best[0]:
                best = (acc, c, with_claims, m)
    assert best is not None
    acc, c, with_claims, model = best
    meta = {
        "data": "scripts/training-data/answer-sentences.jsonl (written questions"
        + (" + Check-COVID train claims)" if with_claims else ")"),
        "held_out_accuracy": f"top-1 {acc:.3f} vs hand-weighted {rule:.3f} (papers held out by md5; C={c})",
        "seed": str(SEED),
    }
    clf = TextClassifier.from_sklearn(model, tuple(model.classes_), 0, len(rows[0]["features"][0]), 1.0, meta)
    OUT.mkdir(parents=True, exist_ok=True)
    clf.save(OUT / "answer.npz")
    print(f"answer: wrote {OUT / 'answer.npz'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="roles, intent, topic and/or answer (default: all)")
    args = parser.parse_args()
    np.random.seed(SEED)
    models = {"roles": train_roles, "intent": train_intent, "topic": train_topic, "answer": train_answer}
    for name in args.models or list(models):
        if name not in models:
            parser.error(f"unknown model {name!r}: choose from {', '.join(models)}")
        t0 = time.perf_counter()
        models[name]()
        print(f"{name}: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
