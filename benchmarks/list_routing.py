"""Issue 45, routing: does the bundled 1.5B model, asked only when the intent classifier is unsure whether a question
asks for a topic list, route list questions better than the classifier alone?

Questions: every eval set question with a ``type`` (``eval/*.jsonl``; topics-1's questions are all lists), by its
own ``split`` (val / test; the sets without splits are reported as ``-``). Gold: a list is wanted for type
``topic`` and every topics-1 question; not for ``lookup``, ``fact``, ``paraphrase``, ``summary``, ``adversarial``,
``compare`` and ``choice``. ``unanswerable`` questions are shown apart (some ask for a list of nothing: "any papers
on machine translation?").

The gate and the decision are fixed before any run, not fitted: the model is asked when the classifier's
P(topic) is in [``LOW``, ``HIGH``]; its answer is P("list") over "list" + "one" from the server's log-probabilities
(``OpenAIChatBackend.option_probabilities``), and a list is routed when it is >= 0.5. Each answer is appended to
``OUT/list-routing.jsonl`` (resumable) with its seconds.

Usage: ``.venv/bin/python benchmarks/list_routing.py OUT [--prompt NAME] [--base-url URL]``.

``--members SEEDS_IDX SLICE_IDX CORPUS_IDX`` measures another signal instead of the model: each gated question asked
as a topic list over an index of its scope (the seeds; topics-1's slice questions: the 1k slice; descriptions-1 and
needles: the whole corpus; battery-questions is left out), and the list's count (``Listing.total``) printed by gold
for each split: a topic should list several papers, a description of one paper one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.llm.client import OpenAIChatBackend  # noqa: E402
from assistant.llm.local import LocalLLMServer  # noqa: E402
from assistant.understand.learned import intent_probabilities  # noqa: E402

LOW, HIGH = 0.1, 0.9
LIST_TYPES = {"topic"}
NOT_LIST_TYPES = {"lookup", "fact", "paraphrase", "summary", "adversarial", "compare", "choice"}

PROMPTS = {
    "zero": (
        "You sort the questions researchers ask a search assistant over a collection of research-paper abstracts. "
        "Answer with one word.",
        "Question: {question}\nDoes this ask for a list of every paper on a topic (answer list), or about one "
        "particular paper or fact (answer one)? Answer list or one.",
    ),
    # invented examples (none from an eval set), written before this prompt was run
    "shots": (
        "You sort the questions researchers ask a search assistant over a collection of research-paper abstracts. "
        "A question asks for a list when it wants every paper on a subject, method, task or kind of contribution; "
        "it asks about one when it describes, names or asks a fact of one particular paper, or compares named "
        "papers. Answer with one word: list or one.\n\n"
        "Question: which papers use graph neural networks?\nAnswer: list\n\n"
        "Question: the paper that prunes attention heads with a learned gate\nAnswer: one\n\n"
        "Question: protein design - what do we have?\nAnswer: list\n\n"
        "Question: what accuracy does the sparse attention paper report on ImageNet?\nAnswer: one\n\n"
        "Question: contrastive learning for speech\nAnswer: list\n\n"
        "Question: token pruning vision transformer latency edge devices\nAnswer: one",
        "Question: {question}\nAnswer list or one.",
    ),
}


def questions() -> list[dict]:
    """Every typed eval question: {set, id, split, question, gold ("list" / "one" / "unanswerable")}."""
    out = []
    for path in sorted((REPO / "eval").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            if "question" not in d:
                continue
            kind = "topic" if path.name.startswith("topics-") else d.get("type")
            if kind in LIST_TYPES:
                gold = "list"
            elif kind in NOT_LIST_TYPES:
                gold = "one"
            elif kind == "unanswerable":
                gold = "unanswerable"
            else:
                continue
            out.append({"set": path.stem, "id": d["id"], "split": d.get("split", "-"), "question": d["question"],
                        "gold": gold})
    return out


def messages(prompt: str, question: str) -> list[dict[str, str]]:
    system, user = PROMPTS[prompt]
    return [{"role": "system", "content": system}, {"role": "user", "content": user.format(question=question)}]


def scope(q: dict) -> str | None:
    """Which index a question is asked over: ``seeds``, ``slice`` or ``corpus`` (None: not measured)."""
    if q["set"] == "battery-questions":
        return None
    if q["set"] in ("descriptions-1", "needles"):
        return "corpus"
    if q["set"] == "topics-1":
        return "slice" if int(q["id"][1:]) > 20 else "seeds"
    return "seeds"


def member_counts(out: Path, items: list[dict], indexes: dict[str, Path]) -> None:
    """The topic list's count for each gated question over its scope's index (``OUT/list-members.jsonl``)."""
    from assistant.config import Settings
    from assistant.service import build_assistant
    from assistant.types import Page

    log = out / "list-members.jsonl"
    done = {(r["set"], r["id"]): r for r in map(json.loads, log.read_text().splitlines())} if log.exists() else {}
    gated = [q for q in items if LOW <= q["p_topic"] <= HIGH and scope(q)]
    for name, path in indexes.items():
        todo = [q for q in gated if scope(q) == name and (q["set"], q["id"]) not in done]
        if not todo:
            continue
        with build_assistant(Settings().updated(storage_dir=path), start_llm=False) as assistant, log.open("a") as f:
            for q in todo:
                t0 = time.perf_counter()
                ans = assistant.ask(q["question"], intent="topic", page=Page(0, 5))
                row = {"set": q["set"], "id": q["id"], "total": ans.listing.total if ans.listing else 0,
                       "s": round(time.perf_counter() - t0, 3)}
                done[(q["set"], q["id"])] = row
                f.write(json.dumps(row) + "\n")
    for split in ("val", "test", "-"):
        print(f"\nsplit {split}: list counts of the gated questions, by gold")
        for gold in ("list", "one", "unanswerable"):
            counts = sorted(done[(q["set"], q["id"])]["total"] for q in gated
                            if q["split"] == split and q["gold"] == gold and (q["set"], q["id"]) in done)
            print(f"  {gold:12s} n {len(counts):3d}  counts {counts}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--prompt", default="zero", choices=sorted(PROMPTS))
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--members", nargs=3, type=Path, metavar=("SEEDS_IDX", "SLICE_IDX", "CORPUS_IDX"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / f"list-routing-{args.prompt}.jsonl"
    done = {(r["set"], r["id"]): r for r in map(json.loads, log.read_text().splitlines())} if log.exists() else {}
    items = questions()
    for q in items:
        p = intent_probabilities(q["question"])
        q["p_topic"] = p["topic"]
        q["top"] = max(p, key=lambda c: p[c])
    if args.members:
        member_counts(args.out, items, dict(zip(("seeds", "slice", "corpus"), args.members)))
        return
    todo = [q for q in items if LOW <= q["p_topic"] <= HIGH and (q["set"], q["id"]) not in done]
    print(f"{len(items)} questions, {sum(LOW <= q['p_topic'] <= HIGH for q in items)} in the gate, {len(todo)} to ask")

    def ask(backend: OpenAIChatBackend) -> None:
        with log.open("a") as f:
            for i, q in enumerate(todo, 1):
                t0 = time.perf_counter()
                p = backend.option_probabilities(messages(args.prompt, q["question"]), ("list", "one"))["list"]
                row = {"set": q["set"], "id": q["id"], "p_list": round(p, 5), "s": round(time.perf_counter() - t0, 3)}
                done[(q["set"], q["id"])] = row
                f.write(json.dumps(row) + "\n")
                f.flush()
                if i % 25 == 0:
                    print(f"  {i}/{len(todo)}", flush=True)

    if todo:
        if args.base_url:
            ask(OpenAIChatBackend(args.base_url, "k", "qwen1.5b", timeout_s=120))
        else:
            with LocalLLMServer(bundled="qwen1.5b") as server:
                ask(OpenAIChatBackend(server.base_url, "k", server.model, timeout_s=120))

    def routed(q: dict, arbiter: bool) -> bool:
        if arbiter and LOW <= q["p_topic"] <= HIGH:
            return done[(q["set"], q["id"])]["p_list"] >= 0.5
        return q["top"] == "topic"

    for split in ("val", "test", "-"):
        part = [q for q in items if q["split"] == split]
        print(f"\nsplit {split}: {len(part)} questions")
        for name, arbiter in (("classifier", False), ("classifier + model", True)):
            c = Counter((q["gold"], routed(q, arbiter)) for q in part)
            lists = c[("list", True)] + c[("list", False)]
            ones = c[("one", True)] + c[("one", False)]
            un = c[("unanswerable", True)] + c[("unanswerable", False)]
            print(
                f"  {name:20s} lists routed as lists {c[('list', True)]}/{lists}  "
                f"others routed as lists {c[('one', True)]}/{ones}  "
                f"unanswerable as lists {c[('unanswerable', True)]}/{un}"
            )
        changed = [q for q in part if routed(q, True) != routed(q, False)]
        for q in changed:
            print(f"    {q['gold']:12s} p_topic {q['p_topic']:.2f} p_list {done[(q['set'], q['id'])]['p_list']:.2f} "
                  f"{q['set']}/{q['id']}: {q['question'][:90]}")
    secs = sorted(r["s"] for r in done.values())
    if secs:
        print(f"\nmodel seconds per question: p50 {secs[len(secs) // 2]:.2f}  p95 {secs[int(len(secs) * 0.95)]:.2f}")


if __name__ == "__main__":
    main()
