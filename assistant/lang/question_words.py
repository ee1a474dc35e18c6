"""The words that frame a question rather than say what it asks, written once: where an asked noun phrase ends,
kind words ("which *family* of models"), phrases that point instead of describing ("the second one"), and the
framing words the answerability check and listings drop. Read by assistant/understand/question.py,
assistant/verify/answerable.py and assistant/answer/."""

from __future__ import annotations

#: Words that end the noun phrase after "how many" ("how many text-to-image models *did* they ...").
PHRASE_END = frozenset(
    "are is was were do does did have has had can could will would should in of on for from per "
    "at it its they them their the this that these those to by with and or".split()
)

#: Words that name a kind of thing, not the thing: "which *family* of models", "what *kind* of tasks".
KIND_WORDS = frozenset(
    "kind kinds type types sort sorts family families class classes form forms category categories".split()
)

#: First words of a "the ... one/paper" phrase that point or count rather than describe ("the second one",
#: "the same paper").
NOT_A_DESCRIPTION = frozenset(
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

#: Words that frame a question about a paper rather than name what it asks: never detail words.
FRAME_WORDS = frozenset(
    """report reports reported reporting mention mentions mentioned say says said state states stated describe
    describes described give gives given find finds found get gets got exactly actually really right ok okay
    also too please know wondering curious kind kinds sort type types thing things way ways like there here
    anything something someone somebody whats wats whos hows theres author authors they their it its paper one
    ones does did do done doing have has had included include includes first second third fourth last former
    latter other wrote write written authored make makes made collection corpus introduce introduces introduced
    present presents""".split()
)

#: Words that only frame a listing's narrowing ("orals only", "just the spotlights", "from ICLR 2024").
LISTING_FRAME_WORDS = frozenset({"only", "just", "from", "at", "in"})

#: Verbs that introduce a name ("dubbed X", "called X").
NAMING_VERBS = ("dubbed", "called", "named", "coined")
