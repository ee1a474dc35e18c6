"""Metadata requests (issue 23 item 4): which record fields a question asks for and which author it names
(understand/metadata.py), and the answers built from the records by MetadataStrategy (answer/strategies.py),
on a small fixture of papers: no index, no model."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.answer.builder import AnswerBuilder
from assistant.answer.strategies import STRATEGIES, MetadataStrategy, RecordQuery, Request, record_sentences
from assistant.types import INTENTS, Page, Paper, PaperHit
from assistant.understand.metadata import MetadataRequest, metadata_request
from assistant.understand.question import analyze

HYPERFACE = Paper(
    "seed.txt#18",
    "ICLR 2025 Papers",
    "HyperFace: Generating Synthetic Face Recognition Datasets",
    ("Hatef Otroshi Shahreza", "Sébastien Marcel"),
    "https://arxiv.org/abs/2411.08470",
    "We propose HyperFace. It packs embeddings on a hypersphere.",
    "seed.txt",
    18,
)
SOPHIA = Paper(  # an ICLR 2024 record: the corpus lists no authors for these
    "3xHDeA8Noi",
    "ICLR 2024 Poster",
    "Sophia: A Scalable Stochastic Second-order Optimizer",
    (),
    "",
    "We propose Sophia.",
    "iclr2024.jsonl",
    1,
)
ORAL = Paper("x#1", "Oral", "A Paper Without a Year", ("Ann Lee",), "https://example.org/p", "Text.", "x.txt", 1)


class Authors:
    """Exact author lookup over the fixture (catalog.known_author_keys)."""

    keys = {"sébastien marcel": ["seed.txt#18"], "hatef otroshi shahreza": ["seed.txt#18"], "ann lee": ["x#1"]}

    def known_author_keys(self, keys: Sequence[str]) -> dict[str, list[str]]:
        return {k: self.keys[k] for k in keys if k in self.keys}


def ask(question: str, by: str = "", by_ids: Sequence[str] = ()) -> MetadataRequest | None:
    return metadata_request(question, Authors(), by, by_ids)


@pytest.mark.parametrize(
    ("question", "fields"),
    [
        ("Who are the authors of HyperFace?", ("authors",)),
        ("who wrote it?", ("authors",)),
        ("HyperFace authors?", ("authors",)),
        ("Where was HyperFace published?", ("venue",)),
        ("When was it published?", ("venue", "year")),
        ("What year is the HyperFace paper from?", ("year",)),
        ("link to that one", ("link",)),
        ("Where can I read the HyperFace paper?", ("link",)),
        ("pdf of HyperFace, and who wrote it", ("authors", "link")),
        ("does HyperFace release code?", ("code",)),
        ("where is the github repo of HyperFace", ("code",)),
    ],
)
def test_the_fields_asked_for_are_read_from_the_vocabulary(question: str, fields: tuple[str, ...]) -> None:
    request = ask(question)
    assert request is not None and request.fields == fields
    assert request.only_names({"hyperface"})  # nothing else asked: the paper's name at most


@pytest.mark.parametrize(
    "question",
    [
        "What do the authors of HyperFace propose?",  # the authors are the subject: a question about the content
        "Is there a link between sensitivity and robustness?",
        "When does grokking happen in small transformers?",
    ],
)
def test_a_field_word_in_a_question_about_the_content_is_not_a_metadata_request(question: str) -> None:
    request = ask(question)
    assert request is None or not request.only_names({"hyperface", "synthetic", "face"})


def test_only_a_question_starting_with_who_asks_for_the_authors_whatever_it_adds() -> None:
    described = ask("who wrote the HyperFace paper? the one that makes synthetic face datasets")
    assert described is not None and described.asks_who and described.only_names({"hyperface"})
    relative = ask("some work on making pictures of people who don't exist to train face matchers")
    assert relative is not None and not relative.asks_who and not relative.only_names({"hyperface"})


@pytest.mark.parametrize("question", ["papers that release code", "which papers have code available?",
                                      "papers with code", "which works are open-source?"])
def test_papers_with_code_asks_for_the_papers_and_their_code_and_nothing_else(question: str) -> None:
    request = ask(question)
    assert request is not None and request.fields == ("papers", "code") and request.only_names(())
    query = RecordQuery(request, applies=True)
    assert query.lists_code and query.lists and not query.lists_person


def test_code_as_a_topic_is_not_a_request_for_code_links() -> None:
    request = ask("which papers are about code generation?")
    assert request is None or not request.only_names(())


def test_a_code_link_is_the_first_web_link_of_the_abstract() -> None:
    from assistant.lang.text import code_link

    assert code_link("Code: https://github.com/liugangcode/InfoAlign.") == "https://github.com/liugangcode/InfoAlign"
    assert code_link("see (https://nategillman.com/fourier-head), and more") == "https://nategillman.com/fourier-head"
    assert code_link("Our code is available on request.") == ""


def test_papers_alone_asks_for_a_persons_papers_not_for_named_papers() -> None:
    named = ask("What are the ControlAR and LucidPPN papers?")
    assert named is not None and named.fields == ("papers",) and not named.only_names({"controlar", "lucidppn"})
    person = ask("Ann Lee papers")
    assert person is not None and person.only_names(())


def test_a_question_without_field_words_or_authors_is_none() -> None:
    assert ask("How does HyperFace generate face images?") is None
    assert ask("Summarize the grokking paper") is None


def test_a_person_is_matched_exactly_against_the_indexed_names_accents_included() -> None:
    request = ask("Which papers did Sébastien Marcel write?")
    assert request is not None
    assert request.person == "sébastien marcel" and request.person_ids == ("seed.txt#18",)
    assert request.fields == ("papers", "authors") and request.rest == frozenset()
    assert request.only_names(())
    listing = ask("papers by Hatef Otroshi Shahreza")
    assert listing is not None and listing.person == "hatef otroshi shahreza" and listing.only_names(())
    # a name nobody in the index has is not a person; without "by" it is just other words
    other = ask("Which papers did John Smith write?")
    assert other is not None and not other.person and not other.only_names(())


def test_the_name_after_by_is_taken_from_the_caller_known_or_not() -> None:
    known = ask("papers by Marcel", "Marcel", ["seed.txt#18"])
    assert known is not None and known.person == "Marcel" and known.person_ids == ("seed.txt#18",)
    unknown = ask("papers by John Smith", "John Smith", [])
    assert unknown is not None and unknown.unknown_person == "John Smith" and not unknown.person
    assert unknown.only_names(())


def test_a_singular_paper_by_a_person_is_not_a_listing() -> None:
    """ "What is the paper by X about?" asks for the content of one paper (a summary), not a list."""
    request = ask("What is the paper by Ann Lee about?")
    assert request is not None and request.fields == () and not request.only_names(())


def test_metadata_is_a_registered_intent() -> None:
    assert "metadata" in INTENTS and isinstance(STRATEGIES["metadata"], MetadataStrategy)


def test_record_sentences_state_the_records_and_never_invent() -> None:
    assert record_sentences(HYPERFACE, ("authors",)) == [
        "“HyperFace: Generating Synthetic Face Recognition Datasets” is by Hatef Otroshi Shahreza and Sébastien Marcel."
    ]
    assert record_sentences(SOPHIA, ("authors",)) == [
        "The records list no authors for “Sophia: A Scalable Stochastic Second-order Optimizer”."
    ]
    assert record_sentences(SOPHIA, ("link",)) == [
        "The records give no link for “Sophia: A Scalable Stochastic Second-order Optimizer”."
    ]
    assert record_sentences(HYPERFACE, ("year",)) == [
        "“HyperFace: Generating Synthetic Face Recognition Datasets” is from 2025 (listed under ICLR 2025 Papers)."
    ]
    assert record_sentences(ORAL, ("venue", "year")) == [
        "The records list “A Paper Without a Year” under Oral.",
        "The records give no year for “A Paper Without a Year”.",
    ]
    assert record_sentences(HYPERFACE, ("link",)) == [
        "Link to “HyperFace: Generating Synthetic Face Recognition Datasets”: https://arxiv.org/abs/2411.08470"
    ]
    assert record_sentences(HYPERFACE, ()) == record_sentences(HYPERFACE, ("authors",))  # "who …?" alone
    assert record_sentences(SOPHIA, ("code",)) == [
        "The abstract of “Sophia: A Scalable Stochastic Second-order Optimizer” links no code."
    ]


def _hit(paper: Paper) -> PaperHit:
    return PaperHit(paper, 1.0, 0.5, (), tuple(paper.text.split(". ")))


def _tools(names: dict[str, str] | None = None, close: Sequence[str] = ()) -> Any:
    catalog = SimpleNamespace(
        author_name=lambda key: (names or {}).get(key, ""), closest_authors=lambda name, n=3: list(close)
    )
    return SimpleNamespace(retriever=SimpleNamespace(catalog=catalog))


def _request(question: str, records: RecordQuery, focus: tuple[str, ...] = (), page: Page = Page()) -> Request:
    return Request(question, question, "metadata", focus, analyze(question), page, records)


def test_the_strategy_answers_each_paper_in_focus_cited_to_it() -> None:
    strategy = MetadataStrategy()
    request = ask("who wrote them?")
    assert request is not None
    req = _request("who wrote them?", RecordQuery(request, (), True), focus=(HYPERFACE.id, SOPHIA.id))
    hits = [_hit(HYPERFACE), _hit(SOPHIA)]
    plan = strategy.plan(_tools(), req, hits)
    assert [h.paper.id for h in plan.context] == [HYPERFACE.id, SOPHIA.id] and not plan.use_model
    builder = AnswerBuilder(req.question, plan.context, hits, "m", "metadata", req.query)
    strategy.answer_by_code(_tools(), req, plan, builder)
    answer = builder.build("extractive")
    assert [s.citations for s in answer.sentences] == [(1,), (2,)]
    assert "Hatef Otroshi Shahreza and Sébastien Marcel" in answer.sentences[0].text
    assert answer.sentences[1].text.startswith("The records list no authors for")
    assert [c.paper.id for c in answer.citations] == [HYPERFACE.id, SOPHIA.id]
    assert all(c.evidence == () for c in answer.citations)  # no abstract sentence is claimed as support


def test_the_strategy_lists_an_authors_papers_with_a_count_and_a_page() -> None:
    strategy = MetadataStrategy()
    request = MetadataRequest(("papers",), "ann lee", (ORAL.id, HYPERFACE.id, SOPHIA.id))
    req = _request("papers by Ann Lee", RecordQuery(request, (), True), page=Page(0, 2))
    hits = [_hit(ORAL), _hit(HYPERFACE)]  # candidates() gives the page
    tools = _tools({"ann lee": "Ann Lee"})
    plan = strategy.plan(tools, req, hits)
    assert plan.listing is not None
    assert (plan.listing.total, plan.listing.shown, plan.listing.author) == (3, 2, "Ann Lee") and plan.listing.has_more
    assert strategy.notice(plan) == "From the paper records: Ann Lee is an author of 3 indexed papers; showing 1–2."
    builder = AnswerBuilder(req.question, plan.context, hits, "m", "metadata", req.query)
    strategy.answer_by_code(tools, req, plan, builder)
    answer = builder.build("extractive")
    assert [s.text for s in answer.sentences] == [
        "“A Paper Without a Year” (Oral).",
        "“HyperFace: Generating Synthetic Face Recognition Datasets” (ICLR 2025 Papers).",
    ]
    assert [s.citations for s in answer.sentences] == [(1,), (2,)]


def test_the_strategy_abstains_on_an_unknown_author_and_suggests_close_names() -> None:
    request = ask("papers by Yalong Jang", "Yalong Jang", [])
    assert request is not None
    req = _request("papers by Yalong Jang", RecordQuery(request, (), True))
    settled = MetadataStrategy().settle(_tools(close=["Yalong Jiang"]), req, [])
    assert settled is not None and settled.mode == "abstained"
    assert "No indexed paper is by Yalong Jang" in settled.notice and "Yalong Jiang" in settled.notice
