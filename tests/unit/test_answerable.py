"""verify/answerable.py on made-up papers: "not stated" decided over every sentence of the abstract, the exact
number-premise check, and the near-miss words (issue 23, part 3). The embedder is a deterministic bag of
words (no model): cosines come from shared words, so these tests pin the exact parts of the decision."""

from __future__ import annotations

import hashlib

import numpy as np

from assistant.types import Paper, PaperHit
from assistant.understand.question import analyze, asked_thing, counted_words
from assistant.verify.answerable import answerability, detail_words, false_premise_number, near_miss, sentence_fits


def _bag(texts: list[str]) -> list[list[float]]:
    out = []
    for t in texts:
        v = np.zeros(64)
        for w in t.lower().split():
            v[int(hashlib.md5(w.strip("?.,").encode()).hexdigest(), 16) % 64] += 1.0
        out.append(list(v / (np.linalg.norm(v) or 1.0)))
    return out


def _hit(pid: str, title: str, sentences: list[str]) -> PaperHit:
    paper = Paper(pid, "V", title, (), "", " ".join(sentences), "f.txt", 1)
    return PaperHit(paper, 0.1, 0.5, (), tuple(sentences), tuple(0.5 for _ in sentences))


BIRDS = _hit("birds", "Urban Noise Reshapes Song in White-crowned Sparrows", [
    "White-crowned sparrows sing in cities where traffic noise masks their song.",
    "We asked whether urban birds shift song frequency.",
    "Over three seasons we recorded 412 males and 380 females across 30 sites.",
    "Song complexity rose by 12% at the noisiest sites, and our model outperforms a null model.",
])
CODEC = _hit("c", "Scaling Transformers for Speech Coding", [
    "Audio tokenization is a vital part of modern pipelines.",
    "We apply a transformer with large parameter count and a new bottleneck, reaching 400 and 700 bits per second.",
])


def _verdict(question: str, hit: PaperHit):  # type: ignore[no-untyped-def]
    return answerability(question, analyze(question), [hit], _bag)


def test_detail_words_leave_out_the_title_and_the_frame_of_the_question() -> None:
    assert detail_words("what simulator did the grasping one run in?", "Universal Dexterous Grasping") == {"simul",
                                                                                                           "run"}
    assert detail_words("Which LMMs scored best on it?", "A-Bench: Are LMMs Masters?") == {"score", "best"}
    assert detail_words("Which models did it beat?", "LiMAC") == {"rel:beats"}  # a verifier relation, any wording


def test_a_count_in_a_later_sentence_answers_a_question_worded_otherwise() -> None:
    # the old rule looked for a number next to "sparrows" and declared it not stated
    v = _verdict("How many male sparrows were recorded?", BIRDS)
    assert v.stated and v.best is not None and "412 males" in v.best.text
    assert counted_words("How many male sparrows were recorded?") == ["male", "sparrows"]


def test_a_number_far_from_the_counted_word_does_not_answer() -> None:
    v = _verdict("How many parameters does the speech codec have?", CODEC)
    assert not v.stated  # "large parameter count ... 400 and 700 bits per second"


def test_a_thing_no_sentence_names_is_not_stated() -> None:
    v = _verdict("What microphone did they record with?", BIRDS)
    assert not v.stated and v.missing == ("microphone",)
    assert asked_thing("What microphone did they record with?") == ["microphone"]
    assert not _verdict("does it work for parrots too?", BIRDS).stated


def test_a_relation_in_other_words_is_stated() -> None:
    assert _verdict("Which models did it beat?", BIRDS).stated  # "outperforms"


def test_each_paper_in_focus_is_read() -> None:
    q = "How many females were recorded?"
    assert not answerability(q, analyze(q), [CODEC], _bag).stated
    assert answerability(q, analyze(q), [CODEC, BIRDS], _bag).stated


def test_a_number_the_abstract_does_not_state_is_a_false_premise() -> None:
    q = "The sparrow paper reports 20%, right?"
    wrong = false_premise_number(q, BIRDS, sentence_fits(q, analyze(q), BIRDS, _bag))
    assert wrong is not None and wrong.claimed == "20%" and wrong.stated == ("12%",) and wrong.index == 3
    q2 = "The sparrow paper reports 12%, right?"
    assert false_premise_number(q2, BIRDS, sentence_fits(q2, analyze(q2), BIRDS, _bag)) is None
    q3 = "Does it report a 20x speed-up?"  # no number of that unit in the abstract: nothing to correct with
    assert false_premise_number(q3, BIRDS, sentence_fits(q3, analyze(q3), BIRDS, _bag)) is None


def test_near_miss_says_which_words_match_and_which_do_not() -> None:
    found, missing = near_miss("Which paper records song of urban parrots?", BIRDS)
    assert "urban" in found and "song" in found and missing == ("parrots",)


def test_which_n_things_needs_a_sentence_that_lists_them() -> None:
    games = _hit("g", "A Head for Agents", [
        "The head improves returns across four benchmark Atari games by as much as 377%, and helps forecasting.",
    ])
    q = "Which four Atari games did they use?"
    assert asked_thing(q) == ["four", "Atari", "games"]
    assert not _verdict(q, games).stated  # the count restated, the games never named
    listed = _hit("l", "A Head for Agents", ["We test on four Atari games: Pong, Breakout, Seaquest and Qbert."])
    assert _verdict(q, listed).stated
    before = _hit("b", "A Head for Agents", ["We test on the Pong, Breakout, Seaquest and Qbert Atari games."])
    assert _verdict(q, before).stated


def test_missing_words_follow_the_question_and_leave_out_contraction_parts() -> None:
    # the notice lists them: "gives no number for s or size" came from the "'s" of "one's" and a set's order
    question = "what batch size and learning rate did they use in the birds one's experiments"
    v = _verdict(question, BIRDS)
    assert "s" not in v.missing and "t" not in v.missing
    assert list(v.missing) == sorted(v.missing, key=question.split().index)  # the question's order
    assert v.missing[:2] == ("batch", "size")
