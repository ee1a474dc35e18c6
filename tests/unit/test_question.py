"""Question facts (what is asked), premises, and the sentence picking / not-stated rules on made-up papers."""

from __future__ import annotations

import pytest

from assistant.answer.extractive import answers_request, pick_sentences, refocus
from assistant.types import Paper, PaperHit
from assistant.understand.question import analyze, premise_facts, premises, states_quantity


def _hit(pid: str, title: str, sentences: list[str]) -> PaperHit:
    paper = Paper(pid, "V", title, (), "", " ".join(sentences), "f.txt", 1)
    return PaperHit(paper, 0.1, 0.5, (), tuple(sentences), tuple(0.5 for _ in sentences))


CODEC = _hit("c", "Scaling Transformers for Speech Coding", [
    "Audio tokenization is a vital part of modern pipelines.",
    "We apply a transformer with large parameter count and a new bottleneck, reaching 400 and 700 bits per second.",
    "The models out-perform existing baselines.",
])
BENCH = _hit("b", "A-Bench: A Benchmark", [
    "Evaluating generated images is hard.",
    "Ultimately, 2,864 images from 16 text-to-image models are sampled.",
])


def test_analyze_reads_names_quantities_and_kinds() -> None:
    f = analyze("How many AI-generated images are in A-Bench, and how many text-to-image models produced them?")
    assert f.entities == ("A-Bench",) and f.quantity and set(f.measured) == {"imag", "model"}
    assert analyze("What accuracy did GPT-4o get on the NUPA benchmark?").entities == ("GPT-4o", "NUPA")
    assert analyze("Which paper proposes a dual graph transformer?").which_paper
    # a common word in capitals is emphasis, not a name (questions-8 val w059 was moved to a paper that says "more")
    assert analyze("which architectures were found to be MORE sensitive than transformers?").entities == ()
    assert not analyze("Which models did it beat?").which_paper
    assert analyze("What does LeReT stand for?").expansion
    assert analyze("Which ICLR 2025 paper uses LLM agents?").entities == ()


def test_a_number_must_sit_next_to_the_measured_noun() -> None:
    f = analyze("How many parameters does the speech codec have?")
    assert not states_quantity(f, CODEC.sentences[1])  # "large parameter count ... 400 and 700 bits"
    assert states_quantity(analyze("How many text-to-image models were used?"), BENCH.sentences[1])


def test_a_false_premise_is_answered_with_the_sentence_that_negates_it() -> None:
    em = _hit("e", "EM-LLM", ["We introduce EM-LLM, which handles long contexts with no fine-tuning.",
                              "It runs on 10 million tokens."])
    q = "How long does it take to fine-tune EM-LLM on episodic data?"
    assert "no fine-tuning" in pick_sentences(em, analyze(q), q, 1)[0].text


def test_refocus_prefers_the_paper_that_introduces_the_named_thing() -> None:
    nupa = _hit("n", "Number Cookbook", ["We investigate the numerical understanding ability (NUPA) of LLMs."])
    app = _hit("a", "App Control", ["Our model beats GPT-4o by 19%."])
    facts = analyze("What accuracy did GPT-4o get on the NUPA benchmark?")
    assert refocus([app, nupa], facts)[0] is nupa


def test_picks_the_sentence_with_the_requested_figure() -> None:
    q = "How many text-to-image models were used?"
    assert "16 text-to-image" in pick_sentences(BENCH, analyze(q), q, 1)[0].text
    assert answers_request(analyze(q), [BENCH.sentences[1]]) and not answers_request(analyze(q), [BENCH.sentences[0]])


def test_premises_are_checkable_claims_only() -> None:
    assert premises("Since ControlAR is a diffusion model, how does it attach spatial controls?") == [
        "ControlAR is a diffusion model."]
    assert premises("LeReT reportedly improved retrieval accuracy by 42%. What drove such a big jump?") == [
        "LeReT improved retrieval accuracy by 42%."]
    assert premises("I am new to this field. Which paper proposes DUALFormer?") == []
    assert premises("Which paper proposes DUALFormer?") == []
    f = premise_facts("LeReT improved retrieval accuracy by 42%.")
    assert f.quantity and "accuraci" in f.measured  # the Snowball stem of "accuracy"


def test_a_why_question_takes_its_statement_for_granted() -> None:
    """What a why-question asks the reason for is a premise (direction and rank included); one that names nothing
    checkable ("why is continual learning hard?") is not."""
    assert premises("Why does T2V-Turbo-v2 score worse than Kling on VBench?") == [
        "T2V-Turbo-v2 score worse than Kling on VBench."]
    assert premises("How come EM-LLM needs fine-tuning?") == ["EM-LLM needs fine-tuning."]
    assert premises("Is LeReT good? Why does LeReT improve retrieval by 29%?") == ["LeReT improve retrieval by 29%."]
    assert premises("Why didn't LeReT improve retrieval by 29%?") == []  # negative: not rebuilt
    assert premises("why is continual learning hard?") == []
    assert premises("What does DUALFormer do, and why?") == []


