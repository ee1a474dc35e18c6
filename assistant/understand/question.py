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
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from assistant.errors import AssistantError
from assistant.lang.numbers import NUMBER_TOKEN as NUMBER_TOKEN
from assistant.lang.numbers import PAPER_COUNT_WORDS, RELATIVE_NUMBER
from assistant.lang.question_words import KIND_WORDS, NOT_A_DESCRIPTION, PHRASE_END
from assistant.lang.stemming import stem as snowball_stem
from assistant.lang.text import content_tokens
from assistant.lang.words import GENERIC_NAMES, NEGATION, PAPER_NOUN_ALTERNATION, QUESTION_NAME_TOKEN
from assistant.tuning import QUANTITY_WINDOW_WORDS
from assistant.types import Paper

_HOW_MANY = re.compile(r"\bhow many\s+((?:[\w\-]+\s*){1,4})", re.I)
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
    rf"\b(?:which|what|is there an?|any)\s+(?:\w+[\s-]+){{0,3}}?(?:{PAPER_NOUN_ALTERNATION})s?\b|"
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


def stem(word: str) -> str:
    """The stem of a measured noun, for finding it in a sentence (``parameters`` -> ``paramet``): the Snowball
    stem (:func:`assistant.lang.stemming.stem`) without edge hyphens."""
    return snowball_stem(word.strip("-"))


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
    """``question`` in Unicode's composed form (NFC: "Å" typed as "A" + a combining ring is "Å") with whitespace runs
    collapsed to one space.

    Raises:
        EmptyQuestionError: nothing answerable (empty, whitespace, emoji only).
        QuestionTooLongError: longer than ``max_chars`` characters after collapsing; nothing is cut, so a
            pasted page is never searched or answered as if it were a question.
    """
    q = " ".join(unicodedata.normalize("NFC", question).split())
    if not any(ch.isalnum() for ch in q):
        raise EmptyQuestionError("Please type a question about the indexed papers.")
    if len(q) > max_chars:
        raise QuestionTooLongError(
            f"This message is {len(q):,} characters long; a question can be at most {max_chars:,} "
            "(ASSISTANT_MAX_QUESTION_CHARS). Ask about one thing, e.g. name the paper or the method and what "
            "you want to know, or quote only the sentence you are asking about."
        )
    return q


#: "the three papers", "these two methods", "all three", "both abstracts": how many papers are meant.
_PAPERS_WANTED = re.compile(
    r"\b(?:(two|three|four|both|[234])\s+(?:\w+\s+)?(?:papers|abstracts|works|methods|approaches|models|ones)\b|"
    r"(?:the|these|those|all)\s+(two|three|four)\b)",
    re.I,
)


def analyze(question: str) -> QuestionFacts:
    """Read :class:`QuestionFacts` off the wording of ``question``."""
    entities = []
    for m in QUESTION_NAME_TOKEN.finditer(question):
        tok = m.group(0).rstrip("-")
        if tok.upper() in GENERIC_NAMES or tok.upper().rstrip("S") in GENERIC_NAMES or NUMBER_TOKEN.fullmatch(tok):
            continue
        if re.fullmatch(r"\d[\w.%-]*", tok):  # numbers in a premise are checked by the verifier, not here
            continue
        if tok.isupper() and not content_tokens(tok.lower()):  # "MORE sensitive", "NOT": emphasis, not a name
            continue
        head, _, rest = tok.partition("-")
        if head.upper() in GENERIC_NAMES and (not rest or rest.islower()):  # "AI-generated", "LLM-based"
            continue
        entities.append(tok)
    measured: list[str] = []
    for m in _HOW_MANY.finditer(question):
        head = ""
        for i, w in enumerate(m.group(1).split()):
            if w.lower() in PHRASE_END or (i > 0 and w.lower().endswith("ed")):
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
        PAPER_COUNT_WORDS[(wanted.group(1) or wanted.group(2)).lower()] if wanted else None,
        bool(entities) and bool(_DEFINITION.search(question)),
    )


