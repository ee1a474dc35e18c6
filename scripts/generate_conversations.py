"""Seeded generator of multi-turn conversations with the papers each turn means (issue 42, item 4: training
conversations at scale for a learned turn resolver).

Each conversation is about a few papers that are close to each other (TF-IDF neighbours over title and abstract,
so a description has near misses), and every turn carries the ids of the papers it is about (``gold_ids``) and
the papers an answer to it shows, in order (``shown_ids``: what the conversation's state holds afterwards, an
oracle answer). Turn kinds are those of ``eval/conversations*.jsonl``: first, pronoun, ordinal, switch (to a
paper named by description only), which_of_them, compare (papers of different turns, each named its own way),
summary, pasted (a sentence of the abstract) and unanswerable (a pronoun turn asking for a detail).

Wording is code's: templates over what a reader can say about a paper without its name (title words after the
name, the words after "we propose/introduce/present", the first author's last name), with chat noise (lower
case, dropped question mark, "ok and", a typo); half the detail questions and choices are follow-ups people
wrote for the intent model (:func:`written_followups`). The bundled model is not used yet (a next step:
paraphrases of the descriptions).
Write the training set over ``../shared/corpus`` only; the frozen test conversations are about the seeds.

Usage: .venv/bin/python scripts/generate_conversations.py [--papers PATH ...] [--limit-papers N]
       [--conversations N] [--seed S] [--out FILE]
Defaults: the four corpus exports, 1,500 papers sampled (seeded), 2,000 conversations, seed 42,
``build/training/conversations-generated.jsonl``. Seconds on 2 cores (no model).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.ingest.corpus import read_papers  # noqa: E402
from assistant.lang.text import content_tokens, content_words_in_order, split_sentences  # noqa: E402
from assistant.types import Paper  # noqa: E402

KINDS = ("first", "pronoun", "ordinal", "switch", "which_of_them", "compare", "summary", "pasted", "unanswerable")
ORDINAL_WORDS = ("first", "second", "third")
#: Detail questions about the paper(s) in focus (a pronoun turn): ``{it}`` subject/object ("it" or "they"/"them"),
#: ``{its}``, ``{does}``/``{is}`` agreeing with it; "they" alone is the authors.
ASKS = (
    "what dataset do they use?",
    "how do they evaluate {obj}?",
    "what's the main result?",
    "how {does} {it} work?",
    "what problem {does} {it} solve?",
    "{does} {it} need any fine-tuning?",
    "what model do they build on?",
    "and how do they solve it?",
    "what are {its} main components?",
    "what do they compare against?",
    "how much better {is} {it} than the baselines?",
    "what's the key idea?",
    "is there a theoretical guarantee?",
    "what are the limitations they mention?",
    "which tasks do they test on?",
    "how {is} {it} trained?",
)
UNSTATED = (
    "how many gpus did they train {obj} on?",
    "what's the licence of {its} code?",
    "how long does training take in hours?",
    "who funded {obj}?",
)
SUMMARIES = ("summarize it", "give me the gist of that one", "tl;dr of this paper?", "can you summarise it briefly")
CRITERIA = (
    "needs less data",
    "is faster",
    "has a theoretical result",
    "uses a pretrained model",
    "reports the bigger improvement",
    "is simpler to implement",
)
BOTH_CRITERIA = ("use a pretrained model", "need labelled data", "release code", "come with a theoretical result")
AXES = ("the data they use", "how they evaluate", "their method", "efficiency", "their main result")
SWITCH_OPENERS = ("ok and", "different topic:", "there's also", "what about", "and", "now")


@dataclass
class Described:
    """What a reader can say about one paper: a name (title part before ':' that looks like a name, or ""),
    topic words (title words after the name), what it proposes, its first author's last name, and sentences."""

    paper: Paper
    name: str
    topic: str
    proposes: str
    author: str
    sentences: list[str] = field(default_factory=list)


#: Words a description does not end on ("... embedding transfer from a").
_TRAILING = frozenset("a an the of from for with via in and to on by as at using".split())


_TEX_COMMAND = re.compile(r"\\[A-Za-z]+")


def as_shown(text: str) -> str:
    """``text`` as a reader copies it from the page: without TeX commands and markup characters (``**``, ``$``,
    braces)."""
    kept = "".join(" " if c in "*$\\{}_^" else c for c in _TEX_COMMAND.sub(" ", text))
    return " ".join(kept.split())


