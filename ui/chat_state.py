"""What the chat page keeps for each browser (issue 43):

- :class:`Gate`: the question being answered in this chat, taken and released under a lock, so a double Enter (two
  sends within milliseconds) asks once and a question typed while an answer is written is held back, never lost.
- The conversation, kept in the browser's ``localStorage`` (``gr.BrowserState``) after every answer, and the question
  being answered until its answer is finished: a reload, or a restart of the server, restores the chat with its
  references and ``[n]`` numbering (:func:`restored_chat`), and a question cut off by a reload goes back into the box.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.conversation.store import checked_session_data
from ui.clipboard import answer_content, question_content

if TYPE_CHECKING:
    from assistant.conversation.session import ChatSession
    from assistant.service import Assistant

logger = logging.getLogger(__name__)

#: The ``localStorage`` keys of the kept conversation and of the question being answered.
CHAT_KEY = "paper-assistant-chat"
PENDING_KEY = "paper-assistant-pending"
#: The file in the storage folder that holds the key the kept conversation is encrypted with in the browser, so
#: that it can still be read after the server restarts.
SECRET_FILE = "ui-browser-secret"
#: Shown under the box when a reload cut off an answer.
INTERRUPTED = (
    "The page was reloaded before the answer to your last question was finished; the question is back in the box. "
    "Press Send to ask it again."
)
#: Shown under the box when the conversation kept in the browser cannot be read back.
NOT_RESTORED = "The conversation kept in this browser could not be restored ({reason}); this is a new chat."


class Gate:
    """The question being answered in one chat (None: none). One per browser session (kept in ``gr.State``: a
    deep copy, as Gradio makes for each new session, is a fresh, open gate)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answering: str | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> Gate:
        return Gate()

    @property
    def answering(self) -> str | None:
        """The question being answered, or None."""
        return self._answering

    def take(self, question: str) -> bool:
        """Mark ``question`` as being answered; False (nothing changes) while another answer is being written."""
        with self._lock:
            if self._answering is not None:
                return False
            self._answering = question
            return True

    def release(self) -> None:
        """The answer is finished (or failed, or the chat was cleared): the next question can be taken."""
        with self._lock:
            self._answering = None

    def holds_back(self, question: str) -> bool:
        """True when sending ``question`` now would be held back: an answer is being written and ``question`` is
        a different, non-blank text (the same text again is a double send, ignored without a word)."""
        answering = self._answering
        return answering is not None and bool(question.strip()) and question.split() != answering.split()


def browser_secret(storage_dir: Path | None) -> str | None:
    """The key the kept conversation is encrypted with in the browser: read from ``<storage_dir>/ui-browser-secret``,
    created there (mode 0600) on first use. None (Gradio then picks a new key each start, so a restart forgets
    the kept chats) when there is no storage folder or it cannot be written; a warning says so."""
    if storage_dir is None:
        return None
    path = Path(storage_dir) / SECRET_FILE
    try:
        if path.exists():
            secret = path.read_text(encoding="utf-8").strip()
            if secret:
                return secret
        secret = secrets.token_urlsafe(24)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secret)
        return secret
    except OSError as e:
        logger.warning(
            "%s: cannot be read or written (%s); chats kept in browsers are forgotten when the UI restarts",
            path,
            e.strerror or e,
        )
        return None


def chat_record(session: ChatSession | None) -> dict[str, Any]:
    """What the browser keeps of ``session`` (:meth:`ChatSession.record`); ``{}`` for an empty or no chat (Gradio
    does not store a null or empty value in the browser, so "nothing" must be a non-empty JSON value)."""
    if session is None or not session.turns:
        return {}
    return session.record()


def pending_record(question: str | None) -> dict[str, str]:
    """What the browser keeps of the question being answered: ``{"question": …}``, or ``{}`` for none."""
    return {"question": question} if question else {}


@dataclass(frozen=True)
class Restored:
    """A chat read back from the browser: ``session`` (None: a new chat), the chat's ``history`` (Gradio message
    dicts, as they were shown), what goes back into the question box, and the note under it."""

    session: ChatSession | None
    history: list[dict[str, Any]]
    box: str
    note: str


def chat_history(session: ChatSession) -> list[dict[str, Any]]:
    """The chat messages of ``session``'s turns, rendered as they were shown when answered (same card anchors)."""
    history: list[dict[str, Any]] = []
    for turn in session.turns:
        anchor = f"m{len(history) + 2}"
        history += [
            {"role": "user", "content": question_content(turn.question)},
            {"role": "assistant", "content": answer_content(turn.answer, anchor)},
        ]
    return history


def restored_chat(assistant: Assistant, saved: object, pending: object) -> Restored:
    """The chat kept in the browser, read back into a new session over the current index.

    Args:
        assistant: makes the new session.
        saved: :func:`chat_record`'s data (``{}`` or None: nothing kept).
        pending: :func:`pending_record`'s data: the question whose answer was being written when the page went.

    Returns:
        The session and its history (citations of papers no longer indexed left out); a question cut off by a
        reload goes back into the box, with a note. A record that cannot be read gives a new chat and a note saying
        why: this never raises.
    """
    session: ChatSession | None = None
    history: list[dict[str, Any]] = []
    note = ""
    if saved:
        try:
            data = checked_session_data(saved)
            session = assistant.new_session()
            session.restore(data)
            history = chat_history(session)
        except Exception as e:  # noqa: BLE001 - a kept chat that cannot be read must not break the page
            logger.warning("a chat kept in a browser could not be restored: %s", e)
            session, history = None, []
            note = NOT_RESTORED.format(reason=str(e) or type(e).__name__)
    question = pending.get("question") if isinstance(pending, dict) else None
    question = question if isinstance(question, str) else ""
    answered = session is not None and session.turns and session.turns[-1].question == question
    box = question if question.strip() and not answered else ""
    if box:
        note = INTERRUPTED
    return Restored(session, history, box, f"*{note}*" if note else "")
