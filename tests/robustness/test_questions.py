"""Hostile or odd questions: empty/emoji (no model call), 20k characters (refused before any search),
non-English (the frozen eval/test-multilingual.jsonl: a real answer when the question names its paper, never a
wrong paper otherwise), HTML/Markdown tricks (rendered as text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.eval.evaluation import EvalItem, answer_text, load_items
from assistant.eval.metrics import facts_hit
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


MULTILINGUAL = Path(__file__).resolve().parents[2] / "eval" / "test-multilingual.jsonl"


#: Known defects found by the held-out set when it was frozen (issue 26). Strict: the test fails once fixed,
#: so the mark must go. Not fixed by a rule fitted to this question (it is held-out data).
KNOWN_DEFECTS = {
    "n005": "the German compound 'Retrieval-Genauigkeit' reads as a name (NAME_TOKEN) no paper mentions, "
    "so the lookup abstains although LeReT is named",
}


def _multilingual(named: bool) -> list[object]:
    """The frozen non-English questions (eval/README.md) that name their paper (a model, method or benchmark
    name, the same in every language) or not."""
    items = [i for i in load_items(MULTILINGUAL) if ("anomal" not in " ".join(i.answer_facts)) == named]
    return [
        pytest.param(i, marks=pytest.mark.xfail(reason=KNOWN_DEFECTS[i.id],
                                                strict=True)) if i.id in KNOWN_DEFECTS else i
        for i in items
    ]


@pytest.mark.parametrize("item", _multilingual(named=True), ids=lambda i: f"{i.id}-{i.question[:24]}")
def test_a_non_english_question_that_names_its_paper_gets_a_real_answer(scripted, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    """Spanish, Chinese, French and German questions naming DUALFormer, A-Bench, ResDex or LeReT: the answer
    is not an abstention, cites the named paper (first), every shown sentence is cited, and a question
    asking for a number gets the number (the scripted model's sentence is about DUALFormer, so other
    papers' answers are built by code from the abstract)."""
    assistant, _ = scripted
    answer = assistant.new_session().ask(item.question)
    assert not answer.abstained, (item.question, answer.mode, answer.notice)
    cited = [c.paper.id for c in sorted(answer.citations, key=lambda c: c.n)]
    assert cited and cited[0] == item.gold_ids[0], (item.question, cited)
    assert answer.sentences and all(s.citations for s in answer.sentences)
    assert all(facts_hit(answer_text(answer), item.answer_facts)), (item.question, item.answer_facts, answer.text[:300])


@pytest.mark.parametrize("item", _multilingual(named=False), ids=lambda i: i.id)
def test_a_non_english_question_without_a_name_never_cites_a_wrong_paper(scripted, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    """A French or Chinese question that names nothing depends on the English-only MiniLM understanding it.
    Asserted behaviour: the answer either cites the right paper first, or abstains citing nothing; it never
    presents another paper as the answer."""
    assistant, _ = scripted
    answer = assistant.new_session().ask(item.question)
    cited = [c.paper.id for c in sorted(answer.citations, key=lambda c: c.n)]
    if answer.abstained:
        assert cited == [] and answer.notice, (item.question, answer.notice)
    else:
        assert cited and cited[0] == item.gold_ids[0], (item.question, answer.mode, cited, answer.text[:200])


def test_html_and_markdown_in_questions_render_as_text(scripted) -> None:  # type: ignore[no-untyped-def]
    assistant, _ = scripted
    q = "<script>alert(1)</script> ![x](http://evil.example/x.png) [click](javascript:alert(1)) DUALFormer?"
    answer = assistant.new_session().ask(q)
    shown = safe_text(q) + answer_markdown(answer)
    assert "<script>" not in shown and "![" not in shown and "](" not in shown  # no tag, image or link syntax left
    assert 'href="javascript' not in shown and "<img" not in shown
