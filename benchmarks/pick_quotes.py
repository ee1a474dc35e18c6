"""The quotes a reader gets when nothing the model wrote passes its check: the sentences code chose (the answer by
code, ``IntentStrategy.answer_by_code``) against the sentences the model picks reading the paper
(:func:`picked_sentences`, issue 59: one token read from log-probabilities over the labels of the paper's
reading), scored by the facts of eval items they contain.

For each answerable item of the question files with one gold paper and facts (``--split`` of the frozen sets): the
answer by code is built with a model that writes and picks nothing (every shown sentence is then a quote chosen by
code); the model's picks are asked of the gold paper's reading through the bundled 1.5B server (its RAM prompt cache
keeps each paper read). Prints, per file and in all: items, facts found in the code's quotes, in the model's picks, in
its first pick alone, and the mean number of sentences each shows. No threshold is chosen here.

Usage: ``.venv/bin/python benchmarks/pick_quotes.py --questions eval/questions-8.jsonl eval/dev.jsonl --split val``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from assistant.config import load_settings
from assistant.eval.metrics import facts_hit
from assistant.lang.text import split_sentences
from assistant.llm.client import OpenAIChatBackend
from assistant.llm.prompts import READER_SYSTEM, sanitize_source_text
from assistant.offline import enforce_offline

#: The pick, asked of a paper's reading (prompts.reading_messages).
READ_PICK = (
    "Question: {question}\nWhich sentences of the abstract answer this question? Reply with their letters, "
    "best first, for example: C, A."
)
#: A label is picked when its share is at least this part of the best label's (the best is always picked); not
#: fitted.
PICK_RELATIVE_SHARE = 0.5


#: Sentence labels of a labelled reading: one token each, so a choice among them is one token.
SENTENCE_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def labelled_reading(source: tuple[str, str], ask: str) -> list[dict[str, str]]:
    """The reading as it was when the picks were measured (stop 58): :data:`READER_SYSTEM`, ``Abstract of
    "<title>":`` and one sentence a line, labelled ``A.``, ``B.``, …, then ``ask``. (The product's reading is now
    the abstract as one paragraph: ``prompts.reading_prefix``.)"""
    lines = [f'Abstract of "{sanitize_source_text(source[0])}":']
    for i, sentence in enumerate(split_sentences(source[1]) if source[1].strip() else []):
        label = f"{SENTENCE_LABELS[i]}. " if i < len(SENTENCE_LABELS) else ""
        lines.append(f"{label}{sanitize_source_text(sentence)}")
    return [
        {"role": "system", "content": READER_SYSTEM},
        {"role": "user", "content": "\n".join(lines) + f"\n\n{ask}"},
    ]


def picked_sentences(backend: OpenAIChatBackend, source: tuple[str, str], question: str, most: int = 3) -> list[int]:
    """Indices (into ``split_sentences(abstract)``, best first) of the sentences of ``source`` = ``(title, abstract)``
    the model picks as answering ``question``: the first reply token's shares over the labels
    (``OpenAIChatBackend.option_probabilities``), the best label and those with at least
    :data:`PICK_RELATIVE_SHARE` of its share, at most ``most``. (A "none" option was tried first: the bundled
    1.5B model put most of its mass on "0" for questions a sentence answers.)"""
    labels = SENTENCE_LABELS[: min(len(split_sentences(source[1])), len(SENTENCE_LABELS))]
    if not labels:
        return []
    shares = backend.option_probabilities(labelled_reading(source, READ_PICK.format(question=question)), labels)
    ranked = sorted(((i, shares[label]) for i, label in enumerate(labels)), key=lambda p: -p[1])
    best = ranked[0][1]
    return [i for i, p in ranked[:most] if best > 0 and p >= PICK_RELATIVE_SHARE * best]


class QuietBackend:
    """Writes nothing and picks nothing: the answer is the one code builds."""

    model = "none"

    def stream(self, messages: Sequence[dict[str, str]], max_tokens: int | None = None) -> Iterator[str]:
        return iter(())

    def yes_probability(self, messages: Sequence[dict[str, str]]) -> float:
        return 1.0  # the checks before the model writes (stated, named) let the question through

    def option_probabilities(self, messages: Sequence[dict[str, str]], options: Sequence[str]) -> dict[str, float]:
        return {o: 0.0 for o in options}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", nargs="+", type=Path, required=True)
    ap.add_argument("--split", default="", help="only items of this split ('' : every item)")
    args = ap.parse_args()
    enforce_offline()
    from assistant.lang.text import split_sentences
    from assistant.llm.local import LocalLLMServer
    from assistant.service import build_assistant

    settings = load_settings()
    rows: dict[str, list[tuple[float, float, float, int, int]]] = {}
    t0 = time.perf_counter()
    with (
        build_assistant(settings, backend=QuietBackend()) as assistant,
        LocalLLMServer(n_threads=settings.llm.threads, prompt_cache_mb=settings.llm.prompt_cache_mb) as server,
    ):
        model = OpenAIChatBackend(server.base_url, "none", server.model)
        papers = assistant.retriever.papers
        for path in args.questions:
            for line in path.read_text().splitlines():
                item = json.loads(line) if line.strip() else None
                if not item or item["type"] in ("unanswerable", "followup", "topic") or len(item["gold_ids"]) != 1:
                    continue
                if not item.get("answer_facts") or (args.split and item.get("split", args.split) != args.split):
                    continue
                paper = papers.get(item["gold_ids"][0])
                if paper is None:
                    continue
                answer = assistant.ask(item["question"])
                code = [s.text for s in answer.sentences if s.check == "quote"]
                read = split_sentences(paper.text)
                picked = [read[i] for i in picked_sentences(model, (paper.title, paper.text), item["question"])]
                facts = item["answer_facts"]
                score = lambda texts: sum(facts_hit(" ".join(texts), facts)) / len(facts)  # noqa: E731
                row = (score(code), score(picked), score(picked[:1]), len(code), len(picked))
                rows.setdefault(path.name, []).append(row)
                print(
                    f"{item['id']}: code {row[0]:.2f} ({row[3]}) picks {row[1]:.2f} ({row[4]}) first {row[2]:.2f}",
                    flush=True,
                )
    everything = [r for rs in rows.values() for r in rs]
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"\n{time.perf_counter() - t0:.0f} s, load {load}, split {args.split or 'all'}")
    print(
        "| set | items | facts in code's quotes | in the model's picks | in its first pick | sentences code / picks |"
    )
    print("|---|---|---|---|---|---|")
    for name, rs in [*rows.items(), ("all", everything)]:
        n = len(rs)
        if n:
            mean = lambda k: sum(r[k] for r in rs) / n  # noqa: E731
            print(f"| {name} | {n} | {mean(0):.3f} | {mean(1):.3f} | {mean(2):.3f} | {mean(3):.1f} / {mean(4):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
