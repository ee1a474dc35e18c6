"""The turn resolver's candidate features (assistant/conversation/turn_features.py, issue 42) on the seed index:
the exact ones point where the question points, and the replay helper leaves the history a correct answer would."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from assistant.conversation.turn_features import FEATURES, choose, record_oracle_turn, shared_run, turn_candidates
from assistant.understand.parse import parse_question
from tests.support.fake_openai_server import FakeOpenAIServer

A_BENCH = "000_43469673d6f8aaa0.txt#8"
NUMBER_COOKBOOK = "004_c45bebc30e22eceb.txt#6"


@pytest.fixture
def assistant(scripted_assistant):  # type: ignore[no-untyped-def]
    with FakeOpenAIServer(["unused"]) as server, scripted_assistant(server) as built:
        yield built


def _features(assistant: Any, session: Any, question: str) -> dict[str, dict[str, float]]:
    cands = turn_candidates(
        parse_question(question), session, assistant.retriever, assistant.settings.retrieval.min_similarity
    )
    assert cands.matrix.shape == (len(cands.ids), len(FEATURES)) and cands.matrix.dtype == np.float32
    return {pid: dict(zip(FEATURES, map(float, row))) for pid, row in zip(cands.ids, cands.matrix)}


def test_a_first_question_naming_a_paper(assistant: Any) -> None:
    session = assistant.new_session()
    feats = _features(assistant, session, "Which paper introduces A-Bench?")
    assert feats[A_BENCH]["named"] == 1.0 and feats[A_BENCH]["first_turn"] == 1.0
    assert all(f["in_conversation"] == 0.0 for f in feats.values())


def test_an_ordinal_points_at_the_listed_paper(assistant: Any) -> None:
    session = assistant.new_session()
    papers = assistant.retriever.papers
    shown = [papers[A_BENCH], papers[NUMBER_COOKBOOK]]
    record_oracle_turn(session, "compare A-Bench and the Number Cookbook", "q", shown)
    assert session.shown() == [(A_BENCH, NUMBER_COOKBOOK)] and session.labels == {A_BENCH: 1, NUMBER_COOKBOOK: 2}
    feats = _features(assistant, session, "what does the second one evaluate?")
    assert feats[NUMBER_COOKBOOK]["ordinal_points_here"] == 1.0 and feats[A_BENCH]["ordinal_points_here"] == 0.0
    assert feats[A_BENCH]["in_list"] == feats[NUMBER_COOKBOOK]["in_latest"] == 1.0
    assert feats[A_BENCH]["list_position"] == 1.0 and feats[NUMBER_COOKBOOK]["list_position"] == 0.5  # "that one"
    labelled = _features(assistant, session, "and what does [1] find?")
    assert labelled[A_BENCH]["label_points_here"] == 1.0 and labelled[NUMBER_COOKBOOK]["label_points_here"] == 0.0


def test_choose_keeps_candidate_order() -> None:
    assert choose(["a", "b", "c"], [0.9, 0.2, 0.7]) == ["a", "c"] and choose(["a"], [0.1]) == []


def test_ordinals_in_the_order_the_turns_took_the_papers_up(assistant: Any) -> None:
    """ "The first" after two one-paper turns is the first paper discussed: by label and by turn order."""
    session = assistant.new_session()
    papers = assistant.retriever.papers
    record_oracle_turn(session, "what is A-Bench?", "q", [papers[A_BENCH]])
    record_oracle_turn(session, "and the Number Cookbook?", "q", [papers[NUMBER_COOKBOOK]])
    feats = _features(assistant, session, "compare the first and the second on their data")
    for pid in (A_BENCH, NUMBER_COOKBOOK):
        assert feats[pid]["ordinal_label_here"] == feats[pid]["ordinal_turn_order_here"] == 1.0
        assert feats[pid]["ordinal_points_here"] == 0.0  # no answer listed both
    first = _features(assistant, session, "back to the first one: what does it find?")
    assert first[A_BENCH]["ordinal_turn_order_here"] == 1.0 and first[NUMBER_COOKBOOK]["ordinal_turn_order_here"] == 0.0


def test_a_pasted_passage_shares_its_whole_run_with_its_paper_only(assistant: Any) -> None:
    papers = assistant.retriever.papers
    words = papers[NUMBER_COOKBOOK].text.split()[5:25]
    session = assistant.new_session()
    record_oracle_turn(session, "what is A-Bench?", "q", [papers[A_BENCH]])
    feats = _features(assistant, session, f"which paper is this from? \"{' '.join(words)}\"")
    assert feats[NUMBER_COOKBOOK]["pasted_run"] == 1.0 and feats[NUMBER_COOKBOOK]["pasted_share"] > 0.6
    assert feats[A_BENCH]["pasted_run"] < 0.5


def test_shared_run_counts_consecutive_words() -> None:
    assert shared_run("a b c d".split(), "x a b c y d".split()) == 3
    assert shared_run("a b".split(), "c d".split()) == 0 and shared_run([], ["a"]) == 0


def test_a_keyword_description_leads_paper_bm25(assistant: Any) -> None:
    """"the numbers one" style descriptions: the paper whose title and abstract share the question's rare words gets
    BM25 share 1 and a positive margin, and one sentence of a two-sentence question is enough."""
    session = assistant.new_session()
    record_oracle_turn(session, "what is A-Bench?", "q", [assistant.retriever.papers[A_BENCH]])
    feats = _features(assistant, session, "There's also one about number understanding of LLMs. What does it test?")
    cookbook = feats[NUMBER_COOKBOOK]
    assert cookbook["bm25_sentence_share"] == 1.0 and cookbook["bm25_margin"] > 0
    assert feats[A_BENCH]["bm25_sentence_share"] < 1.0 and feats[A_BENCH]["bm25_margin"] < 0
    assert all(0.0 <= f["bm25_share"] <= 1.0 for f in feats.values())