def counted_words(question: str) -> list[str]:
    """The words of each noun phrase whose count the question asks for ("How many male sparrows were
    recorded?" -> ``["male", "sparrows"]``), up to the first word that ends the phrase; [] when none."""
    out: list[str] = []
    for m in _HOW_MANY.finditer(question):
        for i, w in enumerate(m.group(1).split()):
            if w.lower() in PHRASE_END or (i > 0 and w.lower().endswith("ed")):
                break
            out.append(w)
    return out


_ASKED_THING = re.compile(
    r"\b(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+(?:the\s+|an?\s+)?((?:[\w\-]+\s*){1,4})", re.I
)


def asked_thing(question: str) -> list[str]:
    """The words naming what a "what/which <thing> ..." question asks for ("what simulator did ..." ->
    ``["simulator"]``, "which four Atari games did ..." -> ``["four", "Atari", "games"]``), up to the first
    word that ends the phrase (:data:`PHRASE_END`: "did", "it", "of" ...; after a kind word the phrase goes
    on: "which family of models" -> ``["models"]``); [] for other questions and for "what does it ...", where
    a verb follows at once."""
    out: list[str] = []
    for m in _ASKED_THING.finditer(question):
        words = m.group(1).split()
        for i, w in enumerate(words):
            low = w.lower().strip("?,.")
            if low == "of" and out and all(x.lower() in KIND_WORDS for x in out):
                out = []  # "which family of models": the thing is what follows "of"
                continue
            if low in PHRASE_END or not low:
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
#: A why-question's lead: "Why does / do / did / is / are / was / were / can / would ...", "How come ...". What follows
#: is the statement the question takes for granted ("Why does T2V-Turbo-v2 score worse than Kling on VBench?" ->
#: "T2V-Turbo-v2 score worse than Kling on VBench."): English question syntax, not a judgement of its content. A
#: negative one ("Why doesn't X ...?") is left out: its statement would need the negation put back in place.
WHY_LEAD = re.compile(
    r"^\s*(?:why\s+(?:does|do|did|is|are|was|were|can|could|would|will|has|have|had)|how\s+come)\s+(?!not\b)", re.I
)


def premises(question: str) -> list[str]:
    """Statements the question takes for granted, to be checked before answering: a leading "Since X, ..."
    clause, declarative sentences before the final question ("LeReT improved accuracy by 42%. What
    drove ...?"), and what a why-question asks the reason for ("Why does T2V-Turbo-v2 score worse than Kling?" ->
    "T2V-Turbo-v2 score worse than Kling."; :data:`WHY_LEAD`). Hedges ("reportedly") are removed. Empty for plain
    questions."""
    from assistant.lang.text import split_sentences

    out = []
    m = _PREMISE_LEAD.match(question)
    if m:
        out.append(m.group(1))
    parts = split_sentences(question)
    if len(parts) > 1 and parts[-1].rstrip().endswith("?"):
        out += [p for p in parts[:-1] if not p.rstrip().endswith("?") and len(p.split()) >= 4]
    last = parts[-1] if parts else question
    why = WHY_LEAD.match(last)
    if why and not m:
        out.append(last[why.end() :].rstrip(" ?"))
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


def names(text: str, entity: str) -> bool:
    """True when ``text`` contains ``entity`` as a name: starting at a word ("Matryoshka" in "MatryoshkaKV"), hyphens
    and a plural ``s`` ignored; case-insensitive, but an acronym (``AR``, ``KV``: capitals and digits, at most 5) keeps
    its case, so "AR models" names no paper whose title says "Are"."""
    acronym = re.fullmatch(r"[A-Z0-9]{2,5}s?", entity) is not None
    e = re.sub(r"[\s\-]+", " ", entity if acronym else entity.lower())
    e = e.removesuffix("s") if len(e) > 3 else e
    pattern = re.escape(e).replace(r"\ ", r"[\s\-]+")
    return re.search(rf"(?<![^\W_]){pattern}", text, 0 if acronym else re.I) is not None


