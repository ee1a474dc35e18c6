"""Readers never crash while another process writes (issue 43): 3 reader *processes* (the chat's answering path,
a scripted model) ask questions about seed papers while an `assistant ingest` process adds real corpus abstracts
to the same index, embedded (Chroma's Rust layer segfaulted in ``Collection.count()`` of
``PaperRetriever._reopen`` when a reader loaded the vector files the writer was rewriting) and through a real
`chroma run` server. Zero crashes (a reader's negative exit code), zero errors, and every answer under load
equal to the same question's answer alone (tests/support/reader_writer_stress.py says which equality and why).

Sizes: ``ISSUE43_ROUNDS`` rounds (default 1 here) of ``ISSUE43_PAPERS`` papers (default 400 here, which keeps CI
under 45 minutes; the issue's 2,000 is the default of benchmarks/issue43_reader_writer_stress.py, which runs 20
rounds of both variants and writes its log under docs/results/issue43/). ``ISSUE43_ROUNDS=20 ISSUE43_PAPERS=2000``
runs the issue's full test here too.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.reader_writer_stress import READERS, run_round

ROUNDS = int(os.environ.get("ISSUE43_ROUNDS", "1"))
PAPERS = int(os.environ.get("ISSUE43_PAPERS", "400"))


@pytest.mark.slow  # 1.5 to 3.5 minutes a variant at 400 papers on 2 cores: ./scripts/test.sh --all (CI)
@pytest.mark.parametrize("variant", ["embedded", "server"])
def test_readers_never_crash_and_answer_as_alone_while_another_process_ingests(variant: str, tmp_path: Path) -> None:
    for n in range(1, ROUNDS + 1):
        work = tmp_path / f"round-{n}"
        work.mkdir()
        result = run_round(work, variant, papers=PAPERS, readers=READERS)
        print(f"round {n}/{ROUNDS}: {result.line()}")
        assert result.ok, f"round {n} of {ROUNDS}: " + "\n".join(result.problems())
