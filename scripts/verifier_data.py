"""Training data for the support model (issue 22): (claim, evidence sentences, label) triples.

Sources, none of them a test set:

* ``checkcovid``: Check-COVID *train* split (/work/shared/claims-external). supported -> 1 with its
  rationale sentences; refuted -> 0 with its rationale sentences; nei -> 0 with the two abstract sentences
  sharing most words with the claim (what an aligner would pick).
* ``citint``: Citation-Integrity citing sentences (citation markers removed) with the cited paper's gold
  evidence sentence; supported -> 1, unsupported / nei -> 0. Only the sentence text is used, never its position.
* ``synthetic``: made by code from the real abstracts of /work/shared/corpus (the MiniCheck recipe): claims are
  written in the third person ("We propose" -> "The authors propose"), as an assistant writes them.
  Positives: the evidence sentence restated, a clause dropped, two sentences of one abstract fused, an
  abbreviation expanded. Negatives: a number or unit changed, a name swapped in from another paper, a
  negation added or removed, the sides of a comparison / cause swapped or an opposite put in, a scope word
  added ("all", "the first", "proves"), an invented clause / affiliation / place appended, a high-overlap
  sentence of another paper, and the claim against a sentence of its abstract that does not state it.

Papers excluded from ``synthetic``: the 38 seed papers (matched by title) and every paper listed in the files
given with ``exclude`` (the frozen claims test corpus), so no test abstract is ever trained on.

Every choice is drawn from one ``random.Random(seed)``; the same seed and inputs give the same examples.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

EXTERNAL = Path("/work/shared/claims-external")
CORPUS = Path("/work/shared/corpus")


@dataclass(frozen=True, slots=True)
class Example:
    """One training pair: ``claim`` against ``evidence`` (1-3 sentences), ``label`` 1 = supported."""

    claim: str
    evidence: tuple[str, ...]
    label: int
    source: str  # checkcovid | citint | synthetic
    kind: str  # generator name (synthetic) or the source's label
    group: str  # paper id: examples of one paper stay on one side of the train/validation split

    @property
    def verdict(self) -> int:
        """The three-way target: 0 supported, 1 contradicted (the evidence says otherwise), 2 not stated."""
        if self.label:
            return 0
        return 1 if self.kind in CONTRADICTED_KINDS else 2


#: Kinds of unsupported examples whose evidence says the opposite (every other unsupported kind is "not stated":
#: an added scope or detail, another paper's fact, a sentence that does not state the claim, a fragment).
CONTRADICTED_KINDS = frozenset(
    {"number", "negation", "direction", "name_swap", "passive", "refuted", "unsupported", "llm_number", "llm_negation"}
)
VERDICTS = ("supported", "contradicted", "not_stated")


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def _best_sentences(claim: str, sentences: Sequence[str], k: int = 2) -> list[str]:
    cw = _words(claim)
    ranked = sorted(range(len(sentences)), key=lambda i: -len(cw & _words(sentences[i])))[:k]
    return [sentences[i] for i in sorted(ranked)]


def checkcovid_examples(split: str = "train") -> list[Example]:
    """Check-COVID claims of ``split`` (``train`` for training; ``dev`` is only ever measured)."""
    out = []
    for row in _read_jsonl(EXTERNAL / "checkcovid_claims_train_dev.jsonl"):
        if row["split"] != split:
            continue
        sents = [re.sub(r"^Abstract\s+", "", s) for s in row["abstract_sentences"]]
        idx = [i for i in row.get("rationale_sentence_indices") or [] if 0 <= i < len(sents)]
        ev = [sents[i] for i in sorted(idx)[:3]] if idx else _best_sentences(row["claim"], sents)
        label = 1 if row["label"] == "supported" else 0
        out.append(Example(row["claim"], tuple(ev), label, "checkcovid", row["label"], f"cc:{row['abstract_id']}"))
    return out


_CIT = re.compile(r"\s*\[<\|[a-z_]+\|>\]")


def citint_examples() -> list[Example]:
    """Citation-Integrity citing sentences against the cited paper's gold evidence sentence."""
    corpus = {r["id"]: r for r in _read_jsonl(EXTERNAL / "citint_corpus.jsonl")}
    out = []
    for row in _read_jsonl(EXTERNAL / "citint_claims.jsonl"):
        sents = row.get("abstract_sentences") or corpus.get(row["abstract_id"], {}).get("abstract_sentences") or []
        if not sents:
            continue
        claim = _CIT.sub("", row["claim"]).strip()
        claim = re.sub(r"\s+([.,;])", r"\1", claim)
        label = 1 if row["label"] == "supported" else 0
        out.append(Example(claim, (sents[0],), label, "citint", row["label"], f"ci:{row['abstract_id']}"))
    return out


