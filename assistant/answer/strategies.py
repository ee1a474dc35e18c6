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

Adding an intent = one subclass + one line in :data:`STRATEGIES` (or a registry passed to ``Answerer``). The seam
and what it is given: strategy.py; the lookup strategy: lookup.py; the records (metadata) strategy: records.py;
the summary, comparison, topic and choice strategies and the registry: here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from assistant.answer.builder import AnswerBuilder, with_evidence
from assistant.answer.extractive import (
    pick_sentences,
    score_sentences,
    summary_sentences,
)
from assistant.answer.listing import Narrowing, narrowing
from assistant.lang.text import content_tokens, is_boilerplate, states_contribution
from assistant.lang.words import word_start_pattern
from assistant.tuning import TOPIC_CANDIDATES_MAX, TOPIC_WINDOW_TAIL
from assistant.types import Evidence, Listing, PaperHit
from assistant.understand.intents import comparison_table, sentence_roles, topic_members, topic_query

if TYPE_CHECKING:
    from assistant.config import Settings

from assistant.answer.lookup import LookupStrategy
from assistant.answer.records import MetadataStrategy, record_sentences, unknown_author_notice
from assistant.answer.strategy import (
    IntentStrategy,
    Plan,
    RecordQuery,
    Request,
    Settled,
    Tools,
    lookup_kind,
    prompt_evidence,
    read_records,
)

__all__ = [
    "STRATEGIES",
    "ChoiceStrategy",
    "CompareStrategy",
    "IntentStrategy",
    "LookupStrategy",
    "MetadataStrategy",
    "Plan",
    "RecordQuery",
    "Request",
    "Settled",
    "SummaryStrategy",
    "Tools",
    "TopicStrategy",
    "lookup_kind",
    "plain_scores",
    "read_records",
    "record_sentences",
    "shared_topic_papers",
    "unknown_author_notice",
]


def shared_topic_papers(tools: Tools, req: Request, hits: list[PaperHit], wanted: int) -> list[PaperHit] | None:
    """For "Grokking comes up in two abstracts ..." / "both ... papers": the ``wanted`` papers that share a
    question word found in exactly ``wanted`` papers of the corpus, when that word is a topic of theirs.

    Only when the question says how many papers it means (``facts.papers_wanted``). Each such word gives
    a candidate set; its weight is how often the word occurs in those papers (a topic recurs: "grokking"
    3 + 1 times, an incidental "role" 1 + 1); the top ``wanted`` retrieved papers are a candidate too,
    weighted by the best such word they share. The heaviest set wins (at least ``wanted + 1``
    occurrences to count as a topic), then the better summed retrieval rank among ``answer.compare_candidates``.

    Returns:
        the chosen papers in retrieval order, or None to keep the retrieval ranking.
    """
    if not req.facts.papers_wanted or len(hits) < wanted:
        return None
    papers = tools.retriever.papers
    top_k = tools.settings.answer.compare_candidates
    ranked = [h.paper.id for h in tools.retriever.retrieve(req.search(tools, req.query), top_k=top_k)]
    rank = {pid: i for i, pid in enumerate(ranked)}
    tokens = sorted(content_tokens(req.question))  # whole tokens: "combinatorial-optimization" is not "combinatorial"

    def occurrences(term: str, ids: frozenset[str]) -> int:
        pattern = word_start_pattern(term)
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
    return tools.retriever.hits_for(
        req.search(tools, req.query), sorted(best, key=lambda pid: rank.get(pid, len(ranked)))
    )


class SummaryStrategy(IntentStrategy):
    """A summary of one paper (or of the papers in focus), written by the model; by code (the model failed or
    nothing it wrote passed its check), the paper's summary sentences."""

    intent = "summary"
    task = (
        "Summarize the paper in three short sentences, in this order: the problem it addresses, its method, and "
        "its main result."
    )
    one_paper = True
    #: the problem, approach and result sentences (extractive.summary_sentences) are quoted in the ask: issue 59 item 5,
    #: "summaries give the problem, the method and the main result, each from the picked sentences". On questions-8
    #: (docs/results/issue59, stop 71) the result is stated more often (test 6 -> 8 of 9) and facts fall (test 0.778 ->
    #: 0.741, val 0.796 -> 0.648); on val lookups, facts and false premises the same ask gained nothing, so only
    #: summaries use it.
    writes_from_picked = True

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        context = hits if req.focus_ids else hits[:1]
        k = tools.settings.answer.summary_sentences
        return Plan([with_evidence(h, k) for h in context], use_model=True)

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """Each paper's summary sentences (extractive.summary_sentences: its problem, approach and key result
        as the abstract states them), in abstract order: one summary per paper in focus ("Summarize them"),
        three sentences for one paper, two each for several."""
        a = tools.settings.answer
        k = a.summary_sentences - 1 if len(plan.context) == 1 else a.extractive_sentences
        for n, hit in enumerate(plan.context, start=1):
            evidence = summary_sentences(hit, k, req.cache)
            named = _naming_sentence(hit, req.facts.entities)
            if named is not None:  # "What is InfoAlign?": lead with the sentence that introduces the name asked about
                evidence = [named] + [e for e in evidence if e.sentence_index != named.sentence_index][: k - 1]
            for ev in evidence:
                builder.quote(ev, n)


