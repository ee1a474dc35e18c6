"""Answerer: retrieve -> select evidence -> abstain or prompt -> stream LLM -> verify each sentence -> Answer.

Follows shared/docs/design.md: the model sees a compact evidence prompt; every shown sentence is
attributed by code (attribution.py); if nothing survives, the answer is extractive (the best
evidence sentences, cited); below the similarity threshold the assistant abstains.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from assistant.attribution import Attributor, Embedder
from assistant.chunking import split_sentences
from assistant.errors import LLMUnavailableError
from assistant.prompts import build_messages
from assistant.types import Answer, AnswerMode, AnswerSentence, Citation, PaperHit

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.llm import ChatBackend
    from assistant.retrieval import PaperRetriever

logger = logging.getLogger(__name__)

ABSTAIN_NOTICE = "The indexed abstracts don't cover this question."
EXTRACTIVE_NOTICE = "No generated sentence could be verified against the abstracts, so here are the most relevant passages."
#: The abstention test looks at the best dense similarity among this many top-ranked papers.
ABSTAIN_TOP_PAPERS = 3
#: Evidence sentences of the top paper shown in an extractive answer.
EXTRACTIVE_SENTENCES = 2


@dataclass(frozen=True, slots=True)
class AnswerEvent:
    """A step of a streamed answer.

    ``kind``: ``"status"`` (retrieval done; ``message`` says what was found), ``"partial"`` (verified
    sentences so far in ``answer``), ``"final"`` (the complete ``answer``).
    """

    kind: Literal["status", "partial", "final"]
    message: str = ""
    answer: Answer | None = None
    hits: tuple[PaperHit, ...] = field(default_factory=tuple)


class _Builder:
    """Accumulates verified sentences and numbers cited papers 1..m in order of first citation."""

    def __init__(self, question: str, context: Sequence[PaperHit], hits: Sequence[PaperHit], model: str) -> None:
        self.question, self.context, self.hits, self.model = question, list(context), tuple(hits), model
        self.sentences: list[AnswerSentence] = []
        self.evidence: dict[int, list[str]] = {}  # source n -> supporting sentences
        self.order: list[int] = []  # source n in order of first citation
        self.dropped: list[str] = []

    def add(self, sentence: AnswerSentence, evidence: str) -> None:
        if any(s.text == sentence.text for s in self.sentences):
            return
        for n in sentence.citations:
            if n not in self.order:
                self.order.append(n)
            if evidence and evidence not in self.evidence.setdefault(n, []):
                self.evidence[n].append(evidence)
        self.sentences.append(sentence)

    def build(self, mode: AnswerMode, notice: str = "", timings: dict[str, float] | None = None) -> Answer:
        label = {n: i for i, n in enumerate(self.order, start=1)}
        sentences = tuple(
            AnswerSentence(s.text, tuple(label[n] for n in s.citations), s.support) for s in self.sentences
        )
        citations = tuple(
            Citation(label[n], self.context[n - 1].paper, tuple(self.evidence.get(n, ()))) for n in self.order
        )
        return Answer(self.question, sentences, citations, self.hits, mode, self.model, tuple(self.dropped),
                      notice, dict(timings or {}))


class Answerer:
    """Answers one question at a time; stateless between calls (safe to share across chats).

    Args:
        retriever: hybrid paper retriever.
        backend: the chat model (OpenAI-compatible).
        embed: batch text -> unit vectors, used for attribution.
        settings: thresholds and sizes (``min_similarity``, ``context_papers``, ``support_threshold``...).
    """

    def __init__(self, retriever: PaperRetriever, backend: ChatBackend, embed: Embedder, settings: Settings) -> None:
        self._retriever = retriever
        self._backend = backend
        self._embed = embed
        self._settings = settings

    def answer(self, question: str) -> Answer:
        """Run :meth:`stream` to the end and return the final answer."""
        final = None
        for event in self.stream(question):
            if event.kind == "final":
                final = event.answer
        assert final is not None
        return final

    def select_context(self, hits: Sequence[PaperHit]) -> list[PaperHit]:
        """Papers whose evidence goes into the prompt: the top-ranked paper, plus those among the first
        ``context_papers`` whose dense similarity is within ``context_similarity_margin`` of the best."""
        if not hits:
            return []
        top = hits[: self._settings.context_papers]
        best = max(h.dense_similarity for h in top)
        return [hits[0]] + [h for h in top[1:] if h.dense_similarity >= best - self._settings.context_similarity_margin]

    def stream(self, question: str) -> Iterator[AnswerEvent]:
        """Answer ``question``, yielding a status event, partial answers as sentences are verified, then the final one.

        LLM failures do not raise: the final answer is extractive and ``notice`` says what happened.
        """
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        hits = self._retriever.retrieve(question)
        timings["retrieve"] = (time.perf_counter() - t0) * 1000
        model = self._backend.model
        best = max((h.dense_similarity for h in hits[:ABSTAIN_TOP_PAPERS]), default=0.0)
        rare = self._retriever.rare_terms_matched(question, hits[:ABSTAIN_TOP_PAPERS])
        if best < self._settings.min_similarity and not rare:
            logger.info("abstain: best similarity %.3f < %.3f and no rare query term matched", best, self._settings.min_similarity)
            timings["total"] = (time.perf_counter() - t0) * 1000
            builder = _Builder(question, [], hits, model)
            yield AnswerEvent("final", answer=builder.build("abstained", ABSTAIN_NOTICE, timings), hits=tuple(hits))
            return

        context = self.select_context(hits)
        yield AnswerEvent("status", f"Found {len(hits)} relevant papers; reading the top {len(context)}.", hits=tuple(hits))
        builder = _Builder(question, context, hits, model)
        attributor = Attributor(context, self._embed, self._settings.support_threshold)
        notice = ""
        buffer = ""
        t_gen = time.perf_counter()

        def verify(raw: str) -> bool:
            verdict = attributor.attribute(raw)
            if verdict is None:
                if raw.strip():
                    builder.dropped.append(raw.strip())
                return False
            sentence, evidence = verdict
            builder.add(sentence, evidence)
            return True

        try:
            for delta in self._backend.stream(build_messages(question, context)):
                if "first_token" not in timings:
                    timings["first_token"] = (time.perf_counter() - t0) * 1000
                buffer += delta
                parts = split_sentences(buffer)
                if len(parts) > 1:
                    changed = False
                    for raw in parts[:-1]:
                        changed |= verify(raw)
                    buffer = parts[-1]
                    if changed:
                        yield AnswerEvent("partial", answer=builder.build("generated", timings=timings), hits=tuple(hits))
        except LLMUnavailableError as e:
            logger.warning("LLM failed: %s", e)
            notice = f"The language model failed ({e}). Showing the most relevant passages instead."
        for raw in split_sentences(buffer) if buffer.strip() else []:
            verify(raw)
        timings["generate"] = (time.perf_counter() - t_gen) * 1000
        if builder.dropped:
            logger.info("dropped %d unsupported sentence(s): %s", len(builder.dropped), builder.dropped)

        mode: AnswerMode = "generated"
        if not builder.sentences:
            mode = "extractive"
            notice = notice or EXTRACTIVE_NOTICE
            top_evidence = sorted(context[0].evidence, key=lambda e: e.score, reverse=True)
            for ev in top_evidence[:EXTRACTIVE_SENTENCES]:
                builder.add(AnswerSentence(ev.text, (1,), round(ev.score, 3)), ev.text)
        timings["total"] = (time.perf_counter() - t0) * 1000
        yield AnswerEvent("final", answer=builder.build(mode, notice, timings), hits=tuple(hits))
