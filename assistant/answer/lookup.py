"""The ``lookup`` strategy: a question about one detail of one paper, checked before the model is asked (a name no
paper mentions, a detail its abstract does not state, a false premise, a near miss of "which paper ...?")."""

from __future__ import annotations

from collections.abc import Sequence

from assistant.answer.builder import AnswerBuilder
from assistant.answer.extractive import pick_sentences, refocus
from assistant.answer.strategy import (
    IntentStrategy,
    Plan,
    Request,
    Settled,
    Tools,
    prompt_evidence,
    supports,
)
from assistant.lang.text import ROLE_NAMES, content_tokens
from assistant.lang.words import HOW_OR_WHY, PAPER_NOUNS, THRESHOLD_WORDS, WHICH_PAPER_LEAD
from assistant.types import AnswerSentence, Evidence, PaperHit
from assistant.understand.intents import sentence_roles
from assistant.understand.parse import Question
from assistant.understand.question import NUMBER_TOKEN, missing_entities, negates, premise_facts


def _near_miss_notice(tools: Tools, req: Request, hit: PaperHit) -> str:
    """For "which paper ...?": when the best paper's abstract contains most of what the question describes but
    not one or two of its words ("a benchmark of AI-generated *videos*" -> A-Bench, about images; the verb
    after "which paper" does not count), and either no indexed abstract mentions them or the citation verifier
    does not support the description as a claim about that paper ("The paper introduces a benchmark of
    AI-generated videos."), say what matches and what does not, and whether any indexed abstract mentions the
    missing words; "" otherwise. (The verifier alone misses a one-word substitution: it supports "urban noise
    shifts the song frequency of parrots" from a sparrow abstract, hence the index check.)"""
    from assistant.verify.answerable import near_miss

    claim = WHICH_PAPER_LEAD.sub("The paper ", req.question, count=1)
    if claim == req.question:
        return ""
    found, missing = near_miss(req.question, hit)
    verb = claim.split()[2].lower() if len(claim.split()) > 2 else ""
    missing = tuple(w for w in missing if w.lower() != verb)  # "Which paper *adds* ...": how it is said, not what
    most = tools.settings.answer.near_miss_max_missing
    if not missing or len(missing) > most or len(found) < len(missing) + 1:
        return ""
    nowhere = [w for w in missing if not tools.retriever.mentions_anywhere(w)]
    # the words exist in the index: the verifier decides whether the description fits the paper ("The paper adds
    # an identity mapping ...": it does)
    if not nowhere and supports(tools, hit, claim.rstrip(" ?") + "."):  # None (no model to ask): the caveat stays
        return ""
    quoted = " or ".join(f"“{w}”" for w in missing)
    tail = f"; no indexed abstract mentions {' or '.join(f'“{w}”' for w in nowhere)}" if nowhere else ""
    return (
        f"Closest match only: “{hit.paper.title}” matches {', '.join(f'“{w}”' for w in found)}, "
        f"but its abstract does not mention {quoted}{tail}."
    )


#: Words for a paper in "which <paper> ..." (question._WHICH_PAPER).
_PAPER_WORDS = frozenset({*PAPER_NOUNS, "one"})


