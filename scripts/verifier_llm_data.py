#!/usr/bin/env python
"""Verifier training text in the writer's own style, written by the bundled 1.5B model (issue 40).

For each drawn corpus paper the model is asked twice:

1. ``REWRITE_ALL``: sentences 1-3 of a passage, each in its own words as an answer would state it, and one
   sentence joining sentences 1 and 2 -> ``llm_rewrite`` (supported; evidence: that sentence) and
   ``llm_combine`` (supported; evidence: sentences 1 and 2);
2. ``REWRITE``: sentence 1 after one edit made by code (``verifier_data``: a changed number, an added or removed
   negation, an added scope word or an invented clause), in its own words -> ``llm_<edit>``: contradicted for
   number / negation, not stated for scope / extra_clause (evidence: sentence 1).

The label comes from the construction (the edit is code's), never from the model's judgement; the model only
supplies the wording a verifier meets in real answers (free paraphrase, which code-made pairs lack). A reply is
dropped when it is not one sentence of 6+ words, when a supported rewrite keeps under :data:`MIN_KEPT_WORDS` of
its words from its sources (it brought in other facts), or when the edit did not survive the rewrite (the
words the edit brought in must appear in it). A hand check of a sample is in
``assistant/verify/model/MODEL_CARD.md``.

Seeded and resumable: papers are drawn in one fixed order from ``random.Random(seed)``; each finished paper
is appended to ``--out`` (one JSON object per paper) and a re-run skips the paper ids already there, so the
job can be stopped at any time and continued in a later session. Test papers are filtered out at training
time (``verifier_data.llm_examples``), so the order never depends on which test sets exist.

    nice -n 5 .venv/bin/python scripts/verifier_llm_data.py --minutes 30          # append ~30 minutes' worth
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

import verifier_data as D  # noqa: E402

DEFAULT_OUT = ROOT / "scripts" / "training-data" / "verifier-llm.jsonl"

# Instructions first, the paper last: llama.cpp reuses the evaluated prefix, so each request costs only its own
# sentences and the written one.
REWRITE = (
    "Rewrite the sentence below in your own words, the way an assistant states it when answering a question "
    "about the paper. Use the third person (the paper, the authors, or the method's name). Keep every fact exactly "
    "as given, even if it seems wrong, and add nothing. Reply with the rewritten sentence only."
)
REWRITE_ALL = (
    "Below are three sentences from a paper's abstract. Write four lines. Lines 1, 2 and 3: sentence 1, 2 and 3 "
    "rewritten in your own words, the way an assistant states them when answering a question about the paper "
    "(third person: the paper, the authors, or the method's name; keep every fact, add nothing). Line 4: one "
    "sentence that combines the facts of sentences 1 and 2. Start each line with its number and a period."
)
#: Code edits whose result the model rewrites, with the verdict the edit makes.
EDITS = {"number": "contradicted", "negation": "contradicted", "scope": "not_stated", "extra_clause": "not_stated"}


def one_sentence(text: str) -> str | None:
    """The reply as one sentence (quotes and a leading label stripped), or None when it is not one."""
    t = " ".join(text.strip().strip('"').split())
    t = t.split(": ", 1)[1] if t.lower().startswith(("rewritten sentence:", "sentence:", "combined sentence:")) else t
    if len(t.split()) < 6 or len(re.findall(r"[.!?](?:\s|$)", t)) > 1:
        return None
    return t


def edit_survives(original: str, edited: str, reply: str) -> bool:
    """The words the edit brought in (absent from ``original``) all occur in ``reply``, and the edit brought some."""
    new = D._words(edited) - D._words(original)
    return bool(new) and new <= D._words(reply)


def edited(s1: str, pool: list[str], rng: random.Random) -> tuple[str, str] | None:
    """``(kind, sentence 1 after one code edit)``, the kind drawn among the edits that apply; None if none does."""
    makers = {
        "number": lambda: D.change_number(s1, rng),
        "negation": lambda: D.flip_negation(s1, rng),
        "scope": lambda: D.add_scope(s1, rng),
        "extra_clause": lambda: D.append_extra(s1, rng.choice(pool), rng),
    }
    kinds = list(makers)
    rng.shuffle(kinds)
    for kind in kinds:
        out = makers[kind]()
        if out and out != s1:
            return kind, out
    return None


#: A rewrite labelled supported keeps at least this share of its content words from its sentences and the title
#: (a free paraphrase swaps some words; a reply that brings in other facts brings many): a data filter against
#: label noise, applied only here.
MIN_KEPT_WORDS = 0.6


def stays_close(reply: str, sources: list[str]) -> bool:
    """True when ``reply`` keeps at least :data:`MIN_KEPT_WORDS` of its content words from ``sources``."""
    words = D._words(reply)
    return bool(words) and len(words & D._words(" ".join(sources))) / len(words) >= MIN_KEPT_WORDS


_NUMBERED = re.compile(r"^\s*\**\s*(?:Line\s*)?([1-4])\s*[.):]?\s*\**\s*:?\s*(.+?)\s*$", re.M | re.I)


def numbered(text: str) -> dict[int, str]:
    """Lines ``1.`` ... ``4.`` of a reply, each as one sentence (see :func:`one_sentence`); others dropped."""
    out: dict[int, str] = {}
    for m in _NUMBERED.finditer(text):
        line = one_sentence(m.group(2))
        if line:
            out.setdefault(int(m.group(1)), line)
    return out


def examples_of(row: dict) -> list[dict]:
    """The labelled pairs of one generated row: ``{claim, evidence, verdict, kind}``."""
    sents = row["sentences"]
    s1, s2 = sents[0], sents[1]
    out = []
    for k, claim in (row.get("rewrites") or {}).items():
        i = int(k) - 1
        if i < len(sents) and stays_close(claim, [sents[i], row["title"]]):
            out.append({"claim": claim, "evidence": [sents[i]], "verdict": "supported", "kind": "llm_rewrite"})
    if row.get("combine") and stays_close(row["combine"], [s1, s2, row["title"]]):
        out.append({"claim": row["combine"], "evidence": [s1, s2], "verdict": "supported", "kind": "llm_combine"})
    if row.get("edited_rewrite"):
        kind = row["edit"]
        out.append({"claim": row["edited_rewrite"], "evidence": [s1], "verdict": EDITS[kind], "kind": f"llm_{kind}"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--minutes", type=float, default=30.0, help="stop after this long (resume later)")
    ap.add_argument("--max-papers", type=int, default=5000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()

    from llama_cpp import Llama

    from assistant.config import Settings
    from assistant.llm.bundled import gguf_path

    papers = D.corpus_papers(D.seed_titles(ROOT / "seeds"), set())
    papers.sort(key=lambda p: p["id"])
    random.Random(args.seed).shuffle(papers)
    done = set()
    if args.out.is_file():
        done = {json.loads(line)["paper_id"] for line in args.out.read_text().splitlines() if line.strip()}
    path = gguf_path("qwen1.5b", Settings().embedding.model_cache_dir)
    llm = Llama(
        model_path=str(path),
        n_ctx=1024,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
        seed=args.seed,
    )
    t0, n_new = time.time(), 0
    with args.out.open("a", encoding="utf-8") as f:
        for i, p in enumerate(papers[: args.max_papers]):
            if p["id"] in done:
                continue
            if time.time() - t0 > args.minutes * 60:
                break
            sents = D._sentences(p["abstract"])
            if len(sents) < 5:
                continue
            rng = random.Random(f"{args.seed}:{p['id']}")
            k = rng.randrange(len(sents) - 2)
            s1, s2, s3 = sents[k], sents[k + 1], sents[k + 2]

            def ask(instructions: str, body: str, max_tokens: int = 120) -> str:
                reply = llm.create_chat_completion(
                    messages=[{"role": "user", "content": f"{instructions}\n\nPaper: {p['title']}\n{body}"}],
                    max_tokens=max_tokens,
                    temperature=0.7,
                    top_p=0.9,
                    seed=rng.randrange(1 << 30),
                )
                return reply["choices"][0]["message"]["content"] or ""  # type: ignore[index]

            row: dict = {"paper_id": p["id"], "title": p["title"], "sentences": [s1, s2, s3]}
            lines = numbered(ask(REWRITE_ALL, f"1. {s1}\n2. {s2}\n3. {s3}", 360))
            row["rewrites"] = {str(i): lines[i] for i in (1, 2, 3) if i in lines}
            row["combine"] = lines.get(4)
            edit = edited(s1, [x for x in sents if x not in (s1, s2, s3)] or [s3], rng)
            if edit:
                row["edit"], row["edited"] = edit
                out = one_sentence(ask(REWRITE, f"Sentence: {edit[1]}"))
                row["edited_rewrite"] = out if out and edit_survives(s1, edit[1], out) else None
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            f.flush()
            n_new += 1
            if n_new % 10 == 0:
                el = time.time() - t0
                print(
                    f"[{time.strftime('%H:%M:%S')}] {n_new} papers ({len(done) + n_new} in all), "
                    f"{el / n_new:.1f} s/paper",
                    flush=True,
                )
    print(f"done: {n_new} new papers, {len(done) + n_new} in {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
