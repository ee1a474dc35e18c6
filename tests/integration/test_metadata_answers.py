"""Metadata answers end to end (issue 23 item 4): authors, venue and links, and "papers by X", answered from the
paper records through a real ChatSession on the seeds index (real Chroma, real embeddings), each cited [n] with
the paper's link; the model is never asked (a scripted server that records requests stands in for it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant.answer.render import answer_to_dict, answer_to_text
from assistant.types import Page
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.seeds import url_of

HYPERFACE = "000_43469673d6f8aaa0.txt#18"
A_BENCH = "000_43469673d6f8aaa0.txt#8"


@pytest.fixture
def records_assistant(scripted_assistant: Any) -> Any:
    with FakeOpenAIServer(["Nothing verifiable here at all, sorry friend."] * 10) as server:
        with scripted_assistant(server) as assistant:
            yield assistant
            for request in server.requests:  # metadata answers come from the records, never from the model
                assert "Question: What do the authors" in str(request) or "Question: Which paper" in str(request)


def test_who_are_the_authors_of_hyperface_answers_the_authors_cited_with_the_link(records_assistant: Any) -> None:
    session = records_assistant.new_session()
    answer = session.ask("Who are the authors of HyperFace?")
    assert answer.intent == "metadata" and not answer.abstained
    assert [c.paper.id for c in answer.citations] == [HYPERFACE] and answer.citations[0].n == 1
    assert "is by Hatef Otroshi Shahreza and Sébastien Marcel. [1]" in answer.text
    text = answer_to_text(answer)
    assert url_of("000_43469673d6f8aaa0.txt", 18) in text
    data = answer_to_dict(answer)  # the --json / API shape
    assert data["intent"] == "metadata" and data["citations"][0]["url"] == url_of("000_43469673d6f8aaa0.txt", 18)


def test_who_wrote_it_after_a_lookup_answers_for_the_paper_in_focus(records_assistant: Any) -> None:
    session = records_assistant.new_session()
    first = session.ask("Which paper proposes A-Bench?")
    assert first.citations[0].paper.id == A_BENCH
    answer = session.ask("who wrote it?")
    assert answer.intent == "metadata"
    assert [(c.n, c.paper.id) for c in answer.citations] == [(1, A_BENCH)]
    assert answer.sentences[0].text.startswith("“A-Bench") and "Zicheng Zhang" in answer.text and "[1]" in answer.text
    link = session.ask("What's the link to it?")
    assert link.intent == "metadata" and link.citations[0].paper.id == A_BENCH
    assert link.citations[0].paper.url and link.citations[0].paper.url in link.text


def test_papers_by_a_seed_author_are_listed_counted_and_paged(records_assistant: Any) -> None:
    """Zhiguang Cao is an author of two seed papers: both listed with a count; one per page, then "show more"."""
    session = records_assistant.new_session()
    everything = session.ask("papers by Zhiguang Cao")
    assert everything.intent == "metadata" and everything.listing is not None
    assert (everything.listing.total, everything.listing.shown) == (2, 2)
    assert len(everything.citations) == 2 and all("Zhiguang Cao" in c.paper.authors for c in everything.citations)
    assert "Zhiguang Cao is an author of 2 indexed papers" in everything.notice
    paged = records_assistant.new_session()
    first = paged.ask("Which papers did Zhiguang Cao write?", page=Page(0, 1))
    assert first.listing is not None and first.listing.has_more and len(first.citations) == 1
    assert "2 papers (by Zhiguang Cao) match; showing 1–1." in answer_to_text(first)  # index order, not "closest"
    more = paged.ask("show more")
    assert more.intent == "metadata" and more.listing is not None and more.listing.offset == 1
    assert {c.paper.id for c in first.citations} | {c.paper.id for c in more.citations} == {
        c.paper.id for c in everything.citations
    }


def test_an_unknown_author_is_said_so_with_close_names(records_assistant: Any) -> None:
    session = records_assistant.new_session()
    answer = session.ask("papers by Zhiguang Cai")
    assert answer.mode == "abstained" and answer.citations == ()
    assert "No indexed paper is by Zhiguang Cai" in answer.notice and "Zhiguang Cao" in answer.notice


def test_a_question_about_what_the_authors_did_is_not_answered_with_their_names(records_assistant: Any) -> None:
    session = records_assistant.new_session()
    answer = session.ask("What do the authors of HyperFace propose?")
    assert answer.intent == "lookup" and "Sébastien Marcel" not in answer.text


def test_the_api_conversation_answers_who_wrote_it_with_a_linked_citation(records_assistant: Any) -> None:
    """/v1 and MCP go through the same session: a conversation rebuilt from a client's messages (as /v1 does)
    answers "who wrote it?" for the paper its earlier reply cited, with a url_citation annotation on [1]."""
    from assistant.api.chat import PriorTurn, rebuild_session, render_answer

    session = rebuild_session(records_assistant, [PriorTurn("Which paper proposes A-Bench?", {1: A_BENCH})])
    answer = session.ask("Who wrote it?")
    rendered = render_answer(answer)
    assert answer.intent == "metadata" and "Zicheng Zhang" in rendered.text
    link = url_of("000_43469673d6f8aaa0.txt", 8)
    assert [a["url_citation"]["url"] for a in rendered.url_citations()] == [link] and link in rendered.text


def test_authors_of_two_named_papers_are_given_for_each_not_compared(records_assistant: Any) -> None:
    answer = records_assistant.new_session().ask("Who wrote HyperFace and EM-LLM?")
    assert answer.intent == "metadata" and answer.comparison is None
    assert [c.paper.id for c in answer.citations] == [HYPERFACE, "004_c45bebc30e22eceb.txt#17"]
    assert "Sébastien Marcel. [1]" in answer.text and "Zafeirios Fountas" in answer.text and "[2]" in answer.text


def test_an_authors_papers_on_a_topic_stay_a_topic_list(records_assistant: Any) -> None:
    answer = records_assistant.new_session().ask("Which papers by Jun Wang are about memory?")
    assert answer.intent == "topic" and [c.paper.id for c in answer.citations] == ["004_c45bebc30e22eceb.txt#17"]


#: The seed papers whose abstract links their code or project page: every ``code_url`` of seeds/papers.jsonl.
SEED_RECORDS = Path(__file__).resolve().parents[2] / "seeds" / "papers.jsonl"
CODE_URLS = {
    f"{row['seed_file']}#{row['position']}": row["code_url"].rstrip("/.")
    for row in map(json.loads, SEED_RECORDS.read_text().splitlines())
    if row.get("code_url")
}


@pytest.mark.parametrize("question", ["papers that release code", "which papers have code available?"])
def test_papers_that_release_code_are_every_paper_linking_it(records_assistant: Any, question: str) -> None:
    """Issue 45: "papers that release code" answered "The indexed abstracts don't cover this question". Now: the
    papers whose abstract links their code or project page, each with that link, cited, counted and paged."""
    session = records_assistant.new_session()
    answer = session.ask(question, page=Page(0, 5))
    assert answer.intent == "metadata" and not answer.abstained, answer.notice
    assert answer.listing is not None and answer.listing.links_code
    assert (answer.listing.total, answer.listing.shown) == (len(CODE_URLS), 5)
    more = session.ask("show more")
    assert more.listing is not None and (more.listing.offset, more.listing.shown) == (5, len(CODE_URLS) - 5)
    listed = [c.paper.id for c in answer.citations] + [c.paper.id for c in more.citations]
    assert sorted(listed) == sorted(CODE_URLS)
    for part in (answer, more):
        for sentence in part.sentences:
            (n,) = sentence.citations
            pid = next(c.paper.id for c in part.citations if c.n == n)
            assert CODE_URLS[pid] in sentence.text.rstrip("/.")
    assert answer_to_dict(more)["listing"]["links_code"] is True
    assert session.ask("show more").text.startswith("That was all: 8 papers matched")


def test_whether_a_paper_has_code_is_its_abstract_s_link_or_says_it_has_none(records_assistant: Any) -> None:
    answer = records_assistant.new_session().ask("does HyperFace release code?")
    assert answer.intent == "metadata" and [c.paper.id for c in answer.citations] == [HYPERFACE]
    assert answer.sentences[0].text == (
        "Code for “HyperFace: Generating Synthetic Face Recognition Datasets by Exploring Face Embedding Hypersphere”: "
        "https://www.idiap.ch/paper/hyperface"
    )
    none = records_assistant.new_session().ask("does the DUALFormer paper have code?")
    assert none.intent == "metadata"
    assert none.sentences[0].text == "The abstract of “DUALFormer: Dual Graph Transformer” links no code."


def test_a_topic_that_mentions_code_is_still_a_topic(records_assistant: Any) -> None:
    answer = records_assistant.new_session().ask("which papers are about code generation?")
    assert answer.intent == "topic" and (answer.listing is None or not answer.listing.links_code)


def test_show_more_with_a_page_size_alone_pages_on_at_that_size(records_assistant: Any) -> None:
    """``ask --session chat.json --limit 3 "show more"`` answered "The indexed abstracts don't cover this question":
    a page size given with "show more" took it for a new question. Now it sets the next page's size."""
    session = records_assistant.new_session()
    first = session.ask("papers that release code", page=Page(0, 3))
    more = session.ask("show more", page=Page(0, 2))
    assert more.listing is not None and (more.listing.offset, more.listing.shown) == (3, 2), more.text[:200]
    assert not {c.paper.id for c in first.citations} & {c.paper.id for c in more.citations}
    rest = session.ask("show more")
    assert rest.listing is not None and (rest.listing.offset, rest.listing.shown) == (5, 2)  # that page's size