def _naming_sentence(hit: PaperHit, names: Sequence[str]) -> Evidence | None:
    """The first sentence of ``hit`` that contains one of ``names`` (the question's exact names), or None."""
    for i, sentence in enumerate(hit.sentences):
        if any(name in sentence for name in names):
            score = hit.sentence_scores[i] if hit.sentence_scores else 1.0
            return Evidence(hit.paper.id, i, sentence, score)
    return None


class CompareStrategy(IntentStrategy):
    """A comparison: a table built by code (intents.comparison_table), plus the model's sentences; by code,
    each paper's approach sentence."""

    intent = "compare"
    task = (
        "Contrast the papers on what the question asks, naming each paper: one or two short sentences per paper "
        "saying what it does on that point, each ending with that paper's source number."
    )

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
        wanted = max(
            tools.settings.answer.compare_papers,
            min(tools.settings.answer.context_papers, req.facts.papers_wanted or tools.settings.answer.compare_papers),
        )
        papers = hits if req.focus_ids else (shared_topic_papers(tools, req, hits, wanted) or hits[:wanted])
        context = prompt_evidence(tools, papers)
        return Plan(context, use_model=True, comparison=comparison_table(context, req.cache), per_paper=True)

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """For each paper, in abstract order: its contribution sentence (the first of its "approach" role: what
        the paper does; the "approach" cell when no sentence has that role) and the sentence that best answers
        the question's own axis ("how does each generalize", "how many datasets", extractive.pick_sentences)
        when that is another sentence; each cited."""
        if plan.comparison is None:
            return super().answer_by_code(tools, req, plan, builder)
        approach = plan.comparison.columns.index("approach")
        for hit, row in zip(plan.context, plan.comparison.rows):
            roles = sentence_roles(hit.sentences, req.cache)
            first = next((i for i, role in enumerate(roles) if role == "approach"), None)
            picks = {e.sentence_index: e for e in pick_sentences(hit, req.facts, req.question, 1, req.cache)}
            if first is not None:
                score = hit.sentence_scores[first] if hit.sentence_scores else 1.0
                picks.setdefault(first, Evidence(hit.paper.id, first, hit.sentences[first], score))
            elif (cell := row.cells[approach]) is not None:
                builder.add(cell, cell.text)
            for i in sorted(picks):
                builder.quote(picks[i], row.n)


