"""The bundled 1.5B model's named check (issue 41: a paper that is not indexed is never answered with another one).

Pairs made by code from the real corpus (``../shared/corpus``, ~9.9k abstracts nobody here wrote): a paper whose title
starts with its method's name ("DUALFormer: Dual Graph Transformer") gives a positive (its own abstract, its name) and,
when its abstract mentions another paper's name (one that starts other titles), a negative (its abstract,
that name): the abstract mentions the name but is not that paper, the case where an answer would substitute it. The
name is the only thing asked, of the paper's reading (as the product asks it); both questions share that prefix, so
the second costs little.

Split by paper (md5 of the id): validation papers choose the threshold (best balanced accuracy), test papers are
scored once at it. Resumable: answers are appended to ``OUT/named-check.jsonl``.

Usage: ``.venv/bin/python benchmarks/named_check.py OUT [--papers 40] [--base-url URL]`` (``--papers`` per split).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.llm.prompts import READ_NAMED, reading_messages, sanitize_source_text  # noqa: E402

SHARED = REPO.parent / "shared"
#: A title that starts with a name: "DUALFormer: ...", "T2V-Turbo-v2: ..." (a capital after the first letter or a
#: digit, so "Towards: ..." is no name).
NAME_TITLE = re.compile(r"^([A-Za-z][\w\-.+]*(?:[A-Z]|\d)[\w\-.+]*)\s*:")
#: A method's name as an abstract writes one: a capital right after a small letter ("LoRA", "ImageNet-1K") or
#: capitals with a digit ("GPT-4"); not a capitalised word ("Fine-Tuning"), an acronym ("LLM") or its plural ("GPUs").
NAME = re.compile(r"(?=[\w\-.+]*(?:[a-z][A-Z]|[A-Z][\w.+]*-?\d))(?![A-Z]+s$)[A-Za-z][\w\-.+]*")
#: A name mentioned by at least this many abstracts is a known method's name ("LoRA"), not this paper's own.
MENTIONED_BY = 5


def named_messages(source: tuple[str, str], name: str) -> list[dict[str, str]]:
    """The named check as the product asks it (``verifiers.named_probability``): :data:`READ_NAMED` of the paper's
    reading."""
    return reading_messages(source, READ_NAMED.format(name=sanitize_source_text(name)))


def pairs(seed: int) -> list[dict]:
    """The labelled (paper, name, label) items, one positive and one negative per usable paper, shuffled."""
    papers: dict[str, dict] = {}
    for path in sorted((SHARED / "corpus").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                papers.setdefault(row["id"], row)
    owners: dict[str, list[str]] = {}
    for pid, row in papers.items():
        m = NAME_TITLE.match(row["title"])
        if m and len(m.group(1)) >= 4:
            owners.setdefault(m.group(1), []).append(pid)
    names = {name: ids[0] for name, ids in owners.items() if len(ids) == 1}  # a name one title starts with
    tokens_of = {pid: set(re.findall(r"[\w\-.+]*\w", row["abstract"])) for pid, row in papers.items()}
    df: dict[str, int] = {}
    for tokens in tokens_of.values():
        for t in tokens:
            if NAME.fullmatch(t):
                df[t] = df.get(t, 0) + 1
    items = []
    for name, pid in names.items():
        low = name.lower()
        # a name this abstract mentions that is not its own: another title's name, or a method many abstracts name
        # ("LoRA", "CLIP"), whose paper this one is not
        others = sorted(
            n
            for n in tokens_of[pid]
            if (n in owners and pid not in owners[n]) or df.get(n, 0) >= MENTIONED_BY
            if low not in n.lower() and n.lower() not in low
        )
        if others:
            other = random.Random(f"{seed}{pid}").choice(others)
            items.append({"paper": pid, "name": name, "label": 1})
            items.append({"paper": pid, "name": other, "label": 0})
    return items


def split_of(pid: str) -> str:
    return "test" if int(hashlib.md5(pid.encode()).hexdigest(), 16) % 2 else "val"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--papers", type=int, default=40, help="papers per split (each gives one positive, one negative)")
    ap.add_argument("--base-url", default="")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "benchmarks"))
    from stated_check import ask_all, auc, scores  # the same asking and scoring

    items = pairs(13)
    chosen_papers: dict[str, list[str]] = {"val": [], "test": []}
    for pid in sorted({i["paper"] for i in items}, key=lambda p: hashlib.md5(f"13{p}".encode()).hexdigest()):
        ids = chosen_papers[split_of(pid)]
        if len(ids) < args.papers:
            ids.append(pid)
    keep = {p: s for s, ps in chosen_papers.items() for p in ps}
    papers = {}
    for path in sorted((SHARED / "corpus").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if row["id"] in keep:
                    papers[row["id"]] = (row["title"], row["abstract"])
    chosen = [{**i, "split": keep[i["paper"]]} for i in items if i["paper"] in keep]
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "named-check.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    done = {(d["paper"], d["name"]) for d in map(json.loads, lines)}
    todo = [i for i in chosen if (i["paper"], i["name"]) not in done]
    print(f"{len(items)} pairs; {len(chosen)} chosen ({args.papers} papers per split); {len(todo)} to ask")

    ask_all(log, todo, lambda item: named_messages(papers[item["paper"]], item["name"]), dict, args.base_url)
    answered = [dict(json.loads(line), stated=json.loads(line)["label"]) for line in log.read_text().splitlines()]
    by = {s: [a for a in answered if a["split"] == s] for s in ("val", "test")}
    grid = [i / 100 for i in range(1, 100)]
    best_t = max(grid, key=lambda t: (scores(by["val"], t)[1], -abs(t - 0.5)))
    for split, part in by.items():
        pos = [a["p_yes"] for a in part if a["label"] == 1]
        neg = [a["p_yes"] for a in part if a["label"] == 0]
        acc, bal, kept, caught = scores(part, best_t)
        ms = sorted(a["ms"] for a in part)
        print(f"{split:5s} n={len(part):4d} auc={auc(pos, neg):.3f} t={best_t:.2f} acc={acc:.3f} bal={bal:.3f} "
              f"own_name_kept={kept:.3f} other_name_caught={caught:.3f} p50={ms[len(ms) // 2]:.0f}ms")


if __name__ == "__main__":
    main()
