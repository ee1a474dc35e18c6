"""Small closed classes of English written once: negation, the nouns for a paper, name-like tokens, word
tokens as several stages read them, and the clause breaks of questions and claims.

Where two stages read a thing differently on purpose (a question's name tokens vs a claim's), both readings live
here under descriptive names, each saying what it is for.
"""

from __future__ import annotations

import re

# --- negation -----------------------------------------------------------------------------------------------

#: Words that negate, in every reading of negation.
NEGATION_WORDS = frozenset({"no", "not", "without", "never", "none", "neither", "nor", "cannot"})
#: A negation in a question or sentence as written: :data:`NEGATION_WORDS`, contractions and "free of".
NEGATION = re.compile(
    r"\b(?:" + "|".join(sorted(NEGATION_WORDS)) + r"|free of|doesn't|don't|can't)\b",
    re.I,
)

# --- the nouns for a paper ----------------------------------------------------------------------------------

#: What a user calls one paper ("which *study* ...", "the *work* by ...").
PAPER_NOUNS = ("paper", "abstract", "work", "study", "article")
#: Their plurals.
PAPER_NOUNS_PLURAL = ("papers", "abstracts", "works", "studies", "articles")
#: :data:`PAPER_NOUNS` as a regex alternation (no group): ``paper|abstract|work|study|article``.
PAPER_NOUN_ALTERNATION = "|".join(PAPER_NOUNS)
#: Nouns after a count that make it a count of works, not a fact ("two papers here").
COUNTED_WORKS = frozenset({*PAPER_NOUNS, *PAPER_NOUNS_PLURAL, "source", "sources"} - {"article", "articles"})

# --- name-like tokens ---------------------------------------------------------------------------------------

#: A question's names: an inner capital (``LeReT``, ``DUALFormer``), all capitals (``SMM``), or letters with
#: digits (``GPT-4o``, ``T2V-Turbo-v2``). Plain capitalised words ("Android", "Attention") are not names.
QUESTION_NAME_TOKEN = re.compile(
    r"(?<![\w-])(?:[A-Z][a-z]*-[A-Z][\w\-]*|[A-Za-z]*[a-z][A-Z][\w\-]*|[A-Z]{2,}[\w\-]*|[A-Za-z]+-?\d[\w\-]*)(?![\w-])"
)
#: A claim's candidate name tokens (letters/digits joined by ``-`` or ``+``, trailing ``+`` kept: ``C++``,
#: ``TD-0``); the verifier keeps those that look like names (assistant.verify.constraints.names_in).
CLAIM_NAME_TOKEN = re.compile(r"(?<![A-Za-z0-9\-+])[A-Za-z0-9]+(?:[\-+][A-Za-z0-9]+)*\+*")
#: A query word that looks like a name for retrieval's exact-name boost: two capitals, a digit or a hyphen.
QUERY_NAME_LIKE = re.compile(r"[A-Z].*[A-Z]|\d|-")
#: A word part that is written like a name in an answer (two capitals, or a capital after a small letter).
NAME_CASED_PART = re.compile(r"[A-Z].*[A-Z]|[a-z][A-Z]")
#: A capitalised word inside a sentence (not its first word, nor the first after ``. : ; ( " “``): a proper noun
#: - an organisation, place, dataset or person ("Stanford University", "Sydney", "ImageNet"); group 1 the word.
PROPER_NOUN = re.compile(r"(?<=[A-Za-z0-9,\-] )([A-Z][a-z]+(?:['’]s)?)\b")
#: A possessive ``'s`` at the end of a word.
POSSESSIVE = re.compile(r"['’]s$")
#: Capitalised words that are not names (function words after a colon or in a title).
NOT_PROPER_NOUNS = frozenset(
    {"The", "This", "These", "That", "Their", "Its", "It", "A", "An", "In", "On", "And", "Both", "I"}
)
#: Words the user may write in capitals that name the corpus, not a paper.
GENERIC_NAMES = frozenset(
    {"ICLR", "NEURIPS", "ICML", "ACL", "AI", "ML", "NLP", "CV", "LLM", "LLMS", "PDF", "URL", "TL;DR", "TLDR"}
)

# --- word tokens --------------------------------------------------------------------------------------------

#: A word of a paper's text for casing names in an answer (letters, digits, inner hyphens).
ANSWER_WORD = re.compile(r"\b[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]\b")
#: A venue's or a question's words for matching venues: letter runs and four-digit years.
VENUE_WORD = re.compile(r"[A-Za-z]+|\d{4}")
#: A raw word with its apostrophes, periods and hyphens (``o'brien``, ``gpt-4o``, ``v2.1``).
LOOSE_WORD = re.compile(r"[\w'.\-]+")
#: A word with its hyphens and periods (``gpt-4o``, ``3.5``).
DOTTED_WORD = re.compile(r"[\w\-\.]+")
#: A word with its hyphens (``t2v-turbo``).
HYPHENATED_WORD = re.compile(r"[\w\-]+")
#: A verifier word token: letters/digits (a decimal part kept) or one clause punctuation mark.
CLAIM_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?|[%,;:()]")
#: A hyphen or a period inside a token (``bit-rate``, ``v2.1``): where it splits into parts.
TOKEN_JOINER = re.compile(r"[-.]")
#: The word "and".
AND = re.compile(r"\band\b")
#: Spaces before punctuation ("Why ?" -> "Why?").
SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")

# --- clause breaks ------------------------------------------------------------------------------------------