def _clean(text: str) -> str:
    """:func:`as_shown` up to the first punctuation that ends a clause."""
    return as_shown(text).split(",")[0].split(";")[0].split(":")[0].strip(" .")


def describe(paper: Paper) -> Described:
    """A :class:`Described` for ``paper`` (no model: title, contribution sentence, authors)."""
    head, _, rest = paper.title.partition(":")
    name = head.strip() if rest and len(head.split()) <= 2 and any(c.isupper() for c in head[1:]) else ""
    topic_words = _clean(rest or paper.title).split()[:7]
    while topic_words and topic_words[-1].lower() in _TRAILING:
        topic_words.pop()
    topic = " ".join(topic_words).lower()
    sentences = split_sentences(paper.text)
    proposes = ""
    for sentence in sentences:
        lowered = sentence.lower()
        for verb in ("we propose ", "we introduce ", "we present ", "we develop "):
            at = lowered.find(verb)
            if at >= 0:
                words = _clean(sentence[at + len(verb) :]).split()[:8]
                while words and words[-1].lower() in _TRAILING:
                    words.pop()
                proposes = " ".join(words).lower()
                break
        if proposes:
            break
    author = paper.authors[0].split()[-1] if paper.authors and paper.authors[0].split() else ""
    return Described(paper, name, topic, proposes, author, sentences)


def mention(d: Described, rng: random.Random, *, by_name: bool) -> str:
    """A way to name ``d`` in a question: by description (topic words, what it proposes, its first author) and,
    when ``by_name``, also by its name."""
    ways = [f"the one about {d.topic}", f"the {d.topic} paper", f"that paper on {d.topic}"]
    if d.proposes:
        ways += [f"the one that proposes {d.proposes}", f"the paper introducing {d.proposes}"]
    if d.author:
        ways.append(f"the {d.author} et al. paper")
    if by_name and d.name:
        ways += [d.name, f"the {d.name} paper"]
    elif d.name:  # a description only: none that gives the name away ("the paper introducing A-Bench ...")
        ways = [w for w in ways if d.name.lower() not in w.lower()] or [f"the paper with id {d.paper.id}"]
    return rng.choice(ways)


def loose_mention(d: Described, rng: random.Random) -> str:
    """``d`` as people recall a paper, in two or three of its words and not its name: consecutive content words of
    its topic or of its first two sentences ("an antibody design one", "the one on sensitive transformers"), so
    the words often do not name it exactly (references.find_references) and only a search can tell which paper."""
    sources = [d.topic, *(as_shown(s) for s in d.sentences[:2])]
    words = [w for w in content_words_in_order(rng.choice(sources)) if w.isalpha() and len(w) > 2]
    if d.name:
        words = [w for w in words if w not in d.name.lower()]
    if len(words) < 2:
        return mention(d, rng, by_name=False)
    n = min(len(words), rng.choice((2, 2, 3)))
    start = rng.randrange(len(words) - n + 1)
    phrase = " ".join(words[start : start + n])
    article = "an" if phrase[0] in "aeiou" else "a"
    return rng.choice(
        (f"{article} {phrase} one", f"one on {phrase}", f"a paper about {phrase}", f"the {phrase} one",
         f"one that does {phrase}")
    )


def distinctive_word(target: Described, others: Sequence[Described]) -> str:
    """A topical word of ``target`` that no paper of ``others`` uses in its title or abstract ("" when none): a
    content word of 5+ letters of its title, else one of 6+ letters its abstract uses twice or more: what a
    singular follow-up after a list asks about ("how fast does it run on phones?")."""
    theirs = set().union(*(content_tokens(f"{o.paper.title} {o.paper.text}") for o in others))
    words = [w for w in re.findall(r"[a-z]+", target.paper.text.lower()) if len(w) > 4 and w not in theirs]
    counts = {w: words.count(w) for w in dict.fromkeys(words)}
    repeated = [w for w, c in counts.items() if c >= 2 and len(w) > 5 and w in content_tokens(w)]
    titled = [w for w in content_words_in_order(target.paper.title) if w.isalpha() and len(w) > 4 and w not in theirs]
    return (titled or repeated or [""])[0]


