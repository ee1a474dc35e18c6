"""Scale benchmark: build an index of N papers, then measure a fresh app process against it.

For each size: ingest seconds and peak RSS (a separate process), index size on disk (Chroma + catalog),
start-up to the first answerable question in a fresh process (imports, opening the index, first
retrieval; no model server: the question asked needs none), fused retrieval p50/p95 over the dev
questions, and the app's peak RSS.

Corpora: 38 = the real seeds, embedded for real. Larger sizes are deterministic synthetic papers through
the real ingest path (``ingest_papers``: Chroma, generations, catalog) whose sentences are sampled from
the seed abstracts and titles from the seed titles; their *vectors are stored, not computed*: the real
MiniLM vector of the sampled sentence plus seeded noise (so the HNSW graph holds distinct points and
dense rankings stay meaningful), because embedding 800k sentences would take hours on 2 cores. The
real-embedding cost is measured separately by ``real-ingest`` (synthetic text of realistic length,
every sentence distinct and embedded), which also kills the ingest halfway with SIGKILL, resumes it and
checks that nothing is duplicated.

Usage:
  .venv/bin/python benchmarks/scale.py [--sizes 38,1000,12000,100000] [--keep DIR]
  .venv/bin/python benchmarks/scale.py real-ingest --papers 12000 [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
QUESTIONS = ROOT / "eval" / "dev.jsonl"
#: Relative size of the noise added to a stored synthetic vector (norm of noise / norm of vector).
NOISE = 0.35


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _seed_material():
    from assistant.config import load_settings
    from assistant.ingest.corpus import read_papers
    from assistant.lang.text import split_sentences

    papers = read_papers([load_settings().storage.seeds_dir])
    sentences = sorted({s for p in papers for s in split_sentences(p.text)})
    titles = sorted({p.title for p in papers})
    return sentences, titles


class StoredVectors:
    """A llama-index embedding that returns stored vectors: the real vector of a known text (computed once
    by ``model``) plus noise seeded by a counter, so repeated texts get distinct nearby points."""

    def __new__(cls, model, known: list[str]):
        import numpy as np
        from llama_index.core.base.embeddings.base import BaseEmbedding

        base = {t: np.asarray(v, dtype=np.float32) for t, v in zip(known, model.get_text_embedding_batch(known))}
        rng = np.random.default_rng(7)

        class _Stored(BaseEmbedding):
            def _vec(self, text: str) -> list[float]:
                v = base.get(text)
                if v is None:
                    v = np.asarray(model.get_text_embedding(text), dtype=np.float32)
                    base[text] = v
                noise = rng.standard_normal(v.shape[0]).astype(np.float32)  # type: ignore[attr-defined]
                w = v + NOISE * noise / np.linalg.norm(noise)
                return (w / np.linalg.norm(w)).tolist()

            def _get_query_embedding(self, query: str) -> list[float]:
                return model.get_query_embedding(query)

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return model.get_query_embedding(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return self._vec(text)

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return [self._vec(t) for t in texts]

        return _Stored(model_name="stored-synthetic", embed_batch_size=1024)


def synthetic_papers(n: int, sentences: list[str], titles: list[str], *, distinct: bool = False):
    """``n`` deterministic papers of 6-11 sampled seed sentences. ``distinct``: every sentence made unique
    (a word of another sentence swapped in, and the paper number appended) so it must really be embedded."""
    from assistant.types import Paper

    rng = random.Random(n)
    words = sorted({w for s in sentences for w in s.split() if w.isalpha() and len(w) > 3})
    out = []
    for i in range(n):
        body = [rng.choice(sentences) for _ in range(rng.randint(6, 11))]
        if distinct:
            body = [f"{' '.join(rng.choice(words) if rng.random() < 0.15 else w for w in s.split())} (study "
                    f"{i + 1}.{j})"
                    for j, s in enumerate(body)]
        title = rng.choice(titles)
        out.append(Paper(f"syn-{i + 1:06d}", "Synthetic", title if not distinct else f"{title} {i + 1}",
                         (f"Author {rng.randint(1, n)}",), "", " ".join(body), "synthetic.jsonl", i + 1))
    return out


def cmd_build(args: argparse.Namespace) -> int:
    """Child process: build the index of ``--papers`` papers in ``--dir``; prints one JSON line."""
    from assistant.offline import enforce_offline

    enforce_offline()
    from assistant.config import load_settings
    from assistant.index.embeddings import build_embed_model
    from assistant.ingest.pipeline import ingest, ingest_papers

    settings = load_settings(storage_dir=Path(args.dir))
    model = build_embed_model(settings)
    t0 = time.perf_counter()
    if args.papers == 38:
        report = ingest(settings, [settings.storage.seeds_dir], model, progress=False)
    else:
        sentences, titles = _seed_material()
        embed = StoredVectors(model, sentences + titles)
        papers = synthetic_papers(args.papers, sentences, titles)
        t0 = time.perf_counter()
        report = ingest_papers(settings, papers, embed, progress=True)
    print(json.dumps({"ingest_s": round(time.perf_counter() - t0, 1), "windows": report.windows,
                      "ingest_rss_mib": round(_rss_mib())}), flush=True)
    return 0


def cmd_app(args: argparse.Namespace) -> int:
    """Child process: start-up to the first answerable question, fused retrieval p50/p95, peak RSS."""
    t_start = time.perf_counter()
    from assistant.offline import enforce_offline

    enforce_offline()
    from assistant.config import load_settings
    from assistant.eval.evaluation import load_items
    from assistant.service import build_assistant

    t_imports = time.perf_counter()
    settings = load_settings(storage_dir=Path(args.dir))
    questions = [i.question for i in load_items(QUESTIONS) if i.question][:42]
    with build_assistant(settings, start_llm=False) as assistant:
        t_open = time.perf_counter()
        assistant.ask(questions[0], intent="topic")
        t_first = time.perf_counter()
        first_at = time.time()
        lat = []
        for q in questions:
            t = time.perf_counter()
            assistant.retriever.retrieve(q)
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        pick = lambda f: lat[min(len(lat) - 1, int(round(f * (len(lat) - 1))))]  # noqa: E731
        print(json.dumps({
            "imports_s": round(t_imports - t_start, 2), "open_s": round(t_open - t_imports, 2),
            "first_answer_s": round(t_first - t_open, 2), "fused_p50_ms": round(pick(0.5)),
            "fused_p95_ms": round(pick(0.95)),
            "papers": assistant.paper_count, "app_rss_mib": round(_rss_mib()), "first_answer_at": first_at,
        }), flush=True)
    return 0


def _child(*argv: str) -> tuple[dict[str, object], float]:
    """Run this script's ``argv`` in a fresh process; returns its JSON line and the seconds from launching
    it to its first answer (``first_answer_at``), or to its exit when it reports none."""
    t0 = time.time()
    done = subprocess.run([PY, __file__, *argv], capture_output=True, text=True, cwd=ROOT)
    end = time.time()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out, float(out.get("first_answer_at", end)) - t0


def cmd_sizes(args: argparse.Namespace) -> int:
    sizes = [int(x) for x in args.sizes.split(",")]
    print("| papers | windows | ingest s | ingest RSS MiB | index MiB | start-up s: launch to 1st answer (imports + "
          "open + answer) | fused p50 ms | fused p95 ms | app RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        keep = Path(args.keep) / f"index-{n}" if args.keep else None
        with tempfile.TemporaryDirectory() as tmp:
            d = keep or Path(tmp) / "index"
            record = d / "build.json"  # a kept index keeps what its build measured
            if not (keep and keep.exists()):
                built, _ = _child("build", "--papers", str(n), "--dir", str(d))
                record.write_text(json.dumps(built))
            else:
                built = json.loads(record.read_text()) if record.exists() else {"ingest_s": "-", "windows": 0,
                                                                                "ingest_rss_mib": "-"}
            app, wall = _child("app", "--dir", str(d))
            print(f"| {n:,} | {built['windows']:,} | {built['ingest_s']} | {built['ingest_rss_mib']} | "
                  f"{_du(d) / 2**20:.0f} | "
                  f"{wall:.1f} ({app['imports_s']} + {app['open_s']} + {app['first_answer_s']}) | "
                  f"{app['fused_p50_ms']} | "
                  f"{app['fused_p95_ms']} | {app['app_rss_mib']} |", flush=True)
    return 0


def cmd_real_ingest(args: argparse.Namespace) -> int:
    """Real-embedding ingest of ``--papers`` distinct synthetic abstracts through the CLI, SIGKILLed when
    about half the papers are in, resumed, checked for duplicates, then asked a question."""
    from assistant.offline import enforce_offline

    enforce_offline()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="real-ingest-"))
    folder.mkdir(parents=True, exist_ok=True)
    export = folder / "conference.jsonl"
    sentences, titles = _seed_material()
    papers = synthetic_papers(args.papers, sentences, titles, distinct=True)
    with open(export, "w", encoding="utf-8") as f:
        for p in papers:
            f.write(json.dumps({"id": p.id, "title": p.title, "abstract": p.text, "authors": list(p.authors)}) + "\n")
    words = sum(len(p.text.split()) for p in papers) / len(papers)
    print(f"{len(papers)} abstracts, {words:.0f} words each on average, in {export}", flush=True)
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(folder / "index")}
    catalog = None

    def papers_in() -> int:
        import sqlite3

        nonlocal catalog
        if catalog is None:
            found = list((folder / "index").glob("*.catalog.sqlite3"))
            if not found:
                return 0
            catalog = found[0]
        try:
            with sqlite3.connect(f"file:{catalog}?mode=ro", uri=True, timeout=5) as con:
                return int(con.execute("SELECT count(*) FROM papers").fetchone()[0])
        except sqlite3.Error:
            return 0

    cmd = [PY, "-m", "assistant", "ingest", "--json", "--no-progress", str(export)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None and papers_in() < args.papers // 2:
        time.sleep(2)
    killed_at = papers_in()
    first_s = time.perf_counter() - t0
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    print(f"killed (SIGKILL) after {first_s:.0f} s with {killed_at} papers committed", flush=True)
    t1 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    resume_s = time.perf_counter() - t1
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    report = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"resumed: {json.dumps(report)}", flush=True)
    print(f"total ingest wall time {first_s + resume_s:.0f} s ({first_s:.0f} s before the kill + {resume_s:.0f} s "
          f"resumed)")

    from assistant.config import load_settings
    from assistant.index.store import PaperStore

    store = PaperStore.open_for_read(load_settings(storage_dir=folder / "index"))
    windows = store.windows.count()
    records = store.papers.count()
    expected = report["windows"]["total"]
    print(f"after resume: {records} paper records (expected {args.papers}), {windows} windows (expected {expected}), "
          f"catalog {papers_in()} papers -> "
          f"{'no duplicates' if (records, windows) == (args.papers, expected) else 'MISMATCH'}")
    q = papers[len(papers) // 3]
    question = f"Which study reports {' '.join(q.text.split()[3:12])}?"
    t2 = time.perf_counter()
    asked = subprocess.run([PY, "-m", "assistant", "ask", "--json", "--intent", "topic", question], env=env,
                           capture_output=True, text=True)
    answer = json.loads(asked.stdout) if asked.returncode == 0 else {}
    cited = [c.get("paper_id") for c in answer.get("citations", [])] + [s.get("paper_id") for s in answer.get("sources",
                                                                                                              [])]
    print(f"ask after resume: {time.perf_counter() - t2:.1f} s wall, rc {asked.returncode}, cites {q.id}: "
          f"{q.id in cited} ({cited[:5]})")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    b = sub.add_parser("build")
    b.add_argument("--papers", type=int, required=True)
    b.add_argument("--dir", required=True)
    a = sub.add_parser("app")
    a.add_argument("--dir", required=True)
    r = sub.add_parser("real-ingest")
    r.add_argument("--papers", type=int, default=12000)
    r.add_argument("--dir")
    ap.add_argument("--sizes", default="38,1000,12000,100000")
    ap.add_argument("--keep", help="keep built indexes under this folder (and reuse them on the next run)")
    args = ap.parse_args()
    return {"build": cmd_build, "app": cmd_app, "real-ingest": cmd_real_ingest}.get(args.cmd, cmd_sizes)(args)


if __name__ == "__main__":
    sys.exit(main())
