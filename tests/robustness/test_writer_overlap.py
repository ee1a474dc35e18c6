"""Two writers on one index, the way issue 20 broke it: `assistant ingest` and `assistant ingest --rebuild` started
3 s apart, in both orders, as real processes, with the first killed (SIGKILL) at a random, seeded moment or left
to finish. The second is refused at once and changes nothing; the first never finds its collections gone; the
index afterwards holds the papers of a completed run (or, for an ingest killed midway, those plus whole groups
of the interrupted one), Chroma and the catalog agree, `ask` answers, and running the refused command again
completes. Real abstracts (../shared/corpus), real Chroma, the real embedding model."""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.ingest.pipeline import ingest
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.writers import (
    REPLY,
    SEEDS,
    corpus_rows,
    export_ids,
    index_papers,
    run,
    seed_ids,
    start,
    wait_for_lock,
    write_export,
)


def _no_traceback(*streams: str) -> None:
    for text in streams:
        assert "Traceback" not in text and "NotFoundError" not in text, text[-2000:]


@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
@pytest.mark.parametrize(("first", "seed"), [("ingest", 1), ("ingest", 3), ("rebuild", 4)])
# seed 1: the first writer runs to its end (the report's case); 3, 4: it is killed at a random moment
def test_overlapping_ingest_and_rebuild_never_lose_a_completed_run(  # type: ignore[no-untyped-def]
    first: str, seed: int, tmp_path: Path, embed_model
) -> None:
    rng = random.Random(seed)
    settings = Settings().updated(storage_dir=tmp_path / "index")
    a = write_export(tmp_path / "a.jsonl", corpus_rows(0, 20))
    b = write_export(tmp_path / "b.jsonl", corpus_rows(20, 50))
    ingest(settings, [SEEDS, a], embed_model, progress=False)
    base = seed_ids() | export_ids(a)
    assert index_papers(settings, embed_model) == base

    ingest_args = ("ingest", "--no-progress", str(SEEDS), str(a), str(b))  # adds b
    rebuild_args = ("ingest", "--rebuild", "--yes", "--no-progress", str(SEEDS), str(b))  # drops a, adds b
    first_args, second_args = (ingest_args, rebuild_args) if first == "ingest" else (rebuild_args, ingest_args)
    after_first = seed_ids() | export_ids(b) | (export_ids(a) if first == "ingest" else set())

    writer = start(settings, *first_args)
    wait_for_lock(settings, writer)
    time.sleep(rng.uniform(0.0, 3.0))
    refused = run(settings, *second_args)
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.startswith(f"error: Another ingest (pid {writer.pid}) is writing to"), refused.stderr
    assert "nothing was changed" in refused.stderr and refused.stderr.count("\n") == 1 and refused.stdout == ""
    _no_traceback(refused.stderr)

    kill_after = rng.uniform(0.5, 12.0) if seed > 2 else None
    deadline = time.monotonic() + (kill_after if kill_after is not None else 600)
    while writer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    killed = writer.poll() is None
    if killed:
        writer.send_signal(signal.SIGKILL)
    out, err = writer.communicate(timeout=60)
    _no_traceback(err)
    if not killed:
        assert writer.returncode == 0, err[-2000:]

    papers = index_papers(settings, embed_model)  # whole: Chroma and catalog agree, every vector readable
    if not killed:
        assert papers == after_first
    elif first == "rebuild":
        assert papers in (base, after_first)  # the old index whole, or the new one if it had switched
    else:
        assert base <= papers <= after_first  # an ingest keeps the groups it committed; never fewer papers

    again = run(settings, *second_args)  # the refused command now runs and completes
    assert again.returncode == 0, again.stderr[-2000:]
    _no_traceback(again.stderr)
    final = seed_ids() | export_ids(b) | (export_ids(a) if first == "rebuild" else set())
    assert index_papers(settings, embed_model) == final

    with FakeOpenAIServer(lambda payload: REPLY) as llm:
        asked = run(settings, "ask", "--json", "Which paper proposes A-Bench?", "--llm-base-url", llm.base_url)
    assert asked.returncode == 0, asked.stderr[-2000:]
    answer = json.loads(asked.stdout)
    assert answer["citations"] and not answer["abstained"]
