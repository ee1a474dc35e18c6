"""ChatSession: one conversation's turns; builds the retrieval query for follow-ups. One object per chat."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.answer import AnswerEvent
from assistant.types import Answer

if TYPE_CHECKING:
    from assistant.service import Assistant

# Words that point back to something said earlier ("it", "they", "the second paper", "those two").
_ANAPHORA = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|the (?:first|second|third|former|latter|same)|"
    r"the (?:paper|papers|model|method|approach|benchmark|authors)|he|she|his|her|both|either|each)\b",
    re.IGNORECASE,
)
#: Questions this short (in words) are treated as elliptic ("and the bit-rate?").
ELLIPTIC_MAX_WORDS = 5


@dataclass(frozen=True, slots=True)
class Turn:
    """One exchange: the user's question, the query actually searched, and the answer."""

    question: str
    resolved_query: str
    answer: Answer


def is_followup(question: str) -> bool:
    """True when the question refers back (pronoun/definite reference) or is elliptic."""
    q = question.strip()
    return bool(_ANAPHORA.search(q)) or len(q.split()) <= ELLIPTIC_MAX_WORDS or q.lower().startswith(("and ", "what about", "how about"))


class ChatSession:
    """Holds the turns of one conversation and asks the assistant with follow-ups resolved.

    Args:
        assistant: shared, stateless answering service.
    """

    def __init__(self, assistant: Assistant) -> None:
        self._assistant = assistant
        self.turns: list[Turn] = []

    def resolve(self, question: str) -> str:
        """The retrieval query: the question itself, or, for a follow-up, the question plus the titles of
        the papers cited in the previous answer (or its question when it cited none)."""
        if not self.turns or not is_followup(question):
            return question
        last = self.turns[-1]
        context = "; ".join(c.paper.title for c in last.answer.citations) or last.resolved_query
        return f"{question} ({context})"

    def stream(self, question: str) -> Iterator[AnswerEvent]:
        """Stream the answer to ``question`` in this conversation; records the turn at the end."""
        resolved = self.resolve(question)
        for event in self._assistant.stream(resolved):
            if event.kind == "final" and event.answer is not None:
                self.turns.append(Turn(question, resolved, event.answer))
            yield event

    def ask(self, question: str) -> Answer:
        """The final answer to ``question`` in this conversation."""
        final = None
        for event in self.stream(question):
            if event.kind == "final":
                final = event.answer
        assert final is not None
        return final

    def reset(self) -> None:
        """Forget the conversation."""
        self.turns.clear()
