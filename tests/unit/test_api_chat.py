"""The API's pure parts: an answer rendered with located ``[n]`` markers (annotations), partial renderings as
prefixes of the final one (streaming = the same text), the papers an earlier reply cited read back from what a
client sends, the conversation split out of ``messages``, and the bearer key."""

from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.answer.builder import PART_COLUMN
from assistant.api.chat import cited_in, render_answer
from assistant.api.openai_compat import APIError, MessageIn, bearer_ok, split_conversation
from assistant.api.server import api_key_for
from assistant.config import Settings
from assistant.types import Answer, AnswerSentence, Citation, Comparison, ComparisonRow, Paper

A = Paper("a.txt#1", "ICLR", "Alpha [bracket] net", ("Ann One", "Bo Two"), "https://x.org/a", "Alpha text.", "a.txt", 1)
B = Paper("a.txt#2", "ICLR", "Beta", (), "", "Beta text.", "a.txt", 2)


def answer(sentences: tuple[AnswerSentence, ...], comparison: Comparison | None = None, notice: str = "") -> Answer:
    cited = sorted({n for s in sentences for n in s.citations}
                   | ({r.n for r in comparison.rows} if comparison else set()))
    papers = {1: A, 2: B}
    return Answer("q?", sentences, tuple(Citation(n, papers[n], ()) for n in cited), (), "generated", "m",
                  notice=notice, comparison=comparison)


SENTENCES = (
    AnswerSentence("Alpha quotes [3] as prior work.", (1,), 0.9),  # a literal "[3]" in abstract text: not a citation
    AnswerSentence("Both do it.", (1, 2), 0.8),
)


def test_markers_are_located_while_writing_and_the_text_is_the_answer_text() -> None:
    full = answer(SENTENCES, notice="Model timed out.")
    r = render_answer(full)
    assert r.text.startswith(full.text + "\n\nNote: Model timed out.\n\nReferences:")
    assert [(m.n, r.text[m.start:m.end]) for m in r.markers] == [(1, "[1]"), (1, "[1]"), (2, "[2]")]
    # B has no link: no url_citation for it; A's are at its markers
    cites = [a["url_citation"] for a in r.url_citations()]
    assert [(c["url"], r.text[c["start_index"]:c["end_index"]]) for c in cites] == [(A.url, "[1]"), (A.url, "[1]")]
    assert "- [1] [Alpha (bracket) net](https://x.org/a) — Ann One, Bo Two `id: a.txt#1`" in r.text
    assert "- [2] Beta `id: a.txt#2`" in r.text


def test_a_partial_answer_renders_to_a_prefix_of_the_final_one() -> None:
    comparison = Comparison(("problem", "result"), (
        ComparisonRow(1, (AnswerSentence("P | a.", (1,), 1.0), None)),
        ComparisonRow(2, (None, AnswerSentence("R b.", (2,), 1.0))),
    ))
    # once every part is checked, each paper's part becomes the first column (builder.PART_COLUMN): the stream has
    # already sent those parts as text, so the Markdown keeps them there and the table as it was sent
    parts = Comparison((PART_COLUMN, *comparison.columns), tuple(
        ComparisonRow(row.n, (next((s for s in SENTENCES if s.citations == (row.n,)), None), *row.cells))
        for row in comparison.rows))
    steps = [answer((), comparison), answer(SENTENCES[:1], comparison), answer(SENTENCES, comparison),
             answer(SENTENCES, parts)]
    texts = [render_answer(a, final=False).text for a in steps] + [render_answer(steps[-1]).text]
    for earlier, later in zip(texts, texts[1:]):
        assert later.startswith(earlier), (earlier, later)
    assert PART_COLUMN not in texts[-1] and texts[-2] == texts[-3]
    assert texts[0].startswith("| paper | problem | result |\n|---|---|---|\n| Alpha [bracket] net [1] | P \\| a. [1]")


def test_the_cited_papers_come_back_from_what_a_client_sends() -> None:
    r = render_answer(answer(SENTENCES))
    assert cited_in(r.text) == {1: "a.txt#1", 2: "a.txt#2"}  # plain content, as chat clients send it back
    assert cited_in("x", answer={"citations": [{"n": 4, "paper_id": "p#4"}]}) == {4: "p#4"}
    no_ids = r.text.split("\n\nReferences:")[0]
    assert cited_in(no_ids, r.url_citations()) == {1: "url:https://x.org/a"}  # annotations kept by the client
    assert cited_in("an answer without references [1]") == {}


def test_the_conversation_is_split_from_the_messages() -> None:
    msgs = [MessageIn(role="system", content="be brief"), MessageIn(role="user", content="Q1"),
            MessageIn(role="assistant", content="A [1]\n\nReferences:\n- [1] T `id: p#1`"),
            MessageIn(role="user", content="Q2 unanswered"),
            MessageIn(role="user", content=[{"type": "text", "text": "Q3"}, {"type": "text", "text": "more"}])]
    turns, question = split_conversation(msgs)
    assert [(t.question, dict(t.cited)) for t in turns] == [("Q1", {1: "p#1"}), ("Q2 unanswered", {})]
    assert question == "Q3\nmore"
    with pytest.raises(APIError) as last:
        split_conversation(msgs[:3])
    assert last.value.status == 400 and last.value.param == "messages[2].role"
    with pytest.raises(APIError) as image:
        split_conversation([MessageIn(role="user", content=[{"type": "image_url", "image_url": {"url": "x"}}])])
    assert image.value.code == "unsupported_content"


def test_the_bearer_key() -> None:
    assert bearer_ok(None, None) and bearer_ok("Bearer k", "k") and bearer_ok("bearer  k", "k")
    assert not bearer_ok(None, "k") and not bearer_ok("Bearer x", "k") and not bearer_ok("Basic k", "k")
    assert api_key_for(Settings().updated(api_key="s3cret"), "u:p") == "s3cret"
    assert api_key_for(Settings(), "u:p") == "u:p"
    assert api_key_for(Settings(), None) is None
    assert api_key_for(Settings().updated(api_key=""), None) is None


def test_sentence_spacing_matches_answer_text() -> None:
    uncited = answer((AnswerSentence("Plain.", (), 0.5), *SENTENCES))
    assert render_answer(replace(uncited, notice="")).text.startswith(uncited.text + "\n\nReferences:")


def test_abstract_markup_reaches_clients_as_plain_text() -> None:
    """Issue 43.8: /v1 clients get what a reader sees, not the abstracts' LaTeX and Markdown."""
    marked = (AnswerSentence("We introduce $\\underline{Le}$arning for Large Language Models~(LLMs), **11.25%** "
                             "better at $11.25%$%.", (1,), 0.9),)
    r = render_answer(answer(marked))
    assert r.text.startswith("We introduce Learning for Large Language Models (LLMs), 11.25% better at 11.25%. [1]")
    assert [(m.n, r.text[m.start:m.end]) for m in r.markers] == [(1, "[1]")]
