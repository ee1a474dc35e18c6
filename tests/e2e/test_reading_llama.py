"""The bundled server's model class (assistant/llm/bundled_server.py ``reading_llama``) computes only the logits that
are read, yet writes the same text and reads the same log-probabilities as llama-cpp-python's own ``Llama``, also
after a state is saved and restored (what its prompt cache does between papers). Real model, in this process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assistant.ingest.corpus import read_papers
from assistant.llm.bundled_server import reading_llama
from assistant.llm.local import bundled_gguf_path
from assistant.llm.prompts import READ_CHECK, READ_WRITE, reading_messages
from tests.conftest import SEEDS

pytestmark = pytest.mark.llm


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[Any, Any]]:
    from llama_cpp import Llama

    gguf = str(bundled_gguf_path())
    options: dict[str, Any] = {"n_ctx": 1024, "n_threads": 2, "logits_all": True, "verbose": False}  # as served
    yield Llama(gguf, **options), reading_llama()(gguf, **options)


def _papers() -> list[tuple[str, str]]:
    """Two seed papers, each cut to its first two sentences (a short prompt keeps the test fast)."""
    papers = read_papers([SEEDS])[:2]
    return [(p.title, ". ".join(p.text.split(". ")[:2]) + ".") for p in papers]


def _check(model: Any, source: tuple[str, str], sentence: str) -> list[tuple[str, float]]:
    reply = model.create_chat_completion(
        reading_messages(source, READ_CHECK.format(sentence=sentence)),
        max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=5,
    )
    return [(t["token"], t["logprob"]) for t in reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """The same top tokens in the same order, each log-probability within 0.02 (a batch of one output row is
    summed in another order than a batch of all: the last digits may differ)."""
    return [t for t, _ in a] == [t for t, _ in b] and all(abs(x - y) < 0.02 for (_, x), (_, y) in zip(a, b))


def _session(model: Any) -> tuple[list[tuple[str, float]], str, list[tuple[str, float]], Any]:
    """What the server does between two papers: a check of the first paper, its state saved, an answer written about
    the second, the first's state restored (its prompt cache), then another check of the first."""
    first, second = _papers()
    before = _check(model, first, first[1].split(". ")[0])
    kept = model.save_state()
    write = READ_WRITE.format(question="What does this paper propose?", task="Answer in one sentence.", picked="")
    reply = model.create_chat_completion(reading_messages(second, write), max_tokens=24, temperature=0.0)
    model.load_state(kept)
    after = _check(model, first, "The authors release no code.")
    return before, reply["choices"][0]["message"]["content"], after, kept


def test_the_same_text_and_log_probabilities_with_a_state_saved_and_restored(models: tuple[Any, Any]) -> None:
    stock, reading = models
    stock_before, stock_text, stock_after, stock_kept = _session(stock)
    before, text, after, kept = _session(reading)
    assert _same(before, stock_before) and _same(after, stock_after)
    assert text and text == stock_text
    assert kept.scores.shape == (1, reading.n_vocab()) and stock_kept.scores.shape[0] > 100  # stock: a row a token


def test_each_prompt_logs_how_many_of_its_tokens_were_read(models: tuple[Any, Any],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import re

    _, reading = models
    first, second = _papers()
    _check(reading, second, "The authors release code.")  # another paper in the context
    capsys.readouterr()
    _check(reading, first, "The authors release code.")
    _check(reading, first, "The method needs no labels.")  # the same reading, another sentence
    lines = [m.groups() for m in re.finditer(r"prompt cache: (\d+)-token prompt, (\d+) read", capsys.readouterr().err)]
    assert len(lines) == 2
    (n1, read1), (n2, read2) = ((int(a), int(b)) for a, b in lines)
    assert read1 > 50 and n1 - read1 < 60  # a paper not in the context: all but the system prompt is read
    assert 0 < read2 < n2 - 40  # its reading reused: only the new sentence and the question are read
