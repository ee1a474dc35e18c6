"""The English vocabulary of the ``rules`` verifier (assistant/verify/rules.py), written once: opposites,
strength and scope words, asymmetric relations, paraphrase filler, and the patterns that read a claim's wording.
Moved here unchanged in issue 31; the checks that use them stay in the verifier."""

from __future__ import annotations

import re

from assistant.lang.numbers import NUMBER_WORDS

#: Number words as the verifier's word tokens read them -> digits, and ``percent`` -> ``%`` ("sixteen" -> "16").
#: "one" is left a word ("one of the baselines", "one ... another" is a relation, not a count); up to a hundred.
CLAIM_NUMBER_WORDS: dict[str, str] = {
    **{w: str(v) for w, v in NUMBER_WORDS.items() if v <= 100 and w != "one"},
    "percent": "%",
}

#: Words allowed around a title in a sentence that only names a paper ("The paper is called X").
TITLE_FRAME_WORDS = frozenset(
    {"called", "titled", "named", "introduces", "introduced", "presents", "presented", "by", "authors"}
)


#: Words and marks that end a negation's scope.
NEGATION_SCOPE_END = frozenset(
    {"but", "and", "while", "whereas", "which", "that", "although", "though", "because", ",", ";", ":", "(", ")"}
)

#: Opposites (compared after :func:`assistant.lang.stemming.stem`): the general kinds of flipped claims, not
#: corpus strings.
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("larger", "smaller"),
    ("large", "small"),
    ("bigger", "smaller"),
    ("stronger", "weaker"),
    ("strong", "weak"),
    ("higher", "lower"),
    ("high", "low"),
    ("more", "less"),
    ("more", "fewer"),
    ("better", "worse"),
    ("faster", "slower"),
    ("fast", "slow"),
    ("easier", "harder"),
    ("easy", "hard"),
    ("increase", "decrease"),
    ("increase", "reduce"),
    ("improve", "degrade"),
    ("improve", "worsen"),
    ("improve", "hurt"),
    ("enhance", "degrade"),
    ("stable", "degrade"),
    ("stable", "unstable"),
    ("narrow", "widen"),
    ("explicit", "implicit"),
    ("global", "local"),
    ("maximum", "minimum"),
    ("maximize", "minimize"),
    ("before", "after"),
    ("input", "output"),
    ("positive", "negative"),
    ("success", "failure"),
    ("succeed", "fail"),
    ("upper", "lower"),
    ("above", "below"),
    ("earlier", "later"),
    ("early", "late"),
    ("nearby", "distant"),
    ("short", "long"),
    ("shorter", "longer"),
    ("dense", "sparse"),
    ("cheap", "expensive"),
    ("outperform", "underperform"),
    ("accelerate", "delay"),
    ("enable", "prevent"),
    ("overestimate", "underestimate"),
    ("supervised", "unsupervised"),
    ("leaf", "root"),
    ("leaves", "roots"),
    ("natural", "synthetic"),
    ("linear", "nonlinear"),
    ("online", "offline"),
)
#: Scope/strength words: the claim must not say more than the aligned evidence. Members of a group
#: stand for each other ("proves" is backed by "proof" or "theorem").
STRENGTH_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"all", "every", "always", "entire", "entirely", "universally", "whole"}),
    frozenset({"prove", "proves", "proved", "proven", "proof", "proofs", "provably", "theorem", "rigorously"}),
    frozenset({"first"}),  # only as "the first ..." (priority), not "first trains ..." (sequence)
    frozenset({"best", "sota", "art"}),  # "state of the art" / "state-of-the-art"
    frozenset({"far"}),
    frozenset({"completely", "fully", "perfectly", "perfect"}),
)
#: Asymmetric relations ``X <rel> Y``: canonical name -> phrases; ``*_by`` relations read ``Y <rel> X``.
RELATIONS: dict[str, tuple[str, ...]] = {
    "beats": (
        "outperforms",
        "outperform",
        "outperformed",
        "beats",
        "beat",
        "surpasses",
        "surpass",
        "surpassed",
        "surpassing",
        "outperforming",
        "exceeds",
        "exceed",
        "dominates",
        "dominate",
        "better than",
        "rather than",
        "instead of",
        "as opposed to",
    ),
    "causes": (
        "leads to",
        "lead to",
        "led to",
        "causes",
        "cause",
        "results in",
        "result in",
        "gives rise to",
        "is used to initialize",
        "used to initialize",
    ),
    "caused_by": (
        "stems from",
        "stem from",
        "results from",
        "result from",
        "arises from",
        "caused by",
        "due to",
        "driven by",
    ),
}
#: Adverbs ignored on a relation's sides.
RELATION_SIDE_NOISE = frozenset(
    {
        "primarily",
        "mainly",
        "mostly",
        "also",
        "significantly",
        "even",
        "only",
        "largely",
        "often",
        "usually",
        "typically",
        "still",
        "further",
        "first",
        "then",
        "solely",
    }
)
#: Words a paraphrase may freely add or swap in; never a substitution by themselves.
GENERIC_WORDS = frozenset(
    {
        "novel",
        "new",
        "key",
        "main",
        "important",
        "significant",
        "significantly",
        "various",
        "several",
        "different",
        "approach",
        "method",
        "methods",
        "framework",
        "technique",
        "paper",
        "work",
        "authors",
        "author",
        "study",
        "specifically",
        "also",
        "further",
        "thus",
        "overall",
        "their",
        "its",
        "they",
        "the",
        "this",
        "these",
        "our",
        "we",
    }
)
#: A sentence that speaks of two works ("both", "the former", "while", "respectively").
REFERS_TO_TWO = re.compile(r"\b(?:both|two|former|latter|respectively|while|whereas|papers|likewise|similarly)\b", re.I)
#: LaTeX markup a claim or abstract may carry (``\emph{``, ``$``, ``*``): dropped before reading words.
LATEX_MARKUP = re.compile(r"\\(?:emph|textit|textbf|mathrm|text)\{|[\\${}*]")
#: "is/are/was/were a/an/the <up to four words>": what a claim says a thing is (group 1).
IDENTITY = re.compile(r"\b(?:is|are|was|were)\s+(?:an?|the)\s+((?:[\w\-]+\s+){0,3}[\w\-]+)")
#: Words that set one thing against another ("surpasses", "compared with", "versus", "baselines").
COMPARISON = re.compile(
    r"\b(?:surpass\w*|outperform\w*|beat\w*|better than|than|compared (?:to|with)|over|unlike|"
    r"instead of|rather than|versus|vs\.?|against|baselines?)\b"
)


def says_what_it_is(name: str, text: str) -> bool:
    """True when ``text`` says what ``name`` is right after it ("X is a ...", "X, the ...")."""
    return re.search(re.escape(name) + r"\W{0,3}(?:is|are|,)\s+(?:an?|the)\b", text) is not None


#: A "beats" phrase that starts with one of these states a preference ("rather than", "instead of", "as opposed to").
PREFERENCE_LEADS = frozenset({"rather", "instead", "as"})
#: The two ends of a pair stated in order: "one for X and another for Y", "the former ... the latter".
FIRST_OF_PAIR = frozenset({"one", "former"})
SECOND_OF_PAIR = frozenset({"another", "latter"})
