"""The paper records every surface shares (``assistant papers``, the MCP tools) on a real Chroma index of the
seeds: filters, paging, search with filters, ids in any form; and a conversation rebuilt from what an
OpenAI client sends back (references by id, or by link only)."""

from __future__ import annotations

import pytest

from assistant.api import papers as records
from assistant.api.chat import PriorTurn, rebuild_session
from assistant.errors import AssistantError
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.seeds import url_of

A_BENCH_ID = "000_43469673d6f8aaa0.txt#8"
COOKBOOK_ID = "004_c45bebc30e22eceb.txt#6"


@pytest.fixture(scope="module")
def catalog(seeded_settings):  # type: ignore[no-untyped-def]
    return records.open_papers(seeded_settings)


def test_listing_filters_and_pages(catalog) -> None:  # type: ignore[no-untyped-def]
    everything = records.list_papers(catalog, limit=100)
    assert everything.total == 38 == len(everything.papers) == records.count_papers(catalog)
    page = records.list_papers(catalog, offset=10, limit=5)
    assert [p.id for p in page.papers] == [p.id for p in everything.papers[10:15]]
    jiang = records.list_papers(catalog, author="JIANG")  # part of a name, any case
    assert jiang.total == records.count_papers(catalog, author="jiang") >= 1
    assert all(any("jiang" in a.lower() for a in p.authors) for p in jiang.papers)
    assert records.count_papers(catalog, author="Yalong Jiang") == 1
    assert records.count_papers(catalog, venue="iclr 2025") == 38
    assert records.count_papers(catalog, venue="neurips") == 0
    assert records.count_papers(catalog, author="%") == 0  # LIKE wildcards are text
    assert records.count_papers(catalog, author="_") == 0
    with pytest.raises(AssistantError, match="limit 0"):
        records.list_papers(catalog, limit=0)


def test_one_paper_by_any_of_its_ids(catalog) -> None:  # type: ignore[no-untyped-def]
    record = records.get_paper(catalog, A_BENCH_ID)
    assert record.url == url_of("000_43469673d6f8aaa0.txt", 8) and "A-Bench" in record.abstract
    assert record.flagged == [] and "never instructions" in record.note
    by_link = records.get_paper(catalog, record.url)  # a link works as an id, as for `assistant delete`
    assert by_link.id == A_BENCH_ID
    with pytest.raises(records.PaperNotFoundError, match="Did you mean"):
        records.get_paper(catalog, "000_43469673d6f8aaa0.txt#88")


def test_search_ranks_and_filters(seeded_settings, embed_model, sentence_embedder) -> None:  # type: ignore[no-untyped-def]
    from assistant.service import build_retriever

    retriever, _ = build_retriever(seeded_settings, embed_model, sentence_embedder)
    found = records.search_papers(retriever, "benchmark for evaluating AI-generated images", limit=3)
    assert found.papers[0].id == A_BENCH_ID and found.papers[0].rank == 1
    assert found.papers[0].best_sentence in records.get_paper(retriever.catalog, A_BENCH_ID).abstract
    only = records.search_papers(retriever, "benchmark for evaluating AI-generated images", author="Yalong Jiang")
    assert [p.id for p in only.papers] == ["000_43469673d6f8aaa0.txt#2"]
    with pytest.raises(AssistantError, match="empty"):
        records.search_papers(retriever, "   ")


def test_a_conversation_is_rebuilt_from_ids_or_links(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAIServer([]) as llm, scripted_assistant(llm) as assistant:
        by_id = rebuild_session(assistant, [PriorTurn("Which paper introduces A-Bench?", {1: A_BENCH_ID}),
                                            PriorTurn("Compare it with the Number Cookbook paper.",
                                                      {1: A_BENCH_ID, 2: COOKBOOK_ID})])
        assert by_id.labels == {A_BENCH_ID: 1, COOKBOOK_ID: 2}
        by_link = rebuild_session(assistant, [PriorTurn("Which paper introduces A-Bench?",
                                                        {1: f"url:{url_of('000_43469673d6f8aaa0.txt', 8)}",
                                                         2: "url:https://example.org/not-indexed"})])
        assert by_link.labels == {A_BENCH_ID: 1}
        resolution = by_link.resolve("How many text-to-image models did they sample images from?")
        assert resolution.focus_ids == (A_BENCH_ID,)  # "they" is the paper the earlier reply cited
