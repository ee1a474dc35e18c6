"""Questions in other languages (issue 41), answered by the real bundled 1.5B model through a conversation: the
frozen eval/test-multilingual.jsonl (Spanish, Chinese, French, German; written before the language step existed).
Each is read in English by the model (understand/language.py), and the answer says so; a question that names its
paper gets a real answer citing it (with the number it asks for), one that names none never cites a wrong paper."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.eval.evaluation import EvalItem, answer_text, load_items
from assistant.eval.metrics import facts_hit

pytestmark = pytest.mark.llm

MULTILINGUAL = Path(__file__).resolve().parents[2] / "eval" / "test-multilingual.jsonl"
READ_IN_ENGLISH = "Read in English as “"


def _multilingual(named: bool) -> list[EvalItem]:
    """The frozen non-English questions (eval/README.md) that name their paper (a model, method or benchmark
    name, the same in every language) or not."""
    return [i for i in load_items(MULTILINGUAL) if ("anomal" not in " ".join(i.answer_facts)) == named]


@pytest.mark.slow  # 20-25 s a question: ./scripts/test.sh --all (CI); the default suite keeps the unnamed ones
@pytest.mark.parametrize("item", _multilingual(named=True), ids=lambda i: f"{i.id}-{i.question[:24]}")
def test_a_non_english_question_that_names_its_paper_gets_a_real_answer(bundled_assistant, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    """Not an abstention; the named paper cited first; every shown sentence cited; a question asking for a number
    gets it; the notice gives the English reading."""
    answer = bundled_assistant.new_session().ask(item.question)
    assert answer.notice.startswith(READ_IN_ENGLISH), (item.question, answer.notice)
    assert not answer.abstained, (item.question, answer.mode, answer.notice)
    cited = [c.paper.id for c in sorted(answer.citations, key=lambda c: c.n)]
    assert cited and cited[0] == item.gold_ids[0], (item.question, cited)
    assert answer.sentences and all(s.citations for s in answer.sentences)
    assert all(facts_hit(answer_text(answer), item.answer_facts)), (item.question, item.answer_facts, answer.text[:300])


@pytest.mark.parametrize("item", _multilingual(named=False), ids=lambda i: i.id)
def test_a_non_english_question_without_a_name_never_cites_a_wrong_paper(bundled_assistant, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    """The answer cites the right paper first, or abstains citing nothing; never another paper as the answer."""
    answer = bundled_assistant.new_session().ask(item.question)
    assert answer.notice.startswith(READ_IN_ENGLISH), (item.question, answer.notice)
    cited = [c.paper.id for c in sorted(answer.citations, key=lambda c: c.n)]
    if answer.abstained:
        assert cited == [] and answer.notice, (item.question, answer.notice)
    else:
        assert cited and cited[0] == item.gold_ids[0], (item.question, answer.mode, cited, answer.text[:200])