#: Singular follow-ups after a list that ask about a word only one listed paper uses (``{w}``).
ASKS_ABOUT_WORD = (
    "what does it say about {w}?",
    "how does it handle {w}?",
    "does it use {w}?",
    "and {w}, what does it do there?",
    "how well does it do on {w}?",
)


def chat_noise(text: str, rng: random.Random) -> str:
    """``text`` as typed in a chat box: sometimes lower case, without its question mark, or with one typo."""
    if rng.random() < 0.3:
        text = text.lower()
    if rng.random() < 0.2:
        text = text.rstrip("?")
    if rng.random() < 0.1 and len(text) > 12:
        i = rng.randrange(1, len(text) - 2)
        if text[i].isalpha() and text[i + 1].isalpha():
            text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text


#: Questions people wrote for the intent model (scripts/training-data/intent-questions.jsonl, blind writers):
#: short follow-ups that point back with a pronoun and name no paper are asked as they were written.
WRITTEN = REPO / "scripts" / "training-data" / "intent-questions.jsonl"
_POINTS_BACK = frozenset("it its they their them this".split())
_NAMES_A_PAPER = frozenset("paper papers one other former latter first second third fourth".split())


def written_followups(path: Path = WRITTEN) -> tuple[list[str], list[str]]:
    """(follow-ups about the paper(s) in focus, "which of them ..." choices) from ``path``: questions of at most 14
    words with a pronoun that points back, no capitalised word after the first (no name), no ordinal, "one" or
    "paper", no colon or dash (a description before it); choices are the ``choice`` ones that say "of them", "of
    the two", "both", "which one" or "either"."""
    asks, choices = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text, words = row["text"], row["text"].split()
        lowered = {w.strip("?,.!:;'\"").lower() for w in words}
        if len(words) > 14 or any(c.isupper() for w in words[1:] for c in w) or any(d in text for d in ":—–"):
            continue
        if row["intent"] == "choice" and any(
            k in text.lower() for k in ("of them", "of the two", "both", "which one", "either")
        ):
            choices.append(text)
        elif row["intent"] in ("lookup", "summary") and lowered & _POINTS_BACK and not lowered & _NAMES_A_PAPER:
            asks.append(text)
    return asks, choices


def _ask(rng: random.Random, plural: bool = False, pool: Sequence[str] = ASKS, written: Sequence[str] = ()) -> str:
    """A detail question about the paper(s) in focus: a template of ``pool`` (agreeing with ``plural``) or, half
    the time when given, one of ``written`` as written."""
    if written and rng.random() < 0.5:
        return rng.choice(written)
    words = (
        {"it": "they", "obj": "them", "its": "their", "does": "do", "is": "are"}
        if plural
        else {"it": "it", "obj": "it", "its": "its", "does": "does", "is": "is"}
    )
    return rng.choice(pool).format(**words)