# --- synthetic examples from the corpus ------------------------------------------------------------------

_THIRD_PERSON = [
    (re.compile(r"^(?:In this (?:paper|work|study),?\s+|Here,?\s+|To this end,?\s+|Therefore,?\s+)?we\b", re.I), None),
    (re.compile(r"\bwe\b"), "the authors"),
    (re.compile(r"\bWe\b"), "The authors"),
    (re.compile(r"\bour\b"), "their"),
    (re.compile(r"\bOur\b"), "Their"),
    (re.compile(r"\bus\b"), "them"),
    (re.compile(r"\bourselves\b"), "themselves"),
]
_SUBJECTS = ("The authors", "The paper", "This work", "The study")
_VERB_S = {
    "propose": "proposes",
    "introduce": "introduces",
    "present": "presents",
    "show": "shows",
    "find": "finds",
    "demonstrate": "demonstrates",
    "develop": "develops",
    "study": "studies",
    "investigate": "investigates",
    "provide": "provides",
    "design": "designs",
    "derive": "derives",
    "analyze": "analyzes",
    "analyse": "analyses",
    "prove": "proves",
    "establish": "establishes",
    "identify": "identifies",
    "release": "releases",
    "evaluate": "evaluates",
    "explore": "explores",
    "observe": "observes",
    "argue": "argues",
    "construct": "constructs",
    "offer": "offers",
}


def third_person(sentence: str, rng: random.Random) -> str:
    """``sentence`` as an assistant would restate it: "In this paper, we propose X" -> "The paper proposes X"."""
    s = sentence.strip()
    m = _THIRD_PERSON[0][0].match(s)
    if m:
        subject = rng.choice(_SUBJECTS)
        rest = s[m.end() :].lstrip()
        verb = rest.split(" ", 1)[0] if rest else ""
        if subject != "The authors" and verb.lower() in _VERB_S:
            rest = _VERB_S[verb.lower()] + rest[len(verb) :]
        elif subject != "The authors":
            subject = "The authors"
        s = f"{subject} {rest}"
    for pat, rep in _THIRD_PERSON[1:]:
        s = pat.sub(rep, s)  # type: ignore[arg-type]
    return s[0].upper() + s[1:] if s else s


