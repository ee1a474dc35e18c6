"""Does a sentence read on its own? The one English list of words that make a sentence lean on the one before
it, and the test built from it (issue 25, part 2). A leaf module, like :mod:`assistant.lang.text`.

An abstract sentence quoted alone ("The latter ability is essential …", "To address this, prior studies …",
"It also …", "2) Various generative models …") leaves the reader asking "which?". Such a sentence opens with
a *pro-form* (a word standing for something said before), a *connective* that links it to the previous
sentence, or an *enumerator* continuing a list. These are closed word classes of English, so they are
listed here by class, not learned:

* :data:`PRONOUNS` -- third-person pronouns and demonstratives opening the sentence ("It", "They",
  "These", "Such"), unless the demonstrative's noun is the paper itself (:data:`SELF_NOUNS`: "This paper
  proposes …" stands alone) or "it" is the expletive subject ("It is unclear whether …").
* a demonstrative (``this/these/that/those/such``) inside the opening phrase, up to its first comma
  ("To address these limitations, …", "Motivated by this observation, …", "In this setting, …"),
  again unless it names the paper ("In this work, …").
* :data:`BACK_REFERENCES` -- "the latter", "the former", "the same", "the resulting", "as a result",
  "instead", "in contrast": they point back whatever follows.
* :data:`CONNECTIVES` -- sentence-opening connectives ("However", "Moreover", "Thus", "Finally"): they
  link to the previous sentence, but "Finally, we evaluate X on Y" still reads on its own, so the words
  after the connective decide ("However, these methods …" depends).
* an enumerator: ``2)``, ``(ii)``, ``(b)``.

Checked against the real corpus (docs/evaluation.md, "Sentences that stand alone"): over the 9,909
abstracts of /work/shared/corpus, a sentence this test flags almost never *opens* an abstract (where
nothing precedes it), while it flags about one in six of the other sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Pronouns and demonstratives that, as a sentence's first word, stand for something said before.
PRONOUNS = frozenset({"it", "its", "they", "their", "them", "this", "these", "those", "that", "such", "he", "she"})
#: Nouns with which "this/these" names the paper itself, not something said before ("This paper proposes").
SELF_NOUNS = frozenset(
    {
        "paper",
        "papers",
        "work",
        "study",
        "article",
        "abstract",
        "thesis",
        "manuscript",
        "note",
        "survey",
        "tutorial",
        "report",
        "chapter",
        "position",
        "submission",
        "research",
        "project",
        "talk",
        "review",
    }
)
#: Demonstrative determiners looked for in a sentence's opening phrase.
DEMONSTRATIVES = frozenset({"this", "these", "that", "those", "such"})
#: Phrases that point back to something said before, whatever follows them.
BACK_REFERENCES = (
    "the latter",
    "the former",
    "the same",
    "the above",
    "the aforementioned",
    "the abovementioned",
    "the resulting",
    "the remaining",
    "the other",
    "the rest",
    "both of",
    "each of them",
    "all of them",
    "in turn",
    "in doing so",
    "by doing so",
    "this way",
    "as a result",
    "as such",
    "that is",
    "in other words",
    "namely",
    "i.e.",
    "instead",
    "otherwise",
    "conversely",
    "in contrast",
    "by contrast",
    "on the other hand",
    "in comparison",
)
#: Back-references that point back only as a clause of their own ("In contrast, …"), not before a
#: complement ("In contrast to X, …", "Instead of X, …").
_CLAUSAL = frozenset({"instead", "otherwise", "conversely", "in contrast", "by contrast", "in comparison"})
#: Sentence-opening connectives that link to the previous sentence but leave the rest readable ("Finally,
#: we evaluate X on Y"): the sentence depends on its predecessor only if what follows the connective does
#: ("However, these methods …", "Thus, it …").
CONNECTIVES = (
    "however",
    "but",
    "yet",
    "still",
    "nevertheless",
    "nonetheless",
    "meanwhile",
    "moreover",
    "furthermore",
    "additionally",
    "in addition",
    "besides",
    "also",
    "further",
    "likewise",
    "similarly",
    "thus",
    "therefore",
    "hence",
    "consequently",
    "accordingly",
    "then",
    "next",
    "second",
    "secondly",
    "third",
    "thirdly",
    "fourth",
    "finally",
    "lastly",
    "subsequently",
    "specifically",
    "concretely",
    "in particular",
    "notably",
    "importantly",
    "crucially",
    "overall",
)
#: "It is unclear whether …", "It remains challenging to …": "it" as an expletive subject, not a pronoun.
_EXPLETIVE_IT = re.compile(
    r"^it\s+(?:is|was|remains|has\s+(?:\w+\s+)?been|becomes|became|turns\s+out|seems|appears)\s+"
    r"(?!(?:able|capable|designed|used|trained|based|also)\b)(?:[\w-]+\s+){0,5}?"
    r"(?:to|that|whether|how|why|what|when|for|unclear|known|well[- ]known)\b",
    re.I,
)
_ENUMERATOR = re.compile(r"^\(?(?:\d{1,2}|[ivx]{1,4}|[a-h])\)\s")
_WORD = re.compile(r"[a-z]+(?:[-'][a-z]+)*|\S", re.I)
_OPENING_WORDS = 8


def _starts_with(low: str, phrases: Sequence[str]) -> bool:
    """``low`` opens with one of ``phrases`` as whole words ("next, we" but not "next-token")."""
    return any(low.startswith(p) and (len(low) == len(p) or low[len(p)] in " ,;:") for p in phrases)


def opening_phrase(sentence: str, limit: int = _OPENING_WORDS) -> list[str]:
    """The sentence's opening words, lower case: up to its first comma or colon, at most ``limit`` words."""
    words: list[str] = []
    for tok in _WORD.findall(sentence.strip()):
        if tok in {",", ":", ";"} or len(words) >= limit:
            break
        if tok[0].isalnum():
            words.append(tok.lower())
    return words


