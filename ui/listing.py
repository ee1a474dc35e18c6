"""The "Show more" control of a topic listing (issue 27): a button under the question box, shown only while
the conversation's last answer is a listing with more matching papers; pressing it asks the conversation
for the next page, exactly as typing "show more" does (session.ChatSession handles both)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gradio as gr

if TYPE_CHECKING:
    from assistant.conversation.session import ChatSession

#: What the button sends as the user's message (session._MORE reads it as "the next page").
SHOW_MORE_TEXT = "show more"


def has_more(session: ChatSession | None) -> bool:
    """True when the conversation's last answer is a topic listing with papers after the page it showed."""
    if session is None or not session.turns:
        return False
    listing = session.turns[-1].answer.listing
    return listing is not None and listing.has_more


def show_more_button() -> gr.Button:
    """The button (hidden until a listing has more papers); call inside the Blocks layout."""
    return gr.Button("Show more", elem_id="show-more", visible=False, size="sm")


def wire_show_more(button: gr.Button, box: gr.Textbox, answer_after: Callable[[Any], Any]) -> Any:
    """Pressing ``button`` puts "show more" in ``box`` and asks it as a typed question is asked (``answer_after``
    chains the busy check, taking the question and the answer after the given event); returns the answering
    event, for "New chat" to cancel."""
    typed = button.click(lambda: SHOW_MORE_TEXT, None, box, api_visibility="private", queue=False)
    return answer_after(typed)


def button_state(session: ChatSession | None) -> dict[str, Any]:
    """The button's visibility after an answer (``gr.update``)."""
    return gr.update(visible=has_more(session))
