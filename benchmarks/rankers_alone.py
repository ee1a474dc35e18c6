"""Each ranker of paper retrieval alone, beside the shipped fusion and a plain BM25 (issue 44, item 1).

For one index (built with ``assistant ingest``; for issue 44, the 38 seeds plus ../shared/corpus), run the question
sets through ``evaluate_retrieval`` (no LLM) once per configuration and print recall@k by kind:

- ``fusion``: the shipped retriever (``default_rankers``: dense + BM25 windows, names, title vectors, window
  rank, aspect coverage);
- ``windows``: the dense + BM25 window fusion alone (the first ranker, no names, titles or rerank);
- ``dense``: the dense window retriever alone (``retrieval.mode=dense``, window ranker only);
- ``bm25-windows``: the catalog's BM25 over windows alone (``retrieval.mode=bm25``, window ranker only);
- ``titles``: the title-vector list alone (``PaperVectors``);
- ``names``: the metadata matches alone (authors, title names, title words; empty for most descriptions);
- ``bm25``: a plain BM25 over each paper's title + abstract (``bm25s``, English stop words, no stemming), the
  keyword-search baseline issue 44 measures against;
- ``fusion+bm25=W`` (``--bm25-weight W``, repeatable): the shipped fusion with the paper BM25 list
  (retrieve/paper_bm25.py) at reciprocal-rank weight ``W``, for fitting ``retrieval.paper_bm25_weight`` on val.

    .venv/bin/python benchmarks/rankers_alone.py --storage-dir build/idx10k \\
        --set eval/descriptions-1.jsonl:val --set eval/descriptions-1.jsonl:test --set eval/needles.jsonl \\
        --json docs/results/issue44/rankers-alone.json

``--set FILE[:SPLIT]``: a question file (eval/README.md format) and optionally its split. A row's ``kind`` field
(descriptions-1: vague / specific / keyword) groups the table when present, else its ``type``. Test splits are
for figures only: nothing is fitted on them. Prints Markdown tables (recall@1 / @5 / @20 and retrieve p50 / p95
ms per configuration) and the machine's load; writes every per-item report to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KS = (1, 5, 20)
CONFIGS = ("fusion", "windows", "dense", "bm25-windows", "titles", "names", "bm25")


class PlainBM25:
    """The paper BM25 list alone (:class:`~assistant.retrieve.paper_bm25.PaperBM25Index` over ``papers``, a
    ``{id: Paper}`` mapping), as a :class:`~assistant.eval.evaluation.PaperRanker`: ``retrieve(query, top_k)``
    returns the ``top_k`` papers as :class:`~assistant.types.PaperHit` (score = BM25 score, no evidence)."""

    def __init__(self, papers: Any) -> None:
        from assistant.retrieve.paper_bm25 import PaperBM25Index

        class Papers:  # what the index reads of a catalog
            generation = 0

            def paper_ids(self) -> list[str]:
                return list(papers)

            def paper(self, pid: str) -> Any:
                return papers.get(pid)

        self.papers = papers
        self._index = PaperBM25Index(Papers())  # type: ignore[arg-type]

    def retrieve(self, query: str, top_k: int | None = None, *, aspects: bool = False) -> list[Any]:
        from assistant.types import PaperHit

        return [PaperHit(self.papers[pid], score, 0.0, (), ()) for pid, score in self._index.search(query, top_k or 10)]


def _kinds(path: Path) -> dict[str, str]:
    """``{item id: kind}`` for rows with a ``kind`` field (the grouping of the tables)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if "kind" in row:
                out[row["id"]] = row["kind"]
    return out


