"""What Copy copies (issue 43.6): clean text with the ``[n]`` markers and the references, carried in each chat
message (the browser half, ``CLEAN_COPY_JS``, is tested in tests/e2e/test_browser_chat_survives.py)."""

from __future__ import annotations

from assistant.types import Answer, AnswerSentence, Citation, Comparison, ComparisonRow, Paper
from ui.clipboard import answer_content, answer_copy_text, copy_text_of, question_content, with_copy_text

X = Paper("f.txt#1", "ICLR 2025", "XNet: <fast> & co", ("Ada Lovelace", "Alan Turing"), "https://example.org/x",
          "XNet is fast.", "f.txt", 1)
Y = Paper("f.txt#2", "ICLR 2025", "YNet", (), "https://example.org/y", "YNet is slow.", "f.txt", 2)


def _answer(**kw: object) -> Answer:
    base: dict[str, object] = dict(question="q", sentences=(AnswerSentence("XNet is  fast\nand small.", (1,), 0.9),
                                         AnswerSentence("YNet is slow.", (2,), 0.8)),
                citations=(Citation(1, X, ()), Citation(2, Y, ())), sources=(), mode="generated", model="m")
    base.update(kw)
    return Answer(**base)  # type: ignore[arg-type]


def test_an_answer_copies_as_text_with_its_markers_and_references() -> None:
    text = answer_copy_text(_answer(notice="Read in English."))
    assert text == ("Read in English.\n\nXNet is fast and small. [1] YNet is slow. [2]\n\nReferences\n"
                    "[1] XNet: <fast> & co — Ada Lovelace, Alan Turing. https://example.org/x\n"
                    "[2] YNet. https://example.org/y")


def test_a_comparison_copies_one_line_per_paper_and_column() -> None:
    table = Comparison(("data", "result"), (ComparisonRow(1, (AnswerSentence("ImageNet.", (1,), 1.0), None)),))
    text = answer_copy_text(_answer(comparison=table, sentences=()))
    assert text.startswith("[1] XNet: <fast> & co\n  data: ImageNet. [1]\n  result: not reported\n\nReferences")


def test_the_copy_text_rides_in_the_message_and_is_invisible() -> None:
    content = answer_content(_answer(), "m2")
    assert copy_text_of(content) == answer_copy_text(_answer())
    assert content.startswith("<!--copy:") and content.endswith("<!--/copy-->") and "<p class='answer'>" in content
    assert copy_text_of(question_content("  Why <b>? ")) == "Why <b>?"
    assert question_content("What is XNet?") == "What is XNet?"  # shown as typed: no copy text needed
    assert "<b>" not in question_content("Why <b>?").split("-->", 1)[1]  # the shown question stays escaped
    assert copy_text_of(with_copy_text("<p>x</p>", "ü ∑ 中文")) == "ü ∑ 中文"
    assert copy_text_of("<p>no marker</p>") is None