#: Where a question's aspects split (assistant.lang.text.clauses): punctuation and the words that start a new
#: clause or qualifier ("... *using* X *without* Y").
QUESTION_ASPECT_BREAK = re.compile(
    r"[,;:?!()]|\b(?:and|or|where|whereby|which|that|while|whose|by|with|without|using|via|"
    r"instead of|rather than|so that|such that|treating|in order to)\b",
    re.I,
)
#: Where a sentence ends before the next one starts (the first sentence of a text).
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s")


def whole_name_pattern(name: str) -> re.Pattern[str]:
    """``name`` as a whole token, case-insensitive, with a plural ``s``/``es`` allowed (and for a name ending in
    ``s`` after inner capitals, the name without it: "AIGIs" -> "AIGI", "LoRAs" -> "LoRA"). A hyphen and a space
    inside it are the same spelling: "KV-cache" is "KV cache" (an abstract writes either)."""
    variants = [re.escape(name)]
    if name.endswith("s") and any(c.isupper() for c in name[1:-1]):
        variants.append(re.escape(name[:-1]))
    variants = [re.sub(r"(?:\\-|\\ )+", r"[-\\s]+", v) for v in variants]
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(variants) + r")(?:s|es)?(?![A-Za-z0-9+])", re.I)


def whole_phrase_pattern(phrase: str) -> re.Pattern[str]:
    """``phrase`` as whole words, case-insensitive ("beats" not inside "upbeats")."""
    return re.compile(rf"\b{re.escape(phrase)}\b", re.I)


def word_start_pattern(term: str) -> re.Pattern[str]:
    """``term`` at the start of a word, case-insensitive ("diffus" in "diffusion")."""
    return re.compile(rf"\b{re.escape(term)}", re.I)


#: Where a sentence lists what it names: "components: (1) ...", "such as X", "including X", "namely X".
LIST_MARK = re.compile(r":|\(\s*(?:1|i|a)\s*\)|\b(?:such as|including|namely|e\.g\.|i\.e\.)", re.I)

#: A small model's lead-in before its answer ("The answer to this question is: X", "Answer: X", "The source: X",
#: "The source of the question was: X", "Based on the sources, the answer is: X"), stripped by
#: assistant.llm.prompts.strip_citations.
ANSWER_LEAD_IN = re.compile(
    r"^\s*(?:based\s+on\s+the\s+(?:sources?|abstracts?)\s*,\s*)?(?:the\s+)?"
    r"(?:answer(?:\s+to\s+(?:this|the|your)\s+question)?|source(?:\s+(?:of|for)\s+(?:this|the|your)\s+"
    r"(?:question|answer))?|response)(?:\s+(?:is|was|would\s+be))?\s*:\s*",
    re.I,
)
#: Spaces before a question mark, full stop or comma ("what ?" -> "what?"); narrower than
#: :data:`SPACE_BEFORE_PUNCT`.
SPACE_BEFORE_STOP = re.compile(r"\s+([?.,])")

# --- question openings and venues --------------------------------------------------------------------

#: Words that make a number in a question a bound, not a premise ("more than 10%", "at least 2x").
THRESHOLD_WORDS = re.compile(
    r"\b(?:more|less|fewer|greater|higher|lower|larger|smaller|better|worse)\s+than\b|\bat\s+(?:least|most)\b|"
    r"\b(?:over|above|below|under|beyond|exceed\w*|up\s+to)\s+\d",
    re.I,
)
#: "Which paper / abstract / work / study (that) ..." at the start of a question: made "The paper ..." to
#: read the question's description as a claim about the paper found.
WHICH_PAPER_LEAD = re.compile(rf"^\s*(?:which|what)\s+(?:{PAPER_NOUN_ALTERNATION})\s+(?:that\s+)?", re.I)
#: A question that opens with "how" or "why" (after "and", "ok", "so" ...).
HOW_OR_WHY = re.compile(r"^\W*(?:(?:and|ok|okay|so|but|also|then)\W+)*(?:how|why)\b", re.I)
#: Venue words that never narrow a listing (every collection has them, or they are how a question names papers).
#: Words a title writes in lower case between capitalised ones ("Learning to Retrieve by Trying"): a description
#: of a paper written with only these in lower case is written as a name (answer/strategy.py ``paper_names``).
TITLE_CONNECTORS = frozenset("a an and as at by for from in into of on or the to via vs with".split())
GENERIC_VENUE_WORDS = frozenset({"paper", "papers", "track", "main", "conference", "proceedings", "accepted"})
#: A venue string's trailing track or presentation words ("Papers", "Poster", "Main Track"), for a BibTeX
#: ``booktitle`` (ui/export.py).
VENUE_TRACK_SUFFIX = re.compile(r"(?:\s+(?:papers?|posters?|spotlights?|orals?|main(?:\s+track)?|conference))+$", re.I)


def without_by_author(text: str, author: str) -> str:
    """``text`` with "by <author>" / "from <author>" replaced by a space."""
    return re.sub(rf"\b(?:by|from)\s+{re.escape(author)}\b", " ", text)


#: A word as SQLite FTS5 sees one (letters, digits, underscore): the catalog's full-text keys.
FTS_WORD = re.compile(r"\w+")

#: Title words a BibTeX key skips ("A Study of ..." -> the first word that says something).
BIBTEX_KEY_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "on",
        "of",
        "for",
        "to",
        "in",
        "and",
        "with",
        "via",
        "by",
        "from",
        "is",
        "are",
        "do",
        "how",
        "what",
        "when",
        "why",
        "can",
    }
)
