"""Answerer: retrieve -> abstain? -> plan -> generate and verify -> Answer, the same for every intent.

What differs per intent (which papers, what the model is asked, what code answers) lives in one strategy
object per intent (strategies.py). Follows docs/design.md: the model sees a compact evidence prompt; every
shown sentence is attributed by code (attribution.py); if nothing survives, the answer is built from
abstract sentences by the strategy; below the similarity threshold the assistant abstains.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections import deque
from collections.abc import Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from assistant.answer.builder import AnswerBuilder
from assistant.answer.extractive import pick_sentences
from assistant.answer.route import Referents, decide_intent
from assistant.answer.strategies import (
    STRATEGIES,
    IntentStrategy,
    Plan,
    Request,
    Settled,
    Tools,
    read_records,
    unknown_author_notice,
)
from assistant.answer.strategy import unindexed_name
from assistant.errors import AssistantError
from assistant.lang.text import SENTENCE_END, split_sentences
from assistant.llm.client import connection_errors
from assistant.llm.prompts import (
    READ_CELL,
    READ_PART,
    build_messages,
    part_messages,
    strip_citations,
    verdict_messages,
)
from assistant.tuning import ABSTAIN_TOP_PAPERS
from assistant.types import Answer, AnswerMode, AnswerSentence, Evidence, Intent, Page, PaperHit
from assistant.understand.parse import Question, parse_question
from assistant.verify.attribution import Attributor, Embedder
from assistant.verify.verifiers import Verifier, build_verifier

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.llm.client import ChatBackend
    from assistant.retrieve.query import Query
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.understand.turn import TurnCache

logger = logging.getLogger(__name__)

ABSTAIN_NOTICE = "The indexed abstracts don't cover this question."
#: Shown when no sentence the model wrote passed its check: the passages it read are quoted instead, marked as quotes.
UNCHECKED_NOTICE = (
    "No sentence of the model's answer could be checked against the abstracts, so none is shown; "
    "the most relevant passages are quoted instead."
)


#: A comparison's paper whose part did not pass its check is quoted instead (never dropped); the notice names it.
PART_QUOTED = (
    "Nothing the model wrote about {titles} passed its check against the abstract, so the abstract's sentence "
    "closest to the question is quoted for it."
)


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


def end_stream(stream: Iterator[str]) -> None:
    """End a model stream the answer stops reading: a generator is closed, which closes its request (and frees the
    server); any other iterator is left to the garbage collector."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()


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


#: What a failure notice says instead when checked sentences of the broken answer are shown.
INCOMPLETE = "The answer below may be incomplete."


@dataclass(frozen=True, slots=True)
class AnswerEvent:
    """A step of a streamed answer.

    ``kind``: ``"status"`` (``message`` says what is happening; ``hits`` the papers found: the first event of
    every answer, right after retrieval, and again when the model starts writing), ``"partial"`` (the answer
    so far: the comparison table once built, verified sentences as they come), ``"final"`` (the complete
    ``answer``; ``hits`` every candidate paper).
    """

    kind: Literal["status", "partial", "final"]
    message: str = ""
    answer: Answer | None = None
    hits: tuple[PaperHit, ...] = field(default_factory=tuple)


def final_answer(events: Iterator[AnswerEvent]) -> Answer:
    """Drain an answer stream and return its final answer.

    Raises:
        RuntimeError: the stream ended without a ``final`` event (a bug: every stream ends with one).
    """
    final = None
    for event in events:
        if event.kind == "final":
            final = event.answer
    if final is None:
        raise RuntimeError("the answer stream ended without a final answer")
    return final


def abstains(
    retriever: PaperRetriever,
    min_similarity: float,
    query: str | Query,
    hits: Sequence[PaperHit],
    cache: TurnCache | None = None,
) -> bool:
    """True when the indexed abstracts do not cover ``query``: the best dense similarity among the top
    :data:`~assistant.tuning.ABSTAIN_TOP_PAPERS` papers is below ``min_similarity``, none of them is named
    by the query (an author, a title's name or words) and no rare query term occurs in them."""
    text = query if isinstance(query, str) else query.text
    best = max((h.dense_similarity for h in hits[:ABSTAIN_TOP_PAPERS]), default=0.0)
    if best >= min_similarity:
        return False
    named = set(retriever.metadata.matches(text, cache))
    if named & {h.paper.id for h in hits[:ABSTAIN_TOP_PAPERS]}:  # "the paper by <author>", a title's name
        return False
    if retriever.rare_terms_matched(text, list(hits[:ABSTAIN_TOP_PAPERS])):
        return False
    logger.info("abstain: best similarity %.3f < %.3f and no rare query term matched", best, min_similarity)
    return True


