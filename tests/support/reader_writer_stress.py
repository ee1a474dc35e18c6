"""One round of the reader/writer stress test of issue 43: N reader *processes* (tests/support/stress_reader.py:
the chat's answering path, a scripted model) ask questions about seed papers while an `assistant ingest`
process adds a batch of real corpus abstracts to the same index; embedded (one storage folder) or through a
real `chroma run` server. Used by tests/e2e/test_reader_writer_stress.py (one round) and by
benchmarks/issue43_reader_writer_stress.py (20 rounds of 2,000 papers per variant).

A round passes when no reader process crashed (a negative exit code is a signal: -11 a segfault) or failed,
no answer raised, the ingest succeeded, and every answer given during the ingest equals the answer to the same
question asked alone before it (:func:`tests.support.stress_reader.answer_key`: mode, text, cited papers).

Why that equality holds: each question names a seed paper by a name no corpus paper uses (A-Bench, NUPA, SMM,
DUALFormer, MatryoshkaKV, qNBO), so adding corpus papers cannot change which paper answers it, what the
scripted model says or which sentences are checked; the papers *around* it (``sources``) are not compared. The
round checks that premise too: the same questions asked alone after the ingest (2,038 papers) must give the
answers asked alone before it (38 papers); a question that fails that is reported as ``unstable``, apart from
the answers under load.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.config import Settings
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.shared import corpus_rows as all_corpus_rows
from tests.support.writers import REPLY, REPO, SEEDS, env_for, run, start, write_export

#: Questions about seed papers whose answer adding corpus papers cannot change (see the module docstring).
QUESTIONS = [
    "Which paper proposes A-Bench?",
    "Which paper studies the numerical understanding and processing ability (NUPA) of language models?",
    "Which abstract introduces a State Machine Module (SMM)?",
    "What does DUALFormer propose?",
    "What is MatryoshkaKV?",
    "What does the qNBO paper propose?",
]
#: The issue's figures: 3 readers, 2,000 corpus papers per ingest.
READERS = 3
PAPERS = 2000
#: Seconds a reader process gets to open the index and load its models before the ingest starts.
READY_TIMEOUT_S = 300.0


@dataclass
class RoundResult:
    """What one round saw. ``ok`` when nothing below lists a problem and readers answered during the ingest."""

    variant: str
    papers: int
    readers: int
    seconds: float = 0.0
    ingest_seconds: float = 0.0
    answers: int = 0
    during_ingest: int = 0
    crashes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    unstable: list[str] = field(default_factory=list)
    ingest_failure: str = ""
    reader_lock_waits: list[dict[str, Any]] = field(default_factory=list)
    writer_lock_waits: str = ""  # the ingest's own line about its waits for the index lock (embedded)
    answer_seconds: list[float] = field(default_factory=list)
    query_lock_waits: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.crashes or self.errors or self.mismatches or self.unstable or self.ingest_failure
        ) and self.during_ingest >= self.readers

    def line(self) -> str:
        """One line for a log: the verdict and the counts."""
        waits = [w.get("seconds", {}).get("shared", 0.0) for w in self.reader_lock_waits]
        holds = sum(w.get("holds", {}).get("shared", 0) for w in self.reader_lock_waits)
        answer_ms = sorted(self.answer_seconds)
        median = 1000 * answer_ms[len(answer_ms) // 2] if answer_ms else 0.0
        text = (
            f"{'PASS' if self.ok else 'FAIL'} {self.variant}: {self.papers} papers ingested in "
            f"{self.ingest_seconds:.0f} s (round {self.seconds:.0f} s); {self.readers} readers, {self.answers} "
            f"answers ({self.during_ingest} during the ingest, median {median:.0f} ms), {len(self.crashes)} crashes, "
            f"{len(self.errors)} errors, {len(self.mismatches)} answers unlike alone, {len(self.unstable)} unstable "
            f"questions; readers' shared-lock holds {holds}, wait {sum(waits):.2f} s in all"
        )
        if self.writer_lock_waits:
            text += f"; ingest's waits for readers: {self.writer_lock_waits}"
        if self.query_lock_waits:
            q = sorted(self.query_lock_waits)
            text += (
                f"; per-answer lock wait median {1000 * q[len(q) // 2]:.1f} ms, p95 "
                f"{1000 * q[int(0.95 * (len(q) - 1))]:.1f} ms, max {1000 * q[-1]:.0f} ms"
            )
        return text

    def problems(self) -> list[str]:
        """Everything that failed, first few of each kind."""
        out = [f"ingest: {self.ingest_failure}"] if self.ingest_failure else []
        out += [f"crash: {c}" for c in self.crashes[:5]] + [f"error: {e}" for e in self.errors[:5]]
        out += [f"unlike alone: {m}" for m in self.mismatches[:5]] + [f"unstable: {u}" for u in self.unstable[:5]]
        if self.during_ingest < self.readers:
            out.append(f"only {self.during_ingest} answers during the ingest")
        return out


def stress_rows(count: int) -> list[dict[str, Any]]:
    """``count`` real abstracts of ../shared/corpus (files in name order: ICLR 2024 first), leaving out the seed
    papers that are also in the corpus (matched by title: the same paper under another id)."""
    from assistant.ingest.corpus import read_papers

    seed_titles = {p.title.casefold().strip() for p in read_papers([SEEDS])}
    rows: list[dict[str, Any]] = []
    for row in all_corpus_rows():
        if str(row.get("title", "")).casefold().strip() not in seed_titles:
            rows.append(dict(row))
            if len(rows) == count:
                return rows
    raise AssertionError(f"the shared corpus has fewer than {count} abstracts")


def _reader(
    settings: Settings, questions: Path, out: Path, llm: str, *, until: Path | None, offset: int, lock_queries: bool
) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-X", "faulthandler", "-m", "tests.support.stress_reader"]
    args += ["--questions", str(questions), "--out", str(out), "--llm-base-url", llm, "--offset", str(offset)]
    args += ["--until", str(until)] if until else ["--once"]
    args += ["--lock-queries"] if lock_queries else []
    err = out.with_suffix(".err").open("wb")
    return subprocess.Popen(args, cwd=REPO, env=env_for(settings), stdin=subprocess.DEVNULL, stdout=err, stderr=err)


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a crash
            continue
    return out


def _tail(path: Path, n: int = 1500) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else ""


def _alone(settings: Settings, workdir: Path, name: str, questions: Path, llm: str) -> dict[str, Any]:
    """Each question asked once by one reader process, nothing else running: ``{question: answer key}``."""
    out = workdir / f"{name}.jsonl"
    proc = _reader(settings, questions, out, llm, until=None, offset=0, lock_queries=False)
    rc = proc.wait(timeout=600)
    rows = [r for r in _lines(out) if "q" in r]
    failed = [r["error"] for r in rows if "error" in r]
    assert rc == 0 and not failed, f"{name}: exit {rc}, {failed[:2]}\n{_tail(out.with_suffix('.err'))}"
    return {r["q"]: r["answer"] for r in rows}


@contextmanager
def round_settings(workdir: Path, variant: str) -> Iterator[Settings]:
    """Settings of a fresh index for one round: a storage folder (``embedded``) or a new `chroma run` server
    with a local catalog folder (``server``)."""
    if variant == "embedded":
        yield Settings().updated(storage_dir=workdir / "index")
        return
    from tests.support.servers import chroma_server

    (workdir / "chroma").mkdir()
    with chroma_server(workdir / "chroma") as port:
        yield Settings().updated(chroma_host="127.0.0.1", chroma_port=port, storage_dir=workdir / "replica")


def run_round(
    workdir: Path,
    variant: str,
    *,
    papers: int = PAPERS,
    readers: int = READERS,
    questions: list[str] | None = None,
    lock_queries: bool = False,
    log: Callable[[str], None] = print,
) -> RoundResult:
    """One round in ``workdir`` (an empty folder; kept for inspection): seed the index with the 38 seed papers,
    ask every question alone, start ``readers`` reader processes, then an `assistant ingest` of ``papers``
    corpus abstracts in another process; stop the readers when it ends, ask alone again, compare.

    Args:
        variant: ``embedded`` or ``server`` (a real `chroma run` server started for the round).
        lock_queries: readers hold the index lock shared around each answer (a measurement, see stress_reader).
        log: where progress lines go.

    Returns:
        the round's :class:`RoundResult` (never raises for what it measures; setup failures raise).
    """
    t_round = time.monotonic()
    questions = questions or QUESTIONS
    result = RoundResult(variant, papers, readers)
    qfile = workdir / "questions.json"
    qfile.write_text(json.dumps(questions), encoding="utf-8")
    batch = write_export(workdir / "batch.jsonl", stress_rows(papers))
    with round_settings(workdir, variant) as settings, FakeOpenAIServer(lambda payload: REPLY) as llm:
        seeded = run(settings, "ingest", "--no-progress", str(SEEDS), timeout=600)
        assert seeded.returncode == 0, seeded.stderr[-2000:]
        before = _alone(settings, workdir, "alone-before", qfile, llm.base_url)
        stop = workdir / "stop"
        outs = [workdir / f"reader-{k}.jsonl" for k in range(readers)]
        procs = [
            _reader(settings, qfile, out, llm.base_url, until=stop, offset=k, lock_queries=lock_queries)
            for k, out in enumerate(outs)
        ]
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not all(_lines(o) for o in outs) and time.monotonic() < deadline:
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.2)
        log(f"[{variant}] {readers} readers ready; ingesting {papers} papers")
        t0 = time.monotonic()
        started = time.time()
        writer = start(settings, "ingest", "--no-progress", "--verbose", str(batch))  # INFO: its lock waits
        _, err = writer.communicate(timeout=7200)
        ended = time.time()
        result.ingest_seconds = time.monotonic() - t0
        if writer.returncode != 0 or "Traceback" in err:
            result.ingest_failure = f"exit {writer.returncode}: {err[-1500:]}"
        marker = "index lock (writes, this process): "
        waits = [line.split(marker, 1)[1] for line in err.splitlines() if marker in line]
        result.writer_lock_waits = waits[-1] if waits else "" if settings.storage.chroma_host else "no write waited"
        stop.touch()
        for k, (p, out) in enumerate(zip(procs, outs)):
            try:
                rc = p.wait(timeout=600)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
                result.errors.append(f"reader {k} did not stop within 600 s")
            if rc != 0:
                result.crashes.append(f"reader {k}: exit {rc}\n{_tail(out.with_suffix('.err'))}")
        after = _alone(settings, workdir, "alone-after", qfile, llm.base_url)
    for k, out in enumerate(outs):
        for row in _lines(out):
            if "waits" in row:
                result.reader_lock_waits.append(row["waits"])
            if "q" not in row:
                continue
            result.answers += 1
            result.answer_seconds.append(row["t1"] - row["t0"])
            if "lock_wait" in row:
                result.query_lock_waits.append(row["lock_wait"])
            result.during_ingest += row["t0"] < ended and row["t1"] > started
            if "error" in row:
                result.errors.append(f"reader {k}: {row['q']}: {row['error']}")
            elif row["answer"] != before.get(row["q"]):
                result.mismatches.append(f"reader {k}: {row['q']}: {row['answer']} != {before.get(row['q'])}")
    result.unstable = [f"{q}: {before.get(q)} -> {after.get(q)}" for q in questions if before.get(q) != after.get(q)]
    result.seconds = time.monotonic() - t_round
    return result
