"""assistant/retrieve/paper_bm25.py: BM25 over each paper's whole title + abstract (issue 44), built from the
catalog and rebuilt when its generation moves on; and the ranker that fuses it (rankers.PaperBM25)."""

from __future__ import annotations

import threading

from assistant.retrieve.paper_bm25 import PaperBM25Index
from assistant.retrieve.rankers import PaperBM25
from assistant.types import Paper


def paper(pid: str, title: str, text: str) -> Paper:
    return Paper(pid, "Test", title, (), "", text, "t.jsonl", 1)


class StandInCatalog:
    """What the index reads of a catalog: its generation, its paper ids and each paper."""

    def __init__(self, papers: list[Paper]) -> None:
        self.papers = {p.id: p for p in papers}
        self.generation = 1
        self.builds = 0

    def paper_ids(self) -> list[str]:
        self.builds += 1
        return list(self.papers)

    def paper(self, pid: str) -> Paper | None:
        return self.papers.get(pid)


PAPERS = [
    paper(
        "rl",
        "In value-based deep RL, a pruned network is a good network",
        "Gradual magnitude pruning lets value-based agents use a small fraction of their parameters.",
    ),
    paper("dft", "Gaussian plane-wave neural operator", "A neural operator predicts electron density for DFT."),
    paper("dict", "Overcomplete dictionary learning", "Identifiability under a strong scattering condition."),
]


def test_a_description_in_other_words_finds_the_paper_by_its_whole_abstract() -> None:
    index = PaperBM25Index(StandInCatalog(PAPERS))  # type: ignore[arg-type]
    ranked = index.search("agents that keep only a small fraction of their parameters after pruning", 3)
    assert ranked[0][0] == "rl" and all(score > 0 for _, score in ranked)
    assert index.search("electron density", 1) == [("dft", index.search("electron density", 1)[0][1])]


def test_nothing_matches_gives_an_empty_list_not_arbitrary_papers() -> None:
    index = PaperBM25Index(StandInCatalog(PAPERS))  # type: ignore[arg-type]
    assert index.search("zebra giraffe", 5) == []
    assert index.search("the of and", 5) == []  # stop words only
    assert PaperBM25Index(StandInCatalog([])).search("pruning", 5) == []  # type: ignore[arg-type]


def test_rebuilt_once_when_the_catalog_changes_and_not_before() -> None:
    catalog = StandInCatalog(PAPERS)
    index = PaperBM25Index(catalog)  # type: ignore[arg-type]
    assert index.search("hyperbolic embeddings of trees", 3) == []
    index.search("pruning", 3)
    assert catalog.builds == 1  # built once, on the first search
    catalog.papers["hyp"] = paper("hyp", "Hyperbolic trees", "We embed trees in hyperbolic space.")
    assert index.search("hyperbolic embeddings of trees", 3) == []  # same generation: the old index
    catalog.generation += 1  # another process ingested
    assert index.search("hyperbolic embeddings of trees", 3)[0][0] == "hyp"
    del catalog.papers["hyp"]
    catalog.generation += 1
    assert index.search("hyperbolic embeddings of trees", 3) == []
    assert catalog.builds == 3


def test_concurrent_searches_build_once_and_all_answer() -> None:
    catalog = StandInCatalog(PAPERS)
    index = PaperBM25Index(catalog)  # type: ignore[arg-type]
    results: list[str] = []
    barrier = threading.Barrier(8)

    def search() -> None:
        barrier.wait()
        results.append(index.search("neural operator electron density", 1)[0][0])

    threads = [threading.Thread(target=search) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["dft"] * 8 and catalog.builds == 1


def test_the_ranker_is_off_at_weight_zero() -> None:
    index = PaperBM25Index(StandInCatalog(PAPERS))  # type: ignore[arg-type]

    class Q:
        text = "pruning value-based agents"

    assert PaperBM25(index, 0.0, 5)(Q(), None) == []  # type: ignore[arg-type]
    assert PaperBM25(index, 8.0, 5)(Q(), None)[0][0] == "rl"  # type: ignore[arg-type]


def test_building_leaves_bm25s_quiet() -> None:
    """bm25s sets its own logger to DEBUG when imported, so its "Building index ..." line reached stderr whatever
    level the entry point chose (a user of `assistant ask` saw it); after a search the logger is at WARNING."""
    import logging

    logging.getLogger("bm25s").setLevel(logging.DEBUG)  # as importing bm25s leaves it
    PaperBM25Index(StandInCatalog(PAPERS)).search("pruning", 3)  # type: ignore[arg-type]
    assert logging.getLogger("bm25s").level == logging.WARNING


def test_scores_rank_given_papers_as_search_does_and_leave_unknown_ids_out() -> None:
    catalog = StandInCatalog(PAPERS)
    index = PaperBM25Index(catalog)  # type: ignore[arg-type]
    query = "pruning value-based agents"
    scores = index.scores(query, ["dft", "rl", "nope"])
    assert set(scores) == {"dft", "rl"} and scores["rl"] > 0 == scores["dft"]
    assert scores["rl"] == dict(index.search(query, 3))["rl"]  # the same BM25 as a search
    assert index.scores("the of and", ["rl"]) == {"rl": 0.0}  # stop words only: nothing matched
    catalog.papers["new"] = paper("new", "Pruning value-based agents", "Pruning agents.")
    catalog.generation = 2  # rows follow the rebuilt model
    assert index.scores(query, ["new", "rl"])["new"] > 0
