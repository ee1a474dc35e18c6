"""Topic lists a researcher can scan (issue 27, item 3): a count, one page of the closest papers, the next page
on request (``Page`` / "show more"), narrowing by venue words and author read from the index's metadata.
Real Chroma index of the seeds + the 45 real corpus papers of eval/claims-corpus-papers.jsonl (venues
"ICLR 2024 Poster", "ICML 2024 Oral", "NeurIPS 2024", ...), real embeddings; no model is asked for topics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant.answer.render import answer_to_dict, answer_to_text
from assistant.types import Page
from tests.support.fake_openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
TOPIC = "Which papers are about graph neural networks?"


@pytest.fixture(scope="module")
def mixed_settings(tmp_path_factory: pytest.TempPathFactory, embed_model: Any) -> Any:
    from assistant.config import Settings
    from assistant.ingest.pipeline import ingest

    settings = Settings().updated(storage_dir=tmp_path_factory.mktemp("mixed"))
    ingest(settings, [REPO / "seeds", REPO / "eval" / "claims-corpus-papers.jsonl"], embed_model, progress=False)
    return settings


@pytest.fixture
def listing_assistant(scripted_assistant: Any, mixed_settings: Any) -> Any:
    with FakeOpenAIServer([]) as server, scripted_assistant(server, settings=mixed_settings) as assistant:
        yield assistant
        assert server.requests == []  # topic lists are built by code


def _ids(answer: Any) -> list[str]:
    return [c.paper.id for c in answer.citations]


def test_a_listing_counts_the_matches_and_pages_through_them(listing_assistant: Any) -> None:
    everything = listing_assistant.ask(TOPIC, intent="topic", page=Page(0, 50))
    total = everything.listing.total
    assert total >= 4 and everything.listing.shown == total and not everything.listing.has_more
    first = listing_assistant.ask(TOPIC, intent="topic", page=Page(0, 2))
    second = listing_assistant.ask(TOPIC, intent="topic", page=Page(2, 2))
    assert first.listing.total == second.listing.total == total
    assert len(_ids(first)) == 2 and len(_ids(second)) == 2 and not set(_ids(first)) & set(_ids(second))
    assert _ids(first) + _ids(second) == _ids(everything)[:4]  # pages are slices of one ranking
    data = answer_to_dict(first)
    assert data["listing"] == {
        "total": total,
        "offset": 0,
        "shown": 2,
        "limit": 2,
        "next_offset": 2,
        "venue": "",
        "author": "",
        "links_code": False,
    }
    text = answer_to_text(first)
    assert text.startswith(f"{total} papers match; showing the 2 closest.") and "--offset 2" in text


def test_a_page_past_the_end_says_so_and_cites_nothing(listing_assistant: Any) -> None:
    answer = listing_assistant.ask(TOPIC, intent="topic", page=Page(500, 10))
    assert not answer.citations and answer.listing.shown == 0
    assert f"Only {answer.listing.total} papers match" in answer.notice


def test_narrowing_by_venue_words_keeps_only_those_venues(listing_assistant: Any) -> None:
    answer = listing_assistant.ask("Which ICLR 2024 papers are about graph neural networks?", intent="topic")
    assert answer.listing.venue == "ICLR 2024" and answer.citations
    assert all(c.paper.venue.startswith("ICLR 2024") for c in answer.citations)
    orals = listing_assistant.ask("Which papers are about language models? orals only", intent="topic")
    assert orals.listing.venue.lower() == "orals"
    assert orals.citations and all(c.paper.venue.endswith("Oral") for c in orals.citations)


def test_narrowing_by_author(listing_assistant: Any) -> None:
    answer = listing_assistant.ask("Which papers by Micah Goldblum are about language models?", intent="topic")
    assert answer.listing.author == "Micah Goldblum" and answer.citations
    assert all("Micah Goldblum" in c.paper.authors for c in answer.citations)


def test_show_more_in_a_conversation_continues_the_listing(listing_assistant: Any) -> None:
    session = listing_assistant.new_session()
    first = session.ask(TOPIC, intent="topic", page=Page(0, 2))
    more = session.ask("show more")
    assert more.intent == "topic" and more.listing.offset == 2 and more.listing.total == first.listing.total
    assert not {c.paper.id for c in more.citations} & {c.paper.id for c in first.citations}
    assert min(c.n for c in more.citations) == 3  # conversation labels go on from the first page
    again = session.ask("more please")
    assert again.listing.offset == 2 + more.listing.shown or not more.listing.has_more


def test_show_more_goes_on_after_the_conversation_is_saved_and_restored(listing_assistant: Any, tmp_path: Path) -> None:
    session = listing_assistant.new_session()
    first = session.ask(TOPIC, intent="topic", page=Page(0, 2))
    session.save(tmp_path / "chat.json")
    restored = listing_assistant.new_session()
    restored.load(tmp_path / "chat.json")
    assert restored.turns[-1].answer.listing == first.listing
    more = restored.ask("show more")
    assert more.listing.offset == 2 and not {c.paper.id for c in more.citations} & {c.paper.id for c in first.citations}


def test_an_empty_list_names_the_near_papers_it_left_out(listing_assistant: Any) -> None:
    """Issue 45: "An empty list names the near papers that were considered and why they were left out. Never an
    empty answer text." (Before, the answer text was empty: only a note, and no paper.) The near papers are quoted
    by their closest sentence and cited, the count line and the note say they were left out, and the list itself
    is empty (nothing to page, and evaluation counts nothing as listed)."""
    from assistant.eval.evaluation import EvalItem, score_answer

    answer = listing_assistant.ask("anything with a medical or clinical angle?", intent="topic")
    assert answer.listing is not None and answer.listing.total == 0 and not answer.listing.has_more
    assert answer.text.strip() and 1 <= len(answer.citations) <= 5
    assert all(s.citations for s in answer.sentences)
    assert "left out" in answer.notice
    text = answer_to_text(answer)
    assert text.startswith("No paper matches closely enough to list") and "left out" in text
    from assistant.api.chat import render_answer

    assert render_answer(answer).text.startswith("No paper matches closely enough to list")  # /v1 and MCP say it first
    session = listing_assistant.new_session()
    session.ask("anything with a medical or clinical angle?")
    more = session.ask("show more")  # nothing to page: and the near papers are not called matches
    assert more.text.startswith("There is nothing more: no paper matched") and "not matches" in more.text
    item = EvalItem("x", "topic", (answer.question,), (answer.citations[0].paper.id,), ())
    assert score_answer(item, answer, [], (1,))["metrics"]["citation_recall"] == 0.0  # the near papers: not a list


def test_a_list_whose_members_fill_the_scanned_window_scans_further(
    tmp_path_factory: pytest.TempPathFactory, embed_model: Any, scripted_assistant: Any
) -> None:
    """Issue 45 item 3 ("the count is true"): over a conference a broad topic has more members than the 60 candidates
    a list scans; when members reach the end of the window the list scans twice as many (up to
    ``tuning.TOPIC_CANDIDATES_MAX``) instead of stopping at 60. 150 papers on graph neural networks: the count
    goes past the first window."""
    from assistant.config import Settings
    from assistant.ingest.pipeline import ingest
    from assistant.tuning import TOPIC_CANDIDATES_MAX

    tasks = ["node classification", "link prediction", "graph classification", "molecule property prediction",
             "traffic forecasting", "recommendation", "community detection", "knowledge graph completion",
             "point cloud segmentation", "program analysis"]
    ideas = ["attention over neighbours", "spectral filters", "message passing with edge features",
             "positional encodings", "hierarchical pooling", "contrastive pre-training", "implicit layers",
             "rewiring to fight over-squashing", "sparse mixture of experts", "curriculum sampling",
             "heterophily-aware aggregation", "adaptive depth", "random features", "subgraph sampling", "distillation"]
    rows = []
    for i in range(150):
        task, idea = tasks[i % len(tasks)], ideas[i // len(tasks)]
        rows.append({
            "id": f"gnn-{i}", "title": f"A Graph Neural Network with {idea.title()} for {task.title()}",
            "authors": [f"Author {i}"], "url": f"https://example.org/gnn-{i}", "venue": "Planted 2025",
            "abstract": f"We propose a graph neural network for {task} that uses {idea}. "
                        f"Our graph neural network improves {task} accuracy on standard graph benchmarks.",
        })
    corpus = tmp_path_factory.mktemp("gnn") / "gnn.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    settings = Settings().updated(storage_dir=tmp_path_factory.mktemp("gnn-index"))
    ingest(settings, [corpus], embed_model, progress=False)
    with FakeOpenAIServer([]) as server, scripted_assistant(server, settings=settings) as assistant:
        answer = assistant.ask(TOPIC, intent="topic", page=Page(0, 10))
    window = settings.answer.topic_candidates
    assert window < answer.listing.total <= TOPIC_CANDIDATES_MAX, answer.listing
    assert answer.listing.shown == 10 and answer.listing.has_more


@pytest.mark.parametrize(("venue", "title"), [("ICLR 2024", "Rayleigh Quotient"), ("ICML 2024", "Enhancing Size")])
def test_a_lookup_naming_a_venue_searches_only_that_venue(listing_assistant: Any, venue: str, title: str) -> None:
    """Issue 44 item 5: "the ICML 2024 paper on ..." finds that venue's paper among papers on the same subject in
    other venues (graph neural networks: Rayleigh Quotient GNNs, ICLR 2024; size generalization, ICML 2024; seed
    papers, ICLR 2025, which rank first unnarrowed); the questions differ only in the venue words, so only narrowing
    ranks each venue's paper first."""
    from assistant.answer.strategy import one_paper_search
    from assistant.eval.evaluation import EvalItem, evaluate_retrieval

    question = f"What does the {venue} paper on graph neural networks propose?"
    hits = one_paper_search(listing_assistant.retriever, question, question)
    assert hits and hits[0].paper.title.startswith(title)
    assert all(h.paper.venue.startswith(venue) for h in hits)
    # the retrieval eval ranks a lookup as the product searches it
    item = EvalItem("v1", "lookup", (question,), (hits[0].paper.id,), ())
    assert evaluate_retrieval(listing_assistant.retriever, [item], (1,))["overall"]["recall@1"] == 1.0


