"""scripts/generate_conversations.py (issue 42, item 4): seeded conversations whose every turn says which papers
it means, with each kind's precondition held and descriptions that do not give the paper's name."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from assistant.ingest.corpus import read_papers

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generator() -> Any:
    path = REPO / "scripts" / "generate_conversations.py"
    spec = importlib.util.spec_from_file_location("generate_conversations", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_conversations"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def conversations(generator: Any) -> list[dict[str, Any]]:
    return generator.generate(read_papers([REPO / "seeds"]), 120, seed=7)


def test_same_seed_same_conversations(generator: Any, conversations: list[dict[str, Any]]) -> None:
    assert generator.generate(read_papers([REPO / "seeds"]), 120, seed=7) == conversations
    assert generator.generate(read_papers([REPO / "seeds"]), 120, seed=8) != conversations


def test_every_turn_names_known_papers_and_every_kind_occurs(generator: Any, conversations: list[Any]) -> None:
    ids = {p.id for p in read_papers([REPO / "seeds"])}
    kinds = {t["kind"] for c in conversations for t in c["turns"]}
    assert kinds == set(generator.KINDS)
    for c in conversations:
        assert c["turns"][0]["kind"] == "first"
        for t in c["turns"]:
            assert set(t["gold_ids"]) <= ids and set(t["shown_ids"]) <= ids
            assert t["gold_ids"] or t["kind"] == "unanswerable" or t["kind"] == "pronoun"
            assert len(t["gold_ids"]) >= 2 or t["kind"] not in ("compare", "which_of_them")


def test_preconditions_hold(conversations: list[dict[str, Any]]) -> None:
    """An ordinal points into the latest answer when it showed several papers, else at the papers in the order
    the conversation first showed them ("the first" is the first paper shown); a switch goes to a paper named
    without its name; a pasted turn holds a sentence of its paper's abstract (as shown, markup aside)."""
    papers = {p.id: p for p in read_papers([REPO / "seeds"])}
    ordinals = 0
    for c in conversations:
        latest: list[str] = []
        discussed: list[str] = []
        for t in c["turns"]:
            if t["kind"] == "ordinal":
                ordinals += 1
                order = latest if len(latest) >= 2 else discussed
                word = next((w for w in ("first", "second", "third") if w in t["question"].lower()), None)
                if word is not None:  # None: chat noise put a typo into the ordinal
                    assert t["gold_ids"][0] == order[("first", "second", "third").index(word)], t["question"]
            if t["kind"] == "switch":
                head, _, rest = papers[t["gold_ids"][0]].title.partition(":")
                assert not rest or head.strip().lower() not in t["question"].lower() or len(head.split()) > 2
            if t["shown_ids"]:
                latest = t["shown_ids"]
            discussed += [pid for pid in t["shown_ids"] if pid not in discussed]
    assert ordinals
    pasted = [t for c in conversations for t in c["turns"] if t["kind"] == "pasted"]
    assert pasted
    for t in pasted:
        words = [w for w in t["question"].lower().split() if w.isalpha() and len(w) > 6][:5]
        assert all(w in papers[t["gold_ids"][0]].text.lower() for w in words), t["question"]