def _identifies_paper(req: Request) -> bool:
    """True when the question asks which paper ("Which paper proposes ...?", "Is there a paper on ...?", "of
    those two, which one ...?"), not for a detail of one ("What microphone did the sparrow study record with?")."""
    thing = [w.lower().rstrip("s") for w in req.parsed.asked_thing]
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
    premises), then a short model answer."""

    intent = "lookup"
    task = (
        "Answer exactly what the question asks in one to three short sentences: for a number, the number with what "
        "it measures; for how something works, the mechanism."
    )
    #: The task of a question that looks for a paper ("is there a paper on …?", "anything on …?", "which paper …?"):
    #: the answer is the paper, so it names it (an answer that did not, "Yes, there is a paper on … It is.", told
    #: the user nothing).
    find_task = (
        "The question looks for a paper: name this paper by its method's name or its title, then say in one or two "
        "short sentences what it does on what the question asks."
    )
    one_paper = True

    def task_for(self, req: Request) -> str:
        """:attr:`find_task` for a question that looks for a paper (no paper in focus, and it asks which paper, or
        for no number or named thing: a description searched for); else :attr:`task`."""
        searched = not (req.facts.quantity or req.parsed.asked_thing)
        return self.find_task if not req.focus_ids and (_identifies_paper(req) or searched) else self.task

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
        premise = self._unsupported_premise(tools, req.parsed, hit)
        if premise:  # the model is not asked: a small model echoes the premise
            k = tools.settings.answer.extractive_sentences
            quotes = pick_sentences(hit, premise_facts(premise), premise, k, req.cache)
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
        * no sentence of any of those abstracts can answer (answerable.answerability), and the answering model,
          reading them, does not say they state the answer either (verifiers.stated_probability below
          ``verify.stated_probability``; when the model cannot be asked, the exact tests decide alone) -> not
          stated, with the closest sentence shown as context only, marked as not an answer.
        Not judged: a question that asks which paper / which one; a "how ...?" / "why ...?" that asks for no
        number (it asks for the approach or the reason, what an abstract is about: "how do they make sure the
        identities differ?" is answered by "inter-class variation ... packing problem", no word in common);
        without papers in focus, one that asks for no number, no "what/which <thing>" and names nothing (a
        description searched for: "Is there work on ...").
        """
        from assistant.verify.answerable import answerability, false_premise_number
        from assistant.verify.verifiers import stated_probability

        hit = hits[0]
        scope = hits if len(req.focus_ids) > 1 else [hit]
        missing = missing_entities(req.facts, hit.paper)
        if missing and len(scope) == 1:
            closest = pick_sentences(hit, req.facts, req.question, 1, req.cache)
            gap = f"does not mention {' or '.join(missing)}"
            return Settled("not_stated", _not_stated_notice(scope, gap, closest[0].text if closest else None))
        if _identifies_paper(req):  # "which paper ...?", "which one links its code?": not a detail of one paper
            return None
        verdict = answerability(req.parsed, req.facts, scope, tools.embed)
        if not THRESHOLD_WORDS.search(req.question):
            wrong = false_premise_number(req.question, hit, verdict.fits)
            if wrong is not None:
                score = hit.sentence_scores[wrong.index] if hit.sentence_scores else 1.0
                stated = " and ".join(wrong.stated)
                notice = f"No — the abstract of “{hit.paper.title}” reports {stated}, not {wrong.claimed}."
                return Settled(
                    "extractive", notice, hit, (Evidence(hit.paper.id, wrong.index, hit.sentences[wrong.index], score),)
                )
        if not req.facts.quantity and HOW_OR_WHY.match(req.question):
            return None  # "how do they ...?": asks for the paper's approach, which its abstract is about
        if not req.focus_ids and not (req.facts.quantity or req.parsed.asked_thing):
            # "Is there work on ...": a search, the paper found is what it describes; "¿Qué artículo propone
            # DUALFormer?": a first question about a named paper that asks for no number or named thing
            return None
        if _asks_for_a_role(req, scope):
            return None  # "What problem is it meant to help with?": the abstract has a sentence of that role
        if verdict.stated or not verdict.detail:
            return None
        # the exact tests found no answering sentence: the model reads the abstracts (when it cannot be asked, no
        # model writes the answer either: the exact tests decide alone)
        p = stated_probability(tools.backend, [(h.paper.title, h.paper.text) for h in scope], req.question) or 0.0
        if p >= tools.settings.verify.stated_probability:
            return None
        if req.facts.quantity and any(
            negates(s) and content_tokens(req.question) & content_tokens(s) for h in scope for s in h.sentences
        ):
            return None  # "How long does it take to fine-tune EM-LLM?": the premise is answered, not declared unstated
        if req.facts.quantity:
            counted = " ".join(req.parsed.counted) or " or ".join(verdict.missing[:2])
            gap = f"gives no number for {counted}" if counted else "gives no such number"
        elif not verdict.missing and any(NUMBER_TOKEN.fullmatch(w) for w in req.parsed.asked_thing):
            gap = f"says how many {' '.join(req.parsed.asked_thing[1:])} but does not name them"
        elif verdict.missing:
            gap = "does not mention " + " or ".join(f"“{w}”" for w in verdict.missing[:3])
        else:
            gap = "has no sentence that answers this"
        return Settled("not_stated", _not_stated_notice(scope, gap, verdict.best.text if verdict.best else None))

    @staticmethod
    def _unsupported_premise(tools: Tools, question: Question, hit: PaperHit) -> str:
        """The first premise of ``question`` (question.premises) the verifier does not support from ``hit``."""
        found = question.premises
        if not found:
            return ""
        # a premise the model cannot be asked about (None) is not called false
        return next((premise for premise in found if supports(tools, hit, premise) is False), "")

    def plan(self, tools: Tools, req: Request, hits: list[PaperHit]) -> Plan:
        """The paper in focus, else the search's best (among the named author's papers: one_paper_search): one paper,
        read once (its reading, prompts.READ_WRITE). (Until stop 64 the papers whose dense similarity was within
        ``context_similarity_margin`` of the best went into one prompt too; the model then wrote about both, and a
        search for one paper cited two: conversations-5 val.)"""
        context = hits if req.focus_ids else hits[:1]
        return Plan(
            prompt_evidence(tools, context),
            use_model=True,
            notice=_near_miss_notice(tools, req, context[0]) if _identifies_paper(req) and not req.focus_ids else "",
        )

    def notice(self, plan: Plan) -> str:
        """The plan's caveat (a near miss), if any."""
        return plan.notice

    def answer_by_code(self, tools: Tools, req: Request, plan: Plan, builder: AnswerBuilder) -> None:
        """A "which paper" question is answered with the title first ("The closest match ..." when the paper
        is neither named nor similar enough to be sure: ``answer.confident_match_similarity``); then the sentences
        that answer it."""
        hit = plan.context[0]
        if req.facts.which_paper:
            named = bool(req.facts.entities) and not missing_entities(req.facts, hit.paper)
            confident = tools.settings.answer.confident_match_similarity
            sure = (named or hit.dense_similarity >= confident) and not plan.notice  # a near miss
            lead = "The paper is" if sure else "The closest match in the abstracts is"  # the reader judges
            builder.add(AnswerSentence(f"{lead} “{hit.paper.title}”.", (1,), 1.0, check="record"), hit.paper.title)
        super().answer_by_code(tools, req, plan, builder)


def _asks_for_a_role(req: Request, scope: Sequence[PaperHit]) -> bool:
    """True when a "what/which <thing>" question asks for a part every abstract plays a role for ("what problem",
    "which datasets", :data:`assistant.lang.text.ROLE_NAMES`) and the trained role classifier finds a sentence of
    that role in one of the abstracts: the abstract states it, in its own words."""
    wanted = {ROLE_NAMES[w.lower()] for w in req.parsed.asked_thing if w.lower() in ROLE_NAMES}
    return bool(wanted) and any(wanted & set(sentence_roles(h.sentences, req.cache)) for h in scope)
