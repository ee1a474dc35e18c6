"""The state of one conversation: its turns, each paper's ``[n]`` (stable for the whole conversation) and the
papers cited; what each turn showed, in the order the user saw it (:func:`shown_order`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assistant.types import Answer, Paper, relabel


@dataclass(frozen=True, slots=True)
class Turn:
    """One exchange: the question, the query actually searched, papers it referred to, and the answer
    (with conversation-stable labels)."""

    question: str
    resolved_query: str
    focus_ids: tuple[str, ...]
    answer: Answer

    @property
    def shown(self) -> tuple[str, ...]:
        """The papers this turn's answer showed, in the order the user saw them (:func:`shown_order`)."""
        return shown_order(self.answer)


def shown_order(answer: Answer) -> tuple[str, ...]:
    """Paper ids of ``answer`` in the order the user saw them: the rows of its comparison table, then the order
    in which its sentences first cite each paper (a topic list's items, a multi-paper summary), then any other
    cited paper by label. "The second one" is the second of these."""
    by_n = {c.n: c.paper.id for c in answer.citations}
    order = [by_n[r.n] for r in answer.comparison.rows if r.n in by_n] if answer.comparison is not None else []
    order += [by_n[n] for sent in answer.sentences for n in sent.citations if n in by_n]
    order += [by_n[n] for n in sorted(by_n)]
    return tuple(dict.fromkeys(order))


class ConversationState:
    """The turns of one conversation and its citation labels.

    Args:
        papers: every indexed paper by id (to restore a saved conversation's papers, and for titles).
    """

    def __init__(self, papers: Mapping[str, Paper]) -> None:
        self._known = papers
        self.turns: list[Turn] = []
        self.labels: dict[str, int] = {}  # paper id -> [n], stable for the conversation
        self.papers: dict[str, Paper] = {}

    def shown(self) -> list[tuple[str, ...]]:
        """The papers each turn showed (:attr:`Turn.shown`), latest turn first; turns that showed none skipped."""
        return [shown for shown in (t.shown for t in reversed(self.turns)) if shown]

    def recent(self) -> list[str]:
        """Every paper the conversation showed, most recently shown first (within a turn, in shown order)."""
        return list(dict.fromkeys(pid for shown in self.shown() for pid in shown))

    def asked(self) -> list[str]:
        """Every paper the conversation asked about, in the order it first did: each turn's papers in focus (a
        comparison's both), or, for a turn with none (a new search), the first paper its answer showed. "The very
        first paper" is the first of these."""
        return list(dict.fromkeys(pid for t in self.turns for pid in (t.focus_ids or t.shown[:1])))

    def by_label(self, n: int) -> str | None:
        """The paper labelled ``[n]`` in this conversation, or None."""
        return next((pid for pid, label in self.labels.items() if label == n), None)

    def paper(self, pid: str) -> Paper | None:
        """Paper ``pid`` (cited in this conversation or indexed), or None."""
        return self.papers.get(pid) or self._known.get(pid)

    def title(self, pid: str) -> str:
        """The title of paper ``pid`` (the id when it is not known)."""
        paper = self.papers.get(pid) or self._known.get(pid)
        return paper.title if paper else pid

    def stable(self, answer: Answer) -> Answer:
        """``answer`` relabelled with the conversation's labels; papers cited for the first time get the next
        free ones."""
        mapping = {}
        for c in answer.citations:
            if c.paper.id not in self.labels:
                self.labels[c.paper.id] = len(self.labels) + 1
                self.papers[c.paper.id] = c.paper
            mapping[c.n] = self.labels[c.paper.id]
        return relabel(answer, mapping)

    def cited_papers(self) -> list[tuple[int, Paper]]:
        """Every paper cited so far, as ``(n, paper)`` in label order."""
        return sorted(((n, self.papers[pid]) for pid, n in self.labels.items()), key=lambda x: x[0])

    def reset(self) -> None:
        """Forget the conversation."""
        self.turns.clear()
        self.labels.clear()
        self.papers.clear()
