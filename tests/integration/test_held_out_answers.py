"""Behaviour on the frozen held-out questions (eval/test.jsonl, issue 26.3): properties a user checks, never
exact strings. Through the real index and the answer path, with a scripted model that writes nothing the
verifier accepts, so every answer here is built by code from the abstracts (the path an answer ends on when no
sentence of the model passes its check).

* one-paper questions (lookup, fact, paraphrase, summary): the right paper is cited first and every asked
  fact (a number, a name) is in the answer;
* unanswerable questions: the answer abstains (or says "not stated") and cites nothing;
* false premises: the premise is named in the notice, not repeated as an answer, and the right paper is cited.

No rule, threshold or word list may be changed by looking at these items; a failure found here is listed in
``KNOWN_DEFECTS`` (a strict xfail: the test fails once the defect is fixed, so the mark must go) and reported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assistant.eval.evaluation import EvalItem, answer_text, load_items
from assistant.eval.metrics import facts_hit
from tests.support.fake_openai_server import FakeOpenAIServer

TEST = Path(__file__).resolve().parents[2] / "eval" / "test.jsonl"
UNVERIFIABLE = "Nothing here can be verified against any abstract."

#: Held-out items the assistant gets wrong when the set was frozen (issue 26), with the cause. (t014, a summary
#: that missed the sentence naming the mixture-of-experts framework, is answered since the trained sentence-role
#: classifier of issue 23; t023, 'How much faster is its sampling?' declared not stated because 'orders of
#: magnitude faster' has no digit, is answered since the trained 'stated' model is asked too.)
KNOWN_DEFECTS: dict[str, str] = {
    "t027": "'speech recognition for low-resource languages' (not in the corpus) is answered 'The paper is' the "
    "speech codec paper: similarity above tuning.CONFIDENT_MATCH_SIMILARITY",
}


def _items(*types: str) -> list[object]:
    items = [i for i in load_items(TEST) if i.type in types]
    return [
        pytest.param(i, id=i.id, marks=pytest.mark.xfail(reason=KNOWN_DEFECTS[i.id], strict=True))
        if i.id in KNOWN_DEFECTS
        else pytest.param(i, id=i.id)
        for i in items
    ]


def _checks(self_check: float, reading: float) -> Callable[[dict[str, Any]], float]:
    """The scripted model's P(yes): ``self_check`` for a sentence it is asked to check ("Sentence: ..."), ``reading``
    for the stated and named checks (does the abstract state the answer, is it the paper named)."""
    return lambda payload: self_check if "\nSentence: " in payload["messages"][-1]["content"] else reading


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    # a model whose sentences nothing supports, and whose self-check confirms nothing (premises included), but which
    # reads every abstract as stating the answer and being the paper named: what these answers show comes from code
    # and the abstracts
    with FakeOpenAIServer(lambda payload: UNVERIFIABLE, yes_probability=_checks(0.1, 0.9)) as s:
        yield s


@pytest.fixture(scope="module")
def reading_server():  # type: ignore[no-untyped-def]
    # the same model, now reading no abstract as stating the answer or being the paper named: an unanswerable
    # question's answer must then cite nothing, whichever check (the model's or the code's) decides it; what the real
    # model reads is measured on frozen sets (benchmarks/stated_check.py, named_check.py; docs/results/issue41)
    with FakeOpenAIServer(lambda payload: UNVERIFIABLE, yes_probability=_checks(0.1, 0.1)) as s:
        yield s


def _ask(scripted_assistant, server, item: EvalItem):  # type: ignore[no-untyped-def]
    with scripted_assistant(server) as assistant:
        session = assistant.new_session()
        for turn in item.turns[:-1]:
            session.ask(turn)
        return session.ask(item.question)


@pytest.mark.parametrize("item", _items("lookup", "fact", "paraphrase", "summary", "followup"))
def test_one_paper_question_cites_its_paper_and_gives_the_asked_facts(  # type: ignore[no-untyped-def]
        scripted_assistant, server, item: EvalItem) -> None:
    answer = _ask(scripted_assistant, server, item)
    cited = [c.paper.id for c in sorted(answer.citations, key=lambda c: c.n)]
    assert not answer.abstained, (item.question, answer.mode, answer.notice)
    assert cited and cited[0] == item.gold_ids[0], (item.question, cited)
    assert all(s.citations for s in answer.sentences)
    missing = [f for f, hit in zip(item.answer_facts, facts_hit(answer_text(answer), item.answer_facts)) if not hit]
    assert not missing, (item.question, missing, answer.text[:400])


@pytest.mark.parametrize("item", _items("compare", "topic"))
def test_several_paper_question_cites_every_gold_paper(scripted_assistant, server, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    answer = _ask(scripted_assistant, server, item)
    cited = {c.paper.id for c in answer.citations}
    assert set(item.gold_ids) <= cited, (item.question, sorted(cited))
    assert all(s.citations for s in answer.sentences)


@pytest.mark.parametrize("item", _items("unanswerable"))
def test_unanswerable_question_cites_nothing(scripted_assistant, reading_server, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    answer = _ask(scripted_assistant, reading_server, item)
    assert answer.abstained and not answer.citations, (item.question, answer.mode, answer.text[:200])
    assert answer.notice


@pytest.mark.parametrize("item", _items("adversarial"))
def test_false_premise_is_not_echoed_and_the_paper_is_cited(scripted_assistant, server, item: EvalItem) -> None:  # type: ignore[no-untyped-def]
    answer = _ask(scripted_assistant, server, item)
    cited = [c.paper.id for c in answer.citations]
    assert cited and cited[0] == item.gold_ids[0], (item.question, cited)
    premise = item.question.split(",")[0].removeprefix("Since ").strip()
    assert premise.lower() not in answer.text.lower()
    assert all(facts_hit(answer_text(answer), item.answer_facts)), (item.question, answer.text[:300])
