"""benchmarks/issue43_reader_writer_stress.py's ledger: the 20 rounds in a row are counted across sessions, for
the same code only, and a failure starts the count again."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _benchmark() -> Any:
    spec = importlib.util.spec_from_file_location("stress", REPO / "benchmarks" / "issue43_reader_writer_stress.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_passed_rounds_in_a_row_for_this_code(tmp_path: Path) -> None:
    bench = _benchmark()
    ledger = tmp_path / "campaign.jsonl"
    rows = [
        ("embedded", True, "old"),
        ("embedded", False, "abc"),
        ("embedded", True, "abc"),
        ("server", True, "abc"),
        ("embedded", True, "abc"),
    ]
    ledger.write_text("".join(json.dumps({"variant": v, "ok": ok, "code": c}) + "\n" for v, ok, c in rows))
    assert bench.passed_in_a_row("embedded", "abc", ledger) == 2  # the failure before them ends the run
    assert bench.passed_in_a_row("server", "abc", ledger) == 1
    assert bench.passed_in_a_row("embedded", "new", ledger) == 0  # other code: start again
    assert bench.passed_in_a_row("embedded", "abc", tmp_path / "none.jsonl") == 0
    code = bench.code_hash()
    assert len(code) == 12 and code == bench.code_hash()
