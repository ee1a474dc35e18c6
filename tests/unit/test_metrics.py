"""Pure tests of assistant.eval.metrics and the scoring glue in assistant.eval.evaluation (no index, no model)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from assistant.eval import metrics as M
from assistant.eval.evaluation import (
    EvalFormatError,
    EvalItem,
    evaluate_retrieval,
    load_items,
    parse_ks,
    retrieval_only_query,
    score_answer,
)
from assistant.types import Answer, AnswerSentence, Citation, Paper, PaperHit


def paper(pid: str) -> Paper:
    return Paper(pid, "ICLR 2025 Papers", f"Title {pid}", (), "", "text", pid.split("#")[0], int(pid.split("#")[1]))


def answer(sentences: list[tuple[str, tuple[int, ...], float]], cited: list[str], mode: str = "generated") -> Answer:
    return Answer(
        question="q", sentences=tuple(AnswerSentence(t, c, s) for t, c, s in sentences),
        citations=tuple(Citation(n, paper(pid), ()) for n, pid in enumerate(cited, start=1)), sources=(),
        mode=mode, model="m", notice="The indexed abstracts don't cover this question." if mode == "abstained" else "",  # type: ignore[arg-type]
        timings_ms={"retrieve": 10.0, "total": 100.0},
    )


# --- normalization and fact matching -------------------------------------------------------------

def test_normalize_rules() -> None:
    assert M.normalize("The Model\u2019s  ACCURACY\n is 93.5 \\%") == "the model's accuracy is 93.5%"
    assert M.normalize("costs $\\{12\\}$ and 2,864 items, 12,345,678 total") == \
        "costs 12 and 2864 items, 12345678 total"
    assert M.normalize("layers 1,2 and 3") == "layers 1,2 and 3"  # not a thousands separator


@pytest.mark.parametrize(("answer_text", "fact", "hit"), [
    ("They used 3,200 samples.", "3,200", True),
    ("They used 32,000 samples.", "3,200", False),       # 3200 must not match inside 32000
    ("They used 3200 samples.", "3,200", True),           # comma dropped on both sides
    ("Published in 2024.", "4", False),                   # 4 must not match inside 2024
    ("It uses 4 heads.", "4", True),
    ("A spatial model.", "SPA", False),                    # SPA must not match inside spatial
    ("SPA aligns models.", "SPA", True),
    ("learned prototypes of parts", "prototyp*", True),   # stem: left boundary only
    ("archetypal prototypes", "totyp*", False),            # stem still needs a left boundary
    ("the raw logits", "logit*", True),
    ("improves by 3.3\\%", "3.3%", True),                  # \% -> %
    ("improves by 3.3 %", "3.3%", True),                   # space before % removed
    ("costs $5$ dollars", "5", True),                      # $ dropped
    ("the model\u2019s memory", "model's memory", True),   # curly apostrophe
    ("Uses Florence-2 and GPT-4o.", "Florence2 | Florence-2 | Florence 2", True),
    ("Uses Qwen.", "Florence2 | Florence-2", False),
    ("TD(0) variant", "TD(0)", True),                      # regex metacharacters are escaped
    ("DUALFormer scales", "dualformer", True),             # case-insensitive
    ("Learning   to Retrieve\nby Trying", "Learning to Retrieve by Trying", True),
])
def test_fact_hit(answer_text: str, fact: str, hit: bool) -> None:
    assert M.fact_hit(answer_text, fact) is hit


def test_facts_hit_list_and_rate() -> None:
    hits = M.facts_hit("CADPrompt has 200 prompts.", ["CADPrompt", "200", "2000"])
    assert hits == [True, True, False]
    assert M.facts_hit_rate(hits) == pytest.approx(2 / 3)
    assert M.facts_hit_rate([]) is None
    assert M.fact_hit("anything", " | *") is False  # empty alternatives never match


# --- retrieval and citations ---------------------------------------------------------------------

def test_recall_at_k() -> None:
    gold = ["a#1", "b#2"]
    ranked = ["c#3", "a#1", "d#4", "b#2"]
    assert [M.recall_at_k(gold, ranked, k) for k in (1, 2, 3, 4, 10)] == [0.0, 0.5, 0.5, 1.0, 1.0]
    assert M.recall_at_k([], ranked, 5) is None


def test_citation_precision_recall() -> None:
    gold = ["a#1", "b#2"]
    assert M.citation_precision(["a#1", "x#9"], gold) == 0.5
    assert M.citation_recall(["a#1", "x#9"], gold) == 0.5
    assert M.citation_precision(["a#1", "a#1"], gold) == 1.0  # distinct ids
    assert M.citation_precision([], gold) == 0.0  # citing nothing on an answerable item
    assert M.citation_recall([], gold) == 0.0
    assert M.citation_precision(["a#1"], []) is None and M.citation_recall(["a#1"], []) is None


def test_abstention() -> None:
    assert M.abstention_correct(True, []) == 1.0
    assert M.abstention_correct(True, ["a#1"]) == 0.0  # abstains but cites: wrong
    assert M.abstention_correct(False, []) == 0.0


def test_percentile_and_latency() -> None:
    assert M.percentile([], 50) is None
    assert M.percentile([5.0], 95) == 5.0
    assert M.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert M.percentile(list(map(float, range(1, 101))), 95) == pytest.approx(95.05)
    lat = M.latency_summary([{"retrieve": 10.0, "total": 30.0}, {"retrieve": 20.0, "total": 50.0, "first_token": 7.0}])
    assert lat["retrieve"] == {"p50": 15.0, "p95": 19.5, "n": 2}
    assert lat["first_token"]["n"] == 1 and "generate" not in lat


def test_aggregate_skips_none() -> None:
    items = [{"type": "fact", "metrics": {"m": 1.0}}, {"type": "fact", "metrics": {"m": 0.0}},
             {"type": "unanswerable", "metrics": {"m": None}}]
    overall, by_type = M.aggregate(items, ["m"])
    assert overall == {"n": 3, "m": 0.5}
    assert by_type == {"fact": {"n": 2, "m": 0.5}, "unanswerable": {"n": 1, "m": None}}


# --- per-item scoring (evaluation.score_answer) ---------------------------------------------------

FACT = EvalItem("q1", "fact", ("How many?",), ("a#1",), ("16", "A-Bench"))
UNANSWERABLE = EvalItem("q2", "unanswerable", ("Which won an award?",), (), ())


def test_score_answerable_item() -> None:
    ans = answer([("A-Bench sampled from 16 models.", (1,), 0.8), ("It is big.", (2,), 0.2)], ["a#1", "b#2"])
    rec = score_answer(FACT, ans, ["b#2", "a#1"], (1, 3))
    m = rec["metrics"]
    assert (m["recall@1"], m["recall@3"]) == (0.0, 1.0)
    assert (m["citation_precision"], m["citation_recall"], m["facts_hit"]) == (0.5, 1.0, 1.0)
    assert m["false_abstention"] == 0.0 and m["abstention_accuracy"] is None
    assert "faithfulness" not in m  # 1.0 by construction (the verifier's own threshold): not reported
    assert rec["cited_ids"] == ["a#1", "b#2"] and rec["facts_hit"] == [True, True]


def test_markers_do_not_hit_facts() -> None:
    item = EvalItem("q3", "fact", ("?",), ("a#1",), ("1",))
    rec = score_answer(item, answer([("Nothing numeric here.", (1,), 0.9)], ["a#1"]), ["a#1"], (1,))
    assert rec["facts_hit"] == [False]  # the [1] marker is not answer text


def test_abstention_on_answerable_and_unanswerable() -> None:
    abstained = answer([], [], mode="abstained")
    m = score_answer(FACT, abstained, ["a#1"], (1,))["metrics"]
    assert m["false_abstention"] == 1.0 and m["citation_precision"] == 0.0
    m = score_answer(UNANSWERABLE, abstained, ["a#1"], (1,))["metrics"]
    assert m["abstention_accuracy"] == 1.0 and m["recall@1"] is None
    assert m["citation_precision"] is None and m["facts_hit"] is None and m["false_abstention"] is None
    answered = answer([("Paper A won.", (1,), 0.9)], ["a#1"])
    assert score_answer(UNANSWERABLE, answered, [], (1,))["metrics"]["abstention_accuracy"] == 0.0


# --- question file parsing and retrieval-only evaluation ------------------------------------------

def write_lines(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_load_items_valid(tmp_path: Path) -> None:
    rows = [{"id": "q1", "type": "lookup", "question": "Which?", "gold_ids": ["a#1"], "answer_facts": []},
            {"id": "q2", "type": "followup", "turns": ["Which?", "And it?"], "gold_ids": ["a#1"],
             "answer_facts": ["x"]},
            {"id": "q3", "type": "unanswerable", "question": "Who won?", "gold_ids": [], "answer_facts": [],
             "notes": "n"}]
    items = load_items(write_lines(tmp_path, [json.dumps(r) for r in rows[:2]] + ["", json.dumps(rows[2])]))
    assert [i.id for i in items] == ["q1", "q2", "q3"]
    assert items[1].question == "And it?" and retrieval_only_query(items[1]) == "And it? (Which?)"
    assert not items[2].answerable
    assert len(load_items(write_lines(tmp_path, [json.dumps(r) for r in rows]), limit=2)) == 2


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "invalid JSON"),
    ('["a"]', "expected a JSON object"),
    ('{"id": "q1", "type": "riddle", "question": "?", "gold_ids": [], "answer_facts": []}', "'type'"),
    ('{"id": "q1", "type": "fact", "gold_ids": ["a#1"], "answer_facts": []}', "'question'"),
    ('{"id": "q1", "type": "followup", "turns": [], "gold_ids": ["a#1"], "answer_facts": []}', "turns"),
    ('{"id": "q1", "type": "fact", "question": "Q?", "gold_ids": "a#1", "answer_facts": []}', "gold_ids"),
    ('{"id": "q1", "type": "fact", "question": "Q?", "gold_ids": [], "answer_facts": []}', "gold_ids"),
    ('{"id": "q1", "type": "unanswerable", "question": "Q?", "gold_ids": ["a#1"], "answer_facts": []}', "gold_ids"),
    ('{"id": "q1", "type": "fact", "question": "Q?", "gold_ids": ["a#1"]}', "answer_facts"),
])
def test_load_items_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    ok = '{"id": "q0", "type": "fact", "question": "Q?", "gold_ids": ["a#1"], "answer_facts": []}'
    path = write_lines(tmp_path, [ok, line])
    with pytest.raises(EvalFormatError, match=f"q.jsonl:2: .*{message}"):
        load_items(path)


def test_load_items_duplicate_and_empty(tmp_path: Path) -> None:
    ok = '{"id": "q0", "type": "fact", "question": "Q?", "gold_ids": ["a#1"], "answer_facts": []}'
    with pytest.raises(EvalFormatError, match=r"q.jsonl:2: duplicate id 'q0' \(first on line 1\)"):
        load_items(write_lines(tmp_path, [ok, ok]))
    with pytest.raises(EvalFormatError, match="no questions"):
        load_items(write_lines(tmp_path, [""]))


def test_parse_ks() -> None:
    assert parse_ks("10,1, 5,3,5") == (1, 3, 5, 10)
    for bad in ("", "a,b", "0,1"):
        with pytest.raises(EvalFormatError):
            parse_ks(bad)


class FakeRanker:
    """Returns a fixed ranking whatever the query; records queries and top_k."""

    def __init__(self, ranking: list[str]) -> None:
        self.papers = {pid: paper(pid) for pid in ranking}
        self.calls: list[tuple[str, int | None]] = []
        self.catalog = SimpleNamespace(venues=lambda: [])  # no venue words: nothing narrows

    def query(self, text: str, cache: object = None) -> str:
        return text

    def retrieve(
        self, query: str, top_k: int | None = None, *, aspects: bool = False, allowed: object = None
    ) -> list[PaperHit]:
        self.calls.append((query, top_k))
        return [PaperHit(self.papers[p], 1.0, 0.5, (), ()) for p in list(self.papers)[: top_k or 5]]


def test_evaluate_retrieval_report() -> None:
    ranker = FakeRanker(["b#2", "a#1", "c#3"])
    items = [FACT, UNANSWERABLE, EvalItem("q4", "followup", ("Which?", "And it?"), ("c#3",), ())]
    report = evaluate_retrieval(ranker, items, (1, 3))  # type: ignore[arg-type]
    assert ranker.calls[2] == ("And it? (Which?)", 3)
    assert report["overall"] == {"n": 3, "recall@1": 0.0, "recall@3": 1.0}
    assert report["by_type"]["unanswerable"]["recall@3"] is None
    assert report["items"][0]["retrieved_ids"] == ["b#2", "a#1", "c#3"]
    assert set(report["latency_ms"]) == {"retrieve"}


def test_topic_members_keep_the_papers_about_the_topic() -> None:
    """The trained membership model keeps papers whose evidence is strong and whose title and abstract carry
    the topic, and drops one that scores far below them and shares none of its words, and one under the floor."""
    from assistant.types import Evidence
    from assistant.understand.intents import topic_members

    def hit(pid: str, title: str, text: str, best: float) -> PaperHit:
        p = Paper(pid, "ICLR 2025 Papers", title, (), "", text, pid.split("#")[0], int(pid.split("#")[1]))
        return PaperHit(p, 1.0, best - 0.1, (Evidence(pid, 0, text, best),), (text,), (best,))

    topic = "papers on federated learning"
    hits = [
        hit("a#1", "Federated Learning with Noisy Clients", "We study federated learning with noisy clients.", 0.82),
        hit("b#2", "Personalized Federated Optimization", "A personalized federated learning method.", 0.74),
        hit("c#3", "Image Segmentation at Scale", "We segment images with a new decoder.", 0.46),
        hit("d#4", "Federated Bandits", "Federated learning of bandits.", 0.30),
    ]
    assert [h.paper.id for h in topic_members(topic, hits, 0.44)] == ["a#1", "b#2"]
    assert topic_members(topic, hits, 0.9) == []  # the floor: nothing is about the topic
    assert topic_members(topic, [], 0.44) == []


def test_an_extractive_summary_states_problem_approach_and_result() -> None:
    """The best-scoring sentence is background; the summary still takes the problem, the contribution and the
    key result (each the best of its role), in abstract order."""
    from assistant.answer.extractive import summary_sentences

    sentences = ("Graphs are everywhere in science.",                         # other (background)
                 "However, existing models struggle with long-range edges.",  # problem
                 "We propose LongNet, a transformer for long-range edges.",   # approach
                 "LongNet outperforms baselines by 5 points on 3 benchmarks.",  # result
                 "Code is available at https://example.org.")                 # other
    hit = PaperHit(paper("g#1"), 1.0, 0.5, (), sentences, (0.9, 0.5, 0.6, 0.4, 0.8))
    assert [e.sentence_index for e in summary_sentences(hit, 3)] == [1, 2, 3]
    assert [e.sentence_index for e in summary_sentences(hit, 2)] == [2, 3]
    assert [e.sentence_index for e in summary_sentences(hit, 4)] == [0, 1, 2, 3]  # then the best-scoring other


def test_a_split_keeps_only_its_items_and_an_unknown_split_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json as _json

    f = tmp_path / "q.jsonl"
    rows = [{"id": f"n{i}", "type": "lookup", "question": "Which?", "gold_ids": ["x"], "answer_facts": [],
             "split": "val" if i % 2 else "test"} for i in range(4)]
    f.write_text("\n".join(_json.dumps(r) for r in rows))
    assert [it.id for it in load_items(f, split="val")] == ["n1", "n3"]
    assert [it.split for it in load_items(f)] == ["test", "val", "test", "val"]
    with pytest.raises(EvalFormatError, match="no questions with split 'dev'.*test, val"):
        load_items(f, split="dev")
