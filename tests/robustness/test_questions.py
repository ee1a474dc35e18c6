"""Hostile or odd questions: empty/emoji (no model call), 20k characters (refused before any search),
HTML/Markdown tricks (rendered as text). Questions in other languages are read by the real model:
tests/e2e/test_bundled_languages.py."""

from __future__ import annotations

import pytest

from assistant.service import MAX_QUESTION_CHARS, EmptyQuestionError, QuestionTooLongError
from tests.support.fake_openai_server import FakeOpenAIServer
from ui.render import answer_markdown, safe_text


@pytest.fixture
def scripted(scripted_assistant):  # type: ignore[no-untyped-def]
    with FakeOpenAIServer(["DUALFormer performs the global self-attention module on feature "
                           "dimensions."] * 10) as server, \
            scripted_assistant(server) as assistant:
        yield assistant, server


@pytest.mark.parametrize("question", ["", " \n\t ", "🙂🔥🙂", "?!…"])
def test_empty_questions_make_no_model_call(scripted, question: str) -> None:  # type: ignore[no-untyped-def]
    assistant, server = scripted
    with pytest.raises(EmptyQuestionError, match="Please type a question"):
        assistant.new_session().ask(question)
    assert server.requests == []


def test_very_long_question_is_refused_with_a_clear_message_before_any_search(scripted) -> None:  # type: ignore[no-untyped-def]
    assistant, server = scripted
    question = "Which graph transformer runs self-attention on feature dimensions? " + "padding words " * 2000
    assert len(question) > 20_000
    with pytest.raises(QuestionTooLongError, match=r"28,066 characters long; a question can be at most 2,000 "
                                                   r"\(ASSISTANT_MAX_QUESTION_CHARS\)"):
        assistant.new_session().ask(question)
    assert server.requests == []  # not searched, not read as a comparison, no model call
    at_limit = ("Which graph transformer runs self-attention on feature dimensions? " * 40)[:MAX_QUESTION_CHARS]
    answer = assistant.new_session().ask(at_limit)  # the longest accepted question is answered, uncut
    assert answer.question == at_limit.strip() and answer.citations
    prompt = "".join(m["content"] for m in server.requests[-1]["messages"])
    assert len(prompt) < MAX_QUESTION_CHARS + 4000  # evidence stays compact: no context overflow


def test_html_and_markdown_in_questions_render_as_text(scripted) -> None:  # type: ignore[no-untyped-def]
    assistant, _ = scripted
    q = "<script>alert(1)</script> ![x](http://evil.example/x.png) [click](javascript:alert(1)) DUALFormer?"
    answer = assistant.new_session().ask(q)
    shown = safe_text(q) + answer_markdown(answer)
    assert "<script>" not in shown and "![" not in shown and "](" not in shown  # no tag, image or link syntax left
    assert 'href="javascript' not in shown and "<img" not in shown