def depends_on_previous(sentence: str) -> bool:
    """True when ``sentence`` leans on the sentence before it and would be unclear quoted alone (module
    docstring): an opening pronoun/demonstrative, a demonstrative in the opening phrase, a back-reference,
    a connective, or an enumerator -- except where "this/these" names the paper or "it" is expletive."""
    text = sentence.strip().lstrip("\"'“‘([").strip()
    low = text.lower()
    if not low:
        return False
    if _ENUMERATOR.match(low):
        return True
    back = next((b for b in BACK_REFERENCES if _starts_with(low, (b,))), None)
    if back and not (back in _CLAUSAL and not low[len(back) :].startswith(",")):
        return True
    connective = next((c for c in CONNECTIVES if _starts_with(low, (c,))), None)
    if connective:  # "However, these methods …" depends; "Finally, we evaluate …" does not
        rest = text[len(connective) :].lstrip(" ,;:")
        return bool(rest) and depends_on_previous(rest[0].upper() + rest[1:])
    words = opening_phrase(text, _OPENING_WORDS + 1)  # one more word: what follows the last one looked at
    if not words:
        return False
    if words[0] in PRONOUNS:
        if words[0] == "it" and _EXPLETIVE_IT.match(low):
            return False
        if words[0] in DEMONSTRATIVES and len(words) > 1 and words[1] in SELF_NOUNS:
            return False  # "This paper proposes …"
        return True
    for i, w in enumerate(words[1:_OPENING_WORDS], start=1):
        after = words[i + 1] if i + 1 < len(words) else ""
        if w not in DEMONSTRATIVES or after in SELF_NOUNS or (w == "such" and after in ("as", "that")):
            continue  # "in this paper", "models such as CLIP"
        if w == "that" and words[i - 1] not in _PREPOSITIONS:
            continue  # "we show that …": a conjunction, not a pointer
        return True
    # "Building on it, …", "Compared with them, …": a pronoun object in the opening phrase
    return any(
        w in _OBJECT_PRONOUNS and words[i - 1] in _PREPOSITIONS for i, w in enumerate(words[1:_OPENING_WORDS], 1)
    )


_OBJECT_PRONOUNS = frozenset({"it", "them"})


#: Words after which "that" is a demonstrative ("to address that gap", "for that reason"), not a conjunction.
_PREPOSITIONS = frozenset({"to", "by", "for", "in", "on", "with", "from", "of", "at", "under", "address", "tackle"})


def readable_start(sentences: Sequence[str], i: int, max_back: int = 3) -> int:
    """The index of the first sentence to show so that ``sentences[i]`` reads on its own: ``i`` itself when it
    does not depend on its predecessor, else the nearest earlier sentence (at most ``max_back`` back) from
    which the run reads on its own."""
    j = i
    while j > 0 and i - j < max_back and depends_on_previous(sentences[j]):
        j -= 1
    return j
