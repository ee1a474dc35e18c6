"""Hostile or odd questions: empty/emoji (no model call), 20k characters (cut, prompt stays small),
non-English, HTML/Markdown tricks (rendered as text)."""

from __future__ import annotations

import pytest

from assistant.service import MAX_QUESTION_CHARS, EmptyQuestionError
from tests.support.fake_openai_server import FakeOpenAIServer
from ui.render import answer_markdown, safe_text


@pytest.fixture
def scripted(scripted_assistant):  # type: ignore[no-untyped-def]
    with FakeOpenAIServer(["DUALFormer performs the global self-attention module on feature dimensions."] * 10) as server, \
            scripted_assistant(server) as assistant:
        yield assistant, server


@pytest.mark.parametrize("question", ["", " \n\t ", "🙂🔥🙂", "?!…"])
def test_empty_questions_make_no_model_call(scripted, question: str) -> None:  # type: ignore[no-untyped-def]
    assistant, server = scripted
    with pytest.raises(EmptyQuestionError, match="Please type a question"):
        assistant.new_session().ask(question)
    assert server.requests == []


def test_very_long_question_is_cut_and_prompt_stays_small(scripted) -> None:  # type: ignore[no-untyped-def]
    assistant, server = scripted
    question = "Which graph transformer runs self-attention on feature dimensions? " + "padding words " * 2000
    assert len(question) > 20_000
    answer = assistant.new_session().ask(question)
    assert len(answer.question) <= MAX_QUESTION_CHARS
    prompt = "".join(m["content"] for m in server.requests[-1]["messages"])
    assert len(prompt) < MAX_QUESTION_CHARS + 4000  # evidence stays compact: no context overflow
    assert answer.citations


def test_non_english_question_is_answered_or_abstains_cleanly(scripted) -> None:  # type: ignore[no-untyped-def]
    assistant, _ = scripted
    for q in ("¿Qué artículo propone DUALFormer?", "哪篇论文提出了 DUALFormer？", "Quel article présente A-Bench ?"):
        answer = assistant.new_session().ask(q)
        assert answer.abstained or all(s.citations for s in answer.sentences)


def test_html_and_markdown_in_questions_render_as_text(scripted) -> None:  # type: ignore[no-untyped-def]
    assistant, _ = scripted
    q = "<script>alert(1)</script> ![x](http://evil.example/x.png) [click](javascript:alert(1)) DUALFormer?"
    answer = assistant.new_session().ask(q)
    shown = safe_text(q) + answer_markdown(answer)
    assert "<script>" not in shown and "![" not in shown and "](" not in shown  # no tag, image or link syntax left
    assert 'href="javascript' not in shown and "<img" not in shown
