"""Rendering: citations and links, escaping of hostile text, JSON shape of `ask --json`."""

from __future__ import annotations

from assistant.render import answer_to_dict, answer_to_text
from assistant.types import Answer, AnswerSentence, Citation, Paper, PaperHit
from ui.render import answer_markdown

PAPER = Paper("f.txt#1", "ICLR 2025 Papers", "XNet <b>bold</b>", ("Ada Lovelace",), "https://openreview.net/forum?id=x",
              "XNet is fast.", "f.txt", 1)
EVIL = Paper("f.txt#2", "V", "Evil ![img](http://evil.example/x.png)", (), "javascript:alert(1)", "t", "f.txt", 2)


def _answer(paper: Paper = PAPER, text: str = "XNet is fast.") -> Answer:
    hit = PaperHit(paper, 0.03, 0.7, (), (text,))
    return Answer("q?", (AnswerSentence(text, (1,), 0.9),), (Citation(1, paper, (text,)),), (hit,), "generated", "smollm2",
                  timings_ms={"retrieve": 10.0, "total": 1234.0})


def test_markdown_has_marker_link_authors_and_evidence() -> None:
    md = answer_markdown(_answer())
    assert "XNet is fast.<sup>[1]</sup>" in md
    assert '<a href="https://openreview.net/forum?id=x" target="_blank" rel="noopener noreferrer">' in md
    assert "&lt;b&gt;bold&lt;/b&gt;" in md  # title HTML escaped
    assert "Ada Lovelace" in md and "<blockquote>XNet is fast.</blockquote>" in md
    assert "answered by smollm2 in 1.2 s" in md


def test_hostile_text_is_inert() -> None:
    md = answer_markdown(_answer(EVIL, "See <script>alert(1)</script> ![x](http://evil.example/a.png)"))
    assert "<script>" not in md and "![" not in md
    assert "javascript:" not in md  # non-http links are not rendered as links
    assert 'href="http://evil' not in md and "<img" not in md


def test_json_shape() -> None:
    d = answer_to_dict(_answer())
    assert set(d) >= {"question", "answer", "abstained", "citations", "sources", "model", "timings_ms"}
    assert d["answer"] == "XNet is fast. [1]"
    assert d["citations"][0] == {"n": 1, "paper_id": "f.txt#1", "title": PAPER.title, "url": PAPER.url,
                                 "authors": ["Ada Lovelace"], "evidence": ["XNet is fast."]}
    assert d["sources"][0]["paper_id"] == "f.txt#1"
    assert {"retrieve", "total"} <= set(d["timings_ms"])
    assert "[1] XNet" in answer_to_text(_answer())