def missing_entities(facts: QuestionFacts, paper: Paper) -> list[str]:
    """Entities of the question that ``paper`` (title + abstract) does not mention."""
    text = f"{paper.title} {paper.text}"
    return [e for e in facts.entities if not mentions(text, e)]


def has_number(sentence: str) -> bool:
    """True when the sentence states a number (digits or a number word)."""
    return bool(NUMBER_TOKEN.search(sentence))


#: Measured nouns (stems) whose number is a percentage or a factor, and how such a number is written.
_RELATIVE_MEASURES = ("percent", "share", "fraction", "proportion", "gain", "improvement", "reduction", "speed")


@lru_cache(maxsize=1)
def _relative_stems() -> tuple[str, ...]:
    """:data:`_RELATIVE_MEASURES` as Snowball stems (since issue 31, so "improvement" -> ``improv`` still prefixes
    the measured stem); computed on first use, so importing this module does not import NLTK."""
    return tuple(stem(w) for w in _RELATIVE_MEASURES)


def _has_measured(word: str, measured: tuple[str, ...]) -> bool:
    """True when a sentence ``word`` is one of the ``measured`` nouns (stems): a stem inside the word ("paramet"
    in "parameters,") or inside the word's own stem ("accuraci" in "accuracy")."""
    low = word.lower()
    if any(m in low for m in measured):
        return True
    own = stem(low.strip(",.;:()[]\"'?!"))
    return any(m in own for m in measured)


def states_quantity(facts: QuestionFacts, sentence: str) -> bool:
    """True when ``sentence`` gives the number the question asks for: a number within
    :data:`QUANTITY_WINDOW_WORDS` words of the measured noun or, when no noun is known, any number."""
    if not has_number(sentence):
        return False
    if not facts.measured:
        return True
    words = sentence.split()
    if any(m.startswith(_relative_stems()) for m in facts.measured) and RELATIVE_NUMBER.search(sentence):
        return True  # "what percentage / how large a gain": "3.3%", "2.19%", "5x" is that number whatever noun is near
    nums = [i for i, w in enumerate(words) if NUMBER_TOKEN.search(w)]
    nouns = [i for i, w in enumerate(words) if _has_measured(w, facts.measured)]
    return any(abs(i - j) <= QUANTITY_WINDOW_WORDS for i in nums for j in nouns)


def negates(sentence: str) -> bool:
    """True when the sentence contains a negation word (``without``, ``not``, ``no`` ...)."""
    return bool(NEGATION.search(sentence))


#: "the paper by Yalong Jiang", "papers are by Thomas Müller", "work from Smith et al.", "authored by ...", "the paper
#: “<title>” by X. Zhang, Y. Liu and J. Wang" (the first name: a model credited invented authors so): the name.
BY_AUTHOR = re.compile(
    r"\b(?:paper|papers|work|works|abstract|study|article|one|written|authored|proposed|published)\s+"
    r"(?:[\"“][^\"”]{1,300}[\"”]\s+)?(?:(?:is|are|was|were)\s+)?(?:by|from)\s+"
    r"((?:[A-Z][\w'.\-]*\s*){1,4}?)(?=\s*(?:et al\.?|and colleagues)?(?:[,.?!;:]|\s+[a-z]|$))"
)
#: "the paper about/on/that ... X", "the X one", "the X paper": a description of one paper.
_DESCRIBED = re.compile(
    r"\bthe (?:paper|work|abstract|study|one|method|approach|model)\s+(?:about|on|that|which|proposing|"
    r"introducing|presenting|where|with|for)\s+(.+?)(?=[,;?!]|\.\s|\.$| and (?:what|how|which|the)\b|$)|"
    r"\bthe ((?:[\w\-]+\s+){0,5}[\w\-]+)\s+(?:one|paper)\b",
    re.I,
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
        if not words or words[0] in NOT_A_DESCRIPTION or not content_tokens(text):
            continue
        out.append(text)
    return out