def test_a_year_narrows_only_as_a_papers_year_and_every_venue_name_narrows(listing_assistant: Any) -> None:
    """A bare year narrows as a paper's year ("2024 papers", "papers from 2024"), not as any number in the
    question ("evaluated on the 2024 split"); beside a conference name it always does. "NeurIPS" narrows too (it
    was read as the plural of "neurip" and matched nothing)."""
    from assistant.answer.listing import narrowing

    r = listing_assistant.retriever
    assert narrowing(r, "What was evaluated on the 2024 split?", "evaluated on the 2024 split").ids is None
    for question in ("Which 2024 papers are about pruning?", "pruning papers from 2024", "the ICLR 2024 paper on EEG"):
        nar = narrowing(r, question, question)
        assert nar.ids and all("2024" in r.papers[pid].venue for pid in nar.ids), question
        assert "2024" not in nar.query.split()
    nar = narrowing(r, "Which NeurIPS papers are about pruning?", "NeurIPS papers are about pruning?")
    assert nar.venue == "NeurIPS" and nar.ids and all(r.papers[pid].venue == "NeurIPS 2024" for pid in nar.ids)


def test_a_venue_in_a_lookup_is_not_taken_for_a_papers_name(scripted_assistant: Any, mixed_settings: Any) -> None:
    """"What does the ICLR 2024 paper on ... propose?" answers from that paper. It was refused as "No indexed paper is
    “ICLR 2024”": the venue, written in capitals and digits, was read as the paper's name, and the model said the
    abstract is not the paper called "ICLR 2024". Here the model says no to every such question."""

    def yes(payload: dict[str, Any]) -> float:
        return 0.02 if "the paper called" in json.dumps(payload) else 0.95

    reply = "It proposes Rayleigh Quotient Graph Neural Networks for graph-level anomaly detection [1]."
    question = "What does the ICLR 2024 paper on graph neural networks for anomaly detection propose?"
    with (FakeOpenAIServer([reply] * 3, yes_probability=yes) as server,
          scripted_assistant(server, settings=mixed_settings) as assistant):
        answer = assistant.ask(question)
    assert "No indexed paper" not in answer.notice and not answer.abstained
    assert answer.citations and answer.citations[0].paper.title.startswith("Rayleigh Quotient")
    assert not any("the paper called" in json.dumps(r) for r in server.requests + server.self_checks)


def test_a_narrowed_listing_searches_its_topic_without_the_question_frame(listing_assistant: Any) -> None:
    """"Which NeurIPS 2024 papers are about X?" searches "about X": the frame ("which … papers are") sits around the
    venue words, so it is stripped again once they are out (it searched "Which papers are about X?")."""
    from assistant.answer.strategies import listing_narrowing
    from assistant.answer.strategy import Request
    from assistant.understand.parse import Question

    question = "Which NeurIPS 2024 papers are about graph distribution shifts?"
    req = Request(question, question, "topic", (), Question(question).facts)
    nar = listing_narrowing(listing_assistant.answerer._tools, req)
    assert nar.venue == "NeurIPS 2024" and nar.ids
    assert "which" not in nar.query.lower() and "papers" not in nar.query.lower()
    assert "graph distribution shifts" in nar.query
