"""The English vocabulary the verifier's exact checks and the answerability test share, written once: number
words, the words around a title, asymmetric relations (answerable.py counts a relation's phrases as one word),
the cue that a sentence speaks of two works, and LaTeX markup to drop. The meaning rules that used the rest went
with the rules verifier (issue 40)."""

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
#: A sentence that speaks of two works ("both", "the former", "while", "respectively").
REFERS_TO_TWO = re.compile(r"\b(?:both|two|former|latter|respectively|while|whereas|papers|likewise|similarly)\b", re.I)
#: LaTeX markup a claim or abstract may carry (``\emph{``, ``$``, ``*``): dropped before reading words.
LATEX_MARKUP = re.compile(r"\\(?:emph|textit|textbf|mathrm|text)\{|[\\${}*]")
