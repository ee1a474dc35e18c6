"""Issue 23, part 3, through the real pipeline (real Chroma, the bundled MiniLM, the SQLite catalog) on an
export of invented non-ML abstracts (tests/fixtures/own_export): "not stated" is decided over every sentence
of the abstract, a false number premise is named, and a detail no sentence states is an honest abstention
that cites nothing (eval/README.md "Scoring"). No language model: the model endpoint is unreachable, so
every answer here is decided or built by code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.ingest.pipeline import ingest
from assistant.service import Assistant, build_assistant

EXPORT = Path(__file__).resolve().parent.parent / "fixtures" / "own_export" / "own_export.jsonl"


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory, embed_model) -> Iterator[Assistant]:  # type: ignore[no-untyped-def]
    settings = Settings().updated(
        storage_dir=tmp_path_factory.mktemp("own-export"), llm_base_url="http://127.0.0.1:9/v1", llm_timeout_s=2
    )
    ingest(settings, [EXPORT], embed_model, progress=False)
    with build_assistant(settings, embed_model=embed_model, start_llm=False) as a:
        yield a


def test_a_count_stated_in_a_later_sentence_is_found(assistant: Assistant) -> None:
    # before: "not stated ... gives no number for “sparrow…”" while quoting "We recorded 412 males"
    answer = assistant.ask("How many male sparrows were recorded?")
    assert not answer.abstained, answer.notice
    assert "412" in answer.text
    assert [c.paper.id for c in answer.citations] == ["birds-1"]


def test_a_number_the_abstract_does_not_state_is_named_as_a_false_premise(assistant: Assistant) -> None:
    # before: the abstract's sentences were quoted and nothing said "no"
    answer = assistant.ask("The sparrow paper reports 20%, right?")
    assert answer.notice.startswith("No — the abstract of “Urban Noise Reshapes Song"), answer.notice
    assert "12%" in answer.notice and "not 20%" in answer.notice
    assert "12%" in answer.text and [c.paper.id for c in answer.citations] == ["birds-1"]


def test_a_number_the_abstract_states_is_not_a_false_premise(assistant: Assistant) -> None:
    answer = assistant.ask("The cathode paper keeps 91% of capacity, right?")
    assert not answer.notice.startswith("No"), answer.notice
    assert "91%" in answer.text


def test_a_detail_no_sentence_states_is_an_honest_abstention_citing_nothing(assistant: Assistant) -> None:
    # before: two on-topic sentences of the sparrow abstract were quoted, cited, as if they answered
    answer = assistant.ask("What microphone did the sparrow study record with?")
    assert answer.mode == "not_stated" and answer.abstained
    assert answer.citations == ()
    assert "Urban Noise Reshapes Song in White-crowned Sparrows" in answer.notice
    assert "“microphone”" in answer.notice
    assert "shown as context only" in answer.notice


def test_a_follow_up_about_a_detail_not_stated_abstains(assistant: Assistant) -> None:
    session = assistant.new_session()
    first = session.ask("Which paper is about heat stress in corals?")
    assert [c.paper.id for c in first.citations][:1] == ["coral-1"]
    answer = session.ask("does it work for sponges too?")
    assert answer.mode == "not_stated" and answer.citations == (), answer.text
    assert "“sponges”" in answer.notice


def test_a_follow_up_the_abstract_answers_in_other_words_is_answered(assistant: Assistant) -> None:
    session = assistant.new_session()
    session.ask("Which paper is about heat stress in corals?")
    answer = session.ask("Did primed fragments keep more symbiotic algae?")
    assert not answer.abstained, answer.notice
    assert [c.paper.id for c in answer.citations] == ["coral-1"]


def test_a_near_miss_says_what_matches_and_what_does_not(assistant: Assistant) -> None:
    # before: "The paper is “Urban Noise …”" with no word that the abstract is about sparrows, not parrots
    answer = assistant.ask("Which paper shows that urban noise shifts the song frequency of parrots?")
    assert [c.paper.id for c in answer.citations][:1] == ["birds-1"]
    assert "Closest match only: “Urban Noise Reshapes Song" in answer.notice, answer.notice
    assert "does not mention “parrots”" in answer.notice
    assert answer.text.startswith("The closest match in the abstracts is")
    exact = assistant.ask("Which paper shows that urban noise shifts the song frequency of sparrows?")
    assert "Closest match only" not in exact.notice, exact.notice
