"""ChatSession: one conversation. Each turn: the question is read once (understand/parse.py), its follow-up
references resolved against the papers already shown (resolve.py), answered (the answerer decides the intent
through the router, answer/route.py), and each paper's ``[n]`` kept stable for the whole conversation
(state.py); the conversation can be saved to / loaded from a JSON file (store.py, CLI ``--session``).
One object per chat window, never a module global."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.answer.answerer import AnswerEvent, final_answer
from assistant.conversation.resolve import Resolution, Resolver, asks_more
from assistant.conversation.state import ConversationState, Turn
from assistant.conversation.store import read_saved_session, restore_session, save_session, session_record
from assistant.types import Answer, Intent, Page, Paper
from assistant.understand.language import english_reading
from assistant.understand.parse import Question, parse_question
from assistant.understand.question import clean_question

if TYPE_CHECKING:
    from assistant.answer.answerer import Answerer


class ChatSession(ConversationState):
    """The turns of one conversation and its citation labels.

    Args:
        answerer: the shared, stateless answering pipeline.
        papers: every indexed paper by id (to restore a saved conversation's papers).
    """

    def __init__(self, answerer: Answerer, papers: Mapping[str, Paper]) -> None:
        super().__init__(papers)
        self._answerer = answerer
        self._resolver = Resolver(self, answerer.retriever, answerer.settings)

    def resolve(self, question: str | Question, forced: str | None = None) -> Resolution:
        """Which papers ``question`` is about and what to search for (:meth:`Resolver.resolve`); a text is read
        first (:func:`~assistant.understand.parse.parse_question`)."""
        q = question if isinstance(question, Question) else parse_question(question)
        return self._resolver.resolve(q, forced)

    def description_strength(self, sims: Mapping[str, float], current: list[str]) -> tuple[str, float]:
        """How clearly ``sims`` describe a paper not in ``current`` (:meth:`Resolver.description_strength`)."""
        return self._resolver.description_strength(sims, current)

    def stream(self, question: str, intent: Intent | None = None, page: Page | None = None) -> Iterator[AnswerEvent]:
        """Stream the answer to ``question`` with stable labels; the turn is recorded at the end. ``page``:
        which papers of a topic listing to show (default the first 10; "show more" after a listing asks
        for its next page). A question not written in English is read, searched and recorded in its English
        translation (:func:`~assistant.understand.language.english_reading`), and each answer's notice says so.

        Raises:
            EmptyQuestionError: nothing to answer (before any model call).
            QuestionTooLongError: longer than ``Settings.retrieval.max_question_chars`` (before any search).
        """
        question = clean_question(question, self._answerer.settings.retrieval.max_question_chars)
        reading = english_reading(self._answerer.backend, question)
        if reading is None:
            yield from self._stream_english(question, intent, page)
            return
        yield AnswerEvent("status", reading.notice)
        for event in self._stream_english(reading.english, intent, page):
            if event.answer is not None:
                notice = f"{reading.notice} {event.answer.notice}".strip()
                event = AnswerEvent(event.kind, event.message, replace(event.answer, notice=notice), event.hits)
            yield event

    def _stream_english(self, question: str, intent: Intent | None, page: Page | None) -> Iterator[AnswerEvent]:
        """:meth:`stream` for a cleaned question in English (the user's, or its English reading)."""
        # "show more" pages on; a page size alone (``ask --limit 3 "show more"``) sets the next page's size
        paging = page is None or page.offset == 0
        more = self._next_page(question, page.limit if page is not None else None) if paging else None
        if more is not None:  # "show more" after a listing: the same listing, next page
            previous, page = more
            listed = previous.answer.intent  # a topic list, or an author's papers ("metadata")
            for event in self._answerer.stream(
                parse_question(previous.question),
                query=previous.resolved_query,
                intent=listed if listed in self._answerer.intents else "topic",
                focus_ids=previous.focus_ids,
                page=page,
            ):
                if event.answer is not None:
                    answer = self.stable(event.answer)
                    if event.kind == "final":  # recorded as the listing's question, so "more" again goes on
                        self.turns.append(Turn(previous.question, previous.resolved_query, previous.focus_ids, answer))
                    event = AnswerEvent(event.kind, event.message, answer, event.hits)
                yield event
            return
        q = parse_question(question)
        res = self._resolver.resolve(q, intent)
        no_more = self._no_more(question) if paging else ""
        if no_more:  # "show more" with no next page: say so, never search for "more"
            res = Resolution(question, (), no_more)
        if res.clarify:
            for event in self._answerer.stream(q, intent=intent, clarify=res.clarify):
                if event.kind == "final" and event.answer is not None:
                    self.turns.append(Turn(question, res.query, (), event.answer))
                yield event
            return
        for event in self._answerer.stream(
            q, query=res.query, intent=intent, focus_ids=res.focus_ids, page=page, referents=res.referents
        ):
            if event.answer is None:
                yield event
                continue
            if event.kind == "final":
                answer = self.stable(event.answer)
                cited = {c.paper.id for c in answer.citations}
                if res.switched_from and cited and res.switched_from not in cited:  # say the paper changed
                    first = min(answer.citations, key=lambda c: c.n)
                    about = (
                        f"About “{first.paper.title}” [{first.n}], not “{self.title(res.switched_from)}” from the "
                        "last answer."
                    )
                    answer = replace(answer, notice=f"{about} {answer.notice}".strip())
                self.turns.append(Turn(question, res.query, res.focus_ids, answer))
            else:  # partial: preview labels without committing new ones
                saved = dict(self.labels), dict(self.papers)
                answer = self.stable(event.answer)
                self.labels, self.papers = saved
            yield AnswerEvent(event.kind, event.message, answer, event.hits)

    def ask(self, question: str, intent: Intent | None = None, page: Page | None = None) -> Answer:
        """The final answer to ``question`` in this conversation."""
        return final_answer(self.stream(question, intent, page))

    def _next_page(self, question: str, limit: int | None = None) -> tuple[Turn, Page] | None:
        """For "show more" / "more" / "next page" right after a topic listing with more papers: that turn
        and the page after the one it showed, of ``limit`` papers (None: as many as that page asked for); else
        None."""
        last = next((t for t in reversed(self.turns) if t.answer.mode != "clarify"), None)  # not a question back
        if last is None or not asks_more(question):
            return None
        li = last.answer.listing
        if li is None or not li.has_more:
            return None
        return last, Page(li.offset + li.shown, limit or li.limit)

    def _no_more(self, question: str) -> str:
        """What "show more" gets when there is no next page (``""``: it is not such a question): right after a
        listing that showed every paper (questions back in between do not count), that it was all; as a first
        question, that there is no list. After any other answer "more" is an ordinary follow-up."""
        if not asks_more(question):
            return ""
        last = next((t for t in reversed(self.turns) if t.answer.mode != "clarify"), None)  # not a question back
        if last is None:
            return (
                "There is no list to continue: “show more” pages through a list of papers. Ask for one first, "
                "e.g. “Which papers are about diffusion?”."
            )
        listing = last.answer.listing
        if listing is None or listing.has_more:
            return ""
        total = listing.total
        if total == 0:  # the list was empty: what it showed were the nearest papers, left out
            return (
                f"There is nothing more: no paper matched “{last.question}”; the papers above are the nearest ones "
                "considered, not matches."
            )
        return (
            f"That was all: {total} paper{'s' if total != 1 else ''} matched “{last.question}”, and the list above "
            f"shows {'every one' if total != 1 else 'it'}."
        )

    # --- persistence (CLI --session FILE): store.py ---------------------------------------------
    def save(self, path: Path) -> None:
        """Write the conversation as JSON (:func:`~assistant.conversation.store.save_session`: format version
        ``SESSION_VERSION``; written to ``<path>.tmp`` first and renamed, so a failed save leaves the old file
        whole)."""
        save_session(self, path)

    def record(self) -> dict[str, Any]:
        """The conversation as JSON-ready data (:func:`~assistant.conversation.store.session_record`), e.g. for
        the chat page to keep in the browser; :meth:`restore` reads it back after
        :func:`~assistant.conversation.store.checked_session_data`."""
        return session_record(self)

    def load(self, path: Path) -> None:
        """Restore a conversation saved by :meth:`save` (papers looked up in the current index).

        Raises:
            AssistantError: the file is not a saved session.
        """
        self.restore(read_saved_session(path))

    def restore(self, data: dict[str, Any]) -> None:
        """Restore a conversation from :func:`~assistant.conversation.store.read_saved_session`'s result: every
        turn's answer as it was shown (text, citations, mode, ...); citations of papers no longer indexed are
        left out."""
        restore_session(self, data, self._known)
