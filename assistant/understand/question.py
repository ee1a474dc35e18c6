"""What a question asks for, read from its English wording: the facts that decide which abstract sentence
answers it, and whether the abstracts state the requested detail at all (issue 13: answers that answer,
"not stated" when it isn't).

* ``entities``: the names it mentions (``GPT-4o``, ``LeReT``, ``SMM``, ``T2V-Turbo-v2``): the paper it is
  about must contain them.
* ``quantity``: it asks for a number ("how many parameters", "what accuracy", "what success rate"), with
  the measured noun when the wording gives one (``parameters``, ``accuracy``).
* ``which_paper``: it asks which paper/abstract does something (lead the answer with the title).
* ``expansion``: it asks what an acronym stands for.
* ``definition``: it asks what a named thing is or does ("What is HComP-Net?", "What does LiMAC do?").
* ``papers_wanted``: how many papers it asks about when it says so ("compare the three papers"), else None.

Also here: :func:`clean_question`, the check every entry point runs before anything else, and how a question
names a paper by its author or describes one (:func:`author_phrase`, :func:`descriptions`). The per-turn reading
that holds all of these at once is :func:`assistant.understand.parse.parse_question`.

All rules are wording rules, written once here; they are tuned on the *kinds* of question in
eval/dev.jsonl (lookups, facts, false premises, not-stated details), not on its strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.errors import AssistantError
from assistant.lang.text import content_tokens
from assistant.tuning import QUANTITY_WINDOW_WORDS
from assistant.types import Paper

#: Name-like tokens: an inner capital (``LeReT``, ``DUALFormer``), all capitals (``SMM``), or letters with
#: digits (``GPT-4o``, ``T2V-Turbo-v2``). Plain capitalised words ("Android", "Attention") are not names.
NAME_TOKEN = re.compile(
    r"(?<![\w-])(?:[A-Z][a-z]*-[A-Z][\w\-]*|[A-Za-z]*[a-z][A-Z][\w\-]*|[A-Z]{2,}[\w\-]*|[A-Za-z]+-?\d[\w\-]*)(?![\w-])"
)
#: Numbers as digits (``2,864``, ``88.8``, ``5x``) or as words.
NUMBER_TOKEN = re.compile(
    r"(?<![A-Za-z])\d+(?:[.,]\d+)*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|fifty|hundred|hundreds|thousand|thousands|million|millions|billion|billions|"
    r"dozens?|half|twice|double|triple)\b",
    re.I,
)
#: Words the user may write in capitals that name the corpus, not a paper.
GENERIC_NAMES = frozenset(
    {"ICLR", "NEURIPS", "ICML", "ACL", "AI", "ML", "NLP", "CV", "LLM", "LLMS", "PDF", "URL", "TL;DR", "TLDR"}
)
_HOW_MANY = re.compile(r"\bhow many\s+((?:[\w\-]+\s*){1,4})", re.I)
#: Words that end the noun phrase after "how many" ("how many text-to-image models *did* they ...").
_PHRASE_END = frozenset(
    "are is was were do does did have has had can could will would should in of on for from per "
    "at it its they them their the this that these those to by with and or".split()
)
_MEASURE = re.compile(
    r"\bwhat\s+(?:(?:[\w\-]+\s+){0,2}?)(accuracy|score|success rate|rate|percentage|share|fraction|"
    r"speed-?up|improvement|gain|error|f1|bleu|perplexity|size|number|latency|cost|budget)\b",
    re.I,
)
_QUANTITY = re.compile(
    r"\bhow (?:many|much|large|big|long|fast|often)\b|\bby how much\b|"
    r"\bwhat (?:percentage|fraction|proportion|number)\b",
    re.I,
)
_WHICH_PAPER = re.compile(
    r"\b(?:which|what|is there an?|any)\s+(?:\w+[\s-]+){0,3}?(?:paper|abstract|work|study|article)s?\b|"
    r"\bwhere in the collection\b|\bwhat is (?:it|the \w+) called\b",
    re.I,
)
#: "Which graph transformer puts ...?": a question that opens with "which <thing> <verb>" asks to identify
#: a paper's method, unless it asks about a paper already in focus ("which models did *it* beat?").
_WHICH_THING = re.compile(
    r"^\s*which\b"
    r"(?!.*\b(?:did|do|does|is|are|was|were|has|have)\s+(?:it|they|its|their|the authors|this|these|those)\b)"
    r"(?!\s+of\b)",
    re.I,
)
_DEFINITION = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?:the\s+|an?\s+)?['\"“]?[\w\-]+['\"”]?\s*(?:\?|$|,|\band\b|\bin\b)|"
    r"^\s*what\s+(?:does|do|did)\s+(?:the\s+)?[\w\-]+\s+(?:do|propose|introduce|offer)\b",
    re.I,
)
_EXPANSION = re.compile(r"\bstand(?:s)? for\b|\bshort for\b|\bacronym\b", re.I)
_NEGATION = re.compile(
    r"\b(?:no|not|without|never|none|neither|nor|free of|does not|doesn't|do not|don't|cannot|can't)\b", re.I
)


def stem(word: str) -> str:
    """A crude English stem for matching a measured noun in a sentence (``parameters`` -> ``paramet``)."""
    w = word.lower().strip("-")
    for suffix in ("ations", "ation", "ings", "ing", "ers", "ies", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


@dataclass(frozen=True, slots=True)
class QuestionFacts:
    """What the question asks for (see the module docstring). ``measured``: stems of the noun whose
    number is asked for (empty when the wording gives none)."""

    entities: tuple[str, ...]
    quantity: bool
    measured: tuple[str, ...]
    which_paper: bool
    expansion: bool
    papers_wanted: int | None = None
    definition: bool = False


#: Default longest question, in characters (``Settings.retrieval.max_question_chars``; prompt budget, see prompts.py).
MAX_QUESTION_CHARS = 2000


class EmptyQuestionError(AssistantError):
    """The question has no letters or digits."""


class QuestionTooLongError(AssistantError):
    """The question is longer than ``Settings.retrieval.max_question_chars`` (``ASSISTANT_MAX_QUESTION_CHARS``)."""


def clean_question(question: str, max_chars: int = MAX_QUESTION_CHARS) -> str:
    """``question`` with whitespace runs collapsed to one space.

    Raises:
        EmptyQuestionError: nothing answerable (empty, whitespace, emoji only).
        QuestionTooLongError: longer than ``max_chars`` characters after collapsing; nothing is cut, so a
            pasted page is never searched or answered as if it were a question.
    """
    q = " ".join(question.split())
    if not any(ch.isalnum() for ch in q):
        raise EmptyQuestionError("Please type a question about the indexed papers.")
    if len(q) > max_chars:
        raise QuestionTooLongError(
            f"This message is {len(q):,} characters long; a question can be at most {max_chars:,} "
            "(ASSISTANT_MAX_QUESTION_CHARS). Ask about one thing, e.g. name the paper or the method and what "
            "you want to know, or quote only the sentence you are asking about."
        )
    return q


_COUNT_WORDS = {"two": 2, "both": 2, "three": 3, "four": 4, "2": 2, "3": 3, "4": 4}
#: "the three papers", "these two methods", "all three", "both abstracts": how many papers are meant.
_PAPERS_WANTED = re.compile(
    r"\b(?:(two|three|four|both|[234])\s+(?:\w+\s+)?(?:papers|abstracts|works|methods|approaches|models|ones)\b|"
    r"(?:the|these|those|all)\s+(two|three|four)\b)",
    re.I,
)


def analyze(question: str) -> QuestionFacts:
    """Read :class:`QuestionFacts` off the wording of ``question``."""
    entities = []
    for m in NAME_TOKEN.finditer(question):
        tok = m.group(0).rstrip("-")
        if tok.upper() in GENERIC_NAMES or tok.upper().rstrip("S") in GENERIC_NAMES or NUMBER_TOKEN.fullmatch(tok):
            continue
        if re.fullmatch(r"\d[\w.%-]*", tok):  # numbers in a premise are checked by the verifier, not here
            continue
        head, _, rest = tok.partition("-")
        if head.upper() in GENERIC_NAMES and (not rest or rest.islower()):  # "AI-generated", "LLM-based"
            continue
        entities.append(tok)
    measured: list[str] = []
    for m in _HOW_MANY.finditer(question):
        head = ""
        for i, w in enumerate(m.group(1).split()):
            if w.lower() in _PHRASE_END or (i > 0 and w.lower().endswith("ed")):
                break
            head = w
        if head:
            measured.append(stem(head))
    for m in _MEASURE.finditer(question):
        measured.append(stem(m.group(1).split()[-1]))
    quantity = bool(measured) or bool(_QUANTITY.search(question))
    wanted = _PAPERS_WANTED.search(question)
    return QuestionFacts(
        tuple(dict.fromkeys(entities)),
        quantity,
        tuple(dict.fromkeys(measured)),
        bool(_WHICH_PAPER.search(question) or _WHICH_THING.search(question)),
        bool(_EXPANSION.search(question)),
        _COUNT_WORDS[(wanted.group(1) or wanted.group(2)).lower()] if wanted else None,
        bool(entities) and bool(_DEFINITION.search(question)),
    )


def counted_words(question: str) -> list[str]:
    """The words of each noun phrase whose count the question asks for ("How many male sparrows were
    recorded?" -> ``["male", "sparrows"]``), up to the first word that ends the phrase; [] when none."""
    out: list[str] = []
    for m in _HOW_MANY.finditer(question):
        for i, w in enumerate(m.group(1).split()):
            if w.lower() in _PHRASE_END or (i > 0 and w.lower().endswith("ed")):
                break
            out.append(w)
    return out


_ASKED_THING = re.compile(
    r"\b(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+(?:the\s+|an?\s+)?((?:[\w\-]+\s*){1,4})", re.I
)


#: Words that name a kind of thing, not the thing: "which *family* of models", "what *kind* of tasks".
_KIND_WORDS = frozenset(
    "kind kinds type types sort sorts family families class classes form forms category categories".split()
)


def asked_thing(question: str) -> list[str]:
    """The words naming what a "what/which <thing> ..." question asks for ("what simulator did ..." ->
    ``["simulator"]``, "which four Atari games did ..." -> ``["four", "Atari", "games"]``), up to the first
    word that ends the phrase (:data:`_PHRASE_END`: "did", "it", "of" ...; after a kind word the phrase goes
    on: "which family of models" -> ``["models"]``); [] for other questions and for "what does it ...", where
    a verb follows at once."""
    out: list[str] = []
    for m in _ASKED_THING.finditer(question):
        words = m.group(1).split()
        for i, w in enumerate(words):
            low = w.lower().strip("?,.")
            if low == "of" and out and all(x.lower() in _KIND_WORDS for x in out):
                out = []  # "which family of models": the thing is what follows "of"
                continue
            if low in _PHRASE_END or not low:
                break
            out.append(w.strip("?,."))
            if w.endswith(("?", ",", ".")):
                break
        if out:
            break
    return out


_PREMISE_LEAD = re.compile(
    r"^\s*(?:since|given that|as|because|now that|considering that|assuming that)\s+(.+?),\s+\w", re.I
)
_HEDGES = re.compile(r"\b(?:reportedly|apparently|supposedly|allegedly|famously|clearly|obviously)\s+", re.I)


def premises(question: str) -> list[str]:
    """Statements the question takes for granted, to be checked before answering: a leading "Since X, ..."
    clause, and declarative sentences before the final question ("LeReT improved accuracy by 42%. What
    drove ...?"). Hedges ("reportedly") are removed. Empty for plain questions."""
    from assistant.lang.text import split_sentences

    out = []
    m = _PREMISE_LEAD.match(question)
    if m:
        out.append(m.group(1))
    parts = split_sentences(question)
    if len(parts) > 1 and parts[-1].rstrip().endswith("?"):
        out += [p for p in parts[:-1] if not p.rstrip().endswith("?") and len(p.split()) >= 4]
    # only checkable claims about a paper: they name something or state a number ("I'm new to this." is not)
    out = [p for p in out if analyze(p).entities or re.search(r"\d", p)]
    return [_HEDGES.sub("", p).strip().rstrip(".") + "." for p in out]


#: Where one question asks a second thing: ", and what/how/which ..." or a second question after "?".
_SECOND_ASK = re.compile(
    r"(?:,\s*|\s+)and\s+(?=(?:(?:over|in|on|for|with|at|by|from|to|of)\s+)?(?:what|how|which|who|where|when|why|"
    r"does|do|did|is|are|was|were|can)\b)|(?<=\?)\s+(?=\S)",
    re.I,
)


def question_parts(question: str) -> list[str]:
    """The things ``question`` asks, in order ("What success rate does ResDex reach, and how long does its
    training take?" -> two parts); ``[question]`` when it asks one."""
    parts = [p.strip(" ,") for p in _SECOND_ASK.split(question) if p and p.strip(" ,")]
    return parts if len(parts) >= 2 else [question]


def premise_facts(premise: str) -> QuestionFacts:
    """:class:`QuestionFacts` for finding the sentence that corrects ``premise``: its names, and when it
    states a number, the words just before that number as the measured thing ("accuracy by 42%")."""
    facts = analyze(premise)
    words = premise.split()
    measured = []
    for i, w in enumerate(words):
        if NUMBER_TOKEN.search(w) and re.search(r"\d", w):
            measured += [
                stem(x.strip(",.;:()").lower()) for x in words[max(0, i - 3) : i] if len(x.strip(",.;:()")) > 3
            ]
    return QuestionFacts(facts.entities, bool(measured), tuple(dict.fromkeys(measured)), True, False)


def _norm(text: str) -> str:
    return re.sub(r"[\s\-]+", " ", text.lower())


def mentions(text: str, entity: str) -> bool:
    """True when ``text`` contains ``entity`` (case-insensitive, hyphens and plural ``s`` ignored)."""
    t, e = _norm(text), _norm(entity)
    return e in t or (e.endswith("s") and e[:-1] in t)


def missing_entities(facts: QuestionFacts, paper: Paper) -> list[str]:
    """Entities of the question that ``paper`` (title + abstract) does not mention."""
    text = f"{paper.title} {paper.text}"
    return [e for e in facts.entities if not mentions(text, e)]


def has_number(sentence: str) -> bool:
    """True when the sentence states a number (digits or a number word)."""
    return bool(NUMBER_TOKEN.search(sentence))


#: Measured nouns (stems) whose number is a percentage or a factor, and how such a number is written.
_RELATIVE_MEASURES = ("percent", "share", "fraction", "proportion", "gain", "improvement", "reduction", "speed")
_RELATIVE_NUMBER = re.compile(r"\d(?:[.,]\d+)?\s?(?:%|percent\b|[x×](?![\w-]))")


def states_quantity(facts: QuestionFacts, sentence: str) -> bool:
    """True when ``sentence`` gives the number the question asks for: a number within
    :data:`QUANTITY_WINDOW_WORDS` words of the measured noun or, when no noun is known, any number."""
    if not has_number(sentence):
        return False
    if not facts.measured:
        return True
    words = sentence.split()
    if any(m.startswith(_RELATIVE_MEASURES) for m in facts.measured) and _RELATIVE_NUMBER.search(sentence):
        return True  # "what percentage / how large a gain": "3.3%", "2.19%", "5x" is that number whatever noun is near
    nums = [i for i, w in enumerate(words) if NUMBER_TOKEN.search(w)]
    nouns = [i for i, w in enumerate(words) if any(m in w.lower() for m in facts.measured)]
    return any(abs(i - j) <= QUANTITY_WINDOW_WORDS for i in nums for j in nouns)


def negates(sentence: str) -> bool:
    """True when the sentence contains a negation word (``without``, ``not``, ``no`` ...)."""
    return bool(_NEGATION.search(sentence))


#: "the paper by Yalong Jiang", "work from Smith et al.", "authored by ...": the name after it.
BY_AUTHOR = re.compile(
    r"\b(?:paper|papers|work|works|abstract|study|article|one|written|authored|proposed|published)\s+"
    r"(?:by|from)\s+((?:[A-Z][\w'.\-]*\s*){1,4}?)(?=\s*(?:et al\.?|and colleagues)?(?:[,.?!;:]|\s+[a-z]|$))"
)
#: "the paper about/on/that ... X", "the X one", "the X paper": a description of one paper.
_DESCRIBED = re.compile(
    r"\bthe (?:paper|work|abstract|study|one|method|approach|model)\s+(?:about|on|that|which|proposing|"
    r"introducing|presenting|where|with|for)\s+(.+?)(?=[,;?!]|\.\s|\.$| and (?:what|how|which|the)\b|$)|"
    r"\bthe ((?:[\w\-]+\s+){0,5}[\w\-]+)\s+(?:one|paper)\b",
    re.I,
)
_NOT_A_DESCRIPTION = frozenset(
    {
        "first",
        "second",
        "third",
        "fourth",
        "last",
        "other",
        "same",
        "former",
        "latter",
        "previous",
        "above",
        "this",
        "that",
        "whole",
        "two",
        "three",
        "both",
        "next",
    }
)


def author_phrase(question: str) -> str:
    """The author named by "the paper by <Name>" in ``question``, or ""."""
    m = BY_AUTHOR.search(question)
    return " ".join(m.group(1).split()).strip(" .") if m else ""


def descriptions(question: str) -> list[str]:
    """Descriptions of one paper in ``question`` ("the paper about X" -> "X", "the episodic memory one" ->
    "episodic memory"), without ordinals and pronoun-like phrases ("the second one", "the same paper")."""
    out = []
    for m in _DESCRIBED.finditer(question):
        text = (m.group(1) or m.group(2) or "").strip()
        words = text.lower().split()
        if not words or words[0] in _NOT_A_DESCRIPTION or not content_tokens(text):
            continue
        out.append(text)
    return out
