"""The order in which an answer showed its papers (session.shown_order): what "the second one" counts in."""

from __future__ import annotations

from assistant.conversation.state import shown_order
from assistant.types import Answer, AnswerSentence, Citation, Comparison, ComparisonRow, Paper


def _paper(pid: str) -> Paper:
    return Paper(pid, "venue", f"Title {pid}", (), "", "text", "f.txt", 1)


def _answer(sentences: list[tuple[int, ...]], labels: dict[int, str], rows: list[int] | None = None) -> Answer:
    citations = tuple(Citation(n, _paper(pid), ()) for n, pid in sorted(labels.items()))
    table = Comparison(("approach",), tuple(ComparisonRow(n, (None,)) for n in rows)) if rows is not None else None
    said = tuple(AnswerSentence(f"s{i}", cites, 1.0) for i, cites in enumerate(sentences))
    return Answer("q", said, citations, (), "extractive", "m", comparison=table)


def test_a_table_is_in_row_order_not_label_order() -> None:
    # the paper labelled [2] earlier in the conversation is the first row of this table
    answer = _answer([(1,), (2,)], {1: "grok", 2: "sensitivity"}, rows=[2, 1])
    assert shown_order(answer) == ("sensitivity", "grok")


def test_a_list_is_in_the_order_its_sentences_cite_the_papers() -> None:
    answer = _answer([(3,), (1,), (3,), (2,)], {1: "a", 2: "b", 3: "c"})
    assert shown_order(answer) == ("c", "a", "b")


def test_a_cited_paper_no_sentence_cites_comes_last_by_label() -> None:
    answer = _answer([(2,)], {1: "a", 2: "b"})
    assert shown_order(answer) == ("b", "a")
    assert shown_order(_answer([], {})) == ()
