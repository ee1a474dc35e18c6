"""One strategy per intent, kept in one registry: how each kind of question is answered.

Every strategy has the same small seam, called in this order by :class:`~assistant.answer.answerer.Answerer`:

1. :meth:`IntentStrategy.candidates` - the papers to consider (a search, or the papers in focus);
   the answerer then abstains when none covers the question.
2. :meth:`IntentStrategy.settle` - an answer decided before any model call (e.g. "the abstract does not
   state this"), or None.
3. :meth:`IntentStrategy.plan` - the context (source ``[n]`` = ``plan.context[n-1]``), whether the model
   writes (and with which task sentence and token budget), and a comparison table if any.
4. the model's sentences, each verified (answer.py); then :meth:`IntentStrategy.complete` after a
   successful model answer, or :meth:`IntentStrategy.answer_by_code` when the model was not used, failed,
   or wrote nothing verifiable.

Adding an intent = one subclass + one line in :data:`STRATEGIES` (or a registry passed to ``Answerer``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from assistant.answer.builder import AnswerBuilder, with_evidence
from assistant.answer.extractive import (
    answers_request,
    detail_query,
    pick_sentences,
    refocus,
    score_sentences,
    stated_probability,
    summary_sentences,
)
from assistant.answer.listing import narrowing
from assistant.lang.text import ROLE_NAMES, content_tokens, is_boilerplate, states_contribution, word_tokens
from assistant.llm.prompts import DEFAULT_TASK
from assistant.retrieve.references import author_phrase, descriptions, find_references
from assistant.tuning import (
    CAPABLE_EVIDENCE_SENTENCES,
    CHOICE_MARGIN,
    COMPARE_CANDIDATES,
    COMPARE_PAPERS,
    CONFIDENT_MATCH_SIMILARITY,
    EVIDENCE_BOILERPLATE_PENALTY,
    EVIDENCE_CONTRIBUTION_PRIOR,
    EXTRACTIVE_SENTENCES,
    NEAR_MISS_MAX_MISSING,
    SMALL_MODEL_CONTEXT_PAPERS,
    SMALL_MODEL_LOOKUP_KINDS,
    SMALL_MODEL_MAX_TOKENS,
    STATED_MIN_PROBABILITY,
    SUMMARY_SENTENCES,
    TOPIC_CANDIDATE_WINDOWS,
    TOPIC_CANDIDATES,
    TOPIC_CONTRIBUTION_MARGIN,
    TOPIC_NARROWED_RESCORE_MAX,
)
from assistant.types import AnswerMode, AnswerSentence, Comparison, Evidence, Listing, Page, Paper, PaperHit
from assistant.understand.intents import comparison_table, sentence_roles, topic_members, topic_query
from assistant.understand.metadata import MetadataRequest, metadata_request
from assistant.understand.question import (
    NUMBER_TOKEN,
    QuestionFacts,
    analyze,
    asked_thing,
    counted_words,
    missing_entities,
    negates,
    premise_facts,
    premises,
    question_parts,
)

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.verify.attribution import Attributor, Embedder


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


def read_records(tools: Tools, question: str) -> RecordQuery | None:
    """What ``question`` asks of the paper records, or None when it asks for no record field and names no
    author (understand.metadata.metadata_request with the index's exact author lookup and the name after
    "by"). The papers it names come from references.find_references; their title words, the names by which
    it names them and its descriptions of them are what else it may say and still only ask for records."""
    catalog = tools.retriever.catalog
    by = author_phrase(question)
    ask = metadata_request(question, catalog, by, tools.retriever.metadata.by_author(by) if by else [])
    if ask is None:
        return None
    if not ask.only_names(ask.rest):  # asks for no field ("which papers are about X?"): nothing to look up
        return RecordQuery(ask)
    refs = find_references(question, tools.retriever, tools.settings.min_similarity)
    named = tuple(pid for pid in refs.named if pid not in ask.person_ids)
    words: set[str] = set()  # a person's own papers lend no words: "papers by X about memory" is a topic list
    if named:
        papers = tools.retriever.papers
        for pid in named:
            if pid in papers:
                words.update(word_tokens(papers[pid].title))
        for text in [*analyze(question).entities, *descriptions(question)]:
            words.update(word_tokens(text))
    return RecordQuery(ask, named, ask.only_names(words))


@dataclass(frozen=True, slots=True)
class Request:
    """One question as the answerer runs it: ``query`` is what is searched (follow-ups resolved),
    ``focus_ids`` the papers it refers back to, ``facts`` what its wording asks for."""

    question: str
    query: str
    intent: str
    focus_ids: tuple[str, ...]
    facts: QuestionFacts
    page: Page = Page()
    records: RecordQuery | None = None


@dataclass(frozen=True, slots=True)
class Tools:
    """What strategies may use: the retriever, the sentence embedder, the settings (thresholds and sizes)
    and the answer profile (``small_model``: the bundled 135M model, see ``Settings.llm_profile``)."""

    retriever: PaperRetriever
    embed: Embedder
    settings: Settings
    small_model: bool


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
        max_tokens: the model's token budget (None: ``Settings.llm_max_output_tokens``).
        stop_at_first: stop reading the model after its first verified sentence.
        sources: papers shown as sources (None: every candidate).
        comparison: a papers x aspects table shown with the answer.
        listing: for a topic list, how many papers match and which page of them is in ``context``.
        decided: for a choice between papers, the index in ``context`` of the paper whose abstract answers it
            (ChoiceStrategy); None when no abstract decides it.
        notice: a caveat shown with the answer (a near miss: what of the question the paper does not match).
    """

    context: list[PaperHit]
    use_model: bool = False
    max_tokens: int | None = None
    stop_at_first: bool = False
    sources: list[PaperHit] | None = None
    comparison: Comparison | None = None
    listing: Listing | None = None
    decided: int | None = None
    notice: str = ""


