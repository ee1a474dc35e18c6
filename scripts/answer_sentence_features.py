"""Build scripts/training-data/answer-sentences.jsonl: labelled (question, abstract) pairs with the features of
every sentence (assistant/answer/extractive.py ``answer_features``), for the answer-sentence selector that
scripts/train_understanding.py trains (model ``answer``).

Sources (none is an eval set):
* ``--qa FILE`` (repeatable; scripts/training-data/answer-questions.jsonl): questions written by annotator
  sessions that never saw the code, each with the abstract's sentences as they were shown and the indices of
  those that answer it (lines ``{"doc_id", "sentences", "question", "answer_sentences", "kind",
  "paraphrased"}``), about real corpus papers (the ``--index`` of ../shared/corpus) and CORD-19 abstracts (the
  ``--covid-index`` of Check-COVID's corpus); the indices are mapped onto the index's sentences by word overlap;
* Check-COVID claims of the ``train`` split (``../shared/claims-external``), each with its rationale sentences
  (mapped onto our sentence split by word overlap) — claims, not questions, marked ``source: checkcovid-claim``.

Each line: the question, its paper, the answering sentence indices, the hand-weighted score of each sentence
(``rule_scores``, the baseline) and ``features``: one list per sentence in the order of ``ANSWER_FEATURES``.

Usage::

    .venv/bin/assistant ingest ../shared/claims-external/checkcovid_corpus.jsonl --storage-dir /tmp/cc-idx
    .venv/bin/python scripts/answer_sentence_features.py --index IDX10K --covid-index /tmp/cc-idx \\
        --qa scripts/training-data/answer-questions.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))

from assistant.answer.extractive import answer_features, score_sentences  # noqa: E402
from assistant.config import Settings  # noqa: E402
from assistant.index.embeddings import build_embed_model  # noqa: E402
from assistant.lang.text import content_tokens  # noqa: E402
from assistant.retrieve.retrieval import PaperRetriever  # noqa: E402
from assistant.understand.question import analyze  # noqa: E402

OUT = REPO / "scripts" / "training-data" / "answer-sentences.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True, help="an index of ../shared/corpus")
    ap.add_argument("--covid-index", required=True, help="an index of Check-COVID's corpus")
    ap.add_argument("--qa", action="append", default=[], type=Path, help="annotated questions (repeatable)")
    args = ap.parse_args()
    embed = build_embed_model(Settings())
    retrievers = [PaperRetriever.open(Settings().updated(storage_dir=d), embed) for d in (args.index, args.covid_index)]

    def hit_for(question: str, doc_id: str):
        for r in retrievers:
            if doc_id in r.papers:
                hits = r.hits_for(question, [doc_id])
                return hits[0] if hits else None
        return None

    rows = []
    for path in args.qa:
        for line in path.read_text().splitlines():
            q = json.loads(line)
            hit = hit_for(q["question"], q["doc_id"])
            if hit is None:
                print(f"skipped (not indexed): {q['doc_id']}", file=sys.stderr)
                continue
            gold = {_closest(hit.sentences, q["sentences"][j]) for j in q["answer_sentences"]}
            rows.append(_row(q["question"], hit, gold, "written-question", q.get("kind", "")))
    claims = SHARED / "claims-external" / "checkcovid_claims_train_dev.jsonl"
    for line in claims.read_text().splitlines():
        c = json.loads(line)
        if c["split"] != "train" or not c["rationale_sentence_indices"]:
            continue
        hit = hit_for(c["claim"], c["abstract_id"])
        if hit is None:
            continue
        gold = {_closest(hit.sentences, c["abstract_sentences"][j]) for j in c["rationale_sentence_indices"]}
        rows.append(_row(c["claim"], hit, gold, "checkcovid-claim", c["label"]))
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"wrote {len(rows)} questions/claims to {OUT}")


def _closest(sentences: tuple[str, ...], text: str) -> int:
    """Index of our sentence sharing the most words with ``text`` (the dataset splits sentences its own way)."""
    want = content_tokens(text)
    return max(range(len(sentences)), key=lambda i: len(want & content_tokens(sentences[i])))


def _row(question: str, hit, gold: set[int], source: str, kind: str) -> dict:
    facts = analyze(question)
    feats = answer_features(hit, facts, question)
    rule = [round(p.score, 5) for p in score_sentences(hit, facts, question)]  # the hand-weighted score it replaces
    return {
        "question": question,
        "doc_id": hit.paper.id,
        "source": source,
        "kind": kind,
        "answers": sorted(gold),
        "rule_scores": rule,
        "features": [[round(float(v), 5) for v in f] for f in feats],  # one row per sentence, ANSWER_FEATURES order
    }


if __name__ == "__main__":
    main()
