"""Conversations a user would have (issue 12): switching papers mid-conversation, naming a paper by author,
method or title words, "compare it with X", ordinals across a list, a pronoun with nothing to refer to.
Run through ``ChatSession`` with the real retriever and embeddings; the scripted model writes nothing
verifiable, so every answer is built from abstract sentences and the cited papers show the resolution."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.fake_openai_server import FakeOpenAIServer

A, B = "000_43469673d6f8aaa0.txt", "004_c45bebc30e22eceb.txt"
DUALFORMER, LOCAL_PATTERNS, HCOMPNET, ABENCH = f"{A}#1", f"{A}#2", f"{A}#4", f"{A}#8"
ADAM, MATRYOSHKA, LUCIDPPN, CAD, EMLLM = f"{B}#3", f"{B}#9", f"{B}#13", f"{B}#14", f"{B}#17"

#: (question, expected) per turn; expected = the cited paper ids (a set), "clarify", or "abstained".
CONVERSATIONS: dict[str, list[tuple[str, Any]]] = {
    "switch papers by description": [
        ("How does EM-LLM handle very long contexts?", {EMLLM}),
        ("Summarize the paper about compressing the KV cache along the feature dimension.", {MATRYOSHKA}),
        ("How does the paper on Adam with bandit-based batch selection choose its mini-batches?", {ADAM}),
    ],
    "compare it with a named paper": [
        ("How does EM-LLM handle very long contexts?", {EMLLM}),
        ("Compare it with the MatryoshkaKV paper on KV cache compression.", {EMLLM, MATRYOSHKA}),
    ],
    "it is the named paper: never compared with itself": [
        ("How does EM-LLM handle very long contexts?", {EMLLM}),
        ("How does it differ from the episodic memory one?", "clarify"),
    ],
    "pronoun in a first question": [
        ("What benchmarks did they evaluate it on?", "clarify"),
    ],
    "pronoun after a failed turn": [
        ("What is the capital of France?", "abstained"),
        ("What benchmarks did they evaluate it on?", "clarify"),
    ],
    "by author, known and unknown": [
        ("What does the paper by Yalong Jiang propose?", {LOCAL_PATTERNS}),
        ("What does the paper by John Doe propose?", "abstained"),
    ],
    "author mid-conversation": [
        ("Which paper proposes A-Bench?", {ABENCH}),
        ("What does the paper by Mateusz Pach propose?", {LUCIDPPN}),
    ],
    "method name mid-conversation": [
        ("Which paper proposes A-Bench?", {ABENCH}),
        ("How does the DUALFormer paper handle large graphs?", {DUALFORMER}),
    ],
    "title words mid-conversation": [
        ("How does EM-LLM handle very long contexts?", {EMLLM}),
        ("Summarize Generating CAD Code with Vision-Language Models.", {CAD}),
    ],
    "named pair, then which of them, then summarize them": [
        ("How does HComP-Net differ from LucidPPN?", {HCOMPNET, LUCIDPPN}),
        ("Which of them needs less data?", {HCOMPNET, LUCIDPPN}),
        ("Summarize them", {HCOMPNET, LUCIDPPN}),
    ],
    "former and latter": [
        ("How does HComP-Net differ from LucidPPN?", {HCOMPNET, LUCIDPPN}),
        ("Summarize the latter.", {LUCIDPPN}),
    ],
    "a label from an earlier turn": [
        ("How does EM-LLM handle very long contexts?", {EMLLM}),
        ("Which paper proposes A-Bench?", {ABENCH}),
        ("Summarize [1].", {EMLLM}),
    ],
    "the question's own paper beats the pronoun's when they clearly disagree": [
        ("How does EM-LLM handle very long contexts?", {EMLLM}),
        ("How does it check design scripts written by language models using feedback from a vision-language model?", {CAD}),
    ],
    "compare with a name no paper mentions": [
        ("Compare DUALFormer with HyenaDNA-XL.", "abstained"),
    ],
    "a pronoun follow-up stays on its paper": [
        ("Which paper proposes A-Bench?", {ABENCH}),
        ("How many models did they sample images from?", {ABENCH}),
    ],
}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(["Nothing verifiable here at all, sorry friend."] * 200) as s:
        yield s


@pytest.mark.parametrize("name", list(CONVERSATIONS))
def test_conversation_cites_the_papers_the_user_means(name: str, server: FakeOpenAIServer, scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with scripted_assistant(server) as assistant:
        session = assistant.new_session()
        for question, expected in CONVERSATIONS[name]:
            answer = session.ask(question)
            cited = {c.paper.id for c in answer.citations}
            where = f"{name!r}, turn {question!r}: mode={answer.mode} cited={sorted(cited)} notice={answer.notice!r}"
            if expected in ("clarify", "abstained"):
                assert answer.mode == expected and not cited, where
            else:
                assert cited == expected, where
                assert all(s.citations for s in answer.sentences), where
                if "disagree" in name and question == CONVERSATIONS[name][-1][0]:
                    assert answer.notice.startswith("About “Generating CAD Code"), answer.notice  # says which paper


def test_ordinals_across_a_list_of_three(server: FakeOpenAIServer, scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with scripted_assistant(server) as assistant:
        session = assistant.new_session()
        listed = session.ask("Which papers introduce a new benchmark? List all of them.")
        ids = [c.paper.id for c in sorted(listed.citations, key=lambda c: c.n)]
        assert len(ids) >= 3, ids
        for word, i in (("second", 1), ("third", 2), ("first", 0)):
            answer = session.ask(f"Summarize the {word} one.")
            assert {c.paper.id for c in answer.citations} == {ids[i]}, (word, answer.text)


def test_follow_ups_answer_what_they_ask(server: FakeOpenAIServer, scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    with scripted_assistant(server) as assistant:
        session = assistant.new_session()
        session.ask("Which paper proposes A-Bench?")
        assert "16" in session.ask("How many models did they sample images from?").text
        session.ask("How does HComP-Net differ from LucidPPN?")
        choice = session.ask("Which of them needs less data?")
        assert choice.intent == "choice" and choice.comparison is None  # not the same table again
        # one sentence per paper of the pair, each citing only its own paper (labels are the session's)
        assert {c.paper.id for c in choice.citations} == {HCOMPNET, LUCIDPPN}, choice.text
        assert all(len(s.citations) == 1 for s in choice.sentences)
        assert len({s.citations for s in choice.sentences}) == 2
        both = session.ask("Summarize them")
        assert {c.paper.id for c in both.citations} == {HCOMPNET, LUCIDPPN}
        assert len({s.citations for s in both.sentences}) == 2  # one summary per paper


def test_a_sentence_that_only_restates_a_title_answers_only_which_paper(embed_model, seeded_settings) -> None:  # type: ignore[no-untyped-def]
    from assistant.verify.attribution import Attributor
    from assistant.service import build_retriever

    retriever, embedder = build_retriever(seeded_settings, embed_model)
    hits = retriever.hits_for("CAD code", [CAD])
    echo = "Generating CAD Code with Vision-Language Models for 3D Designs 3."
    assert Attributor(hits, embedder, seeded_settings.support_threshold, "What benchmarks did they evaluate it on?").attribute(echo) is None
    named = "The paper is called Generating CAD Code with Vision-Language Models for 3D Designs."
    verdict = Attributor(hits, embedder, seeded_settings.support_threshold, "Which paper generates CAD code?").attribute(named)
    assert verdict is not None and verdict[0].citations == (1,)


def test_a_sentence_crediting_the_wrong_author_is_dropped(embed_model, seeded_settings) -> None:  # type: ignore[no-untyped-def]
    from assistant.verify.attribution import Attributor
    from assistant.service import build_retriever

    retriever, embedder = build_retriever(seeded_settings, embed_model)
    grok = f"{A}#5"
    hits = retriever.hits_for("grokking", [LOCAL_PATTERNS, grok])
    attributor = Attributor(hits, embedder, seeded_settings.support_threshold, "What does the paper by Yalong Jiang propose?")
    wrong = "The paper by Yalong Jiang proposes GrokTransfer, a method for accelerating grokking in training neural networks."
    assert attributor.attribute(wrong) is None  # the grokking paper is by Zhiwei Xu et al.
    right = "The paper by Zhiwei Xu proposes GrokTransfer, a method for accelerating grokking in training neural networks."
    verdict = attributor.attribute(right)
    assert verdict is not None and verdict[0].citations == (2,)
    by_last_name = "The paper by Xu proposes GrokTransfer, a method for accelerating grokking in training neural networks."
    assert attributor.attribute(by_last_name) is not None
