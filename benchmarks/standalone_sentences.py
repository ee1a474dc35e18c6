"""Do extractive answers read on their own? Asks questions from eval files with no model (every answer is
built from abstract sentences by code, as when the model writes nothing verifiable) and counts shown
sentences -- answer sentences and comparison cells -- that open with a word that needs the sentence before
it ("The latter ...", "To address this ...", "It also ...", "2) ...").

Two counts, so the product's own test (``assistant.lang.discourse.depends_on_previous``) is not its only judge:

* ``issue phrases``: a fixed pattern written from the issue's examples (The latter/former, This/These/Such
  + noun, It/They/Its/Their, To address this/these, also as 2nd word, an enumerator "2)"), applied to the
  first sentence of each shown text (a sentence shown with the one before it starts with that one).
* ``depends_on_previous``: the product's test, applied the same way.

Prints every shown text's opening words so a person can read them. Not a test.

Usage: ASSISTANT_STORAGE_DIR=... .venv/bin/python benchmarks/standalone_sentences.py \
           [--questions eval/dev.jsonl eval/fresh.jsonl] [--limit 30] [--show]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from assistant.config import load_settings
from assistant.lang.discourse import depends_on_previous
from assistant.lang.text import split_sentences
from assistant.offline import enforce_offline

#: Written from the issue's examples, independent of assistant/lang/discourse.py.
ISSUE_PHRASES = re.compile(
    r"^(?:the\s+(?:latter|former)\b|(?:this|these|those|such)\s+(?!paper\b|work\b|study\b|article\b)\w+"
    r"|(?:it|they|its|their)\b|to\s+address\s+(?:this|these|that|those)\b|(?:it|they|this|these)\s+also\b|\(?\d\)|\(?[ivx]+\))",
    re.I,
)


class SilentBackend:
    """A model that writes nothing: every answer is the one built by code."""

    model = "none"

    def stream(self, messages: Sequence[dict[str, str]], max_tokens: int | None = None) -> Iterator[str]:
        """Yields nothing."""
        return iter(())

    def yes_probability(self, messages: Sequence[dict[str, str]]) -> float:
        """Never asked (it writes nothing); 0.0."""
        return 0.0


def _questions(paths: Sequence[str], split: str = "all") -> list[list[str]]:
    """Each eval item's turns (a follow-up has two), answerable ones only; question types taken in turn
    (lookup, fact, summary, compare, topic, follow-up, …) and, within a type, the files in turn."""
    by_type: dict[str, list[list[str]]] = {}
    per_file = [[json.loads(line) for line in Path(p).read_text().splitlines() if line.strip()] for p in paths]
    for rank in range(max(len(items) for items in per_file)):
        for items in per_file:
            if rank < len(items) and items[rank].get("type") != "unanswerable":
                item = items[rank]
                number = int("".join(c for c in item["id"] if c.isdigit()) or 0)
                if split != "all" and (number % 2 == 1) != (split == "test"):
                    continue
                by_type.setdefault(item["type"], []).append(item.get("turns") or [item["question"]])
    out: list[list[str]] = []
    queues = list(by_type.values())
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def shown_texts(answer) -> list[str]:
    """The answer's sentences, then its comparison cells."""
    texts = [s.text for s in answer.sentences]
    if answer.comparison is not None:
        texts += [c.text for row in answer.comparison.rows for c in row.cells if c is not None]
    return texts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", nargs="+", default=["eval/dev.jsonl", "eval/fresh.jsonl"])
    parser.add_argument("--limit", type=int, default=30, help="extractive answers to read")
    parser.add_argument("--show", action="store_true", help="print every shown text's opening")
    parser.add_argument(
        "--split",
        choices=["all", "val", "test"],
        default="all",
        help="frozen sets (eval/kept-seeds.jsonl): odd ids are test, even ids val",
    )
    args = parser.parse_args(argv)
    enforce_offline()
    from assistant.service import build_assistant

    settings = load_settings()
    answers = texts = issue_hits = own_hits = 0
    with build_assistant(settings, backend=SilentBackend()) as assistant:
        for turns in _questions(args.questions, args.split):
            if answers >= args.limit:
                break
            session = assistant.new_session()
            for question in turns:
                answer = session.ask(question)
            if answer.abstained or not answer.sentences:
                continue
            answers += 1
            abstracts = " ".join(c.paper.text for c in answer.citations)
            previous = ""
            for text in shown_texts(answer):
                if text.startswith(("The paper is “", "The closest match in the abstracts is “")):
                    continue  # our own title line
                texts += 1
                first = split_sentences(text)[0]
                resolved = bool(previous) and f"{split_sentences(previous)[-1]} {first}" in abstracts
                previous = text  # a sentence read right after the one it follows in its abstract is resolved
                issue = bool(ISSUE_PHRASES.match(first)) and not resolved
                own = depends_on_previous(first) and not resolved
                issue_hits += issue
                own_hits += own
                if args.show or issue or own:
                    flag = ("I" if issue else "-") + ("D" if own else "-")
                    print(f"{flag} [{answer.intent}] {text[:110]}")
    print(f"\n{answers} extractive answers, {texts} shown texts (sentences and table cells)")
    print(f"opening with an unresolved anaphor: issue phrases {issue_hits}, depends_on_previous {own_hits}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
