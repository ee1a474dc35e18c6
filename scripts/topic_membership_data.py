"""Training pairs for the topic-membership cross-encoder (issue 45): (topic, paper) pairs over the real corpus.

Pool: every paper of ../shared/corpus/*.jsonl with an abstract, titles deduplicated, minus the 38 seed papers and
minus the 1k slice that the frozen topic set eval/topics-1.jsonl labels (benchmarks/corpus_slice.py), so no test
paper is ever trained on.

``candidates REQUESTS OUT_DIR [--batches N]``: for each topic request (``topic_id``, ``request``, ``topic``) the
pool is ranked by reciprocal-rank fusion of BM25 (bm25s, title + abstract) and the bundled MiniLM (cosine of the
topic with title + abstract); the top 30 and 10 sampled (seeded by topic id) from ranks 31-300 become pairs. Each
pair carries :func:`membership_model.membership_text` of its paper, with sentence scores like the
retriever's evidence scores (cosine with the sentence + ``EVIDENCE_LEXICAL_WEIGHT`` x share of topic words), so
training reads what the product reads. Writes ``OUT_DIR/pairs.jsonl`` and ``OUT_DIR/batch-K.jsonl`` (pairs split by
topic into N files, for labelling). Embeddings are cached in ``OUT_DIR/pool-vectors.npy``.

``merge OUT_DIR LABELS... --out FILE [--old scripts/training-data/topic-membership.jsonl]``: joins the labels
(``pair_id``, ``member`` 0/1, optional ``annotator``) with the pairs, adds the older labelled pairs re-read with
``membership_text`` (minus seed and slice papers), and writes the training file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus_slice import CORPUS, SEED_RECORDS, _norm, corpus_slice  # noqa: E402
from membership_model import membership_text  # noqa: E402

from assistant.lang.text import content_tokens, split_sentences  # noqa: E402
from assistant.tuning import EVIDENCE_LEXICAL_WEIGHT  # noqa: E402

TOP = 30
SAMPLED = 10
DEEP = 300


def pool() -> list[dict]:
    """Corpus papers (id, title, abstract) with the seeds and the 1k test slice removed, titles deduplicated."""
    test = corpus_slice(1000)
    banned_ids = {r["id"] for r in test}
    seen = {_norm(r["title"]) for r in test}
    seen |= {_norm(json.loads(x)["title"]) for x in SEED_RECORDS.read_text().splitlines() if x.strip()}
    out = []
    for f in sorted(CORPUS.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            key = _norm(r.get("title", ""))
            if not r.get("abstract", "").strip() or not key or key in seen or r["id"] in banned_ids:
                continue
            seen.add(key)
            out.append({"id": r["id"], "title": r["title"], "abstract": r["abstract"]})
    return out


def _embedder():
    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model

    return build_embed_model(Settings())


def _embed(model, texts: list[str], batch: int = 64) -> np.ndarray:
    vecs = []
    for b in range(0, len(texts), batch):
        vecs.extend(model.get_text_embedding_batch(texts[b : b + batch]))
        if len(texts) > 1000 and b // batch % 20 == 0:
            print(f"  embedded {b + batch}/{len(texts)}", file=sys.stderr, flush=True)
    v = np.asarray(vecs, dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


_SENTENCES: dict[str, tuple[list[str], np.ndarray]] = {}


def paper_text(model, topic: str, title: str, abstract: str) -> str:
    """:func:`membership_text` of one paper for ``topic``, its sentences scored like the retriever's evidence."""
    if abstract not in _SENTENCES:
        sentences = split_sentences(abstract)
        _SENTENCES[abstract] = (sentences, _embed(model, sentences) if sentences else np.zeros((0, 1)))
    sentences, s = _SENTENCES[abstract]
    if not sentences:
        return title
    q = np.asarray(model.get_query_embedding(topic), dtype=np.float32)
    want = content_tokens(topic)
    lex = [len(want & content_tokens(x)) / max(1, len(want)) for x in sentences]
    scores = [float(c) + EVIDENCE_LEXICAL_WEIGHT * w for c, w in zip(s @ q, lex)]
    return membership_text(title, sentences, scores)