class Answerer:
    """Answers one question at a time; stateless between calls (safe to share across chats).

    Args:
        retriever: hybrid paper retriever.
        backend: the chat model (OpenAI-compatible).
        embed: batch text -> unit vectors, used for attribution and comparison cells.
        settings: thresholds and sizes (``min_similarity``, ``context_papers``, ``verify``...).
        strategies: intent name -> strategy (default :data:`~assistant.answer.strategies.STRATEGIES`).
    """

    def __init__(
        self,
        retriever: PaperRetriever,
        backend: ChatBackend,
        embed: Embedder,
        settings: Settings,
        *,
        strategies: Mapping[str, IntentStrategy] | None = None,
    ) -> None:
        #: The retriever answers are searched with (the conversation's resolver reads it too).
        self.retriever = retriever
        self._backend = backend
        self._tools = Tools(retriever, embed, settings, backend)
        self._strategies = dict(strategies or STRATEGIES)
        self.settings = settings

    @property
    def backend(self) -> ChatBackend:
        """The answering model (evaluation asks it what an answer would)."""
        return self._backend

    @property
    def embedder(self) -> Embedder:
        """Batch text -> unit vectors: the embedder attribution aligns with."""
        return self._tools.embed

    @property
    def intents(self) -> tuple[str, ...]:
        """The intents this answerer knows (its strategy registry)."""
        return tuple(self._strategies)

    def answer(self, question: str | Question, **kwargs: object) -> Answer:
        """Run :meth:`stream` to the end and return the final answer (same keyword arguments)."""
        return final_answer(self.stream(question, **kwargs))  # type: ignore[arg-type]

    def _abstains(self, query: str | Query, hits: Sequence[PaperHit], cache: TurnCache | None = None) -> bool:
        return abstains(self.retriever, self.settings.retrieval.min_similarity, query, hits, cache)

    def stream(
        self,
        question: str | Question,
        *,
        query: str | None = None,
        intent: Intent | str | None = None,
        focus_ids: Sequence[str] = (),
        page: Page | None = None,
        referents: Referents | None = None,
        clarify: str = "",
    ) -> Iterator[AnswerEvent]:
        """Answer ``question``: a ``status`` event with the papers found (always first), partial answers
        (the comparison table once built, then sentences as they are verified), then the ``final`` one.

        Args:
            question: what the user asked (goes into the prompt): the turn's reading
                (:func:`~assistant.understand.parse.parse_question`), or a text, read here.
            query: what to search for (follow-ups resolved); defaults to the question.
            intent: a registered intent name (the user's choice); decided by the router when None
                (:func:`~assistant.answer.route.decide_intent`).
            focus_ids: papers the question refers to (e.g. "those two"); they become the sources and
                the abstention test is skipped.
            page: which page of a topic listing to show (default: the first 10 papers).
            referents: what a conversation's resolver found the question refers to (the router's input).
            clarify: a question to ask back instead of answering (mode ``clarify``: no search, no citation).

        Raises:
            AssistantError: ``intent`` is not registered (before any search).

        Failures of the model connection (:func:`~assistant.llm.client.connection_errors`) do not raise:
        the final answer is built by code and ``notice`` says what happened. Any other exception (a bug in
        retrieval, the citation verifier or the answer builder) propagates unchanged: it is an internal
        error, never reported as a model failure.
        """
        q = question if isinstance(question, Question) else parse_question(question)
        if clarify:
            yield from self._clarification(q, clarify, intent)
            return
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        if intent is not None and intent not in self._strategies:
            raise AssistantError(f"Unknown intent {intent!r}: use one of {', '.join(self._strategies)}.")
        route = decide_intent(
            q, self._strategies, lambda: read_records(self._tools, q), forced=intent, referents=referents
        )
        strategy = self._strategies.get(route.intent)
        if strategy is None:  # a registry without the implied intent
            raise AssistantError(f"Unknown intent {route.intent!r}: use one of {', '.join(self._strategies)}.")
        records = route.records
        if records is None and route.intent == "metadata":  # the user chose it: what the records are asked for
            records = read_records(self._tools, q)
        req = Request(q.text, query or q.text, route.intent, tuple(focus_ids), q.facts, page or Page(), records, q)
        hits = strategy.candidates(self._tools, req)
        timings["retrieve"] = (time.perf_counter() - t0) * 1000
        yield AnswerEvent(
            "status", f"Found {len(hits)} candidate papers; checking them against the question.", hits=tuple(hits)
        )

        author = q.author
        if author and not req.focus_ids and not self.retriever.metadata.by_author(author):
            notice = f"{unknown_author_notice(self._tools, author)} The closest papers below do not match it."
            yield self._settled(req, hits, Settled("abstained", notice), timings, t0)
            return
        listed = route.intent == "metadata" and req.records is not None and req.records.lists
        if not listed and (not hits or (not req.focus_ids and self._abstains(req.query, hits, q.cache))):
            unknown = [e for e in req.facts.entities if not self.retriever.mentions_anywhere(e)]
            notice = (
                f"No indexed paper mentions {' or '.join(unknown)}, so the abstracts don't cover this question."
                if unknown
                else ABSTAIN_NOTICE
            )
            yield self._settled(req, hits, Settled("abstained", notice), timings, t0)
            return
        # The papers found, each with its best sentences quoted, come first (no model call before them); the
        # checks that ask the model (the named paper, what the abstracts state) may then replace them.
        plan = strategy.plan(self._tools, req, hits)
        builder = AnswerBuilder(
            q.text,
            plan.context,
            plan.sources if plan.sources is not None else hits,
            self._backend.model,
            req.intent,
            req.query,
        )
        builder.listing = plan.listing
        if plan.comparison is not None:
            builder.comparison = plan.comparison
            for row in plan.comparison.rows:
                builder.cite(row.n)
            yield AnswerEvent("partial", answer=builder.build("extractive", timings=timings), hits=tuple(hits))
        quoted: AnswerBuilder | None = None  # the answer by code, shown while the model checks and writes
        if plan.use_model:
            quoted = builder.fresh()
            strategy.answer_by_code(self._tools, req, plan, quoted)
            timings["first_text"] = (time.perf_counter() - t0) * 1000
            yield AnswerEvent("partial", answer=quoted.build("extractive", timings=timings), hits=tuple(hits))

        named = unindexed_name(self._tools, req, hits)
        if named:  # "Summarize 'Attention Is All You Need'": never another paper in its place
            notice = (
                f"No indexed paper is “{named}”, so the abstracts don't cover this question. "
                "The closest papers below are other work."
            )
            yield self._settled(req, hits, Settled("abstained", notice), timings, t0)
            return
        settled = strategy.settle(self._tools, req, hits)
        if settled is not None:
            yield self._settled(req, hits, settled, timings, t0)
            return
        yield from self._generate(strategy, req, plan, builder, quoted, tuple(hits), timings, t0)

    def _verdict(self, req: Request, plan: Plan, builder: AnswerBuilder, verifier: Verifier) -> bool:
        """Add the model's verdict on a choice to ``builder`` when it passes its check; True if it was added.

        The model reads only the papers' parts as shown (each paper's sentences, written from its own reading and
        checked, or its quote) and says which paper the question asks for (:func:`prompts.verdict_messages`); its
        first sentence is then checked against the parts it was written from (an :class:`Attributor` with
        ``verifier`` over the cells: each paper's source text is its part as shown, so the self-check reads the
        cells, not the whole abstracts), except that naming the paper is its answer, so restating the question with
        a paper's name is not an echo. It is cited to the papers whose cells support it, with those cells' own
        abstract evidence. A verdict that does not pass is dropped (``builder.dropped``); the parts stay the answer.

        Raises:
            LLMUnavailableError: the model could not be asked.
        """
        parts, cells = [], []
        for n, hit in enumerate(plan.context, start=1):
            shown = [sent.text for sent in builder.sentences if sent.citations == (n,)]
            said = " ".join(shown)
            parts.append((hit.paper.title, said or "nothing on this point"))
            # the verdict is checked against the cells it was written from (issue 59 item 4), not the whole abstract:
            # each paper's source is its part as shown, so a verdict naming the paper whose part says nothing on the
            # point has no evidence
            cells.append(replace(hit, paper=replace(hit.paper, text=said), sentences=tuple(shown)))
        text = ""
        stream = self._backend.stream(verdict_messages(req.question, parts), plan.max_tokens)
        try:  # the verdict is one sentence (VERDICT_ASK): the request ends once it is complete
            for delta in stream:
                text += delta
                if split_complete(text)[0]:
                    break
        finally:
            end_stream(stream)
        first = next(iter(split_sentences(text)), "")
        if not first.strip():
            return False
        if not first.rstrip().endswith(SENTENCE_END):  # cut off by the token limit
            builder.dropped.append(first.strip())
            return False
        min_alignment = self.settings.verify.verify_min_alignment
        attributor = Attributor(cells, self._tools.embed, verifier, "", min_alignment=min_alignment)
        verdict = attributor.attribute(first)
        logger.info("verdict %r: %s", first, "kept" if verdict else "dropped")
        if verdict is None:
            builder.dropped.append(strip_citations(first)[0] or first.strip())
            return False
        sentence, cell_evidence = verdict
        # the evidence a reader sees is abstract text: each cell sentence the verdict rests on gives its own evidence
        pieces = cell_evidence.split(" ... ")
        evidence = " ... ".join(dict.fromkeys(builder.evidence_of(piece) or piece for piece in pieces))
        builder.add(sentence, evidence)
        return True

    def _clarification(self, q: Question, notice: str, intent: Intent | str | None) -> Iterator[AnswerEvent]:
        """The events of an answer that asks back (mode ``clarify``): no search result, no citation."""
        yield AnswerEvent("status", "Asking which paper is meant.")
        answer = AnswerBuilder(q.text, [], [], self._backend.model, intent or q.intent, q.text)
        yield AnswerEvent("final", answer=answer.build("clarify", notice, {"total": 0.0}))

    def _settled(
        self, req: Request, hits: Sequence[PaperHit], settled: Settled, timings: dict[str, float], t0: float
    ) -> AnswerEvent:
        """The final event of an answer decided before any model call: quotes from ``settled.paper`` cited
        [1], or, without quotes, no citation and the top ``top_k`` papers as sources."""
        timings["total"] = (time.perf_counter() - t0) * 1000
        if settled.paper is not None and settled.quotes:
            builder = AnswerBuilder(req.question, [settled.paper], hits, self._backend.model, req.intent, req.query)
            for ev in settled.quotes:
                builder.quote(ev)
        else:
            builder = AnswerBuilder(
                req.question, [], hits[: self.settings.retrieval.top_k], self._backend.model, req.intent, req.query
            )
        return AnswerEvent("final", answer=builder.build(settled.mode, settled.notice, timings), hits=tuple(hits))

    def _generate(
        self,
        strategy: IntentStrategy,
        req: Request,
        plan: Plan,
        builder: AnswerBuilder,
        quoted: AnswerBuilder | None,
        hits: tuple[PaperHit, ...],
        timings: dict[str, float],
        t0: float,
    ) -> Iterator[AnswerEvent]:
        """Stream the model (when the plan uses it), verify each complete sentence, then complete the answer
        or build it by code; always ends with the ``final`` event. ``quoted`` is the answer by code already
        shown (None when the plan answers by code)."""
        notice = ""
        buffer = ""
        failed = False
        quoted_parts: list[str] = []  # a comparison's papers quoted because their part did not pass
        builder.model_used = plan.use_model
        t_gen = time.perf_counter()
        if plan.use_model:
            yield AnswerEvent("status", f"Reading {len(plan.context)} of them; writing the answer.", hits=hits)
            # a comparison: each paper's part written from its own reading, in turn; else one answer
            per_paper = plan.per_paper and len(plan.context) > 1

            def picked(hit: PaperHit) -> list[Evidence]:
                """The paper's sentence that best answers the question (the trained selector, pick_sentences): a
                choice's cell is written from it, and it is the quote for a part that did not pass its check."""
                return pick_sentences(hit, req.facts, req.question, 1, req.cache)

            prompts = (
                [
                    part_messages(req.question, hit, READ_CELL, " ".join(e.text for e in picked(hit)))
                    if plan.verdict  # select, then write: a choice's cell is written from the sentence picked for it
                    else part_messages(req.question, hit, READ_PART)
                    for hit in plan.context
                ]
                if per_paper
                else [  # select, then write (strategy.writes_from_picked): the model writes from the quotes shown first
                    build_messages(
                        req.question,
                        plan.context,
                        strategy.task_for(req),
                        [s.text for s in quoted.sentences]
                        if quoted is not None and strategy.writes_from_picked
                        else (),
                    )
                ]
            )
            verifier = build_verifier(self.settings.verify, self._backend)
            min_alignment = self.settings.verify.verify_min_alignment
            attributor = Attributor(
                plan.context,
                self._tools.embed,
                verifier,
                req.parsed,
                min_alignment=min_alignment,
            )
            model_failed = connection_errors()
            pending: deque[tuple[str, Future[tuple[AnswerSentence, str] | None]]] = deque()
            # Each complete sentence is checked by one worker thread while the model goes on writing (a server that
            # answers one request at a time, the bundled one, takes the checks after the stream); kept sentences
            # are shown in the model's order (verifiers.SelfCheckVerifier).
            checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="answer-check")

            def check(raw: str, paper: int | None) -> tuple[AnswerSentence, str] | None:
                try:
                    return attributor.attribute(raw, paper)
                except model_failed as e:  # the model could not check it: never shown as checked
                    logger.warning("the sentence could not be checked (%s): %s", getattr(e, "reason", e), raw)
                    return None

            def submit(raw: str) -> None:
                # in the answer's context: its ModelCalls (llm/client.py) count and can cancel the check; a paper's
                # part was written from that paper's reading alone: only its abstract can support it
                paper = parts_done + 1 if per_paper else None
                pending.append((raw, checker.submit(contextvars.copy_context().run, check, raw, paper)))

            def settle(wait: bool) -> bool:
                """Take the finished checks in the model's order (all of them when ``wait``); True if one was kept."""
                kept = False
                while pending and (wait or pending[0][1].done()):
                    raw, future = pending.popleft()
                    verdict = future.result()
                    if verdict is None:
                        if raw.strip():
                            builder.dropped.append(strip_citations(raw)[0] or raw.strip())  # as the user would read it
                        continue
                    builder.add(*verdict)
                    kept = True
                return kept

            def shown() -> AnswerEvent:  # the model's checked sentences replace the quotes shown while it wrote
                return AnswerEvent("partial", answer=builder.build("generated", timings=timings), hits=hits)

            # Only the model stream is guarded: a failure of the connection becomes the notice and the code's
            # answer; a failure in our own code (verify, the builder) propagates as the internal error it is.
            def flush() -> None:
                """Submit the sentences left in the buffer; an unfinished last one (the token limit cut it) is
                dropped."""
                nonlocal buffer
                tail = split_sentences(buffer) if buffer.strip() else []
                for raw in tail:
                    if raw is tail[-1] and not raw.rstrip().endswith(SENTENCE_END):
                        builder.dropped.append(raw.strip())  # cut off by the token limit: an incomplete sentence
                        continue
                    submit(raw)
                buffer = ""

            def cover(i: int) -> None:
                """A comparison never drops a paper: when no kept sentence cites paper ``i + 1`` (its part did not
                pass its check, or was never written), that paper's sentence that best answers the question (the
                trained selector, extractive.pick_sentences) is quoted, marked as a quote."""
                n = i + 1
                if any(n in sent.citations for sent in builder.sentences):
                    return
                hit = plan.context[i]
                for ev in picked(hit):
                    builder.quote(ev, n)
                quoted_parts.append(hit.paper.title)

            parts_done = 0

            def model_deltas() -> Generator[str | None, None, None]:  # lazy: a backend that fails fails at next()
                """The model's text pieces, prompt after prompt; None after each paper's part."""
                for messages in prompts:  # the [n] a part writes is ignored: attribution cites (attribution.py)
                    yield from self._backend.stream(messages, plan.max_tokens)
                    if per_paper:
                        yield None  # this paper's part is complete

            deltas = model_deltas()
            try:
                while True:
                    try:
                        delta = next(deltas)
                    except StopIteration:
                        break
                    except model_failed as e:
                        reason = getattr(e, "reason", type(e).__name__)
                        logger.warning("LLM failed (%s): %s", reason, e)
                        failed, notice = True, failure_notice(e)
                        break
                    if delta is None:  # a paper's part ended: its sentences checked, the paper covered
                        flush()
                        settle(wait=True)
                        cover(parts_done)
                        parts_done += 1
                        # shown once a sentence the model wrote passed: only then is the final answer this one,
                        # grown (never the quoted one instead), so what was shown (and streamed) stays its prefix
                        if any(sent.by_model for sent in builder.sentences):
                            yield shown()
                        continue
                    timings.setdefault("first_token", (time.perf_counter() - t0) * 1000)
                    buffer += delta
                    complete, buffer = split_complete(buffer)
                    for raw in complete:
                        submit(raw)
                    if settle(wait=False):
                        yield shown()
                deltas.close()  # a stopped stream releases its connection (and the server) before the checks
                if not failed:
                    flush()
                elif buffer.strip():
                    builder.dropped.append(buffer.strip())  # the stream broke inside this sentence: never shown
                t_checks = time.perf_counter()
                if pending:
                    checking = f"Checking {len(pending)} sentence(s) against the abstracts."
                    yield AnswerEvent("status", checking, hits=hits)
                while pending:
                    if settle(wait=True):
                        yield shown()
                # what the checks add after the model's last token (the self-check's cost to an answer)
                timings["check_after_stream"] = (time.perf_counter() - t_checks) * 1000
                written = any(sent.by_model for sent in builder.sentences)
                if per_paper and (written or (plan.verdict and not failed)):
                    for i in range(parts_done, len(plan.context)):  # the model broke off before these parts
                        cover(i)
                    builder.add_part_column(len(plan.context))  # each paper's part, a cell of the table
                    if written:  # else the parts are all quotes: this answer is shown only if its verdict passes
                        yield shown()
                    if plan.verdict and not failed:
                        # a choice's verdict is the model's, from the parts as shown, whether they are the model's
                        # checked sentences or a paper's quote (its part did not pass): the quotes alone never say
                        # which paper the question asks for
                        yield AnswerEvent("status", "Weighing what each paper states against the question.", hits=hits)
                        try:
                            if self._verdict(req, plan, builder, verifier):
                                yield shown()
                        except model_failed as e:
                            logger.warning("LLM failed at the verdict (%s): %s", getattr(e, "reason", e), e)
                            failed, notice = True, failure_notice(e)
            finally:
                deltas.close()  # a stopped or abandoned stream releases its connection now
                checker.shutdown(wait=True, cancel_futures=True)
            timings["generate"] = (time.perf_counter() - t_gen) * 1000
            if builder.dropped:
                logger.info("dropped %d unsupported sentence(s): %s", len(builder.dropped), builder.dropped)

        mode: AnswerMode = "generated"
        if quoted is None:  # the plan answers by code
            mode, notice = "extractive", strategy.notice(plan)
            strategy.answer_by_code(self._tools, req, plan, builder)
        elif not any(sent.by_model for sent in builder.sentences):  # nothing the model wrote passed: quote instead
            mode = "extractive"
            notice = notice or UNCHECKED_NOTICE
            quoted.dropped, quoted.model_used = list(builder.dropped), True
            builder = quoted
        elif failed:  # the sentences checked before the stream broke are the answer
            notice = notice.replace("Showing the most relevant passages instead, each cited.", INCOMPLETE)
        # else: the model's checked sentences, in its order, are the answer
        if mode == "generated" and quoted_parts:
            notice = f"{notice} {PART_QUOTED.format(titles='; '.join(f'“{t}”' for t in quoted_parts))}".strip()
        if plan.notice and plan.notice not in notice:  # a caveat of the plan (a near miss), after any other
            notice = f"{notice} {plan.notice}".strip()
        timings["total"] = (time.perf_counter() - t0) * 1000
        timings.setdefault("first_text", timings["total"])
        yield AnswerEvent("final", answer=builder.build(mode, notice, timings), hits=hits)
