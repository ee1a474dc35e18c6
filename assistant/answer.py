"""Answerer: retrieve -> select evidence -> abstain or prompt -> stream LLM -> verify each sentence -> Answer.

Follows shared/docs/design.md: the model sees a compact evidence prompt; every shown sentence is
attributed by code (attribution.py); if nothing survives, the answer is extractive (the best
evidence sentences, cited); below the similarity threshold the assistant abstains. Comparison
tables and topic listings are built from abstract sentences by code (intents.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from assistant.attribution import Attributor, Embedder, strip_markers
from assistant.chunking import split_sentences
from assistant.errors import LLMUnavailableError
from assistant.extractive import answers_request, missing_detail, pick_sentences, refocus
from assistant.intents import comparison_table, detect_intent, topic_members, topic_query
from assistant.question import QuestionFacts, analyze, premise_facts, premises
from assistant.prompts import build_messages
from assistant.types import Answer, AnswerMode, AnswerSentence, Citation, Comparison, Evidence, Intent, PaperHit, relabel

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.llm import ChatBackend
    from assistant.retrieval import PaperRetriever

logger = logging.getLogger(__name__)

ABSTAIN_NOTICE = "The indexed abstracts don't cover this question."
EXTRACTIVE_NOTICE = "No generated sentence could be verified against the abstracts, so here are the most relevant passages."
#: The abstention test looks at the best dense similarity among this many top-ranked papers.
ABSTAIN_TOP_PAPERS = 3
#: Evidence sentences of the top paper shown in an extractive lookup answer.
EXTRACTIVE_SENTENCES = 2
#: Evidence sentences per paper for summaries.
SUMMARY_SENTENCES = 4
_SENTENCE_END = (".", "!", "?", '"', "'", ")", "]", "”")
#: Candidate papers scanned for a topic listing.
TOPIC_CANDIDATES = 15
#: Token budget of a lookup answer in the ``small`` profile (the bundled 135M model): about two short
#: sentences; longer output of that model was dropped by verification (docs/evaluation.md).
SMALL_MODEL_MAX_TOKENS = 64
#: Papers in a lookup prompt in the ``small`` profile: the 135M model's verified sentences cite the top
#: paper in nearly every dev answer, and each extra paper adds ~100 prompt tokens (~0.5 s on 2 cores).
SMALL_MODEL_CONTEXT_PAPERS = 2
#: Evidence sentences per paper in the prompt in the ``capable`` profile.
CAPABLE_EVIDENCE_SENTENCES = 4


def split_complete(buffer: str) -> tuple[list[str], str]:
    """Split streamed text into its complete sentences and the unfinished rest.

    The rest is returned exactly as received, including trailing spaces: a server that streams
    ``"a "`` then ``"benchmark"`` must give ``"a benchmark"``, not ``"abenchmark"``.

    Returns:
        ``(complete sentences, stripped; the raw tail after the last complete sentence)``.
    """
    parts = split_sentences(buffer)
    if len(parts) < 2:
        return [], buffer
    last = parts[-1]
    start = buffer.rfind(last)
    if start < 0:  # the splitter changed the tail's text (should not happen): keep everything, retry later
        return [], buffer
    return parts[:-1], buffer[start:]


def failure_notice(error: BaseException) -> str:
    """One sentence for the user when the model failed; the details go to the log.

    ``LLMUnavailableError.reason`` picks the wording: ``timeout`` says "timed out", ``crashed`` repeats the
    server's one-line cause (e.g. SIGILL and what to do).
    """
    reason = getattr(error, "reason", "stream")
    if reason == "timeout":
        what = "The language model timed out"
    elif reason in ("crashed", "unreachable"):
        what = getattr(error, "summary", str(error)).rstrip(".")
    elif reason == "http":
        what = "The language model failed with an HTTP error"
    elif reason == "unavailable":
        what = "The language model is unavailable"
    else:
        what = "The language model failed: its answer broke off"
    return f"{what}. Showing the most relevant passages instead, each cited."


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


def with_evidence(hit: PaperHit, k: int) -> PaperHit:
    """``hit`` with its ``k`` best-scoring sentences as evidence (abstract order)."""
    if not hit.sentence_scores:
        return hit
    order = sorted(range(len(hit.sentences)), key=lambda i: hit.sentence_scores[i], reverse=True)[:k]
    ev = tuple(Evidence(hit.paper.id, i, hit.sentences[i], hit.sentence_scores[i]) for i in sorted(order))
    return replace(hit, evidence=ev)


class _Builder:
    """Accumulates verified sentences and numbers cited papers 1..m in order of first citation."""

    def __init__(self, question: str, context: Sequence[PaperHit], hits: Sequence[PaperHit], model: str,
                 intent: Intent, query: str) -> None:
        self.question, self.context, self.hits, self.model = question, list(context), tuple(hits), model
        self.intent, self.query = intent, query
        self.sentences: list[AnswerSentence] = []
        self.evidence: dict[int, list[str]] = {}  # source n -> supporting sentences
        self.order: list[int] = []  # source n in order of first citation
        self.dropped: list[str] = []
        self.comparison: Comparison | None = None
        self.model_used = False

    def cite(self, n: int, evidence: str = "") -> None:
        if n not in self.order:
            self.order.append(n)
        if evidence and evidence not in self.evidence.setdefault(n, []):
            self.evidence[n].append(evidence)

    def add(self, sentence: AnswerSentence, evidence: str) -> None:
        """Show ``sentence``; ``evidence`` is its supporting abstract sentence, or for a sentence about
        two papers the pieces joined by " ... " (each piece goes under the paper whose abstract has it)."""
        if any(s.text == sentence.text for s in self.sentences):
            return
        pieces = [p for p in evidence.split(" ... ") if p] if " ... " in evidence else [evidence]
        for n in sentence.citations:
            paper = self.context[n - 1].paper if 0 < n <= len(self.context) else None
            own = [p for p in pieces if paper is not None and (p in paper.text or p == paper.title)] or pieces
            for piece in own:
                self.cite(n, piece)
        self.sentences.append(sentence)

    def build(self, mode: AnswerMode, notice: str = "", timings: dict[str, float] | None = None) -> Answer:
        """The answer so far, with sources renumbered 1..m in order of first citation."""
        citations = tuple(
            Citation(n, self.context[n - 1].paper, tuple(self.evidence.get(n, ()))) for n in self.order
        )
        answer = Answer(self.question, tuple(self.sentences), citations, self.hits, mode, self.model,
                        tuple(self.dropped), notice, dict(timings or {}), self.intent, self.query, self.comparison,
                        self.model_used)
        return relabel(answer, {n: i for i, n in enumerate(self.order, start=1)})


class Answerer:
    """Answers one question at a time; stateless between calls (safe to share across chats).

    Args:
        retriever: hybrid paper retriever.
        backend: the chat model (OpenAI-compatible).
        embed: batch text -> unit vectors, used for attribution and comparison cells.
        settings: thresholds and sizes (``min_similarity``, ``context_papers``, ``support_threshold``...).
        small_model: the ``small`` answer profile (``Settings.llm_profile``): the model only writes short
            lookups, stopping at the first verified sentence; summaries and comparisons are built by code.
    """

    def __init__(self, retriever: PaperRetriever, backend: ChatBackend, embed: Embedder, settings: Settings,
                 *, small_model: bool = False) -> None:
        self._retriever = retriever
        self._backend = backend
        self._embed = embed
        self._settings = settings
        self._small = small_model

    def answer(self, question: str, **kwargs: object) -> Answer:
        """Run :meth:`stream` to the end and return the final answer (same keyword arguments)."""
        final = None
        for event in self.stream(question, **kwargs):  # type: ignore[arg-type]
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

    def abstains(self, query: str, hits: Sequence[PaperHit]) -> bool:
        """True when the indexed abstracts do not cover ``query``: the best dense similarity among the top
        :data:`ABSTAIN_TOP_PAPERS` papers is below ``min_similarity`` and no rare query term occurs in them."""
        best = max((h.dense_similarity for h in hits[:ABSTAIN_TOP_PAPERS]), default=0.0)
        if best >= self._settings.min_similarity:
            return False
        if self._retriever.rare_terms_matched(query, list(hits[:ABSTAIN_TOP_PAPERS])):
            return False
        logger.info("abstain: best similarity %.3f < %.3f and no rare query term matched", best, self._settings.min_similarity)
        return True

    def stream(self, question: str, *, query: str | None = None, intent: Intent | None = None,
               focus_ids: Sequence[str] = ()) -> Iterator[AnswerEvent]:
        """Answer ``question``: a status event, partial answers as sentences are verified, then the final one.

        Args:
            question: what the user asked (goes into the prompt).
            query: what to search for (follow-ups resolved); defaults to ``question``.
            intent: force an intent; detected from the question when None.
            focus_ids: papers the question refers to (e.g. "those two"); they become the sources and
                the abstention test is skipped.

        LLM failures do not raise: the final answer is extractive and ``notice`` says what happened.
        """
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        query = query or question
        intent = intent or detect_intent(question)
        if focus_ids:
            hits = self._retriever.hits_for(query, list(focus_ids))
            if intent == "compare" and len(hits) < 2:  # "compare it with X": X comes from a fresh search
                hits += [h for h in self._retriever.retrieve(question) if h.paper.id not in focus_ids][: 2 - len(hits)]
        elif intent == "topic":
            hits = self._retriever.retrieve(topic_query(query), top_k=TOPIC_CANDIDATES)
        else:
            hits = self._retriever.retrieve(query)
        timings["retrieve"] = (time.perf_counter() - t0) * 1000
        model = self._backend.model
        # first event of every answer, abstentions included: the papers found, before any checking
        yield AnswerEvent("status", f"Found {len(hits)} candidate papers; checking them against the question.", hits=tuple(hits))

        if not focus_ids and self.abstains(query, hits):
            yield self._without_claims(question, query, intent, hits, "abstained", ABSTAIN_NOTICE, timings, t0)
            return

        facts = analyze(question)
        if intent == "lookup":
            hits = refocus(hits, facts)
            unknown = [e for e in facts.entities if not self._retriever.mentions_anywhere(e)]
            if unknown and not focus_ids:
                notice = (f"No indexed paper mentions {' or '.join(unknown)}, so the abstracts don't cover this question. "
                          "The closest papers below do not match it.")
                yield self._without_claims(question, query, intent, hits, "abstained", notice, timings, t0)
                return
            gap = missing_detail(facts, hits[0], question)
            if gap:
                yield self._not_stated(question, query, intent, hits, facts, gap, timings, t0)
                return
            false_premise = self._unsupported_premise(question, hits[0])
            if false_premise:
                yield self._correct_premise(question, query, intent, hits, false_premise, timings, t0)
                return

        if intent == "topic":
            members = topic_members(hits, self._settings.topic_min_evidence) if not focus_ids else hits
            builder = _Builder(question, members, members or hits[: self._settings.top_k], model, intent, query)
            for n, hit in enumerate(members, start=1):  # sources = the listed papers, not every candidate
                ev = max(hit.evidence, key=lambda e: e.score)
                builder.add(AnswerSentence(ev.text, (n,), round(ev.score, 3)), ev.text)
            timings["total"] = (time.perf_counter() - t0) * 1000
            yield AnswerEvent("final", answer=builder.build("extractive", "", timings), hits=tuple(hits))
            return

        if focus_ids:
            context = hits
        elif intent == "compare":
            context = hits[: max(2, min(self._settings.context_papers, 3 if " three " in f" {question.lower()} " else 2))]
        elif intent == "summary":
            context = hits[:1]
        else:
            context = self.select_context(hits)
            if self._small:  # prompt-processing time is most of the first-token wait on a laptop CPU
                context = context[:SMALL_MODEL_CONTEXT_PAPERS]
        if intent == "summary":
            context = [with_evidence(h, SUMMARY_SENTENCES) for h in context]
        elif not self._small:
            context = [with_evidence(h, CAPABLE_EVIDENCE_SENTENCES) for h in context]
        builder = _Builder(question, context, hits, model, intent, query)
        if intent == "compare":
            builder.comparison = comparison_table(context, self._embed, question)
            for row in builder.comparison.rows:
                builder.cite(row.n)
            yield AnswerEvent("partial", answer=builder.build("generated", timings=timings), hits=tuple(hits))
        yield AnswerEvent("status", f"Found {len(hits)} relevant papers; reading {len(context)}.", hits=tuple(hits))
        yield from self._generate(question, context, intent, builder, timings, t0, facts)

    def _not_stated(self, question: str, query: str, intent: Intent, hits: Sequence[PaperHit], facts: QuestionFacts,
                    gap: str, timings: dict[str, float], t0: float) -> AnswerEvent:
        """The answer when the paper the question is about does not state the requested ``gap``: says so,
        names that paper (first among the sources, with its link) and quotes its closest sentence,
        marked as not an answer. Cites nothing: no claim is made from the abstract."""
        hit = hits[0]
        closest = pick_sentences(hit, facts, question, 1)
        notice = f"The abstracts don't state this: “{hit.paper.title}”, the paper the question is about, {gap}."
        if closest:
            notice += f" Its closest sentence, which does not answer the question: “{closest[0].text}”"
        return self._without_claims(question, query, intent, hits, "not_stated", notice, timings, t0)

    def _without_claims(self, question: str, query: str, intent: Intent, hits: Sequence[PaperHit], mode: AnswerMode,
                        notice: str, timings: dict[str, float], t0: float) -> AnswerEvent:
        """The final event of an answer that makes no claim (``abstained`` / ``not_stated``): the notice,
        the top ``top_k`` papers as sources, no citations."""
        timings["total"] = (time.perf_counter() - t0) * 1000
        builder = _Builder(question, [], hits[: self._settings.top_k], self._backend.model, intent, query)
        return AnswerEvent("final", answer=builder.build(mode, notice, timings), hits=tuple(hits))

    def _unsupported_premise(self, question: str, hit: PaperHit) -> str:
        """The first premise of ``question`` (question.premises) that the verifier does not support from
        ``hit``'s abstract, or ""."""
        for premise in premises(question):
            alignment = Attributor([hit], self._embed, self._settings.support_threshold).align(premise)
            if not alignment.supported:
                return premise
        return ""

    def _correct_premise(self, question: str, query: str, intent: Intent, hits: Sequence[PaperHit], premise: str,
                         timings: dict[str, float], t0: float) -> AnswerEvent:
        """The answer to a question built on a premise the abstract does not support: says so, and quotes
        the sentences of the paper that bear on it (what the method is, the figure it reports). The model
        is not asked: a small model echoes the premise."""
        hit = hits[0]
        facts = premise_facts(premise)
        builder = _Builder(question, [hit], hits, self._backend.model, intent, query)
        for ev in pick_sentences(hit, facts, premise, EXTRACTIVE_SENTENCES):
            builder.add(AnswerSentence(ev.text, (1,), round(ev.score, 3)), ev.text)
        notice = f"The question assumes “{premise.rstrip('.')}”, which the abstract does not support; here is what it says."
        timings["total"] = (time.perf_counter() - t0) * 1000
        return AnswerEvent("final", answer=builder.build("extractive", notice, timings), hits=tuple(hits))

    def _generate(self, question: str, context: list[PaperHit], intent: Intent, builder: _Builder,
                  timings: dict[str, float], t0: float, facts: QuestionFacts) -> Iterator[AnswerEvent]:
        attributor = Attributor(context, self._embed, self._settings.support_threshold, question)
        notice = ""
        buffer = ""
        t_gen = time.perf_counter()
        hits = builder.hits

        def verify(raw: str) -> bool:
            verdict = attributor.attribute(raw)
            if verdict is None:
                if raw.strip():
                    builder.dropped.append(strip_markers(raw)[0] or raw.strip())  # as the user would have read it
                return False
            builder.add(*verdict)
            return True

        failed = False
        small = self._small
        use_model = not small or intent == "lookup"  # the small model's summaries/comparisons never verified
        builder.model_used = use_model
        try:
            deltas = self._backend.stream(build_messages(question, context, intent),
                                          SMALL_MODEL_MAX_TOKENS if small else None) if use_model else iter(())
            for delta in deltas:
                if "first_token" not in timings:
                    timings["first_token"] = (time.perf_counter() - t0) * 1000
                buffer += delta
                complete, buffer = split_complete(buffer)
                changed = False
                for raw in complete:
                    changed |= verify(raw)
                if changed:
                    yield AnswerEvent("partial", answer=builder.build("generated", timings=timings), hits=hits)
                    if small:  # the small model's first verified sentence is its answer: stop spending time
                        buffer = ""
                        break
        except LLMUnavailableError as e:
            logger.warning("LLM failed (%s): %s", e.reason, e)
            failed, notice = True, failure_notice(e)
        except Exception as e:  # noqa: BLE001 - whatever a backend raises, the user gets a cited answer
            logger.exception("LLM backend raised %s", type(e).__name__)
            failed, notice = True, failure_notice(e)
        if not failed:
            tail = split_sentences(buffer) if buffer.strip() else []
            for raw in tail:
                if raw is tail[-1] and not raw.rstrip().endswith(_SENTENCE_END):
                    builder.dropped.append(raw.strip())  # cut off by the token limit: an incomplete sentence
                    continue
                verify(raw)
        elif buffer.strip():
            builder.dropped.append(buffer.strip())  # the stream broke inside this sentence: never shown
        timings["generate"] = (time.perf_counter() - t_gen) * 1000
        if builder.dropped:
            logger.info("dropped %d unsupported sentence(s): %s", len(builder.dropped), builder.dropped)

        mode: AnswerMode = "generated"
        if failed or not builder.sentences:  # the verified sentences so far stay; the fallback follows them
            mode = "generated" if builder.sentences else "extractive"
            if use_model:
                notice = notice or EXTRACTIVE_NOTICE
            if intent == "compare" and builder.comparison is not None:
                approach = builder.comparison.columns.index("approach")
                for row in builder.comparison.rows:
                    cell = row.cells[approach]
                    if cell is not None:
                        builder.add(cell, cell.text)
            else:
                self._extractive(question, context[0], intent, facts, builder)
        elif not answers_request(facts, [s.text for s in builder.sentences]):
            # the model's verified sentence does not hold the number/expansion asked for: add the one that does
            for ev in pick_sentences(context[0], facts, question, 1):
                builder.add(AnswerSentence(ev.text, (1,), round(ev.score, 3)), ev.text)
        timings["total"] = (time.perf_counter() - t0) * 1000
        yield AnswerEvent("final", answer=builder.build(mode, notice, timings), hits=hits)

    @staticmethod
    def _extractive(question: str, hit: PaperHit, intent: Intent, facts: QuestionFacts, builder: _Builder) -> None:
        """Add the sentences of ``hit`` (source 1) that answer ``question`` (extractive.pick_sentences); a
        "which paper" question is answered with the paper's title first."""
        if facts.which_paper and intent == "lookup":
            builder.add(AnswerSentence(f"The paper is “{hit.paper.title}”.", (1,), 1.0), hit.paper.title)
        k = SUMMARY_SENTENCES - 1 if intent == "summary" else EXTRACTIVE_SENTENCES
        picks = (sorted(hit.evidence, key=lambda e: e.score, reverse=True)[:k] if intent == "summary"
                 else pick_sentences(hit, facts, question, k))
        for ev in sorted(picks, key=lambda e: e.sentence_index):
            builder.add(AnswerSentence(ev.text, (1,), round(ev.score, 3)), ev.text)