def _ranker(config: str, storage: Path) -> Any:
    """The retriever (or the plain BM25) of ``config``: a name of :data:`CONFIGS`, or ``fusion+bm25=W`` (the shipped
    fusion with the paper BM25 list at weight ``W``)."""
    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model
    from assistant.retrieve.rankers import MetadataMatches, PaperVectors, WindowFusion
    from assistant.retrieve.retrieval import PaperRetriever

    mode = {"dense": "dense", "bm25-windows": "bm25"}.get(config, "fused")
    retrieval: dict[str, Any] = {"mode": mode}
    if config.startswith("fusion+bm25="):
        retrieval["paper_bm25_weight"] = float(config.partition("=")[2])
    settings = Settings().updated(storage_dir=storage, retrieval=retrieval)
    retriever = PaperRetriever.open(settings, build_embed_model(settings))
    r = settings.retrieval
    if config == "bm25":
        return PlainBM25(retriever.papers)
    if config in ("windows", "dense", "bm25-windows"):
        retriever.rankers = [WindowFusion(r.second_window_weight)]
    elif config == "titles":
        retriever.rankers = [PaperVectors(1.0, max(max(KS), r.paper_vector_k))]
    elif config == "names":
        retriever.rankers = [MetadataMatches(retriever.metadata, 1.0)]
    return retriever


def _cell(records: Sequence[dict[str, Any]]) -> str:
    records = [r for r in records if r["metrics"][f"recall@{KS[0]}"] is not None]  # unanswerable: no gold
    if not records:
        return ""
    mean = {k: sum(r["metrics"][f"recall@{k}"] for r in records) / len(records) for k in KS}
    return " / ".join(f"{mean[k]:.2f}" for k in KS) + f" (n={len(records)})"


def main(argv: list[str] | None = None) -> int:
    """Run every configuration on every set, print the tables; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--storage-dir", required=True, type=Path, help="the index")
    ap.add_argument("--set", action="append", required=True, dest="sets", help="FILE[:SPLIT] (repeatable)")
    ap.add_argument("--config", action="append", choices=CONFIGS, help="configurations to run (default: all)")
    ap.add_argument(
        "--bm25-weight",
        action="append",
        type=float,
        default=[],
        help="also run the fusion with the paper BM25 list at this weight (repeatable; for fitting on val)",
    )
    ap.add_argument("--json", type=Path, help="write every report (per item) here")
    args = ap.parse_args(argv)

    from assistant.eval.evaluation import evaluate_retrieval, load_items
    from assistant.offline import enforce_offline

    enforce_offline()
    sets = []
    for spec in args.sets:
        path, _, split = spec.partition(":")
        sets.append((spec, load_items(Path(path), split=split or None), _kinds(Path(path))))
    configs = (args.config or ([] if args.bm25_weight else list(CONFIGS))) + [
        f"fusion+bm25={w:g}" for w in args.bm25_weight
    ]
    results: dict[str, dict[str, Any]] = {}
    load = os.getloadavg()
    for config in configs:
        t0 = time.perf_counter()
        ranker = _ranker(config, args.storage_dir)
        ranker.retrieve("warm up the retriever")  # the first query loads lazily: not a measurement
        print(f"# {config}: ready in {time.perf_counter() - t0:.1f} s ({len(ranker.papers):,} papers)", file=sys.stderr)
        results[config] = {spec: evaluate_retrieval(ranker, items, KS) for spec, items, _ in sets}
    for spec, _items, kinds in sets:
        first = results[configs[0]][spec]["items"]
        groups = sorted({kinds.get(r["id"], r["type"]) for r in first})
        print(f"\n**{spec}**: recall@{' / @'.join(map(str, KS))}\n")
        print("| kind | " + " | ".join(configs) + " |")
        print("|---|" + "---|" * len(configs))
        for g in ["overall", *groups]:
            row = []
            for config in configs:
                recs = results[config][spec]["items"]
                row.append(_cell([r for r in recs if g == "overall" or kinds.get(r["id"], r["type"]) == g]))
            if any(row):  # a kind with no gold papers (unanswerable) has no recall
                print(f"| {g} | " + " | ".join(row) + " |")
        lat = [results[c][spec]["latency_ms"]["retrieve"] for c in configs]
        print("| retrieve p50 / p95 ms | " + " | ".join(f"{x['p50']:.0f} / {x['p95']:.0f}" for x in lat) + " |")
    end = os.getloadavg()
    print(f"\nload average at start {load[0]:.2f}, at end {end[0]:.2f} (1 min)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
