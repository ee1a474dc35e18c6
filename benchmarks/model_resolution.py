"""Which papers each turn means, picked by the bundled model (issue 60 item 1), beside the rules, on an oracle
history (as benchmarks/turn_resolution.py: each turn is scored after a correct previous answer).

Two ways of asking, both recorded per turn in ``--json``:

- ``--letters``: the model reads the chat so far (each user message, then the papers the answer showed, lettered in
  the order the user saw them), the latest message, and the papers a search for that message alone finds, and
  replies with letters (a llama.cpp grammar of a few tokens). Printed as "the model" beside the rules.
- always: :data:`READ_ABOUT` asked of the reading of each paper in focus (``about``) and of the search's best paper
  not in focus (``about_top``), P(yes) each: staying or leaving is which reading says yes more surely.
  Analysed from the JSON (docs/results/issue60).

Usage: .venv/bin/python benchmarks/model_resolution.py --conversations eval/conversations-5.jsonl --split val
    [--letters] [--json OUT]   (starts the bundled model; minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import string
import time
from pathlib import Path
from typing import Any

from assistant.config import Settings
from assistant.conversation.turn_features import record_oracle_turn
from assistant.service import build_assistant

LETTERS = string.ascii_uppercase

SYSTEM = (
    "You read a chat between a user and an assistant that answers questions about research papers. "
    "You decide which papers the user's latest message is about."
)

ASK = (
    "Which papers is the latest message about? A message that refers back (\"it\", \"they\", \"this paper\", "
    "\"compare them\", \"which of them\") means papers of the chat; a message that names or describes another "
    "paper means that paper; \"the first one\", \"the second one\" count the papers in the order they were shown. "
    "Reply with the letters of the papers only, separated by commas."
)


def grammar(n: int) -> str:
    """GBNF: one to three distinct-looking letters among the first ``n``, comma separated."""
    letter = " | ".join(f'"{c}"' for c in LETTERS[:n])
    return f"root ::= item (\", \" item)? (\", \" item)?\nitem ::= {letter}\n"


class Transcript:
    """The chat as the model reads it; papers lettered in the order they were first shown."""

    def __init__(self) -> None:
        self.letters: dict[str, str] = {}
        self.lines: list[str] = []

    def letter(self, pid: str) -> str:
        if pid not in self.letters:
            self.letters[pid] = LETTERS[len(self.letters)]
        return self.letters[pid]

    def record(self, question: str, shown: list[tuple[str, str]]) -> None:
        self.lines.append(f"User: {question}")
        if shown:
            self.lines.append(
                "Assistant answered from: " + "; ".join(f"({self.letter(pid)}) {title}" for pid, title in shown)
            )
        else:
            self.lines.append("Assistant answered from: no paper")

    def messages(self, question: str, found: list[tuple[str, str]]) -> tuple[list[dict[str, str]], dict[str, str]]:
        letters = dict(self.letters)
        for pid, _ in found:
            if pid not in letters:
                letters[pid] = LETTERS[len(letters)]
        chat = "\n".join(self.lines) if self.lines else "(no earlier messages)"
        found_line = "; ".join(f"({letters[pid]}) {title}" for pid, title in found)
        user = (
            f"Chat so far:\n{chat}\n\nLatest message: {question}\n\n"
            f"A search for the latest message alone finds: {found_line}\n\n{ASK}"
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], letters


#: Asked of one paper's reading (prompts.reading_messages): is the turn still about this paper?
READ_ABOUT = (
    "A user who was just shown this paper writes: {question}\nIs the user asking about this paper? Answer yes or no."
)


def about_probabilities(assistant: Any, current: list[str], question: str) -> tuple[dict[str, float], float]:
    """P(yes) of :data:`READ_ABOUT` for each paper of ``current``, asked of its reading; and the time (ms)."""
    from assistant.llm.prompts import reading_messages, sanitize_source_text

    papers = assistant.retriever.papers
    backend = assistant.answerer.backend
    t0 = time.perf_counter()
    out = {}
    for pid in current:
        p = papers[pid]
        ask = READ_ABOUT.format(question=sanitize_source_text(" ".join(question.split())))
        out[pid] = backend.yes_probability(reading_messages((p.title, p.text), ask))
    return out, (time.perf_counter() - t0) * 1000


def pick(client: Any, model: str, messages: list[dict[str, str]], n: int) -> str:
    reply = client.chat.completions.create(
        model=model,
        messages=messages,
        temperature=0.0,
        max_tokens=12,
        extra_body={"grammar": grammar(n)},
    )
    return reply.choices[0].message.content or ""


def score_file(assistant: Any, path: Path, split: str, n_found: int, letters_too: bool) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    papers = assistant.retriever.papers
    backend = assistant.answerer.backend._connected()
    client, model = backend._client, backend.model
    out: list[dict[str, Any]] = []
    for row in rows:
        if split and row.get("split") != split:
            continue
        session = assistant.new_session()
        transcript = Transcript()
        for turn in row["turns"]:
            question, gold = turn["question"], list(turn.get("gold_ids") or [])
            resolution = session.resolve(question)
            rules = (
                []
                if resolution.clarify
                else list(resolution.focus_ids)
                or [h.paper.id for h in assistant.retriever.retrieve(resolution.query, top_k=max(1, len(gold)))]
            )
            shown_now = session.shown()
            current = list(shown_now[0]) if shown_now else []
            about, about_ms = about_probabilities(assistant, current, question) if current else ({}, 0.0)
            top = next(
                (h.paper.id for h in assistant.retriever.retrieve(question, top_k=3) if h.paper.id not in current), ""
            )
            about_top = about_probabilities(assistant, [top], question)[0] if current and top else {}
            reply, got, ms = "", [], 0.0
            if letters_too:
                hits = assistant.retriever.retrieve(question, top_k=n_found)
                found = [(h.paper.id, h.paper.title) for h in hits]
                messages, letters = transcript.messages(question, found)
                t0 = time.perf_counter()
                reply = pick(client, model, messages, len(letters))
                ms = (time.perf_counter() - t0) * 1000
                by_letter = {v: k for k, v in letters.items()}
                got = list(dict.fromkeys(by_letter[c] for c in reply.replace(",", " ").split() if c in by_letter))
            out.append(
                {
                    "conversation": row["id"],
                    "kind": turn.get("kind", ""),
                    "question": question,
                    "gold": gold,
                    "rules": rules,
                    "model": got,
                    "reply": reply,
                    "ms": round(ms, 1),
                    "current": current,
                    "about": about,
                    "about_ms": round(about_ms, 1),
                    "about_top": about_top,
                }
            )
            shown = [papers[pid] for pid in gold if pid in papers]
            record_oracle_turn(session, question, resolution.query, shown)
            transcript.record(question, [(p.id, p.title) for p in shown])
    return out


def summarise(turns: list[dict[str, Any]], key: str) -> list[str]:
    scored = [t for t in turns if t["gold"]]
    kinds = sorted({t["kind"] for t in scored})
    lines = [f"{'kind':15} {'turns':>5} {'exact':>6} {'prec':>6} {'recall':>6}"]
    for kind in [*kinds, "overall"]:
        group = [t for t in scored if kind in ("overall", t["kind"])]
        exact = sum(set(t[key]) == set(t["gold"]) for t in group) / len(group)
        prec = statistics.mean(len(set(t[key]) & set(t["gold"])) / len(t[key]) if t[key] else 0.0 for t in group)
        rec = statistics.mean(len(set(t[key]) & set(t["gold"])) / len(t["gold"]) for t in group)
        lines.append(f"{kind:15} {len(group):5d} {exact:6.3f} {prec:6.3f} {rec:6.3f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--conversations", nargs="+", type=Path, required=True)
    parser.add_argument("--split", default="", help="only conversations of this split (val, test)")
    parser.add_argument("--found", type=int, default=3, help="papers the search for the message offers")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--letters", action="store_true", help="also ask the model for the papers' letters")
    args = parser.parse_args()
    assistant = build_assistant(Settings(), start_llm=True)
    try:
        for path in args.conversations:
            turns = score_file(assistant, path, args.split, args.found, args.letters)
            print(f"== {path.name} ({args.split or 'all'}): the rules")
            print("\n".join(summarise(turns, "rules")))
            print(f"== {path.name} ({args.split or 'all'}): the model")
            print("\n".join(summarise(turns, "model")))
            ms = sorted(t["about_ms"] for t in turns if t["current"])
            load = os.getloadavg()[0]
            print(
                f"about-check per turn with papers in focus: p50 {statistics.median(ms):.0f} ms, "
                f"p95 {ms[min(len(ms) - 1, int(0.95 * len(ms)))]:.0f} ms (load {load:.2f})"
            )
            if args.json:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                with args.json.open("a", encoding="utf-8") as f:
                    f.writelines(json.dumps(t) + "\n" for t in turns)
    finally:
        assistant.close()


if __name__ == "__main__":
    main()