_NUM = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)(\s?(?:%|x|×|times|hours?|minutes?|seconds?|ms|days?|[kKMB]\b|"
    r"points?|layers?|languages?|tasks?|datasets?|benchmarks?|models?|samples?|images?|tokens?|"
    r"parameters?|GPUs?))?"
)
_UNITS = {
    "%": ["x", " points"],
    "x": ["%", " times"],
    "×": ["%"],
    " times": ["%"],
    " hours": [" minutes", " days"],
    " hour": [" minute", " day"],
    " minutes": [" hours", " seconds"],
    " seconds": [" minutes"],
    " ms": [" s"],
    " days": [" hours", " weeks"],
    "K": ["M"],
    "k": ["M"],
    "M": ["B", "K"],
    "B": ["M", "T"],
    " layers": [" heads"],
    " languages": [" tasks"],
    " tasks": [" languages"],
    " datasets": [" tasks"],
    " benchmarks": [" datasets"],
    " models": [" datasets"],
    " GPUs": [" CPUs"],
}


def change_number(s: str, rng: random.Random) -> str | None:
    nums = [m for m in _NUM.finditer(s) if not (1900 <= float(m.group(1)) <= 2030 and "." not in m.group(1))]
    if not nums:
        return None
    m = rng.choice(nums)
    value, unit = m.group(1), m.group(2) or ""
    if unit and unit in _UNITS and rng.random() < 0.3:
        return s[: m.start()] + value + rng.choice(_UNITS[unit]) + s[m.end() :]
    if "." in value:
        d = len(value.split(".")[1])
        new = float(value) + rng.choice([-1, 1]) * rng.choice([0.5, 1.3, 2.1, 4.0, 7.7]) * (
            1 if float(value) > 9 else 0.3
        )
        new_s = f"{max(new, 0.1):.{d}f}"
    else:
        v = int(value)
        new_s = str(
            rng.choice([v + rng.randint(1, 9), max(v - rng.randint(1, 3), 0) if v > 3 else v + 10, v * 2, v * 10])
        )
    if new_s == value:
        return None
    return s[: m.start(1)] + new_s + s[m.end(1) :]


_NAME = re.compile(r"(?<![\w-])([A-Za-z]*[A-Z][A-Za-z]*[A-Z0-9][\w-]*|[A-Z][a-z]+-\d[\w-]*)(?![\w-])")


def names(s: str) -> list[str]:
    """Name-like tokens: a capital after the first letter (``DUALFormer``, ``GPT-4``)."""
    return [m.group(1) for m in _NAME.finditer(s) if len(m.group(1)) >= 2 and any(c.isupper() for c in m.group(1)[1:])]


_NEG_ADD = [
    (re.compile(r"\b(is|are|was|were|can|could|will|does|do|did|should|may)\b(?! not)"), lambda m: f"{m.group(1)} not"),
    (
        re.compile(
            r"\b(improves|outperforms|reduces|increases|achieves|enables|requires|leads to|yields|captures|"
            r"generalizes|scales|converges|preserves|matches)\b"
        ),
        lambda m: "does not " + _base(m.group(1)),
    ),
    (
        re.compile(
            r"\b(improve|outperform|reduce|increase|achieve|enable|require|yield|capture|generalize|scale|"
            r"converge|preserve|match)\b"
        ),
        lambda m: "do not " + m.group(1),
    ),
    (re.compile(r"\bwith\b"), lambda m: "without"),
]
_NEG_REMOVE = [
    (re.compile(r"\b(is|are|was|were|can|could|does|do|did|will) not\b"), lambda m: m.group(1)),
    (re.compile(r"\bcannot\b"), lambda m: "can"),
    (re.compile(r"\b(does|do|did)n't\b|\b(does|do|did) not\b"), lambda m: ""),
    (re.compile(r"\bwithout\b"), lambda m: "with"),
    (re.compile(r"\bfails? to\b"), lambda m: "manages to"),
    (re.compile(r"\bno\b"), lambda m: "some"),
    (re.compile(r"\bunable\b"), lambda m: "able"),
    (re.compile(r"\bneither\b"), lambda m: "both"),
    (re.compile(r"\bnever\b"), lambda m: "often"),
]


def _base(verb: str) -> str:
    if verb == "leads to":
        return "lead to"
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def flip_negation(s: str, rng: random.Random) -> str | None:
    removable = [(p, f) for p, f in _NEG_REMOVE if p.search(s)]
    if removable and rng.random() < 0.6:
        p, f = rng.choice(removable)
        out = p.sub(f, s, count=1)
        return re.sub(r"\s{2,}", " ", out)
    addable = [(p, f) for p, f in _NEG_ADD[:4] if p.search(s)]
    if not addable:
        return None
    p, f = rng.choice(addable)
    return p.sub(f, s, count=1)


_ANTONYMS = [
    ("higher", "lower"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("improves", "degrades"),
    ("improve", "degrade"),
    ("better", "worse"),
    ("more", "less"),
    ("faster", "slower"),
    ("outperforms", "underperforms"),
    ("larger", "smaller"),
    ("stronger", "weaker"),
    ("reduces", "increases"),
    ("reduce", "increase"),
    ("fewer", "more"),
    ("lower", "higher"),
    ("efficient", "inefficient"),
    ("stable", "unstable"),
    ("robust", "fragile"),
    ("local", "global"),
    ("explicit", "implicit"),
    ("before", "after"),
    ("positive", "negative"),
    ("maximize", "minimize"),
    ("small", "large"),
    ("low", "high"),
    ("early", "late"),
    ("short", "long"),
    ("sparse", "dense"),
    ("supervised", "unsupervised"),
    ("linear", "nonlinear"),
    ("online", "offline"),
    ("upper", "lower"),
    ("easier", "harder"),
]
_RELATION = re.compile(
    r"\b(outperforms?|outperforming|surpass(?:es)?|beats?|is better than|rather than|instead of|leads? to|"
    r"causes?|results? in|stems? from|is caused by|due to|driven by|over|compared to|than)\b"
)
_SIDE_STOP = re.compile(r"[,;:()]|\b(?:on|in|by|across|for|with|while|and|which|that|when|at)\b")


def swap_direction(s: str, rng: random.Random) -> str | None:
    """Swap the two sides of a comparison / cause, or put an opposite in."""
    m = _RELATION.search(s)
    if m and rng.random() < 0.6:
        sides = _sides(s, m)
        if sides is not None:
            prefix, left, right, rest = sides
            new_left = right[0].upper() + right[1:] if not prefix else right
            new_right = left[0].lower() + left[1:] if not prefix and not left[:2].isupper() else left
            return f"{prefix}{' ' if prefix else ''}{new_left} {m.group(1)} {new_right}{rest}".replace("  ", " ")
    options = []
    for a, b in _ANTONYMS:
        for x, y in ((a, b), (b, a)):
            for mm in re.finditer(rf"\b{x}\b", s):
                options.append((mm.start(), mm.end(), y))
    if not options:
        return None
    start, end, y = rng.choice(options)
    return s[:start] + y + s[end:]


_ACTIVE = re.compile(r"\b(outperforms?|surpass(?:es)?|beats?|exceeds?|dominates?)\b")
_PASSIVE_OF = {
    "outperform": "outperformed",
    "surpass": "surpassed",
    "beat": "beaten",
    "exceed": "exceeded",
    "dominate": "dominated",
}


def _sides(s: str, m: re.Match[str]) -> tuple[str, str, str, str] | None:
    """``(prefix, left, right, rest)`` around the relation ``m``: the subject and object phrases it joins (at most
    8 words each), the text before the subject and after the object; None when they cannot be isolated."""
    left_text = s[: m.start()].rstrip()
    right_text = s[m.end() :].lstrip()
    lcut = max((x.end() for x in _SIDE_STOP.finditer(left_text)), default=0)
    left = left_text[lcut:].strip()
    rm = _SIDE_STOP.search(right_text)
    right = right_text[: rm.start()].strip() if rm else right_text.rstrip(".").strip()
    if not (1 <= len(left.split()) <= 8 and 1 <= len(right.split()) <= 8) or left.lower() == right.lower():
        return None
    rest = right_text[right_text.find(right) + len(right) :]
    return left_text[:lcut], left, right, rest


def passive_voice(s: str, rng: random.Random) -> tuple[str, int] | None:
    """ "A outperforms B" said in the passive: ``("B is outperformed by A", 1)`` (same meaning, supported) or the
    sides kept in place, ``("A is outperformed by B", 0)`` (the direction reversed, contradicted); None when the
    sentence has no such relation. Drawn half and half, so voice alone never decides the label."""
    m = _ACTIVE.search(s)
    if not m:
        return None
    sides = _sides(s, m)
    if sides is None:
        return None
    prefix, left, right, rest = sides
    verb = m.group(1).lower()
    stem = next(k for k in _PASSIVE_OF if verb.startswith(k))
    keep = rng.random() < 0.5
    subj, obj = (right, left) if keep else (left, right)
    last = subj.split()[-1].lower()
    aux = "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) and not last.isupper() else "is"
    if not prefix:
        subj = subj[0].upper() + subj[1:]
        obj = obj[0].lower() + obj[1:] if not obj[:2].isupper() else obj
    out = f"{prefix}{' ' if prefix else ''}{subj} {aux} {_PASSIVE_OF[stem]} by {obj}{rest}".replace("  ", " ")
    return out, int(keep)


_CUT_WORDS = re.compile(r"\b(?:by|with|to|of|than|on|for|and|the|via|using|such as|like)\b")


def truncate(s: str, rng: random.Random) -> str | None:
    """``s`` cut off mid-clause after a function word ("... compared to methods like GPT-4o prompting by."): a
    fragment that states less than it seems to, so it is not a claim the evidence supports."""
    words = s.rstrip(".").split()
    if len(words) < 10:
        return None
    cuts = [m.end() for m in _CUT_WORDS.finditer(s) if len(s[: m.end()].split()) >= 5 and m.end() < len(s) - 15]
    if not cuts:
        return None
    return s[: rng.choice(cuts)].rstrip(" ,;:") + "."


_SCOPE_EDITS = [
    (
        re.compile(r"\b(propose|proposes|introduce|introduces|present|presents) (a|an)\b"),
        lambda m: f"{m.group(1)} the first",
    ),
    (
        re.compile(r"\b(on|across|over) (\w+ )?(datasets|benchmarks|tasks|settings|models|languages|domains)\b"),
        lambda m: f"{m.group(1)} all {m.group(3)}",
    ),
    (
        re.compile(r"\b(show|shows|demonstrate|demonstrates|find|finds|suggest|suggests) that\b"),
        lambda m: ("proves" if m.group(1).endswith("s") else "prove") + " that",
    ),
    (re.compile(r"\b(outperforms|improves|surpasses|beats)\b"), lambda m: f"always {m.group(1)}"),
    (
        re.compile(r"\b(achieves|achieve|obtains|obtain) (competitive|strong|good|comparable|promising)\b"),
        lambda m: f"{m.group(1)} state-of-the-art",
    ),
    (re.compile(r"\b(can|may|could|might)\b"), lambda m: "always"),
    (
        re.compile(r"\b(reduces|mitigates|alleviates|improves)\b"),
        lambda m: f"completely {'eliminates' if m.group(1) != 'improves' else 'solves'}",
    ),
    (re.compile(r"\b(many|most|several|some)\b"), lambda m: "all"),
]


def add_scope(s: str, rng: random.Random) -> str | None:
    options = [(p, f) for p, f in _SCOPE_EDITS if p.search(s)]
    if not options:
        return None
    p, f = rng.choice(options)
    return p.sub(f, s, count=1)


_ORGS = [
    "Stanford University",
    "the University of Sydney",
    "MIT",
    "Google DeepMind",
    "Meta AI",
    "Tsinghua University",
    "the University of Toronto",
    "ETH Zurich",
    "Microsoft Research",
    "Carnegie Mellon University",
    "the University of Oxford",
    "Peking University",
    "OpenAI",
    "the Allen Institute for AI",
    "KAIST",
    "Mila",
]
_PLACES = ["in Germany", "in a hospital in Boston", "in rural India", "in Japan", "across European clinics"]
_APPEND = [
    ", developed at {org}",
    ", a method developed by researchers at {org}",
    " by {org}",
    " (work done at {org})",
    ", with experiments run {place}",
    ", funded by {org}",
]


def append_extra(s: str, other: str, rng: random.Random) -> str | None:
    """Append an invented affiliation/place, or a clause taken from another paper's sentence."""
    base = s.rstrip().rstrip(".")
    if rng.random() < 0.45:
        tmpl = rng.choice(_APPEND)
        return base + tmpl.format(org=rng.choice(_ORGS), place=rng.choice(_PLACES)) + "."
    parts = [p.strip() for p in re.split(r",\s+|\s+(?:and|while|which)\s+", other.rstrip(".")) if len(p.split()) >= 4]
    if not parts:
        return None
    clause = rng.choice(parts)
    clause = clause[0].lower() + clause[1:]
    join = rng.choice([", and ", ", and it also ", ", while ", ", which "])
    return base + join + clause + "."


def drop_clause(s: str, rng: random.Random) -> str | None:
    """Drop a parenthetical or a trailing clause (the rest is still stated by the sentence)."""
    paren = list(re.finditer(r"\s*\([^()]{3,80}\)", s))
    if paren and rng.random() < 0.4:
        m = rng.choice(paren)
        return s[: m.start()] + s[m.end() :]
    cuts = [
        m.start() for m in re.finditer(r",\s+(?:and |which |while |thereby |enabling |leading |allowing |where )", s)
    ]
    cuts += [m.start() for m in re.finditer(r"\s+(?:by|through|via|using) ", s)]
    cuts = [c for c in cuts if len(s[:c].split()) >= 6]
    if not cuts:
        return None
    return s[: rng.choice(cuts)].rstrip(",; ") + "."


def fuse(s1: str, s2: str) -> str:
    a = s1.rstrip().rstrip(".")
    b = s2.strip()
    b = b[0].lower() + b[1:] if b[:2] != b[:2].upper() else b
    return f"{a}, and {b}" if b.endswith(".") else f"{a}, and {b}."


_DEF = re.compile(r"\(([A-Z][A-Za-z0-9\-]{1,12})\)")


def _long_form(before: str, short: str) -> str | None:
    """The words just before "(SHORT)" whose initials spell SHORT ("large language models (LLMs)")."""
    ws = before.split()
    target = short.upper().rstrip("S") if short.endswith("s") else short.upper()
    target = re.sub(r"[^A-Z]", "", target)
    for n in range(2, min(len(ws), 8) + 1):
        cand = ws[-n:]
        initials = "".join(p[0] for w in cand for p in re.split(r"-", w) if p and p[0].isalpha()).upper()
        if initials == target or "".join(w[0] for w in cand).upper() == target:
            return " ".join(cand)
    return None


def expand_abbreviation(sentences: Sequence[str], rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
    """A sentence using an abbreviation with it spelled out, evidence = the definition sentence + that one."""
    for i, s in enumerate(sentences):
        for m in _DEF.finditer(s):
            short = m.group(1)
            long = _long_form(s[: m.start()], short)
            if not long:
                continue
            uses = [j for j, t in enumerate(sentences) if j != i and re.search(rf"\b{re.escape(short)}\b", t)]
            if not uses:
                continue
            j = rng.choice(uses)
            claim = re.sub(rf"\b{re.escape(short)}\b", lambda _m: long.strip(), sentences[j], count=1)
            return claim, tuple(sentences[k] for k in sorted({i, j}))
    return None


def _sentences(abstract: str) -> list[str]:
    from assistant.lang.text import split_sentences

    text = " ".join(abstract.split())
    if text and text[-1] not in ".!?":
        text += "."
    return [s for s in split_sentences(text) if 6 <= len(s.split()) <= 60 and "http" not in s]


def corpus_papers(exclude_titles: set[str], exclude_ids: set[str]) -> list[dict]:
    """Corpus rows with an abstract, minus excluded ids and titles (lower-cased, whitespace-normalised)."""
    rows = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for row in _read_jsonl(path):
            title = " ".join((row.get("title") or "").lower().split())
            if row.get("abstract") and row["id"] not in exclude_ids and title not in exclude_titles:
                rows.append(row)
    return rows


def synthetic_examples(papers: Sequence[dict], n_papers: int, rng: random.Random) -> list[Example]:
    """About 10 examples per paper, half supported, from ``n_papers`` papers drawn from ``papers``."""
    chosen = rng.sample(list(papers), min(n_papers, len(papers)))
    split = [(p, _sentences(p["abstract"])) for p in chosen]
    split = [(p, ss) for p, ss in split if len(ss) >= 3]
    all_sents = [(p["id"], s) for p, ss in split for s in ss]
    name_pool = [n for _, s in all_sents for n in names(s)]
    near = _nearest_other_paper(all_sents, rng)
    out: list[Example] = []

    def add(claim: str | None, ev: Sequence[str], label: int, kind: str, pid: str) -> None:
        if claim and claim.strip() and len(claim.split()) >= 5:
            out.append(Example(third_person(claim, rng), tuple(ev), label, "synthetic", kind, f"co:{pid}"))

    for p, ss in split:
        pid = p["id"]
        picks = rng.sample(range(len(ss)), min(len(ss), 4))
        s, s2 = ss[picks[0]], ss[picks[1]]

        def ev_for(i: int) -> list[str]:  # the aligned sentence, sometimes with a neighbour (as the aligner pairs)
            if rng.random() < 0.3 and len(ss) > 1:
                j = i + 1 if i + 1 < len(ss) else i - 1
                return [ss[k] for k in sorted({i, j})]
            return [ss[i]]

        # positives
        add(ss[picks[0]], ev_for(picks[0]), 1, "restate", pid)
        add(drop_clause(ss[picks[1]], rng), ev_for(picks[1]), 1, "drop_clause", pid)
        a, b = sorted(picks[:2])
        add(fuse(ss[a], ss[b]), [ss[a], ss[b]], 1, "fuse", pid)
        exp = expand_abbreviation(ss, rng)
        if exp:
            add(exp[0], exp[1], 1, "abbreviation", pid)
        elif len(picks) > 2:
            add(ss[picks[2]], [ss[picks[2]]], 1, "restate", pid)
        # negatives: two or three per paper, kinds drawn at random among those that apply
        gens = []
        for i in picks:
            t = ss[i]
            gens += [
                ("number", lambda t=t: change_number(t, rng), i),
                ("negation", lambda t=t: flip_negation(t, rng), i),
                ("direction", lambda t=t: swap_direction(t, rng), i),
                ("scope", lambda t=t: add_scope(t, rng), i),
                ("extra_clause", lambda t=t: append_extra(t, rng.choice(all_sents)[1], rng), i),
            ]
            ns = names(t)
            if ns and name_pool:
                n, other = rng.choice(ns), rng.choice(name_pool)
                if other.lower() != n.lower():
                    gens.append(("name_swap", lambda t=t, n=n, other=other: t.replace(n, other, 1), i))  # type: ignore[misc]
        by_kind: dict[str, list] = {}
        for kind, gen, i in gens:
            by_kind.setdefault(kind, []).append((gen, i))
        kinds = sorted(by_kind)
        rng.shuffle(kinds)
        kinds.sort(key=lambda k: k == "extra_clause")  # always applicable: only when nothing else is
        made = 0
        for kind in kinds:
            if made >= 3:
                break
            options = by_kind[kind]
            rng.shuffle(options)
            for gen, i in options:
                claim = gen()
                if claim and claim != ss[i]:
                    add(claim, ev_for(i), 0, kind, pid)
                    made += 1
                    break
        if "extra_clause" not in kinds[:made] and rng.random() < 0.4:  # invented additions: a key failure (issue 22)
            i = rng.choice(picks)
            add(append_extra(ss[i], rng.choice(all_sents)[1], rng), ev_for(i), 0, "extra_clause", pid)
        if s in near:
            add(near[s], [s], 0, "other_paper", pid)
        for i in picks[:2]:  # voice and fragments: the same words, a different claim (issue 40)
            pv = passive_voice(ss[i], rng)
            if pv:
                add(pv[0], ev_for(i), pv[1], "passive", pid)
        cut = truncate(ss[picks[-1]], rng)
        if cut and rng.random() < 0.5:
            add(cut, ev_for(picks[-1]), 0, "truncated", pid)
        # the claim against a sentence of its own abstract that does not state it
        if rng.random() < 0.5:
            add(s2, [s], 0, "wrong_sentence", pid)
    return out


def _nearest_other_paper(all_sents: Sequence[tuple[str, str]], rng: random.Random) -> dict[str, str]:
    """For a sample of sentences, the most similar sentence (TF-IDF cosine) of *another* paper."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import NearestNeighbors

    texts = [s for _, s in all_sents]
    pids = [p for p, _ in all_sents]
    vec = TfidfVectorizer(min_df=2, stop_words="english", sublinear_tf=True).fit(texts)
    x = vec.transform(texts)
    nn = NearestNeighbors(n_neighbors=8, metric="cosine").fit(x)
    sample = rng.sample(range(len(texts)), min(len(texts), len(texts) // 3))
    dist, idx = nn.kneighbors(x[sample])
    out = {}
    for row, i in enumerate(sample):
        for d, j in zip(dist[row], idx[row]):
            if pids[j] != pids[i] and d < 0.75:
                out[texts[i]] = texts[j]
                break
    return out


def seed_titles(seeds_dir: Path) -> set[str]:
    rows = _read_jsonl(seeds_dir / "papers.jsonl") if (seeds_dir / "papers.jsonl").is_file() else []
    return {" ".join((r.get("title") or "").lower().split()) for r in rows}


def excluded_papers(paths: Iterable[Path]) -> tuple[set[str], set[str]]:
    """Ids and titles of the papers rows in ``paths`` (JSONL rows with ``id`` / ``title``)."""
    ids, titles = set(), set()
    for path in paths:
        if path.is_file():
            for row in _read_jsonl(path):
                ids.add(str(row.get("id", "")))
                titles.add(" ".join((row.get("title") or "").lower().split()))
    return ids, titles


LLM_DATA = Path(__file__).resolve().parent / "training-data" / "verifier-llm.jsonl"


def llm_examples(exclude_ids: set[str], exclude_titles: set[str], path: Path = LLM_DATA) -> list[Example]:
    """Pairs written by the bundled 1.5B model (scripts/verifier_llm_data.py), labelled by construction:
    paraphrase / synthesis supported, changed contradicted (kind ``llm_changed``), added not stated; papers in
    ``exclude_ids`` / ``exclude_titles`` (test sets) skipped. [] when the file does not exist yet."""
    if not path.is_file():
        return []
    from verifier_llm_data import examples_of

    out = []
    for row in _read_jsonl(path):
        title = " ".join((row.get("title") or "").lower().split())
        if row["paper_id"] in exclude_ids or title in exclude_titles:
            continue
        for e in examples_of(row):
            label = int(e["verdict"] == "supported")
            out.append(Example(e["claim"], tuple(e["evidence"]), label, "llm", e["kind"], f"co:{row['paper_id']}"))
    return out
