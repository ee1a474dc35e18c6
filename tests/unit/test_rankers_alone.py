"""benchmarks/rankers_alone.py (issue 44, item 1): the plain BM25 baseline ranks title + abstract words, and the
tables group rows by a set's ``kind`` field."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from assistant.types import Paper

REPO = Path(__file__).resolve().parents[2]


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("rankers_alone", REPO / "benchmarks" / "rankers_alone.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def paper(pid: str, title: str, text: str) -> Paper:
    return Paper(pid, "Test", title, (), "", text, "t.jsonl", 1)


def test_plain_bm25_ranks_by_title_and_abstract_words() -> None:
    papers = {
        "a": paper("a", "Pruned value networks", "Gradual magnitude pruning helps value-based agents."),
        "b": paper("b", "Electron density operators", "A plane-wave neural operator predicts electron density."),
        "c": paper("c", "Dictionary learning", "Identifiability of overcomplete dictionaries under scattering."),
    }
    bm25 = _module().PlainBM25(papers)
    hits = bm25.retrieve("neural operator for electron density", top_k=3)
    assert [h.paper.id for h in hits][:1] == ["b"]
    assert [h.paper.id for h in bm25.retrieve("pruning value networks", top_k=2)][:1] == ["a"]
    # a query sharing no word with any paper returns nothing rather than arbitrary papers
    assert bm25.retrieve("zebra", top_k=3) == []


def test_kinds_come_from_the_rows_kind_field(tmp_path: Path) -> None:
    rows = [
        {"id": "d1", "type": "paraphrase", "kind": "vague", "question": "q", "gold_ids": ["a"]},
        {"id": "d2", "type": "lookup", "question": "q", "gold_ids": ["b"]},
    ]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    assert _module()._kinds(path) == {"d1": "vague"}
