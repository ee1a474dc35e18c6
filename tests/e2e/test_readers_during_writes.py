"""Readers never fail because another process writes (issue 20): three conversations in one reader process (the
UI's answering path, one thread each, scripted LLM) plus separate `assistant ask` processes keep answering while
another process ingests 400 real abstracts, deletes papers and rebuilds the index; embedded (chroma issue #3792:
an embedded client does not see another process's vectors) and against a real `chroma run` server. Every answer
is counted: 0 errors; every question about an old paper finds it; a new paper is found within seconds of its
ingest ending."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.ingest.pipeline import ingest
from assistant.llm.client import OpenAIChatBackend
from assistant.service import build_assistant
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.servers import chroma_server as run_chroma_server
from tests.support.writers import REPLY, SEEDS, corpus_rows, export_ids, run, start, write_export

OLD = [  # questions about seed papers, with the paper each must find
    ("Which paper proposes A-Bench?", "000_43469673d6f8aaa0.txt#8"),
    (
        "Which paper studies the numerical understanding and processing ability (NUPA) of language models?",
        "004_c45bebc30e22eceb.txt#6",
    ),
    ("Which abstract introduces a State Machine Module (SMM)?", "000_43469673d6f8aaa0.txt#2"),
]
#: Seconds after a write ends within which every reader must see it.
VISIBLE_WITHIN_S = 5.0


@dataclass
class Result:
    started: float
    kind: str  # "old" | "new"
    found: bool
    error: str = ""


def _conversation(assistant, questions: list[tuple[str, str, str]], stop: threading.Event, out: list[Result]) -> None:  # type: ignore[no-untyped-def]
    session = assistant.new_session()
    i = 0
    while not stop.is_set():
        question, expected, kind = questions[i % len(questions)]
        i += 1
        t0 = time.monotonic()
        try:
            answer = session.ask(question)
            found = expected in [s.paper.id for s in answer.sources]
            error = answer.notice if "went wrong" in answer.notice else ""
        except Exception as e:  # noqa: BLE001 - every failure is counted
            found, error = False, f"{type(e).__name__}: {e}"
        out.append(Result(t0, kind, found, error))


def _readers_during(  # type: ignore[no-untyped-def]
    settings: Settings,
    embed_model,
    sentence_embedder,
    writes: list[tuple[str, ...]],
    new: list[tuple[str, str]],
) -> None:
    """Run ``writes`` (assistant command lines) one after the other in another process while 3 conversations
    and a stream of `ask` processes ask about old papers and the ``new`` ones ((question, id)); then assert."""
    questions = [(q, pid, "old") for q, pid in OLD]
    for k, (q, pid) in enumerate(new):  # old and new questions interleaved
        questions.insert(2 * k + 1, (q, pid, "new"))
    results: list[Result] = []
    asks: list[tuple[str, int, str]] = []
    ingest_ended = float("inf")
    phases: list[tuple[str, float, float]] = []  # (write, start, end)
    with FakeOpenAIServer(lambda payload: REPLY) as llm:
        backend = OpenAIChatBackend(llm.base_url, "k", "scripted", timeout_s=30)
        with build_assistant(
            settings, embed_model=embed_model, backend=backend, sentence_embedder=sentence_embedder
        ) as assistant:
            stop = threading.Event()
            threads = [
                threading.Thread(target=_conversation, args=(assistant, questions[k:] + questions[:k], stop, results))
                for k in range(3)
            ]
            for t in threads:
                t.start()
            try:
                for n, args in enumerate(writes):
                    started = time.monotonic()
                    writer = start(settings, *args)
                    k = 0
                    while writer.poll() is None:  # `ask` processes, one after the other, while it writes
                        q, _, _ = questions[k % len(questions)]
                        k += 1
                        done = run(settings, "ask", "--json", q, "--llm-base-url", llm.base_url)
                        asks.append((q, done.returncode, done.stderr[-1500:]))
                    out, err = writer.communicate()
                    assert writer.returncode == 0, err[-2000:]
                    assert "Traceback" not in err
                    phases.append((args[0] + (" --rebuild" if "--rebuild" in args else ""), started, time.monotonic()))
                    if n == 0:
                        ingest_ended = time.monotonic()
                time.sleep(VISIBLE_WITHIN_S + 4)  # readers keep asking after the last write
            finally:
                stop.set()
                for t in threads:
                    t.join(timeout=120)
    errors = [r.error for r in results if r.error]
    new_found = sum(r.found for r in results if r.kind == "new")
    print(
        f"{len(results)} answers in 3 conversations ({len(errors)} failed; new papers found in {new_found} of "
        f"{sum(r.kind == 'new' for r in results)}), {len(asks)} ask processes ({sum(rc != 0 for _, rc, _ in asks)} "
        f"failed)"
    )
    assert not errors, f"{len(errors)} of {len(results)} answers failed: {errors[:3]}"
    assert all(rc == 0 and "error" not in err.lower() for _, rc, err in asks), [a for a in asks if a[1] != 0][:3]
    assert len(asks) >= 2 and len(results) >= 30
    old = [r for r in results if r.kind == "old"]
    assert old and all(r.found for r in old), f"{sum(not r.found for r in old)} of {len(old)} old papers not found"
    late = [r for r in results if r.kind == "new" and r.started > ingest_ended + VISIBLE_WITHIN_S]
    missed = [(r.started, [w for w, t0, t1 in phases if t0 <= r.started <= t1]) for r in late if not r.found]
    rebuilding = [(t0, t1) for w, t0, t1 in phases if w.endswith("--rebuild")]
    outside = [m for m in missed if not any(t0 <= m[0] <= t1 + 1 for t0, t1 in rebuilding)]
    # a new paper is found by every question asked after its ingest (while a rebuild switches, by 99 % of them)
    assert late and not outside and len(missed) <= len(late) // 100, (
        f"{len(missed)} of {len(late)} missed: {missed[:5]}"
    )


def _new_questions(rows: list[dict]) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(f"What does the paper '{r['title']}' propose?", r["id"]) for r in rows]


@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
def test_embedded_readers_keep_answering_during_ingest_delete_and_rebuild(  # type: ignore[no-untyped-def]
    tmp_path: Path,
    embed_model,
    sentence_embedder,
) -> None:
    settings = Settings().updated(storage_dir=tmp_path / "index")
    ingest(settings, [SEEDS], embed_model, progress=False)
    rows = corpus_rows(200, 400)
    batch = write_export(tmp_path / "batch.jsonl", rows)
    kept = write_export(tmp_path / "kept.jsonl", rows[:40])
    doomed = sorted(export_ids(batch) - export_ids(kept))[:5]
    _readers_during(
        settings,
        embed_model,
        sentence_embedder,
        [
            ("ingest", "--no-progress", str(batch)),  # 400 new papers
            ("delete", *doomed),  # 5 of them again
            ("ingest", "--rebuild", "--yes", "--no-progress", str(SEEDS), str(kept)),  # drops 355, keeps 40
        ],
        _new_questions(rows[:12]),
    )


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with run_chroma_server(tmp_path_factory.mktemp("chroma-readers")) as port:
        yield port


@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
def test_server_readers_keep_answering_during_ingest_and_rebuild(  # type: ignore[no-untyped-def]
    chroma_server: int,
    tmp_path: Path,
    embed_model,
    sentence_embedder,
) -> None:
    settings = Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_server, storage_dir=tmp_path / "replica")
    ingest(settings, [SEEDS], embed_model, progress=False)
    rows = corpus_rows(700, 100)
    batch = write_export(tmp_path / "batch.jsonl", rows)
    kept = write_export(tmp_path / "kept.jsonl", rows[:20])
    _readers_during(
        settings,
        embed_model,
        sentence_embedder,
        [
            ("ingest", "--no-progress", str(batch)),
            ("ingest", "--rebuild", "--yes", "--no-progress", str(SEEDS), str(kept)),
        ],
        _new_questions(rows[:8]),
    )