def conversation(
    cid: str,
    group: list[Described],
    pool: list[Described],
    rng: random.Random,
    turns: int,
    asks: Sequence[str] = (),
    choices: Sequence[str] = (),
) -> dict[str, object]:
    """One conversation over ``group`` (2-3 neighbouring papers; ``pool`` gives a far paper to switch to):
    a first turn, then ``turns - 1`` turns of random kinds whose preconditions hold (an ordinal needs a turn
    that showed papers in order; a compare needs two papers discussed)."""
    out: list[dict[str, object]] = []
    discussed: list[Described] = []  # in the order the conversation first showed them
    focus: list[Described] = []
    listed: list[Described] = []  # the latest turn that showed several papers, in order

    shown_turns: list[list[Described]] = []  # what each turn showed, in order

    def recent_two() -> list[Described]:
        """The two papers shown most recently (the latest turn's first, then the one before it)."""
        out: list[Described] = []
        for turn in reversed(shown_turns):
            out += [d for d in turn if d not in out]
        return out[:2]

    def add(question: str, kind: str, gold: list[Described], shown: list[Described]) -> None:
        nonlocal focus, listed
        out.append(
            {
                "question": question if kind == "pasted" else chat_noise(question, rng),  # a paste has no typo
                "kind": kind,
                "gold_ids": [d.paper.id for d in gold],
                "shown_ids": [d.paper.id for d in shown],
            }
        )
        for d in shown:
            if d not in discussed:
                discussed.append(d)
        if shown:
            shown_turns.append(shown)
        if shown:
            focus = shown
        if len(shown) >= 2:
            listed = shown

    a = group[0]
    if len(group) >= 2 and rng.random() < 0.25:  # a topic question whose answer lists the group
        asked = rng.choice(("which papers are about {t}?", "list the papers on {t}", "any papers about {t}?"))
        add(asked.format(t=a.topic), "first", group, group)
    elif len(group) >= 2 and rng.random() < 0.4:  # the user names two papers in order
        shown = group[:2]
        named = " and ".join(mention(d, rng, by_name=True) for d in shown)
        add(f"I'm reading {named}. what does each of them propose?", "first", shown, shown)
    else:
        add(
            rng.choice(("is there a paper on {t}?", "anything about {t}?", "{t} papers?")).format(t=a.topic),
            "first",
            [a],
            [a],
        )
    for _ in range(turns - 1):
        kinds = ["pronoun", "summary", "pasted", "unanswerable", "switch"]
        if listed or len(discussed) >= 2:
            kinds.append("which_of_them")
        if listed or len(discussed) >= 2:
            kinds.append("ordinal")
        if len(discussed) >= 2:
            kinds.append("compare")
        kind = rng.choice(kinds)
        word_target = rng.choice(focus) if len(focus) > 1 else None
        word = distinctive_word(word_target, [d for d in focus if d is not word_target]) if word_target else ""
        if kind == "pronoun" and word_target and word and rng.random() < 0.3:  # "it" = the listed paper that fits
            add(rng.choice(ASKS_ABOUT_WORD).format(w=word), kind, [word_target], [word_target])
        elif kind == "pronoun" and len(focus) > 1 and rng.random() < 0.3:  # "that one" after a list: its first
            asked = rng.choice(("summarize that one for me", "tell me more about that one", "what does that one do?"))
            add(asked, kind, focus[:1], focus[:1])
        elif kind == "pronoun":
            add(_ask(rng, plural=len(focus) > 1, written=asks), kind, focus, focus)
        elif kind == "unanswerable":
            add(_ask(rng, pool=UNSTATED), kind, focus, [])
        elif kind == "summary":
            add(rng.choice(SUMMARIES), kind, focus[:1], focus[:1])
        elif kind == "pasted":  # a sentence or a run of one, from a paper of the conversation or one it never showed
            target = rng.choice(group) if rng.random() < 0.7 else rng.choice(pool)
            sentence = as_shown(rng.choice(target.sentences) if target.sentences else target.paper.text)
            words = sentence.split()
            if len(words) > 14 and rng.random() < 0.4:
                start = rng.randrange(len(words) - 10)
                sentence = " ".join(words[start : start + rng.randint(8, 14)])
            add(
                rng.choice(
                    ("which paper is this from? {s}", '"{s}" where is that from?', "{s} which one says this?")
                ).format(s=sentence),
                kind,
                [target],
                [target],
            )
        elif kind == "switch" and len(focus) == 1 and len(discussed) >= 2 and rng.random() < 0.3:
            # the paper shown most recently that the latest answer did not show
            other = next(d for turn in reversed(shown_turns) for d in turn if d not in focus)
            asked = rng.choice(
                (
                    "and the other one: {a}",
                    "what about the other paper? {a}",
                    "summarize the other one",
                    "the other one - {a}",
                )
            )
            add(asked.format(a=_ask(rng, written=asks)), kind, [other], [other])
        elif kind == "switch" and rng.random() < 0.25:  # a new topic: a paper far from the conversation's
            target = rng.choice(pool)
            asked = rng.choice(("papers on {t}?", "anything about {t}?", "ok new question: is there work on {t}"))
            add(asked.format(t=target.topic), kind, [target], [target])
        elif kind == "switch":
            others = [d for d in group if d not in focus] or [rng.choice(pool)]
            target = rng.choice(others)
            joint = rng.choice((": ", ". ", " - ", ", ", " right? ", "? "))
            described = loose_mention(target, rng) if rng.random() < 0.5 else mention(target, rng, by_name=False)
            add(f"{rng.choice(SWITCH_OPENERS)} {described}{joint}{_ask(rng, written=asks)}", kind, [target], [target])
        elif kind == "ordinal" and listed and focus == listed:  # of the list the latest answer showed
            i = rng.randrange(len(listed))
            if len(listed) == 2 and rng.random() < 0.3:
                add(f"the {('former', 'latter')[i]}: {_ask(rng, written=asks)}", kind, [listed[i]], [listed[i]])
            else:
                add(f"the {ORDINAL_WORDS[i]} one: {_ask(rng, written=asks)}", kind, [listed[i]], [listed[i]])
        elif kind == "ordinal":  # in the order the conversation took the papers up
            order = discussed[: len(ORDINAL_WORDS)]
            if len(order) >= 2 and rng.random() < 0.5:
                i, j = sorted(rng.sample(range(len(order)), 2))
                add(
                    f"compare the {ORDINAL_WORDS[i]} and the {ORDINAL_WORDS[j]} on {rng.choice(AXES)}",
                    kind,
                    [order[i], order[j]],
                    [order[i], order[j]],
                )
            else:
                i = rng.randrange(len(order))
                add(
                    rng.choice(
                        ("the {o} one: {a}", "back to the {o} paper, {a}", "and the {o} one we looked at, {a}")
                    ).format(o=ORDINAL_WORDS[i], a=_ask(rng, written=asks)),
                    kind,
                    [order[i]],
                    [order[i]],
                )
        elif kind == "which_of_them" and listed and focus == listed:  # of the papers the latest answer showed
            asked = rng.choice(("which of them {c}?", "of the two, which one {c}?", "between these which {c}"))
            asked = rng.choice(choices) if choices and rng.random() < 0.5 else asked.format(c=rng.choice(CRITERIA))
            add(asked, kind, listed, listed)
        elif kind == "which_of_them":  # of the two papers the last turns were about, one turn each
            two = recent_two()
            asked = rng.choice(
                ("of those two, which one {c}?", "which of the two {c}?", "so which of them {c}", "do both {c2}?")
            )
            asked = asked.format(c=rng.choice(CRITERIA), c2=rng.choice(BOTH_CRITERIA))
            add(rng.choice(choices) if choices and rng.random() < 0.5 else asked, kind, two, two)
        else:  # compare two papers discussed at different points, each named its own way
            pair = rng.sample(discussed, 2)
            names = [
                "it" if d in focus and len(focus) == 1 and rng.random() < 0.5 else mention(d, rng, by_name=True)
                for d in pair
            ]
            add(f"compare {names[0]} and {names[1]} on {rng.choice(AXES)}", kind, pair, pair)
    return {"id": cid, "turns": out}