def test_clauses_split_a_question_into_its_aspects() -> None:
    from assistant.lang.text import clauses

    q = ("Is there work on teaching face-verification systems with made-up portraits, where the invented "
         "people are pushed far apart on a ball-shaped surface?")
    assert clauses(q) == ["Is there work on teaching face-verification systems", "made-up portraits",
                          "the invented people are pushed far apart on a ball-shaped surface"]
    assert clauses("What is SPA?") == []  # one aspect: nothing to cover separately
    assert clauses("Which paper uses graphs and trains transformers?") == []  # "paper uses graphs": one content word
    assert clauses("Which paper scales graph transformers, and which benchmark does it release?") == [
        "paper scales graph transformers", "benchmark does it release"]


def test_definition_questions_ask_what_a_named_thing_is_or_does() -> None:
    from assistant.understand.question import analyze

    for q in ("What is HComP-Net?", "What does LiMAC do?", "What is GIMF, and what problems does it solve?",
              "What is SPA in the LLM alignment paper?"):
        assert analyze(q).definition, q
    for q in ("What accuracy did LeReT reach?", "What is the Fourier head?", "Which paper introduces A-Bench?",
              "What is the main finding of the grokking paper?"):
        assert not analyze(q).definition, q


def test_detail_query_drops_the_words_that_name_the_paper() -> None:
    from assistant.answer.extractive import detail_query

    title = "qNBO: quasi-Newton Meets Bilevel Optimization"
    assert detail_query("On which real-world tasks is the quasi-Newton bilevel optimization framework evaluated?",
                        title) == \
        "On which real-world tasks is the framework evaluated?"
    assert detail_query("What is qNBO?", title) == "What is qNBO?"  # nothing would be left to ask
    assert detail_query("How fast is it?", title) == "How fast is it?"  # no title word in it


def test_a_percentage_or_gain_is_the_number_asked_for_whatever_noun_is_near() -> None:
    from assistant.understand.question import analyze, states_quantity

    asked = analyze("What percentage of the ground-truth labels does SPA use?")
    assert states_quantity(asked, "We achieve this with only 3.3% of the ground-truth preference labels.")
    assert not states_quantity(asked, "We use 10 seed prompts from the dataset.")  # a count, not a share
    gain = analyze("What CLIPScore gain does CMLoRA report?")
    assert states_quantity(gain, "CMLoRA achieves an average improvement of 2.19% in CLIPScore over baselines.")


def test_question_parts_split_a_second_ask() -> None:
    from assistant.understand.question import question_parts

    assert question_parts("What success rate does ResDex reach, and how long does its training take?") == [
        "What success rate does ResDex reach", "how long does its training take?"]
    assert question_parts("Which benchmarks is EM-LLM evaluated on, and over how many tokens?") == [
        "Which benchmarks is EM-LLM evaluated on", "over how many tokens?"]
    assert question_parts("Which paper introduces A-Bench? How big is it?") == ["Which paper introduces A-Bench?",
                                                                                "How big is it?"]
    assert question_parts("Which paper uses graphs and images for MOCO?") == ["Which paper uses graphs and images for "
                                                                              "MOCO?"]


@pytest.mark.parametrize(
    ("title", "entity", "named"),
    [
        ("A-Bench: Are LMMs Masters at Evaluating AI-generated Images?", "AR", False),  # an acronym keeps its case
        ("A-Bench: Are LMMs Masters at Evaluating AI-generated Images?", "LMM", True),
        ("A-Bench: Are LMMs Masters at Evaluating AI-generated Images?", "a bench", True),
        ("ControlAR: Controllable Image Generation with Autoregressive Models", "AR", False),  # not at a word's start
        ("MatryoshkaKV: Adaptive KV Compression via Trainable Orthogonal Projection", "Matryoshka", True),
        ("Multi-LoRA Composition for Image Generation", "LoRAs", True),
        ("Unifying KV cache compression", "KV-cache", True),
        ("DUALFormer: Dual Graph Transformer", "former", False),
    ],
)
def test_a_name_matches_from_a_word_start_and_an_acronym_in_its_case(title: str, entity: str, named: bool) -> None:
    """Issue 60 (conversations-5: 'they also claim it "surprisingly empowers AR models …"' moved to A-Bench, whose
    title says "Are"): a question names a paper only where the name starts a word of its title."""
    from assistant.understand.question import names

    assert names(title, entity) is named
