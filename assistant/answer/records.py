"""The ``metadata`` strategy: questions about the paper records (authors, venue, year, link, "papers by X"),
answered by code from the records, never from the abstract text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant.answer.builder import AnswerBuilder
from assistant.lang.numbers import YEAR
from assistant.lang.text import code_link
from assistant.types import Listing, Paper, PaperHit
from assistant.understand.metadata import MetadataRequest

if TYPE_CHECKING:
    pass

from assistant.answer.strategy import IntentStrategy, Plan, RecordQuery, Request, Settled, Tools, read_records


def _names(items: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


#: A year in a venue / collection name ("ICLR 2025 Papers" -> 2025): an exact rule on digits.


def record_sentences(paper: Paper, fields: tuple[str, ...]) -> list[str]:
    """Sentences stating ``fields`` (understand.metadata.FIELDS; ``papers`` is ignored, none given = the
    authors) of ``paper`` exactly as its record has them; a field the record leaves empty is said to be
    missing ("The records list no authors for “…”."), never guessed. Venue and year asked together are
    one sentence."""
    title = f"“{paper.title}”"
    asked = [f for f in fields if f != "papers"] or ["authors"]
    year = YEAR.search(paper.venue)
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
        elif field == "code":
            link = code_link(paper.text)
            out.append(f"Code for {title}: {link}" if link else f"The abstract of {title} links no code.")
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
        return req.records or read_records(tools, req.parsed) or RecordQuery(MetadataRequest(("authors",)))

    def candidates(self, tools: Tools, req: Request) -> list[PaperHit]:
        """The papers in focus; else the named ones; else, for "papers by X", that author's papers on the page
        asked for (index order); else a search."""
        if req.focus_ids:
            return tools.retriever.hits_for(req.search(tools, req.question), list(req.focus_ids))
        rec = self.records(tools, req)
        if rec.named:
            return tools.retriever.hits_for(req.search(tools, req.question), list(rec.named))
        if rec.lists_person or rec.lists_code:
            listed = rec.ask.person_ids if rec.lists_person else _linking_code(tools, req)
            page = list(listed)[req.page.offset : req.page.offset + req.page.limit]
            return tools.retriever.hits_for(req.search(tools, req.question), page) if page else []
        return tools.retriever.retrieve(req.search(tools, req.query), aspects=True)

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
        if rec.lists_code and not req.focus_ids:
            total = len(_linking_code(tools, req))
            listing = Listing(total, req.page.offset, len(hits), req.page.limit, links_code=True)
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
        if li.links_code:
            if li.total == 0:
                return "No indexed abstract links its code or a project page."
            if not plan.context:
                return f"{count} link their code; there is nothing after {li.total} (asked to skip {li.offset})."
            return f"The abstracts of {count} link their code or project page."
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
            if plan.listing is not None and plan.listing.links_code:
                builder.state(f"“{paper.title}”: {code_link(paper.text)}", n)
                continue
            if plan.listing is not None:
                where = f" ({paper.venue})" if paper.venue else ""
                builder.state(f"“{paper.title}”{where}.", n)
                continue
            for text in record_sentences(paper, rec.ask.fields):
                builder.state(text, n)


def _linking_code(tools: Tools, req: Request) -> list[str]:
    """The papers whose abstract links its code (``catalog.ids_linking_code``), read once per turn."""
    return req.cache.get("linking-code", "", tools.retriever.catalog.ids_linking_code)


def unknown_author_notice(tools: Tools, name: str) -> str:
    """ "No indexed paper is by <name> …", with the closest indexed author names when there are any."""
    close = tools.retriever.catalog.closest_authors(name)
    hint = f" Close names in the index: {', '.join(close)}." if close else ""
    return f"No indexed paper is by {name}, so the abstracts don't cover this question.{hint}"