class IntentStrategy:
    """The seam of one intent (module docstring). Subclasses set :attr:`intent` and :attr:`task` and
    override :meth:`plan`; the other steps have defaults."""

    intent: ClassVar[str] = ""
    #: The task sentence of the system prompt for this intent (prompts.SYSTEM_PROMPT ``{task}``).
    task: ClassVar[str] = DEFAULT_TASK
    #: The question asks for one paper: search with aspect coverage (PaperRetriever.retrieve ``aspects``).
    one_paper: ClassVar[bool] = False

    def candidates(self, tools: Tools, req: Request) -> list[PaperHit]:
        """Papers to consider, best first: the papers in focus (their evidence scored for the question as
        asked: the titles the resolved query adds would pull every paper's title-like sentence up), else a
        search for ``req.query``."""
        if req.focus_ids:
            return tools.retriever.hits_for(req.question, list(req.focus_ids))
        return tools.retriever.retrieve(req.query, aspects=self.one_paper)

    def settle(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Settled | None:
        """An answer decided before any model call, or None (default) to go on."""
        return None

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        """Choose the context and whether the model writes."""
        raise NotImplementedError

    def complete(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """After a model answer with verified sentences: add what it missed (default: nothing)."""

    def notice(self, plan: Plan) -> str:
        """A line shown with an answer this strategy built by code without asking the model (default none)."""
        return ""

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """The answer from abstract sentences (no model, or the model failed): by default the sentences of
        source 1 that answer the question (extractive.pick_sentences), scored for what it asks of that paper;
        a question that asks two things ("..., and how long does its training take?") gets the best sentence
        for each part first."""
        hit = _asked_of(tools, req, plan.context[0])
        chosen: dict[int, Evidence] = {}
        parts = question_parts(req.question)
        if len(parts) > 1:
            for part in parts[:EXTRACTIVE_SENTENCES]:
                part_req = replace(req, question=part, facts=analyze(part))
                for ev in pick_sentences(_asked_of(tools, part_req, hit), part_req.facts, part, 1):
                    chosen.setdefault(ev.sentence_index, ev)
        for ev in pick_sentences(hit, req.facts, req.question, EXTRACTIVE_SENTENCES):
            if len(chosen) >= EXTRACTIVE_SENTENCES:
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


def _asked_of(tools: Tools, req: Request, hit: PaperHit) -> PaperHit:
    """``hit`` with its sentences scored for what the question asks of the paper (extractive.detail_query:
    the question without the paper's title words), so the sentences that answer it outrank those that
    only match how the question names the paper; ``hit`` unchanged when nothing is removed."""
    detail = detail_query(req.question, hit.paper.title)
    if detail == req.question:
        return hit
    return next(iter(tools.retriever.hits_for(detail, [hit.paper.id])), hit)


def _by_named_author(tools: Tools, req: Request, hits: list[PaperHit]) -> list[PaperHit]:
    """``hits`` narrowed to the papers of the author the question names ("the paper by Yalong Jiang"), when
    any of them is among the hits; else ``hits``. The model then never sees another author's paper."""
    author = author_phrase(req.question)
    if not author or req.focus_ids:
        return hits
    ids = set(tools.retriever.metadata.by_author(author))
    return [h for h in hits if h.paper.id in ids] or hits


def _profile_evidence(tools: Tools, context: list[PaperHit]) -> list[PaperHit]:
    """The ``capable`` profile gives the model more evidence sentences per paper."""
    return context if tools.small_model else [with_evidence(h, CAPABLE_EVIDENCE_SENTENCES) for h in context]


def shared_topic_papers(tools: Tools, req: Request, hits: list[PaperHit], wanted: int) -> list[PaperHit] | None:
    """For "Grokking comes up in two abstracts ..." / "both ... papers": the ``wanted`` papers that share a
    question word found in exactly ``wanted`` papers of the corpus, when that word is a topic of theirs.

    Only when the question says how many papers it means (``facts.papers_wanted``). Each such word gives
    a candidate set; its weight is how often the word occurs in those papers (a topic recurs: "grokking"
    3 + 1 times, an incidental "role" 1 + 1); the top ``wanted`` retrieved papers are a candidate too,
    weighted by the best such word they share. The heaviest set wins (at least ``wanted + 1``
    occurrences to count as a topic), then the better summed retrieval rank among ``COMPARE_CANDIDATES``.

    Returns:
        the chosen papers in retrieval order, or None to keep the retrieval ranking.
    """
    if not req.facts.papers_wanted or len(hits) < wanted:
        return None
    papers = tools.retriever.papers
    ranked = [h.paper.id for h in tools.retriever.retrieve(req.query, top_k=COMPARE_CANDIDATES)]
    rank = {pid: i for i, pid in enumerate(ranked)}
    tokens = sorted(content_tokens(req.question))  # whole tokens: "combinatorial-optimization" is not "combinatorial"

    def occurrences(term: str, ids: frozenset[str]) -> int:
        pattern = re.compile(rf"\b{re.escape(term)}", re.I)
        return sum(len(pattern.findall(f"{papers[pid].title} {papers[pid].text}")) for pid in ids)

    weights: dict[frozenset[str], int] = {}
    for term in tokens:
        ids = frozenset(tools.retriever.papers_with(term))
        if len(ids) == wanted:
            weights[ids] = max(weights.get(ids, 0), occurrences(term, ids))
    baseline = frozenset(h.paper.id for h in hits[:wanted])
    weights.setdefault(baseline, 0)

    def key(ids: frozenset[str]) -> tuple[int, int]:
        weight = weights[ids] if weights[ids] > wanted else 0
        return (weight, -sum(rank.get(pid, len(ranked)) for pid in ids))

    best = max(weights, key=key)
    if best == baseline:
        return None
    return tools.retriever.hits_for(req.query, sorted(best, key=lambda pid: rank.get(pid, len(ranked))))


def select_context(settings: Settings, hits: list[PaperHit]) -> list[PaperHit]:
    """Papers whose evidence goes into a lookup prompt: the top-ranked paper, plus those among the first
    ``context_papers`` whose dense similarity is within ``context_similarity_margin`` of the best."""
    if not hits:
        return []
    top = hits[: settings.context_papers]
    best = max(h.dense_similarity for h in top)
    return [hits[0]] + [h for h in top[1:] if h.dense_similarity >= best - settings.context_similarity_margin]


#: Words that make a number in a question a bound, not a premise ("more than 10%", "at least 2x").
_THRESHOLD_WORDS = re.compile(
    r"\b(?:more|less|fewer|greater|higher|lower|larger|smaller|better|worse)\s+than\b|\bat\s+(?:least|most)\b|"
    r"\b(?:over|above|below|under|beyond|exceed\w*|up\s+to)\s+\d",
    re.I,
)


def _near_miss_notice(tools: Tools, req: Request, hit: PaperHit) -> str:
    """For "which paper ...?": when the best paper's abstract contains most of what the question describes but
    not one or two of its words ("a benchmark of AI-generated *videos*" -> A-Bench, about images; the verb
    after "which paper" does not count), and either no indexed abstract mentions them or the citation verifier
    does not support the description as a claim about that paper ("The paper introduces a benchmark of
    AI-generated videos."), say what matches and what does not, and whether any indexed abstract mentions the
    missing words; "" otherwise. (The verifier alone misses a one-word substitution: it supports "urban noise
    shifts the song frequency of parrots" from a sparrow abstract, hence the index check.)"""
    from assistant.verify.answerable import near_miss

    claim = _WHICH_PAPER_LEAD.sub("The paper ", req.question, count=1)
    if claim == req.question:
        return ""
    found, missing = near_miss(req.question, hit)
    verb = claim.split()[2].lower() if len(claim.split()) > 2 else ""
    missing = tuple(w for w in missing if w.lower() != verb)  # "Which paper *adds* ...": how it is said, not what
    if not missing or len(missing) > NEAR_MISS_MAX_MISSING or len(found) < len(missing) + 1:
        return ""
    nowhere = [w for w in missing if not tools.retriever.mentions_anywhere(w)]
    # the words exist in the index: the verifier decides whether the description fits the paper ("The paper adds
    # an identity mapping ...": it does)
    if not nowhere and _attributor(tools, hit).align(claim.rstrip(" ?") + ".").supported:
        return ""
    quoted = " or ".join(f"“{w}”" for w in missing)
    tail = f"; no indexed abstract mentions {' or '.join(f'“{w}”' for w in nowhere)}" if nowhere else ""
    return (
        f"Closest match only: “{hit.paper.title}” matches {', '.join(f'“{w}”' for w in found)}, "
        f"but its abstract does not mention {quoted}{tail}."
    )


#: "Which paper / abstract / work / study (that) ..." at the start of a question: made "The paper ..." to
#: read the question's description as a claim about the paper found.
_WHICH_PAPER_LEAD = re.compile(r"^\s*(?:which|what)\s+(?:paper|abstract|work|study|article)\s+(?:that\s+)?", re.I)
#: A question that opens with "how" or "why" (after "and", "ok", "so" ...).
_HOW_OR_WHY = re.compile(r"^\W*(?:(?:and|ok|okay|so|but|also|then)\W+)*(?:how|why)\b", re.I)
#: Words for a paper in "which <paper> ..." (question._WHICH_PAPER).
_PAPER_WORDS = frozenset({"paper", "abstract", "work", "study", "article", "one"})


def _identifies_paper(req: Request) -> bool:
    """True when the question asks which paper ("Which paper proposes ...?", "Is there a paper on ...?", "of
    those two, which one ...?"), not for a detail of one ("What microphone did the sparrow study record with?")."""
    thing = [w.lower().rstrip("s") for w in asked_thing(req.question)]
    return any(w in _PAPER_WORDS for w in thing) or (req.facts.which_paper and not thing)


def _not_stated_notice(papers: list[PaperHit], gap: str, closest: str | None) -> str:
    """The honest "not stated" answer: which abstract was read, what it lacks (``gap``, a verb phrase), and its
    closest sentence, marked as context and not an answer. Names papers by title; cites nothing."""
    titles = " and ".join(f"“{h.paper.title}”" for h in papers)
    if len(papers) == 1:
        notice = f"Not stated: the abstract of {titles}, the paper the question is about, {gap}."
    else:
        notice = f"Not stated: none of the abstracts of {titles}, the papers the question is about, answers it ({gap})."
    if closest:
        notice += f" Closest sentence, shown as context only (it does not answer the question): “{closest}”"
    return notice


class LookupStrategy(IntentStrategy):
    """A question about one detail: checks before the model (unknown names, details not stated, false
    premises), then a short model answer (the ``small`` profile stops at its first verified sentence)."""

    intent = "lookup"
    task = "Write one to three short sentences that answer the question."
    one_paper = True

    def candidates(self, tools: Tools, req: Request) -> list[PaperHit]:
        """The search, with the paper the question names moved first (extractive.refocus)."""
        return refocus(super().candidates(tools, req), req.facts)

    def settle(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Settled | None:
        """Abstain on a name no paper mentions; "not stated" when the paper lacks the detail asked for; a
        correction when the question's premise is not supported by the paper."""
        unknown = [e for e in req.facts.entities if not tools.retriever.mentions_anywhere(e)]
        if unknown and not req.focus_ids:
            return Settled(
                "abstained",
                f"No indexed paper mentions {' or '.join(unknown)}, so the abstracts don't "
                "cover this question. The closest papers below do not match it.",
            )
        hit = hits[0]
        settled = self._not_stated(tools, req, hits)
        if settled is not None:
            return settled
        premise = self._unsupported_premise(tools, req.question, hit)
        if premise:  # the model is not asked: a small model echoes the premise
            quotes = pick_sentences(hit, premise_facts(premise), premise, EXTRACTIVE_SENTENCES)
            return Settled(
                "extractive",
                f"The question assumes “{premise.rstrip('.')}”, which the abstract does not "
                "support; here is what it says.",
                hit,
                tuple(quotes),
            )
        return None

    @staticmethod
    def _not_stated(tools: Tools, req: Request, hits: list[PaperHit]) -> Settled | None:
        """A false number premise corrected, or "not stated" (``not_stated``: cites nothing), decided over every
        sentence of the abstract the question is about (every paper in focus when several are):
        verify/answerable.py. None when the abstract may answer the question.

        * a name of the question the paper never mentions -> not stated (exact);
        * a number with a unit the abstract never states, where the sentence that answers has other numbers of
          that unit ("The CAD paper reports 20%, right?") -> "No - the abstract reports 5.0%, not 20%", quoted;
        * no sentence of any of those abstracts can answer (answerable.answerability) -> not stated, with the
          closest sentence shown as context only, marked as not an answer.
        Not judged: a question that asks which paper / which one; a "how ...?" / "why ...?" that asks for no
        number (it asks for the approach or the reason, what an abstract is about: "how do they make sure the
        identities differ?" is answered by "inter-class variation ... packing problem", no word in common);
        without papers in focus, one that asks for no number, no "what/which <thing>" and names nothing (a
        description searched for: "Is there work on ...").
        """
        from assistant.verify.answerable import answerability, false_premise_number

        hit = hits[0]
        scope = hits if len(req.focus_ids) > 1 else [hit]
        missing = missing_entities(req.facts, hit.paper)
        if missing and len(scope) == 1:
            closest = pick_sentences(hit, req.facts, req.question, 1)
            gap = f"does not mention {' or '.join(missing)}"
            return Settled("not_stated", _not_stated_notice(scope, gap, closest[0].text if closest else None))
        if _identifies_paper(req):  # "which paper ...?", "which one links its code?": not a detail of one paper
            return None
        verdict = answerability(req.question, req.facts, scope, tools.embed)
        if not _THRESHOLD_WORDS.search(req.question):
            wrong = false_premise_number(req.question, hit, verdict.fits)
            if wrong is not None:
                score = hit.sentence_scores[wrong.index] if hit.sentence_scores else 1.0
                stated = " and ".join(wrong.stated)
                notice = f"No — the abstract of “{hit.paper.title}” reports {stated}, not {wrong.claimed}."
                return Settled(
                    "extractive", notice, hit, (Evidence(hit.paper.id, wrong.index, hit.sentences[wrong.index], score),)
                )
        if not req.facts.quantity and _HOW_OR_WHY.match(req.question):
            return None  # "how do they ...?": asks for the paper's approach, which its abstract is about
        if not req.focus_ids and not (req.facts.quantity or asked_thing(req.question)):
            # "Is there work on ...": a search, the paper found is what it describes; "¿Qué artículo propone
            # DUALFormer?": a first question about a named paper that asks for no number or named thing
            return None
        if _asks_for_a_role(req.question, scope):
            return None  # "What problem is it meant to help with?": the abstract has a sentence of that role
        if verdict.stated or not verdict.detail:
            return None
        if stated_probability(req.question, req.facts, scope, verdict) >= STATED_MIN_PROBABILITY:
            return None  # the exact tests found no answering sentence, but the trained "stated" model finds one
        if req.facts.quantity and any(
            negates(s) and content_tokens(req.question) & content_tokens(s) for h in scope for s in h.sentences
        ):
            return None  # "How long does it take to fine-tune EM-LLM?": the premise is answered, not declared unstated
        if req.facts.quantity:
            counted = " ".join(counted_words(req.question)) or " or ".join(verdict.missing[:2])
            gap = f"gives no number for {counted}" if counted else "gives no such number"
        elif not verdict.missing and any(NUMBER_TOKEN.fullmatch(w) for w in asked_thing(req.question)):
            gap = f"says how many {' '.join(asked_thing(req.question)[1:])} but does not name them"
        elif verdict.missing:
            gap = "does not mention " + " or ".join(f"“{w}”" for w in verdict.missing[:3])
        else:
            gap = "has no sentence that answers this"
        return Settled("not_stated", _not_stated_notice(scope, gap, verdict.best.text if verdict.best else None))

    @staticmethod
    def _unsupported_premise(tools: Tools, question: str, hit: PaperHit) -> str:
        """The first premise of ``question`` (question.premises) the verifier does not support from ``hit``."""
        found = premises(question)
        if not found:
            return ""
        attributor = _attributor(tools, hit)
        return next((premise for premise in found if not attributor.align(premise).supported), "")

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        context = hits if req.focus_ids else select_context(tools.settings, _by_named_author(tools, req, hits))
        if req.facts.entities and not req.focus_ids and not missing_entities(req.facts, context[0].paper):
            # "What is HComP-Net?": the paper that names it, not also a neighbour that never does
            context = [context[0]] + [
                h for h in context[1:] if len(missing_entities(req.facts, h.paper)) < len(req.facts.entities)
            ]
        if tools.small_model and not req.focus_ids:  # prompt time is most of the first-token wait on a laptop CPU
            context = context[:SMALL_MODEL_CONTEXT_PAPERS]
        kinds = SMALL_MODEL_LOOKUP_KINDS  # the small model only where its sentences are kept (tuning.py)
        return Plan(
            _profile_evidence(tools, context),
            use_model=not tools.small_model or kinds is None or lookup_kind(req.facts) in kinds,
            max_tokens=SMALL_MODEL_MAX_TOKENS if tools.small_model else None,
            stop_at_first=tools.small_model,
            notice=_near_miss_notice(tools, req, context[0]) if _identifies_paper(req) and not req.focus_ids else "",
        )

    def notice(self, plan: Plan) -> str:
        """The plan's caveat (a near miss), if any."""
        return plan.notice

    def complete(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """When the verified sentences lack the number/expansion asked for, add the sentence that has it."""
        if not answers_request(req.facts, [s.text for s in builder.sentences]):
            for ev in pick_sentences(_asked_of(tools, req, plan.context[0]), req.facts, req.question, 1):
                builder.quote(ev)

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """A "which paper" question is answered with the title first ("The closest match ..." when the paper
        is neither named nor similar enough to be sure: tuning.CONFIDENT_MATCH_SIMILARITY); then the sentences
        that answer it."""
        hit = plan.context[0]
        if req.facts.which_paper:
            named = bool(req.facts.entities) and not missing_entities(req.facts, hit.paper)
            sure = (named or hit.dense_similarity >= CONFIDENT_MATCH_SIMILARITY) and not plan.notice  # a near miss
            lead = "The paper is" if sure else "The closest match in the abstracts is"  # the reader judges
            builder.add(AnswerSentence(f"{lead} “{hit.paper.title}”.", (1,), 1.0), hit.paper.title)
        super().answer_by_code(tools, req, plan, builder)


class SummaryStrategy(IntentStrategy):
    """A summary of one paper (or of the papers in focus): the model in the ``capable`` profile, else the
    paper's best evidence sentences."""

    intent = "summary"
    task = "Summarize the paper in two or three short sentences: its problem, its method and its main result."
    one_paper = True

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        context = hits if req.focus_ids else _by_named_author(tools, req, hits)[:1]
        return Plan([with_evidence(h, SUMMARY_SENTENCES) for h in context], use_model=not tools.small_model)

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """Each paper's summary sentences (extractive.summary_sentences: its problem, approach and key result
        as the abstract states them), in abstract order: one summary per paper in focus ("Summarize them"),
        three sentences for one paper, two each for several."""
        k = SUMMARY_SENTENCES - 1 if len(plan.context) == 1 else EXTRACTIVE_SENTENCES
        for n, hit in enumerate(plan.context, start=1):
            evidence = summary_sentences(hit, k)
            named = _naming_sentence(hit, req.facts.entities)
            if named is not None:  # "What is InfoAlign?": lead with the sentence that introduces the name asked about
                evidence = [named] + [e for e in evidence if e.sentence_index != named.sentence_index][: k - 1]
            for ev in evidence:
                builder.quote(ev, n)


def _attributor(tools: Tools, hit: PaperHit) -> Attributor:
    """The citation verifier over ``hit`` alone, configured as the answer's verifier is (settings)."""
    from assistant.verify.attribution import Attributor
    from assistant.verify.verifiers import build_verifier

    return Attributor([hit], tools.embed, build_verifier(tools.settings))


def _asks_for_a_role(question: str, scope: Sequence[PaperHit]) -> bool:
    """True when a "what/which <thing>" question asks for a part every abstract plays a role for ("what problem",
    "which datasets", :data:`assistant.lang.text.ROLE_NAMES`) and the trained role classifier finds a sentence of
    that role in one of the abstracts: the abstract states it, in its own words."""
    wanted = {ROLE_NAMES[w.lower()] for w in asked_thing(question) if w.lower() in ROLE_NAMES}
    return bool(wanted) and any(wanted & set(sentence_roles(h.sentences)) for h in scope)


def _naming_sentence(hit: PaperHit, names: Sequence[str]) -> Evidence | None:
    """The first sentence of ``hit`` that contains one of ``names`` (the question's exact names), or None."""
    for i, sentence in enumerate(hit.sentences):
        if any(name in sentence for name in names):
            score = hit.sentence_scores[i] if hit.sentence_scores else 1.0
            return Evidence(hit.paper.id, i, sentence, score)
    return None


class CompareStrategy(IntentStrategy):
    """A comparison: a table built by code (intents.comparison_table), plus model sentences in the
    ``capable`` profile; without them, each paper's approach sentence."""

    intent = "compare"
    task = "In two or three short sentences, say how the papers differ, naming each paper."

    def settle(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Settled | None:
        """A name no paper mentions, or a single paper in focus: there is nothing to compare with; say so
        (never a paper with itself, never an unrelated filler paper)."""
        unknown = [e for e in req.facts.entities if not tools.retriever.mentions_anywhere(e)]
        if unknown:  # "compare X with Y" where no paper mentions Y: no filler paper in its place
            return Settled(
                "abstained",
                f"No indexed paper mentions {' or '.join(unknown)}, so there is no second paper "
                "to compare with. The closest papers below do not match it.",
            )
        if req.focus_ids and len(hits) < 2:
            title = hits[0].paper.title if hits else "that paper"
            return Settled(
                "clarify",
                f"Only one paper to compare: “{title}”. Which paper should it be compared with? "
                "Name it by its title, method or an author.",
            )
        return None

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        wanted = max(COMPARE_PAPERS, min(tools.settings.context_papers, req.facts.papers_wanted or COMPARE_PAPERS))
        papers = hits if req.focus_ids else (shared_topic_papers(tools, req, hits, wanted) or hits[:wanted])
        context = _profile_evidence(tools, papers)
        return Plan(context, use_model=not tools.small_model, comparison=comparison_table(context))

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """For each paper, in abstract order: its contribution sentence (the first of its "approach" role: what
        the paper does; the "approach" cell when no sentence has that role) and the sentence that best answers
        the question's own axis ("how does each generalize", "how many datasets", extractive.pick_sentences)
        when that is another sentence; each cited."""
        if plan.comparison is None:
            return super().answer_by_code(tools, req, plan, builder)
        approach = plan.comparison.columns.index("approach")
        for hit, row in zip(plan.context, plan.comparison.rows):
            roles = sentence_roles(hit.sentences)
            first = next((i for i, role in enumerate(roles) if role == "approach"), None)
            picks = {e.sentence_index: e for e in pick_sentences(hit, req.facts, req.question, 1)}
            if first is not None:
                score = hit.sentence_scores[first] if hit.sentence_scores else 1.0
                picks.setdefault(first, Evidence(hit.paper.id, first, hit.sentences[first], score))
            elif (cell := row.cells[approach]) is not None:
                builder.add(cell, cell.text)
            for i in sorted(picks):
                builder.quote(picks[i], row.n)


class TopicStrategy(IntentStrategy):
    """Which papers are about a topic: a listing built by code, one cited sentence per paper, best first.

    Over a whole conference a topic has dozens of papers: every paper that passes intents.topic_members is
    counted (``Listing.total``) and the answer lists one page of them (``Request.page``: ``ask --limit/--offset``,
    "show more" in a conversation). A question may narrow the list by venue words and author (listing.py).
    """

    intent = "topic"
    task = "Write one short sentence per relevant paper saying what it does."

    def candidates(self, tools: Tools, req: Request) -> list[PaperHit]:
        """A wide search for the topic without the question's frame ("which papers ...") and without its
        narrowing words, restricted to the papers the narrowing allows: a small allowed set (at most
        ``TOPIC_NARROWED_RESCORE_MAX`` papers, e.g. one author's) is scored whole, a large one (a venue) is
        searched with more candidate windows and filtered."""
        if req.focus_ids:
            return super().candidates(tools, req)
        nar = narrowing(tools.retriever, req.question, topic_query(req.query))
        if nar.ids is None:
            return tools.retriever.retrieve(nar.query, top_k=TOPIC_CANDIDATES, candidate_k=TOPIC_CANDIDATE_WINDOWS)
        if not nar.ids:  # nothing has that venue / author: search unnarrowed, plan() says so
            return tools.retriever.retrieve(nar.query, top_k=tools.settings.top_k)
        if len(nar.ids) <= TOPIC_NARROWED_RESCORE_MAX:
            hits = tools.retriever.hits_for(nar.query, sorted(nar.ids))
            return sorted(hits, key=lambda h: max((e.score for e in h.evidence), default=-1.0), reverse=True)
        hits = tools.retriever.retrieve(nar.query, top_k=4 * TOPIC_CANDIDATES, candidate_k=4 * TOPIC_CANDIDATE_WINDOWS)
        return [h for h in hits if h.paper.id in nar.ids][:TOPIC_CANDIDATES] or hits[: tools.settings.top_k]

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        if req.focus_ids:
            return Plan(hits, use_model=False, sources=hits)
        nar = narrowing(tools.retriever, req.question, topic_query(req.query))
        allowed = hits if nar.ids is None else [h for h in hits if h.paper.id in nar.ids]
        members = topic_members(nar.query, allowed, tools.settings.topic_min_evidence)
        page = members[req.page.offset : req.page.offset + req.page.limit]
        listing = Listing(len(members), req.page.offset, len(page), req.page.limit, nar.venue, nar.author)
        return Plan(page, use_model=False, sources=page or hits[: tools.settings.top_k], listing=listing)

    def notice(self, plan: Plan) -> str:
        """Why a listing shows nothing: the narrowing matches no paper, or the page is past the end."""
        li = plan.listing
        if li is None or plan.context:
            return ""
        narrowed = " and ".join(x for x in (li.venue, f"by {li.author}" if li.author else "") if x)
        if li.total == 0:
            where = f" among the papers {narrowed}" if narrowed else ""
            return f"No paper{where} matches this topic closely enough to list; the closest papers are the sources."
        return f"Only {li.total} papers match; there is nothing after {li.total} (asked to skip {li.offset})."

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """Each listed paper's best evidence sentence, cited to it; its contribution sentence instead (which
        names what the paper does) when that scores within ``TOPIC_CONTRIBUTION_MARGIN`` of the best."""
        for n, hit in enumerate(plan.context, start=1):
            if not hit.evidence:
                continue
            best = max(hit.evidence, key=lambda e: e.score)
            scores = hit.sentence_scores or ()
            own = next((i for i, s in enumerate(hit.sentences) if states_contribution(s)), None)
            if own is not None and own < len(scores) and scores[own] >= best.score - TOPIC_CONTRIBUTION_MARGIN:
                best = Evidence(hit.paper.id, own, hit.sentences[own], scores[own])
            builder.quote(best, n)


class ChoiceStrategy(IntentStrategy):
    """ "Which of them needs less data?": a choice between the papers in focus (or the two best papers).

    Every sentence of every paper's abstract is scored for the question (:func:`plain_scores`); when one
    paper's best sentence beats every other paper's best by ``CHOICE_MARGIN``, the answer names that paper
    and quotes the sentence ("which of them uses reinforcement learning?" -> LeReT, "a reinforcement-learning
    framework"). Otherwise the ``capable`` model may decide, citing the deciding sentences; by code, each
    paper's sentence that bears on the question is quoted under a notice that the abstracts do not decide it."""

    intent = "choice"
    task = (
        "Say which of the papers the question asks for, citing the sentence that decides it; if the sources "
        "do not decide it, say so and give what each says."
    )

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        wanted = max(COMPARE_PAPERS, min(tools.settings.context_papers, req.facts.papers_wanted or COMPARE_PAPERS))
        context = _profile_evidence(tools, hits if req.focus_ids else hits[:wanted])
        chosen = decided_paper(context, req)
        return Plan(context, use_model=not tools.small_model and chosen is None, decided=chosen)

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """The paper whose abstract states it (:func:`decided_paper`), named and quoted; else, for each paper,
        its sentence that best answers the question, cited to it."""
        chosen = plan.decided
        if chosen is not None:
            hit = plan.context[chosen]
            n = chosen + 1
            scores = plain_scores(hit, req)
            best = max(range(len(scores)), key=lambda i: scores[i])
            lead = f"“{hit.paper.title}” is the one whose abstract states it."
            builder.add(AnswerSentence(lead, (n,), 1.0), hit.paper.title)
            builder.quote(Evidence(hit.paper.id, best, hit.sentences[best], hit.sentence_scores[best]), n)
            return
        for n, hit in enumerate(plan.context, start=1):
            for ev in pick_sentences(hit, req.facts, req.question, 1):
                builder.quote(ev, n)

    def notice(self, plan: Plan) -> str:
        """Shown above a choice answered by code when no abstract decides it: the abstracts are quoted, not
        weighed."""
        if plan.decided is not None or len(plan.context) < 2:  # decided, or one paper: nothing to weigh
            return ""
        return "The abstracts don't settle this between them directly; here is what each one says."


def _names(items: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


#: A year in a venue / collection name ("ICLR 2025 Papers" -> 2025): an exact rule on digits.
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")


def record_sentences(paper: Paper, fields: tuple[str, ...]) -> list[str]:
    """Sentences stating ``fields`` (understand.metadata.FIELDS; ``papers`` is ignored, none given = the
    authors) of ``paper`` exactly as its record has them; a field the record leaves empty is said to be
    missing ("The records list no authors for “…”."), never guessed. Venue and year asked together are
    one sentence."""
    title = f"“{paper.title}”"
    asked = [f for f in fields if f != "papers"] or ["authors"]
    year = _YEAR.search(paper.venue)
    out = []
    for field in asked:
        if field == "authors":
            authors = [a for a in paper.authors if a.strip()]
            out.append(f"{title} is by {_names(authors)}." if authors else f"The records list no authors for {title}.")
        elif field == "venue":
            out.append(
                f"The records list {title} under {paper.venue}."
                if paper.venue
                else f"The records give no venue for {title}."
            )
        elif field == "year" and "venue" in asked:
            if not year and paper.venue:
                out.append(f"The records give no year for {title}.")
        elif field == "year":
            out.append(
                f"{title} is from {year.group(0)} (listed under {paper.venue})."
                if year
                else f"The records give no year for {title}."
            )
        elif field == "link":
            out.append(f"Link to {title}: {paper.url}" if paper.url else f"The records give no link for {title}.")
    return out


class MetadataStrategy(IntentStrategy):
    """Questions about the paper records: authors, venue, year, link ("Who wrote HyperFace?", "link to that
    one"), and "papers by X" (a listing of that author's papers, paged like a topic list). Answered by code
    from the records, each sentence cited to its paper; never the model, never the abstract text.

    The paper asked about: the papers in focus (a follow-up: "who wrote it?"), else the papers the question
    names (references.find_references), else retrieval's top paper."""

    intent = "metadata"
    task = "Say what the paper records state about the paper(s)."

    @staticmethod
    def records(tools: Tools, req: Request) -> RecordQuery:
        """``req.records``, else read from the question (a forced ``metadata`` intent)."""
        return req.records or read_records(tools, req.question) or RecordQuery(MetadataRequest(("authors",)))

    def candidates(self, tools: Tools, req: Request) -> list[PaperHit]:
        """The papers in focus; else the named ones; else, for "papers by X", that author's papers on the page
        asked for (index order); else a search."""
        if req.focus_ids:
            return tools.retriever.hits_for(req.question, list(req.focus_ids))
        rec = self.records(tools, req)
        if rec.named:
            return tools.retriever.hits_for(req.question, list(rec.named))
        if rec.lists_person:
            page = list(rec.ask.person_ids)[req.page.offset : req.page.offset + req.page.limit]
            return tools.retriever.hits_for(req.question, page) if page else []
        return tools.retriever.retrieve(req.query, aspects=True)

    def settle(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Settled | None:
        """An author no paper lists (with the closest indexed names); a page past the end of a listing."""
        rec = self.records(tools, req)
        if rec.ask.unknown_person and not req.focus_ids:
            return Settled("abstained", unknown_author_notice(tools, rec.ask.unknown_person))
        return None

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        rec = self.records(tools, req)
        if rec.lists_person and not req.focus_ids:
            total = len(rec.ask.person_ids)
            listing = Listing(total, req.page.offset, len(hits), req.page.limit, author=self._person(tools, rec))
            return Plan(list(hits), use_model=False, sources=list(hits), listing=listing)
        k = len(req.focus_ids) or len(rec.named) or 1
        return Plan(list(hits[:k]), use_model=False, sources=list(hits))

    @staticmethod
    def _person(tools: Tools, rec: RecordQuery) -> str:
        """The person as the index spells the name (``Sébastien Marcel``), else as the question wrote it."""
        return tools.retriever.catalog.author_name(rec.ask.person) or rec.ask.person

    def notice(self, plan: Plan) -> str:
        """Where the answer comes from; for a listing, how many papers the author has."""
        li = plan.listing
        if li is None:
            return "From the paper records (authors, venue, link), not the abstract text."
        count = f"{li.total} indexed paper{'s' if li.total != 1 else ''}"
        if not plan.context:
            return (
                f"{li.author} is an author of {count}; there is nothing after {li.total} (asked to skip {li.offset})."
            )
        shown = "" if li.shown >= li.total else f"; showing {li.offset + 1}–{li.offset + li.shown}"
        return f"From the paper records: {li.author} is an author of {count}{shown}."

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """A listing: one sentence per paper (its title and venue), cited. Else, for each paper, the fields asked
        (record_sentences), cited to it."""
        rec = self.records(tools, req)
        for n, hit in enumerate(plan.context, start=1):
            paper = hit.paper
            if plan.listing is not None:
                where = f" ({paper.venue})" if paper.venue else ""
                builder.state(f"“{paper.title}”{where}.", n)
                continue
            for text in record_sentences(paper, rec.ask.fields):
                builder.state(text, n)


def unknown_author_notice(tools: Tools, name: str) -> str:
    """ "No indexed paper is by <name> …", with the closest indexed author names when there are any."""
    close = tools.retriever.catalog.closest_authors(name)
    hint = f" Close names in the index: {', '.join(close)}." if close else ""
    return f"No indexed paper is by {name}, so the abstracts don't cover this question.{hint}"


def plain_scores(hit: PaperHit, req: Request) -> list[float]:
    """Each sentence of ``hit`` scored for what ``req`` asks (extractive.score_sentences: the evidence score plus
    the bonuses for a number or name asked for) without the priors retrieval adds for ranking evidence (the
    contribution-sentence bonus and the code/URL boilerplate penalty), so "The code and model are available at
    https://github.com/..." can answer "which one links its code?"."""
    return [
        p.score
        - EVIDENCE_CONTRIBUTION_PRIOR * states_contribution(p.evidence.text)
        + EVIDENCE_BOILERPLATE_PENALTY * is_boilerplate(p.evidence.text)
        for p in score_sentences(hit, req.facts, req.question)
    ]


def decided_paper(context: list[PaperHit], req: Request) -> int | None:
    """The index in ``context`` of the paper whose abstract answers a "which of them" question: its best sentence
    (:func:`plain_scores`, every sentence of every abstract) beats each other paper's best by ``CHOICE_MARGIN``;
    None when fewer than two papers have scored sentences or none leads by that much."""
    if len(context) < 2 or not all(h.sentence_scores for h in context):
        return None
    best = [max(plain_scores(h, req)) for h in context]
    order = sorted(range(len(best)), key=lambda i: best[i], reverse=True)
    return order[0] if best[order[0]] - best[order[1]] >= CHOICE_MARGIN else None


#: The registry: intent name -> strategy. ``intents.detect_intent`` returns one of these names.
STRATEGIES: Mapping[str, IntentStrategy] = {
    s.intent: s
    for s in (
        LookupStrategy(),
        SummaryStrategy(),
        CompareStrategy(),
        TopicStrategy(),
        ChoiceStrategy(),
        MetadataStrategy(),
    )
}
