"""Text rules shared by every stage, written once: word tokens, stopwords, sentence splitting, and the
English wording that marks a paper's contribution sentence or boilerplate.

A leaf module: it imports nothing from ``assistant`` but the tuning constants and the rest of ``lang``
(tests/unit/test_layering.py), so retrieval, attribution, question analysis and the comparison table all read
text the same way.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from assistant.lang.numbers import THOUSANDS
from assistant.lang.stemming import NLTK_LOCK, stem
from assistant.lang.words import QUESTION_ASPECT_BREAK
from assistant.tuning import MIN_SENTENCE_CHARS

FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my no nor not now of
    off on once only or other our ours out over own same she should so some such than that the their theirs
    them then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your""".split()
)
"""English function words: articles, pronouns, auxiliaries, prepositions, question words."""
CONTRACTION_PARTS = frozenset(
    """s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn wouldn shouldn couldn mustn needn
    won""".split()
)
"""What a word tokenizer leaves of English contractions and the possessive ("one's" -> ``one``, ``s``;
"doesn't" -> ``doesn``, ``t``; the fragments of NLTK's English stopword list): never named to the reader as a
word of the question (:func:`content_words_in_order`; a "not stated" notice said "gives no number for s or
size" for "what batch size did they use in the adam one's experiments"). Matching and ranking still count
them (:data:`STOPWORDS` leaves them in: taking them out moved rankings on every eval set, both ways)."""
PAPER_TALK = frozenset(
    """paper papers abstract abstracts propose proposes proposed method approach model models use uses using
    used show shows new work study based one two tell many much answer answers question questions source
    sources indexed response called named""".split()
)
"""Words every abstract or question about papers contains ("paper", "propose", "model")."""
STOPWORDS = FUNCTION_WORDS | PAPER_TALK
"""Function words plus paper talk: they say nothing about which paper is meant. Used for lexical overlap and
BM25-like rarity."""

#: A word: letters and digits of any script (``[^\W_]``), hyphen/period-joined parts kept together.
_TOKEN = re.compile(r"[^\W_][\w\-\.]*[^\W_]|[^\W_]")

#: A sentence stating the paper's own contribution ("we propose ...", "this paper introduces ...").
CONTRIBUTION = re.compile(
    r"\b(?:we (?:propose|introduce|present|develop|design)|this (?:paper|work) (?:proposes|introduces|presents))\b",
    re.I,
)
#: Code/URL boilerplate ("code is available at https://...").
BOILERPLATE = re.compile(
    r"https?://|\bcode (?:is|are) (?:publicly )?available|\bwe (?:release|open-source)\b|github", re.I
)
#: Characters a complete sentence may end with (closing quotes and brackets after the full stop included).
SENTENCE_END = (".", "!", "?", '"', "'", ")", "]", "”", "。", "！", "？", "」", "』", "）")
#: Where a sentence ends in Chinese/Japanese text: a full-width 。！？ (or ．), with closing quotes/brackets after
#: it. Punkt (trained on English) never splits there, so a Chinese abstract would be one sentence.
_CJK_SENTENCE_END = re.compile(r"(?<=[。！？．])[」』”’）》〉】]*")
_ABBREV_GLUE = re.compile(r"\b(?:e\.g|i\.e|et al|etc|vs|Fig|Eq|cf)\.$")


#: A clause needs this many content words to be an aspect of its own.
_CLAUSE_MIN_WORDS = 2


def clauses(text: str) -> list[str]:
    """The aspects of a question: ``text`` split at punctuation and clause words
    (:data:`assistant.lang.words.QUESTION_ASPECT_BREAK`), keeping
    the parts with at least two content words (content_tokens), in order. Returns [] when fewer than two
    such parts exist (the question is one aspect)."""
    parts = [" ".join(p.split()) for p in QUESTION_ASPECT_BREAK.split(text) if p]
    parts = [p for p in parts if len(content_tokens(p)) >= _CLAUSE_MIN_WORDS]
    return parts if len(parts) >= 2 else []


def fold(text: str) -> str:
    """``text`` case-folded, compatibility-normalised (NFKC: full-width letters and digits become ASCII,
    ligatures split) and without the accents of Latin letters ("ÅngströmNet" -> "angstromnet"), the way SQLite
    FTS5's ``unicode61`` tokenizer (the catalog's BM25) folds words, so both sides of a match agree. Marks
    that are part of other scripts' letters (Japanese dakuten: データ) are kept."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    out: list[str] = []
    for c in decomposed:
        if unicodedata.combining(c) and out and out[-1].isascii():
            continue  # an accent on a Latin letter
        out.append(c)
    return unicodedata.normalize("NFC", "".join(out))


def _width(text: str) -> int:
    """Length of ``text`` with wide (CJK) characters counted twice: a Chinese sentence of 11 characters says
    as much as an English one of 22+, so the fragment rule of :func:`split_sentences` must not glue it on."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def content_tokens(text: str) -> set[str]:
    """Folded (:func:`fold`) word tokens of ``text`` in any script, minus :data:`STOPWORDS` (hyphen/period-joined
    names kept whole: ``"gpt-4o"``, ``"3.5"``; "ÅngströmNet" is one token, ``"angstromnet"``); thousands
    separators removed first (``2,864`` -> ``2864``)."""
    return {t for t in _TOKEN.findall(THOUSANDS.sub(r"\1\2", fold(text))) if t not in STOPWORDS}