def cmd_candidates(args: argparse.Namespace) -> None:
    import bm25s

    requests = [json.loads(x) for x in args.requests.read_text().splitlines() if x.strip()]
    papers = pool()
    print(f"pool: {len(papers)} papers; {len(requests)} topics", file=sys.stderr)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    model = _embedder()
    cache = args.out_dir / "pool-vectors.npy"
    ids_file = args.out_dir / "pool-ids.json"
    ids = [p["id"] for p in papers]
    if cache.exists() and ids_file.exists() and json.loads(ids_file.read_text()) == ids:
        vecs = np.load(cache)
    else:
        vecs = _embed(model, [f"{p['title']}. {p['abstract']}" for p in papers])
        np.save(cache, vecs)
        ids_file.write_text(json.dumps(ids))
    retriever = bm25s.BM25()
    corpus_tokens = bm25s.tokenize([f"{p['title']} {p['abstract']}" for p in papers], stopwords="en",
                                   show_progress=False)
    retriever.index(corpus_tokens, show_progress=False)
    pairs = []
    for n, req in enumerate(requests, start=1):
        topic = req["topic"]
        q = np.asarray(model.get_query_embedding(topic), dtype=np.float32)
        dense = np.argsort(-(vecs @ q))[:DEEP]
        docs, _ = retriever.retrieve(bm25s.tokenize([topic], stopwords="en", show_progress=False), k=DEEP,
                                     show_progress=False)
        fused: dict[int, float] = {}
        for ranking in (dense.tolist(), docs[0].tolist()):
            for r, i in enumerate(ranking):
                fused[i] = fused.get(i, 0.0) + 1.0 / (60 + r)
        order = sorted(fused, key=lambda i: -fused[i])[:DEEP]
        rng = random.Random(int(hashlib.md5(req["topic_id"].encode()).hexdigest(), 16))
        deep = order[TOP:]
        chosen = [(r, i) for r, i in enumerate(order[:TOP], start=1)]
        chosen += sorted((order.index(i) + 1, i) for i in rng.sample(deep, min(SAMPLED, len(deep))))
        for rank, i in chosen:
            p = papers[i]
            pairs.append({
                "pair_id": f"{req['topic_id']}:{p['id']}",
                "topic_id": req["topic_id"],
                "request": req["request"],
                "topic": topic,
                "paper_id": p["id"],
                "rank": rank,
                "text": paper_text(model, topic, p["title"], p["abstract"]),
            })
        print(f"  topic {n}/{len(requests)}: {topic}", file=sys.stderr, flush=True)
    (args.out_dir / "pairs.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in pairs))
    topics = [r["topic_id"] for r in requests]
    for k in range(args.batches):
        mine = set(topics[k :: args.batches])
        rows = [{kk: x[kk] for kk in ("pair_id", "request", "topic", "text")} for x in pairs if x["topic_id"] in mine]
        (args.out_dir / f"batch-{k + 1}.jsonl").write_text(
            "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows))
    print(f"{len(pairs)} pairs -> {args.out_dir}", file=sys.stderr)


def cmd_merge(args: argparse.Namespace) -> None:
    pairs = {json.loads(x)["pair_id"]: json.loads(x) for x in (args.out_dir / "pairs.jsonl").read_text().splitlines()}
    rows = []
    for f in args.labels:
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            lab = json.loads(line)
            if lab["pair_id"] not in pairs or lab.get("member") not in (0, 1):
                raise SystemExit(f"{f}: bad label line {line[:120]!r}")
            rows.append({**pairs[lab["pair_id"]], "member": lab["member"], "annotator": lab.get("annotator", f.stem)})
    if args.old:
        by_id = {p["id"]: p for p in pool()}
        model = _embedder()
        kept = 0
        for line in args.old.read_text().splitlines():
            old = json.loads(line)
            p = by_id.get(old["paper_id"])
            if p is None:  # a seed or test-slice paper (or a repeated title): never trained on
                continue
            kept += 1
            rows.append({"pair_id": f"old:{old['topic']}:{p['id']}", "topic_id": "old:" + old["topic"],
                         "request": old["query"], "topic": old["topic"], "paper_id": p["id"], "rank": old["rank"],
                         "text": paper_text(model, old["query"], p["title"], p["abstract"]),
                         "member": old["member"], "annotator": "old-" + old.get("annotator", "")})
        print(f"older pairs kept: {kept}", file=sys.stderr)
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows)
    if args.out.suffix == ".gz":  # the committed training file is gzipped (scripts/membership_model.py LABELLED)
        import gzip

        args.out.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        args.out.write_text(text)
    print(f"{len(rows)} labelled pairs ({sum(r['member'] for r in rows)} members) -> {args.out}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("candidates")
    c.add_argument("requests", type=Path)
    c.add_argument("out_dir", type=Path)
    c.add_argument("--batches", type=int, default=2)
    m = sub.add_parser("merge")
    m.add_argument("out_dir", type=Path)
    m.add_argument("labels", type=Path, nargs="+")
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--old", type=Path)
    args = ap.parse_args()
    {"candidates": cmd_candidates, "merge": cmd_merge}[args.cmd](args)


if __name__ == "__main__":
    main()
