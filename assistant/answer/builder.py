"""AnswerBuilder: accumulates the shown sentences of one answer and numbers the papers they cite.

Used by the :class:`~assistant.answer.answerer.Answerer` and by every intent strategy (strategies.py): a strategy
adds sentences (model sentences after verification, or abstract sentences chosen by code), the builder
keeps each citation's supporting evidence and renumbers sources 1..m in order of first citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from assistant.types import (
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    Comparison,
    Evidence,
    Intent,
    Listing,
    PaperHit,
    relabel,
)


def with_evidence(hit: PaperHit, k: int) -> PaperHit:
    """``hit`` with its ``k`` best-scoring sentences as evidence (in abstract order)."""
    if not hit.sentence_scores:
        return hit
    order = sorted(range(len(hit.sentences)), key=lambda i: hit.sentence_scores[i], reverse=True)[:k]
    ev = tuple(Evidence(hit.paper.id, i, hit.sentences[i], hit.sentence_scores[i]) for i in sorted(order))
    return replace(hit, evidence=ev)


class AnswerBuilder:
    """The answer being built.

    Args:
        question: what the user asked.
        context: the papers sentences may cite: label ``n`` is ``context[n - 1]``.
        sources: papers shown as sources (cited or not).
        model: the model name recorded on the answer.
        intent, query: recorded on the answer.
    """

    def __init__(
        self,
        question: str,
        context: Sequence[PaperHit],
        sources: Sequence[PaperHit],
        model: str,
        intent: Intent,
        query: str,
    ) -> None:
        self.question, self.context, self.sources, self.model = question, list(context), tuple(sources), model
        self.intent, self.query = intent, query
        self.sentences: list[AnswerSentence] = []
        self.evidence: dict[int, list[str]] = {}  # source n -> supporting sentences
        self.order: list[int] = []  # source n in order of first citation
        self.dropped: list[str] = []
        self.comparison: Comparison | None = None
        self.listing: Listing | None = None
        self.model_used = False

    def cite(self, n: int, evidence: str = "") -> None:
        """Cite source ``n`` (1-based into ``context``), optionally with one supporting sentence."""
        if n not in self.order:
            self.order.append(n)
        if evidence and evidence not in self.evidence.setdefault(n, []):
            self.evidence[n].append(evidence)

    def add(self, sentence: AnswerSentence, evidence: str) -> None:
        """Show ``sentence``; ``evidence`` is its supporting abstract sentence, or for a sentence about
        two papers the pieces joined by " ... " (each piece goes under the paper whose abstract has it).
        A sentence already shown is not added twice."""
        if any(s.text == sentence.text for s in self.sentences):
            return
        pieces = [p for p in evidence.split(" ... ") if p] if " ... " in evidence else [evidence]
        for n in sentence.citations:
            paper = self.context[n - 1].paper if 0 < n <= len(self.context) else None
            own = [p for p in pieces if paper is not None and (p in paper.text or p == paper.title)] or pieces
            for piece in own:
                self.cite(n, piece)
        self.sentences.append(sentence)

    def quote(self, evidence: Evidence, n: int = 1) -> None:
        """Show an abstract sentence of source ``n`` as it is, cited ``n``, its evidence score as support."""
        self.add(AnswerSentence(evidence.text, (n,), round(evidence.score, 3)), evidence.text)

    def build(self, mode: AnswerMode, notice: str = "", timings: dict[str, float] | None = None) -> Answer:
        """The answer so far, with sources renumbered 1..m in order of first citation."""
        citations = tuple(Citation(n, self.context[n - 1].paper, tuple(self.evidence.get(n, ()))) for n in self.order)
        answer = Answer(
            self.question,
            tuple(self.sentences),
            citations,
            self.sources,
            mode,
            self.model,
            tuple(self.dropped),
            notice,
            dict(timings or {}),
            self.intent,
            self.query,
            self.comparison,
            self.model_used,
            self.listing,
        )
        return relabel(answer, {n: i for i, n in enumerate(self.order, start=1)})