def neighbours(papers: list[Described], k: int = 20) -> list[list[int]]:
    """For each paper, the indices of its ``k`` most similar papers (TF-IDF cosine over title and abstract)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import NearestNeighbors

    texts = [" ".join(sorted(content_tokens(f"{d.paper.title} {d.paper.text}"))) for d in papers]
    matrix = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(texts)
    index = NearestNeighbors(n_neighbors=min(k + 1, len(papers)), metric="cosine").fit(matrix)
    return [list(row[1:]) for row in index.kneighbors(matrix, return_distance=False)]


def generate(papers: list[Paper], conversations: int, seed: int) -> list[dict[str, object]]:
    """``conversations`` conversations over ``papers`` (seeded: the same arguments give the same output)."""
    rng = random.Random(seed)
    asks, choices = written_followups()
    described = [describe(p) for p in papers]
    near = neighbours(described)
    out = []
    for n in range(conversations):
        anchor = rng.randrange(len(described))
        group = [described[anchor]] + [described[j] for j in rng.sample(near[anchor][:8], rng.choice((1, 2)))]
        out.append(conversation(f"g{seed}-{n:05d}", group, described, rng, rng.randint(4, 8), asks, choices))
    return out


def main() -> int:
    corpus = sorted((REPO.parent / "shared" / "corpus").glob("*.jsonl"))
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--papers", nargs="+", type=Path, default=corpus)
    ap.add_argument("--limit-papers", type=int, default=1500)
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "training" / "conversations-generated.jsonl")
    a = ap.parse_args()
    papers = read_papers(a.papers, skipped=[])
    if a.limit_papers and len(papers) > a.limit_papers:
        papers = random.Random(a.seed).sample(papers, a.limit_papers)
    rows = generate(papers, a.conversations, a.seed)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    counts: dict[str, int] = {}
    for row in rows:
        for turn in row["turns"]:  # type: ignore[attr-defined]
            counts[turn["kind"]] = counts.get(turn["kind"], 0) + 1
    print(f"wrote {a.out}: {len(rows)} conversations over {len(papers)} papers; turns per kind: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
