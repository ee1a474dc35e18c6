"""The seam every intent strategy implements (:class:`IntentStrategy`) and what it is given: the
:class:`Request` (one question as the answerer runs it, with the turn's reading of it), the :class:`Tools`
(retriever, embedder, settings), and what it returns (:class:`Settled`, :class:`Plan`). Also the helpers several
strategies share. The strategies themselves: strategies.py (registry), lookup.py, records.py."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from assistant.answer.builder import AnswerBuilder, with_evidence
from assistant.answer.extractive import (
    detail_query,
    pick_sentences,
)
from assistant.answer.listing import narrowing
from assistant.lang.references import QUOTED_SPAN
from assistant.lang.text import defines_term, word_tokens
from assistant.lang.words import TITLE_CONNECTORS
from assistant.llm.prompts import DEFAULT_TASK
from assistant.retrieve.references import find_references
from assistant.types import AnswerMode, Comparison, Evidence, Listing, Page, PaperHit
from assistant.understand.metadata import MetadataRequest, metadata_request
from assistant.understand.parse import Question
from assistant.understand.question import (
    QuestionFacts,
)

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.llm.client import ChatBackend
    from assistant.retrieve.query import Query
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.understand.turn import TurnCache
    from assistant.verify.attribution import Embedder


@dataclass(frozen=True, slots=True)
class RecordQuery:
    """What a question asks of the paper records (``metadata`` intent): ``ask`` the fields and the person
    (understand.metadata), ``named`` the papers the question names by title, name or description (not only
    by the person it names), ``applies``: the question asks for records and nothing else (route it to
    :class:`MetadataStrategy`)."""

    ask: MetadataRequest
    named: tuple[str, ...] = ()
    applies: bool = False

    @property
    def lists_person(self) -> bool:
        """True for "papers by X": a known author named and no paper named besides theirs."""
        return bool(self.ask.person_ids) and not self.named

    @property
    def lists_code(self) -> bool:
        """True for "papers that release code": papers and their code asked for, no paper and no person named."""
        return {"papers", "code"} <= set(self.ask.fields) and not self.named and not self.ask.names_person

    @property
    def lists(self) -> bool:
        """True when the answer is a list read from the records (a person's papers, the papers linking code), not
        a search: whether the abstracts cover the question is not asked."""
        return self.applies and (self.lists_person or self.lists_code)


def read_records(tools: Tools, question: Question) -> RecordQuery | None:
    """What ``question`` asks of the paper records, or None when it asks for no record field and names no
    author (understand.metadata.metadata_request with the index's exact author lookup and the name after
    "by"). The papers it names come from references.find_references; their title words, the names by which
    it names them and its descriptions of them are what else it may say and still only ask for records.
    Read once per turn (the question's cache)."""
    return question.cache.get("records", question.text, lambda: _read_records(tools, question))


def _read_records(tools: Tools, question: Question) -> RecordQuery | None:
    catalog = tools.retriever.catalog
    by = question.author
    ask = metadata_request(question.text, catalog, by, tools.retriever.metadata.by_author(by) if by else [])
    if ask is None:
        return None
    if not ask.only_names(ask.rest):  # asks for no field ("which papers are about X?"): nothing to look up
        return RecordQuery(ask)
    refs = find_references(question, tools.retriever, tools.settings.retrieval.min_similarity)
    named = tuple(pid for pid in refs.named if pid not in ask.person_ids)
    words: set[str] = set()  # a person's own papers lend no words: "papers by X about memory" is a topic list
    if named:
        papers = tools.retriever.papers
        for pid in named:
            if pid in papers:
                words.update(word_tokens(papers[pid].title))
        for text in [*question.facts.entities, *question.descriptions]:
            words.update(word_tokens(text))
    return RecordQuery(ask, named, ask.only_names(words))


@dataclass(frozen=True, slots=True)
class Request:
    """One question as the answerer runs it: ``query`` is what is searched (follow-ups resolved),
    ``focus_ids`` the papers it refers back to, ``facts`` what its wording asks for, ``parsed`` the turn's whole
    reading of it (understand/parse.py), so no strategy reads the text again."""

    question: str
    query: str
    intent: str
    focus_ids: tuple[str, ...]
    facts: QuestionFacts
    page: Page = Page()
    records: RecordQuery | None = None
    parsed: Question = None  # type: ignore[assignment]  # the turn's reading of ``question`` (read here if None)

    def __post_init__(self) -> None:
        if self.parsed is None:
            object.__setattr__(self, "parsed", Question(self.question))

    @property
    def cache(self) -> TurnCache:
        """The turn's memo of model outputs (query vectors, sentence roles, answer-sentence scores)."""
        return self.parsed.cache

    def search(self, tools: Tools, text: str) -> Query:
        """The retrieval query for ``text`` (embedded once per turn)."""
        return tools.retriever.query(text, self.parsed.cache)


@dataclass(frozen=True, slots=True)
class Tools:
    """What strategies may use: the retriever, the sentence embedder, the settings (thresholds and sizes) and the
    answering model (``backend``; it also checks sentences: :mod:`assistant.verify.verifiers`)."""

    retriever: PaperRetriever
    embed: Embedder
    settings: Settings
    backend: ChatBackend


@dataclass(frozen=True, slots=True)
class Settled:
    """An answer decided before any model call: ``mode`` and ``notice``; ``quotes`` are abstract sentences
    of ``paper`` shown cited (empty: the answer makes no claim and cites nothing)."""

    mode: AnswerMode
    notice: str
    paper: PaperHit | None = None
    quotes: tuple[Evidence, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """How the answer is written.

    Attributes:
        context: the papers sentences may cite; source ``[n]`` is ``context[n - 1]``.
        use_model: whether the model writes sentences (else :meth:`IntentStrategy.answer_by_code` does).
        max_tokens: the model's token budget (None: ``Settings.llm.max_output_tokens``).
        sources: papers shown as sources (None: every candidate).
        comparison: a papers x aspects table shown with the answer.
        listing: for a topic list, how many papers match and which page of them is in ``context``.
        notice: a caveat shown with the answer (a near miss: what of the question the paper does not match).
        per_paper: the model writes each paper's part from that paper's reading alone, in turn (a comparison, a
            choice); a paper none of whose part passes its check is quoted instead.
        verdict: after the parts, the model says which paper the question asks for, from the parts alone, checked
            like any answer sentence (a choice: ``Answerer._verdict``).
    """

    context: list[PaperHit]
    use_model: bool = False
    max_tokens: int | None = None
    sources: list[PaperHit] | None = None
    comparison: Comparison | None = None
    listing: Listing | None = None
    notice: str = ""
    per_paper: bool = False
    verdict: bool = False


class IntentStrategy:
    """The seam of one intent (module docstring). Subclasses set :attr:`intent` and :attr:`task` and
    override :meth:`plan`; the other steps have defaults."""

    intent: ClassVar[str] = ""
    #: The task sentence of the system prompt for this intent (prompts.SYSTEM_PROMPT ``{task}``).
    task: ClassVar[str] = DEFAULT_TASK
    #: The question asks for one paper: search with aspect coverage (PaperRetriever.retrieve ``aspects``).
    one_paper: ClassVar[bool] = False
    #: Select, then write: the model writes from the sentences the answer by code picked (:meth:`answer_by_code`, the
    #: quotes shown first), quoted in its ask (prompts.READ_PICKED).
    writes_from_picked: ClassVar[bool] = False

    def task_for(self, req: Request) -> str:
        """The task sentence for ``req`` (default :attr:`task`)."""
        return self.task

    def candidates(self, tools: Tools, req: Request) -> list[PaperHit]:
        """Papers to consider, best first: the papers in focus (their evidence scored for the question as
        asked: the titles the resolved query adds would pull every paper's title-like sentence up), else a
        search for ``req.query``."""
        if req.focus_ids:
            return tools.retriever.hits_for(req.search(tools, req.question), list(req.focus_ids))
        if self.one_paper:
            return one_paper_search(tools.retriever, req.question, req.query, req.parsed.author, req.cache)
        return tools.retriever.retrieve(req.search(tools, req.query))

    def settle(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Settled | None:
        """An answer decided before the model writes (it may ask the model a yes/no question), or None (default)
        to go on. The answer by code (:meth:`answer_by_code`) is shown before it runs."""
        return None

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        """Choose the context and whether the model writes."""
        raise NotImplementedError

    def notice(self, plan: Plan) -> str:
        """A line shown with an answer this strategy built by code without asking the model (default none)."""
        return ""

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """The answer from abstract sentences (no model, or the model failed): by default the sentences of
        source 1 that answer the question (extractive.pick_sentences), scored for what it asks of that paper;
        a question that asks two things ("..., and how long does its training take?") gets the best sentence
        for each part first."""
        hit = asked_of(tools, req, plan.context[0])
        chosen: dict[int, Evidence] = {}
        parts = req.parsed.parts
        if len(parts) > 1:
            for part in parts[: tools.settings.answer.extractive_sentences]:
                part_req = replace(req, question=part.text, facts=part.facts, parsed=part)
                for ev in pick_sentences(asked_of(tools, part_req, hit), part_req.facts, part.text, 1, req.cache):
                    chosen.setdefault(ev.sentence_index, ev)
        for ev in pick_sentences(hit, req.facts, req.question, tools.settings.answer.extractive_sentences, req.cache):
            if len(chosen) >= tools.settings.answer.extractive_sentences:
                break
            chosen.setdefault(ev.sentence_index, ev)
        for i in sorted(chosen):
            builder.quote(chosen[i])


def lookup_kind(facts: QuestionFacts) -> str:
    """What a lookup asks, as the strategy reads it: "which paper", "a number", "an expansion", "what X is"
    or "other" (the first that applies, in that order)."""
    if facts.which_paper:
        return "which paper"
    if facts.quantity:
        return "a number"
    if facts.expansion:
        return "an expansion"
    if facts.definition:
        return "what X is"
    return "other"


def asked_of(tools: Tools, req: Request, hit: PaperHit) -> PaperHit:
    """``hit`` with its sentences scored for what the question asks of the paper (extractive.detail_query:
    the question without the paper's title words), so the sentences that answer it outrank those that
    only match how the question names the paper; ``hit`` unchanged when nothing is removed."""
    detail = detail_query(req.question, hit.paper.title)
    if detail == req.question:
        return hit
    return next(iter(tools.retriever.hits_for(req.search(tools, detail), [hit.paper.id])), hit)


def one_paper_search(
    retriever: PaperRetriever,
    question: str,
    query: str,
    author: str | None = None,
    cache: TurnCache | None = None,
    top_k: int | None = None,
) -> list[PaperHit]:
    """The search for a question that asks for one paper (lookup, summary; issue 44 item 5): among the papers its
    venue words and named author allow ("the ICML 2024 paper on ...", "the paper by Yalong Jiang";
    :func:`assistant.answer.listing.narrowing`), for ``query`` without those words; among all papers when the
    question names neither, or nothing indexed has them. ``author``: the question's author phrase when already read
    (``Question.author``); ``top_k``: as ``PaperRetriever.retrieve``.

    Returns:
        up to ``top_k`` :class:`PaperHit`, best first, ranked with aspect coverage (``retrieve(aspects=True)``).
    """
    nar = narrowing(retriever, question, query, author, cache)
    if not nar.ids:  # no narrowing, or nothing indexed has that venue / author: search everything
        return retriever.retrieve(retriever.query(query, cache), top_k, aspects=True)
    return retriever.retrieve(retriever.query(nar.query, cache), top_k, aspects=True, allowed=nar.ids)


def prompt_evidence(tools: Tools, context: list[PaperHit]) -> list[PaperHit]:
    """``context`` with each paper's ``llm.prompt_evidence_sentences`` best sentences: the evidence the model
    reads."""
    k = tools.settings.llm.prompt_evidence_sentences
    return [with_evidence(h, k) for h in context]


def supports(tools: Tools, hit: PaperHit, claim: str) -> bool | None:
    """Whether the citation verifier (the exact checks, then the model's self-check) supports ``claim`` from
    ``hit`` alone, as it would an answer sentence; None when the model cannot be asked (it is unavailable)."""
    from assistant.llm.client import connection_errors
    from assistant.verify.attribution import Attributor
    from assistant.verify.verifiers import build_verifier

    attributor = Attributor([hit], tools.embed, build_verifier(tools.settings.verify, tools.backend))
    try:
        return attributor.align(claim).supported
    except connection_errors() as e:
        logger.warning("the model could not check %r (%s)", claim, getattr(e, "reason", e))
        return None


def _written_as_a_name(text: str) -> bool:
    """True when every word of ``text`` has a capital letter or a digit ("Llama 3", "LoRA", "Number Cookbook"), title
    connectors aside, and at least one does; False for a phrase ("Android app control", "minimize one loss")."""
    words = text.split()
    named = [w for w in words if any(c.isupper() or c.isdigit() for c in w)]
    return bool(named) and all(w in named or w.lower() in TITLE_CONNECTORS for w in words)


def paper_names(question: Question, intent: str) -> tuple[str, ...]:
    """The names the question gives a paper, as written: quoted spans (titles), its descriptions that are written as
    a name ("the Llama 3 paper", "the LoRA paper": every word a capital letter or a digit in it, title connectors
    aside; "the Android app control paper" is a description, not a name: issue 59) and, for a summary
    ("Summarize DUALFormer"), its names (``facts.entities``) unless the question describes the paper otherwise ("the
    horizon generalization paper in RL": RL is its field). Other names of a question are what it asks about, not
    which paper ("Why does T2V-Turbo-v2 score worse than Kling on VBench?": Kling and VBench are no paper here)."""
    names = [m.group(1).strip() for m in QUOTED_SPAN.finditer(question.text)]
    names += [d for d in question.descriptions if _written_as_a_name(d)]
    if intent == "summary":  # "Summarize DUALFormer"; not a field named beside a description ("the … paper in RL")
        others = [d for d in question.descriptions if not any(e in d for e in question.facts.entities)]
        names += [] if others else list(question.facts.entities)
    author = (question.author or "").lower()
    return tuple(dict.fromkeys(n for n in names if n and n.lower() != author))


#: Intents about one paper, whose answer comes from the paper found first (a comparison names several: not checked).
NAMED_CHECK_INTENTS = frozenset({"lookup", "summary"})


def unindexed_name(tools: Tools, req: Request, hits: list[PaperHit]) -> str:
    """A name the question gives a paper (:func:`paper_names`) that the best paper found is not: no indexed paper's
    title contains the name (exact: else "No indexed paper is X" would be false), and the answering model, reading the
    best paper's abstract, does not say it is the paper called so or the one that introduces it (P(yes) below
    ``verify.named_probability``: verifiers.named_probability). "" when the question names no paper, has papers in
    focus, every name fits (a name the best abstract defines, "variational inequality (VI)", is its term), or the
    model cannot be asked (it decides nothing then). The venue words that narrowed the search are no part of a name
    ("the ICLR 2024 paper": no name; "the ICLR 2024 GNN paper": "GNN")."""
    from assistant.verify.verifiers import named_probability

    if req.focus_ids or not hits or req.intent not in NAMED_CHECK_INTENTS:
        return ""
    hit = hits[0]
    title = f" {' '.join(word_tokens(hit.paper.title))} "
    titles: list[str] | None = None
    # "the ICLR 2024 paper on ...": the venue words narrowed the search (one_paper_search); they name no paper
    venue = set(word_tokens(narrowing(tools.retriever, req.question, req.query, req.parsed.author, req.cache).venue))
    for named in paper_names(req.parsed, req.intent):
        name = " ".join(w for w in named.split() if not set(word_tokens(w)) <= venue)
        if not name:
            continue
        written = f" {' '.join(word_tokens(name))} "
        if written in title:
            continue
        if titles is None:
            titles = [f" {' '.join(word_tokens(p.title))} " for p in tools.retriever.papers.values()]
        if any(written in t for t in titles):  # an indexed paper's title has it: "No indexed paper is X" would be false
            continue
        if defines_term(hit.paper.text, name):  # "variational inequality (VI)": the abstract's term, not a paper's name
            continue
        p = named_probability(tools.backend, (hit.paper.title, hit.paper.text), name)
        if p is None:  # the model cannot be asked: it decides nothing
            return ""
        if p < tools.settings.verify.named_probability:
            logger.info("not indexed: %r is not %s by the model's reading (P(yes) %.2f)", name, hit.paper.id, p)
            return name
    return ""