def content_tokens_in_order(text: str) -> list[str]:
    """:func:`content_tokens` of ``text`` as a list, in the order they occur, each once (a set's order follows
    the hash seed). Not on the hot path: :func:`content_tokens` stays a plain set comprehension."""
    return list(dict.fromkeys(t for t in _TOKEN.findall(THOUSANDS.sub(r"\1\2", fold(text))) if t not in STOPWORDS))


def content_words_in_order(text: str) -> list[str]:
    """:func:`content_tokens_in_order` without :data:`CONTRACTION_PARTS`: the question's words as a notice may
    name them to the reader ("does not mention “wet-lab” or “validation”", in the question's order)."""
    return [t for t in content_tokens_in_order(text) if t not in CONTRACTION_PARTS]


def stems(text: str) -> set[str]:
    """Snowball (English) stems (:func:`assistant.lang.stemming.stem`) of :func:`content_tokens` of ``text``:
    "generation" and "generating" share ``generat``."""
    return {stem(t) for t in content_tokens(text)}


def word_tokens(text: str, *, keep_accents: bool = False) -> list[str]:
    """Folded (:func:`fold`) word tokens of ``text`` in order, stopwords kept (``"Who's the author?"`` ->
    ``["who", "s", "the", "author"]``): for matching phrases of several words. ``keep_accents``: only lower-cased
    ("Sébastien" -> "sébastien", as author names are keyed in the catalog)."""
    folded = unicodedata.normalize("NFC", text.lower()) if keep_accents else fold(text)
    return _TOKEN.findall(THOUSANDS.sub(r"\1\2", folded))


#: Names a question may give to a part of an abstract -> the sentence role (understand/learned.py) that plays it
#: ("what problem does it solve?" is answered by the abstract's problem sentence, whatever its words).
ROLE_NAMES: dict[str, str] = {
    **dict.fromkeys(("problem", "problems", "challenge", "challenges", "limitation", "limitations", "gap"), "problem"),
    **dict.fromkeys(("issue", "issues", "motivation"), "problem"),
    **dict.fromkeys(("method", "methods", "approach", "approaches", "idea", "technique", "framework"), "approach"),
    **dict.fromkeys(("dataset", "datasets", "benchmark", "benchmarks"), "data"),
}  # not "results": "what were the results of the wet-lab validation?" asks for results the abstract may lack


def states_contribution(sentence: str) -> bool:
    """True when ``sentence`` states the paper's own contribution (:data:`CONTRIBUTION`)."""
    return CONTRIBUTION.search(sentence) is not None


#: A web link in an abstract (what seed records call ``code_url``: "https://github.com/…", a project page); it ends at
#: white space, a closing bracket or quote, and a sentence's full stop after it is not part of it.
_LINK = re.compile(r"https?://[^\s<>()\[\]{}\"'”]+")


def code_link(text: str) -> str:
    """The first web link ``text`` (an abstract) states, without a trailing full stop or comma, or "". An abstract's
    link is its code or project page (every ``code_url`` of the seed records is the link its abstract states)."""
    m = _LINK.search(text)
    return m.group(0).rstrip(".,;:") if m else ""


def is_boilerplate(sentence: str) -> bool:
    """True for code/URL boilerplate (:data:`BOILERPLATE`)."""
    return BOILERPLATE.search(sentence) is not None


@lru_cache(maxsize=1)
def _sentence_tokenizer() -> Callable[[str], list[str]]:
    """llama-index's NLTK Punkt sentence tokenizer (its data ships inside llama-index-core)."""
    with NLTK_LOCK:  # it imports NLTK (issue 35)
        from llama_index.core.node_parser.text.utils import split_by_sentence_tokenizer

        return split_by_sentence_tokenizer()


def _split_cjk(sentence: str) -> list[str]:
    """``sentence`` cut after each full-width sentence end (:data:`_CJK_SENTENCE_END`)."""
    out, start = [], 0
    for m in _CJK_SENTENCE_END.finditer(sentence):
        if m.end() < len(sentence):
            out.append(sentence[start : m.end()])
            start = m.end()
    out.append(sentence[start:])
    return out


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (Punkt via llama-index, then after each full-width 。！？ — Chinese and Japanese
    sentence ends Punkt does not know), merging fragments under :data:`MIN_SENTENCE_CHARS` characters and
    splits after abbreviations ("e.g.", "et al.").

    Returns:
        Non-empty, stripped sentences whose concatenation (space-joined) covers the whole text.
    """
    raw = [part.strip() for s in _sentence_tokenizer()(text) for part in _split_cjk(s) if part.strip()]
    merged: list[str] = []
    for s in raw:
        if merged and (_width(s) < MIN_SENTENCE_CHARS or _ABBREV_GLUE.search(merged[-1])):
            merged[-1] = f"{merged[-1]} {s}"
        else:
            merged.append(s)
    return merged


def defines_term(text: str, term: str) -> bool:
    """True when ``text`` defines ``term`` as an abbreviation in parentheses, a plural ``s`` ignored ("variational
    inequality (VI)" defines "VIs")."""
    return re.search(rf"\(\s*{re.escape(term.removesuffix('s'))}s?\s*\)", text) is not None
