"""The measured cost of each scale-out piece (docs/configuration.md "Scale-out", docs/benchmarks.md "Scale-out pieces").

1. Embedding through an OpenAI-compatible ``/v1/embeddings`` server on loopback vs in-process: a batch of 64
   seed windows and one question, p50/p95. The server is tests/support/fake_embeddings_server.py in its own
   process, once serving the bundled MiniLM (the same model, so only the transport is added) and once with
   ``--null`` (no model: HTTP + JSON of 384-d vectors alone).
2. Ingest of the 38 seeds into a fresh index: in-process model vs that server.
3. Chroma as a server (``chroma run``) vs embedded (``PersistentClient``): one dense query of 40 windows
   (``collection.query``), a whole ``retrieve()`` (dense + BM25 + evidence reads), and building the retriever
   (loading papers and windows at start-up).
4. One UI replica (``python -m ui --no-ingest`` against the Chroma server and a scripted LLM endpoint): seconds
   until its page answers, and resident memory, with the in-process model vs the embedding server.

The LLM endpoint (vLLM) cannot run here (no GPU, no network): not measured. Not a test.

Usage: .venv/bin/python benchmarks/scale_out.py [--repeats 30] [--no-ui]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO))  # the scripted servers live in tests/support


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def _timed(fn: Callable[[], object], repeats: int, warmup: int = 2) -> tuple[float, float]:
    """p50, p95 in ms of ``fn()`` over ``repeats`` calls after ``warmup``."""
    for _ in range(warmup):
        fn()
    xs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - t0) * 1000)
    return statistics.median(xs), _pct(xs, 0.95)


def _wait_http(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 180) -> float:
    import urllib.request

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return time.perf_counter() - t0
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout_s} s")


@contextmanager
def _process(argv: list[str], url: str, env: dict[str, str] | None = None,
             log: Path | None = None) -> Iterator[tuple[subprocess.Popen[bytes], float]]:
    """Start ``argv``, wait until ``url`` answers; yields (process, seconds it took)."""
    out = open(log or os.devnull, "wb")
    proc = subprocess.Popen(argv, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, stdout=out,
                            stderr=subprocess.STDOUT)
    try:
        yield proc, _wait_http(url, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()


def _rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` and its children (MiB)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            todo += [int(c) for t in Path(f"/proc/{p}/task").iterdir() for c in (t / "children").read_text().split()]
        except OSError:
            continue
    return total / 1024


def _embedding_server(port: int, *, null: bool) -> list[str]:
    return [sys.executable, "-m", "tests.support.fake_embeddings_server", "--port", str(port),
            *(["--null"] if null else [])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--no-ui", action="store_true", help="skip the UI replica measurement")
    args = ap.parse_args()
    from assistant.offline import enforce_offline

    enforce_offline()
    import logging

    logging.basicConfig(level=logging.WARNING)
    from assistant.config import Settings
    from assistant.eval.evaluation import load_items
    from assistant.index.embeddings import build_embed_model
    from assistant.index.remote_embedding import RemoteEmbedding
    from assistant.index.store import PaperStore, StoreInfo
    from assistant.ingest.chunking import make_windows
    from assistant.ingest.corpus import read_papers
    from assistant.ingest.pipeline import ingest
    from assistant.lang.text import split_sentences
    from assistant.llm.local import free_port
    from assistant.retrieve.retrieval import PaperRetriever

    model = "sentence-transformers/all-MiniLM-L6-v2"
    tmp = Path(tempfile.mkdtemp(prefix="scale-out-"))
    local = build_embed_model(Settings())
    papers = read_papers([REPO / "seeds"])
    windows = [w.text for p in papers for w in make_windows(p, split_sentences(p.text), 3)]
    batch = windows[:64]
    questions = [i.question for i in load_items(REPO / "eval" / "dev.jsonl")]
    rows: list[tuple[str, str]] = []

    # 1. embedding: in-process vs loopback server (same model) vs loopback server without a model
    n = max(5, args.repeats // 3)
    rows.append(("embed 64 windows, in-process MiniLM",
                 "%.0f / %.0f ms" % _timed(lambda: local.get_text_embedding_batch(batch), n)))
    q_iter = iter(questions * 1000)
    rows.append(("embed 1 question, in-process",
                 "%.1f / %.1f ms" % _timed(lambda: local.get_query_embedding(next(q_iter)), args.repeats)))
    for null in (False, True):
        port = free_port()
        with _process(_embedding_server(port, null=null), f"http://127.0.0.1:{port}/v1/models"):
            remote = RemoteEmbedding(base_url=f"http://127.0.0.1:{port}/v1", model_name=model, embed_batch_size=64)
            what = "no model (HTTP + JSON only)" if null else "MiniLM"
            rows.append((f"embed 64 windows, loopback server, {what}",
                         "%.0f / %.0f ms" % _timed(lambda: remote.get_text_embedding_batch(batch), n)))
            rows.append((f"embed 1 question, loopback server, {what}",
                         "%.1f / %.1f ms" % _timed(lambda: remote.get_query_embedding(next(q_iter)), args.repeats)))
            if not null:  # 2. ingest through it
                t0 = time.perf_counter()
                r = ingest(Settings().updated(storage_dir=tmp / "remote-index", embed_base_url=remote.base_url,
                                    embed_model=model),
                           [REPO / "seeds"], remote, progress=False)
                rows.append((f"ingest 38 seeds ({r.windows} windows), loopback server",
                             f"{time.perf_counter() - t0:.1f} s"))
    t0 = time.perf_counter()
    embedded = Settings().updated(storage_dir=tmp / "index")
    r = ingest(embedded, [REPO / "seeds"], local, progress=False)
    rows.append((f"ingest 38 seeds ({r.windows} windows), in-process", f"{time.perf_counter() - t0:.1f} s"))

    # 3. Chroma: embedded vs server (the same index copied into the server)
    q_vectors = [local.get_query_embedding(q) for q in questions]
    chroma_port = free_port()
    chroma_argv = [str(BIN / "chroma"), "run", "--path", str(tmp / "chroma-server"), "--host", "127.0.0.1", "--port",
                   str(chroma_port)]
    with _process(chroma_argv, f"http://127.0.0.1:{chroma_port}/api/v2/heartbeat",
                  {"ANONYMIZED_TELEMETRY": "False"}) as (chroma, _):
        server = Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_port, storage_dir=tmp / "replica-cache")
        src = PaperStore.open_for_read(embedded)
        dst = PaperStore.open_for_write(server, src.info())
        for coll_src, coll_dst in ((src.windows, dst.windows), (src.papers, dst.papers), (src.log, dst.log)):
            got = coll_src.get(include=["embeddings", "metadatas", "documents"])
            coll_dst.add(ids=got["ids"], embeddings=got["embeddings"], metadatas=got["metadatas"],
                         documents=got["documents"])
        for label, settings in (("embedded", embedded), ("server", server)):
            store = PaperStore.open_for_read(settings)
            v_iter = iter(q_vectors * 1000)
            rows.append((f"Chroma query (40 of 297 windows), {label}", "%.1f / %.1f ms" % _timed(
                lambda: store.windows.query(query_embeddings=[next(v_iter)], n_results=40), args.repeats)))
            t0 = time.perf_counter()
            retriever = PaperRetriever.open(settings, local)
            rows.append((f"retriever start-up (open index + catalog; a new replica syncs its catalog), {label}",
                         f"{(time.perf_counter() - t0) * 1000:.0f} ms"))
            r_iter = iter(questions * 1000)
            rows.append((f"retrieve() end to end, {label}",
                         "%.0f / %.0f ms" % _timed(lambda: retriever.retrieve(next(r_iter)), args.repeats)))
        rows.append(("Chroma server process RSS (297 windows)", f"{_rss_mib(chroma.pid):.0f} MiB"))

        # 4. one UI replica against the Chroma server and a scripted LLM endpoint
        if not args.no_ui:
            from tests.support.fake_openai_server import FakeOpenAIServer

            remote_index_settings = Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_port,
                                             embed_base_url="http://x/v1", embed_model=model)
            dst_r = PaperStore.open_for_write(remote_index_settings, StoreInfo(f"remote:{model}", 384, 3))
            for coll_src, coll_dst in ((src.windows, dst_r.windows), (src.papers, dst_r.papers)):
                got = coll_src.get(include=["embeddings", "metadatas", "documents"])
                coll_dst.add(ids=got["ids"], embeddings=got["embeddings"], metadatas=got["metadatas"],
                             documents=got["documents"])
            emb_port = free_port()
            with FakeOpenAIServer(lambda payload: "OK.") as llm, \
                    _process(_embedding_server(emb_port, null=False), f"http://127.0.0.1:{emb_port}/v1/models"):
                base = {"ASSISTANT_CHROMA_HOST": "127.0.0.1", "ASSISTANT_CHROMA_PORT": str(chroma_port),
                        "ASSISTANT_LLM_BASE_URL": llm.base_url}
                for label, extra in (("in-process MiniLM", {}),
                                     ("embedding server",
                                      {"ASSISTANT_EMBED_BASE_URL": f"http://127.0.0.1:{emb_port}/v1",
                                                           "ASSISTANT_EMBED_MODEL": model})):
                    ui_port = free_port()
                    env = {**base, **extra, "ASSISTANT_UI_PORT": str(ui_port)}
                    with _process([sys.executable, "-m", "ui", "--no-ingest"], f"http://127.0.0.1:{ui_port}/", env,
                                  log=tmp / f"ui-{ui_port}.log") as (ui, seconds):
                        time.sleep(5)  # start-up background work (embedding every sentence once) settles
                        rows.append((f"UI replica, {label}: start-up until the page answers / RSS",
                                     f"{seconds:.1f} s / {_rss_mib(ui.pid):.0f} MiB"))
    shutil.rmtree(tmp, ignore_errors=True)

    print("| piece | p50 / p95 (or value) |")
    print("|---|---|")
    for what, value in rows:
        print(f"| {what} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