def listing_narrowing(tools: Tools, req: Request) -> Narrowing:
    """The narrowing of a topic listing (listing.narrowing); its query is the topic without the question's frame,
    which is read again once the venue words are out ("Which NeurIPS 2024 papers are about X?" searched "Which papers
    are about X?": the frame sits around the venue words)."""
    nar = narrowing(tools.retriever, req.question, topic_query(req.query), req.parsed.author, req.cache)
    return replace(nar, query=topic_query(nar.query))


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
        narrowing words, restricted to the papers the narrowing allows (``retrieve(allowed=...)``)."""
        if req.focus_ids:
            return super().candidates(tools, req)
        nar = listing_narrowing(tools, req)
        a = tools.settings.answer
        if nar.ids is not None and not nar.ids:  # nothing has that venue / author: search unnarrowed, plan() says so
            return tools.retriever.retrieve(req.search(tools, nar.query), top_k=tools.settings.retrieval.top_k)
        topic = req.search(tools, nar.query)
        return tools.retriever.retrieve(
            topic, top_k=a.topic_candidates, candidate_k=a.topic_candidate_windows, allowed=nar.ids
        )

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        if req.focus_ids:
            return Plan(hits, use_model=False, sources=hits)
        nar = listing_narrowing(tools, req)
        allowed = hits if nar.ids is None else [h for h in hits if h.paper.id in nar.ids]
        members = topic_members(nar.query, allowed, tools.settings.answer.topic_min_evidence)
        a = tools.settings.answer
        while nar.ids is None and len(allowed) >= a.topic_candidates and len(allowed) < TOPIC_CANDIDATES_MAX:
            tail = {h.paper.id for h in allowed[int(len(allowed) * (1 - TOPIC_WINDOW_TAIL)) :]}
            if not any(m.paper.id in tail for m in members):
                break  # the members end well inside the window: the list is complete
            k = min(2 * len(allowed), TOPIC_CANDIDATES_MAX)  # members run to its end: scan further
            wider = tools.retriever.retrieve(
                req.search(tools, nar.query), top_k=k, candidate_k=k * a.topic_candidate_windows // a.topic_candidates
            )
            if len(wider) <= len(allowed):
                break
            allowed = wider
            members = topic_members(nar.query, allowed, a.topic_min_evidence)
        page = members[req.page.offset : req.page.offset + req.page.limit]
        listing = Listing(len(members), req.page.offset, len(page), req.page.limit, nar.venue, nar.author)
        if not members:  # an empty list still says what was considered: the nearest papers, each by its best sentence
            near = sorted(allowed, key=lambda h: max((e.score for e in h.evidence), default=-1.0), reverse=True)
            near = near[: tools.settings.retrieval.top_k]
            return Plan(near, use_model=False, sources=near or hits[: tools.settings.retrieval.top_k], listing=listing)
        return Plan(page, use_model=False, sources=page or hits[: tools.settings.retrieval.top_k], listing=listing)

    def notice(self, plan: Plan) -> str:
        """Why a listing lists nothing: no paper (of the narrowing) is read as being about the topic, so the nearest
        ones considered are shown and said to be left out; or the page is past the end."""
        li = plan.listing
        if li is None:
            return ""
        narrowed = " and ".join(x for x in (li.venue, f"by {li.author}" if li.author else "") if x)
        if li.total == 0:
            where = f" among the papers {narrowed}" if narrowed else ""
            if not plan.context:
                return f"No paper{where} matches this topic closely enough to list."
            return (
                f"No paper{where} matches this topic closely enough to list. The {len(plan.context)} nearest papers "
                "considered are shown with their sentence closest to it; each was left out because the membership "
                "classifier did not read it as being about the topic."
            )
        if plan.context:
            return ""
        return f"Only {li.total} papers match; there is nothing after {li.total} (asked to skip {li.offset})."

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """Each listed paper's best evidence sentence, cited to it; its contribution sentence instead (which
        names what the paper does) when that scores within ``answer.topic_contribution_margin`` of the best."""
        for n, hit in enumerate(plan.context, start=1):
            if not hit.evidence:
                continue
            best = max(hit.evidence, key=lambda e: e.score)
            scores = hit.sentence_scores or ()
            own = next((i for i, s in enumerate(hit.sentences) if states_contribution(s)), None)
            margin = tools.settings.answer.topic_contribution_margin
            if own is not None and own < len(scores) and scores[own] >= best.score - margin:
                best = Evidence(hit.paper.id, own, hit.sentences[own], scores[own])
            builder.quote(best, n)


class ChoiceStrategy(IntentStrategy):
    """ "Which of them needs less data?": a choice between the papers in focus (or the two best papers), decided by
    the model, never by code (issue 59: a verdict code wrote from sentence scores, "X is the one whose abstract states
    it", was false where both abstracts state it).

    Each paper's part is written from its own reading and checked against it, as in a comparison (a paper whose part
    does not pass is quoted: its sentence that best answers the question, extractive.pick_sentences); then the model
    reads only those parts and says which paper the question asks for, a verdict checked like any answer sentence,
    against the reading of the paper it aligns with (``Plan.verdict``; issue 60 item 2). By code (the model failed, or
    nothing it wrote passed), each paper's sentence that bears on the question is quoted under a notice that the
    abstracts were not weighed. (The context's evidence is still chosen by :func:`plain_scores`, so "The code is
    available at ..." is among the sentences the quoted answer shown while the model writes may use.)"""

    intent = "choice"
    task = (
        "Say which of the papers the question asks for, citing the sentence that decides it; if several papers do, "
        "say so; if the sources do not decide it, say so and give what each says."
    )

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        wanted = max(
            tools.settings.answer.compare_papers,
            min(tools.settings.answer.context_papers, req.facts.papers_wanted or tools.settings.answer.compare_papers),
        )
        k = tools.settings.llm.prompt_evidence_sentences
        context = [  # the evidence the model reads: the best sentences by the plain scores; the hit's own scores kept
            replace(
                with_evidence(replace(h, sentence_scores=tuple(plain_scores(h, req, tools.settings))), k),
                sentence_scores=h.sentence_scores,
            )
            if h.sentence_scores
            else h
            for h in (hits if req.focus_ids else hits[:wanted])
        ]
        return Plan(context, use_model=True, per_paper=True, verdict=True)

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """For each paper, its sentence that best answers the question, cited to it."""
        for n, hit in enumerate(plan.context, start=1):
            for ev in pick_sentences(hit, req.facts, req.question, 1, req.cache):
                builder.quote(ev, n)

    def notice(self, plan: Plan) -> str:
        """Shown above a choice answered by code: the abstracts are quoted, not weighed."""
        if len(plan.context) < 2:  # one paper: nothing to weigh
            return ""
        return "The abstracts don't settle this between them directly; here is what each one says."


def plain_scores(hit: PaperHit, req: Request, settings: Settings) -> list[float]:
    """Each sentence of ``hit`` scored for what ``req`` asks (extractive.score_sentences: the evidence score plus
    the bonuses for a number or name asked for) without the priors retrieval adds for ranking evidence (the
    contribution-sentence bonus and the code/URL boilerplate penalty), so "The code and model are available at
    https://github.com/..." can answer "which one links its code?"; ``settings.retrieval``: those priors)."""
    r = settings.retrieval
    return [
        p.score
        - r.evidence_contribution_prior * states_contribution(p.evidence.text)
        + r.evidence_boilerplate_penalty * is_boilerplate(p.evidence.text)
        for p in score_sentences(hit, req.facts, req.question)
    ]


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
