"""The words that point back in a conversation, written once: ordinals ("the second one"), labels ("[2]",
"paper 2"), "the former/latter", "the other", pronouns and plural/set references, and "show more". Closed-class and
exact, like the ``[n]`` labels (nothing fitted); read by follow-up resolution (assistant/conversation/resolve.py).
"""

from __future__ import annotations

import re

from assistant.lang.citations import CITATION_LABEL
from assistant.lang.numbers import ORDINALS

# Closed-class words that point at a position or a referent: exact, like [2] labels (nothing fitted to examples).
#: "the second one", "the 2nd paper": group 1 is a key of :data:`assistant.lang.numbers.ORDINALS`.
ORDINAL_REF = re.compile(rf"\bthe (?:very )?({'|'.join(ORDINALS)})(?: one| paper| abstract| work)?\b", re.I)
_ORD = "|".join(ORDINALS)
#: An ordinal that counts the papers in the order the conversation asked about them, not the latest list's: "the very
#: first paper", "back to the first one", "the second one I asked about", "the first paper we discussed".
CONVERSATION_ORDINAL = re.compile(
    rf"\bthe very (?:{_ORD})\b|\b(?:back|return|returning) to the (?:{_ORD})\b|"
    rf"\bthe (?:{_ORD})(?: one| paper| abstract| work)? (?:(?:that |which )?(?:i|we|you) (?:\w+ )?"
    rf"(?:asked|talked|discussed|mentioned|looked|started|began|brought)\b|of (?:this|our|the) (?:chat|conversation))",
    re.I,
)
#: "[2]", "paper 2", "source #2": group 1 or 2 is the label.
LABEL_REF = re.compile(rf"(?:{CITATION_LABEL.pattern}|\b(?:paper|source|reference) #?(\d+)\b)", re.I)
FORMER_LATTER = re.compile(r"\bthe (former|latter)\b", re.I)
OTHER = re.compile(r"\bthe other(?: one| paper| abstract| work)?\b", re.I)
PLURAL_REF = re.compile(
    r"\b(they|them|their|theirs|these|those|both|each|either|the two|the three|all of them|"
    r"which of them|these papers|those papers|the papers)\b",
    re.I,
)
#: Quantifiers over two or more papers ("both", "either of them"): the question means a set, like "those two".
SET_REF = re.compile(r"\b(both|either|neither|each of them|the two|all of them)\b", re.I)
SINGULAR_REF = re.compile(
    r"\b(it|its|it's|this paper|that paper|the paper|this work|the method|the model|"
    r"the approach|the authors|this one|that one|the other|he|she|his|her)\b",
    re.I,
)
#: A question that asks to find a paper ("which paper is about speech coding …?", "is there a paper on …?", "another
#: paper on …"): its own "it" is the paper it asks for, not the one in focus. Up to two words between, none a
#: determiner that points back ("which of the two papers", "what does this paper …" are not).
ASKS_FOR_PAPER = re.compile(
    r"\b(?:which|what|is there an?|is there any|are there any|any|another)\s+"
    r"(?:(?!(?:this|that|these|those|the|its|their|of)\b)[\w-]+\s+){0,2}?(?:paper|study|article|abstract)s?\b",
    re.I,
)
#: A set of papers named by what they share ("those two grokking-related papers", "of the two molecule papers", "both
#: diffusion ones"): group 1 is the description (one to three words), which says which papers of the conversation.
DESCRIBED_SET = re.compile(
    r"\b(?:the|these|those|both)\s+(?:(?:two|three|2|3)\s+)?"
    r"((?!(?:two|three|other|same|last|previous|above|first|second|papers?|ones?)\b)[\w-]+(?:\s+[\w-]+){0,2}?)"
    r"\s+(?:papers|ones|abstracts|works)\b",
    re.I,
)
#: Pronouns and phrases that point back to a paper already discussed.
BACK_REF = re.compile(
    r"\b(it|its|they|them|their|this paper|that paper|the paper|this work|these papers|those papers|"
    r"the authors|both|the two|the three|this one|that one|the other)\b",
    re.I,
)
#: "show more", "more", "next page", "more please", "show the next 10": the next page of the last listing.
MORE = re.compile(
    r"^\s*(?:(?:please\s+)?(?:show|list|give me)\s+)?(?:me\s+)?(?:the\s+)?(?:more|next(?:\s+(?:page|\d+|ones?))?|"
    r"rest)(?:\s+(?:papers|ones|results|please))*\s*[.!?]*\s*$",
    re.I,
)
#: Openings of an elliptic follow-up ("and the second one?", "what about its data?").
ELLIPTIC_OPENINGS = ("and ", "what about", "how about")
#: A quoted span of a question, as a title is quoted ("Summarize 'Attention Is All You Need'"): opened after the start,
#: a space or a bracket and closed before the end, a space or punctuation, so "What's DUALFormer's ..." quotes nothing.
QUOTED_SPAN = re.compile(r"""(?:^|(?<=[\s(\[]))["“'‘]([^"“”'‘’]{3,}?)["”'’](?=$|[\s?.!,;:)\]])""")
