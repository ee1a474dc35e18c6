"""Gradio chat UI: layout and event wiring only. Depends on ``assistant``; never the reverse.

One :class:`assistant.session.ChatSession` per browser session, kept in ``gr.State``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import gradio as gr

from assistant.errors import AssistantError
from ui.render import answer_markdown, error_markdown, safe_text

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.service import Assistant
    from assistant.session import ChatSession

logger = logging.getLogger(__name__)

TITLE = "Paper assistant"
EXAMPLES = [
    "Which paper runs graph-transformer self-attention over the feature dimension?",
    "What benchmark does the CAD code generation paper release?",
    "Which papers work with molecules or proteins?",
]
#: Chats answered at the same time (the bundled model server itself serves one request at a time).
CONCURRENCY_LIMIT = 4

CSS = """
.refs blockquote { font-size: 0.9em; margin: 0.2em 0 0.4em 0; }
#model-line { opacity: 0.8; }
"""

Message = dict[str, Any]


def build_app(assistant: Assistant, *, title: str = TITLE) -> gr.Blocks:
    """The chat page: model line, chatbot, question box, send and new-chat buttons.

    Args:
        assistant: the shared answering service (stateless across chats).
        title: page title.
    """

    def respond(question: str, history: list[Message] | None, session: ChatSession | None
                ) -> Iterator[tuple[str, list[Message], ChatSession]]:
        history = list(history or [])
        session = session or assistant.new_session()
        if not question.strip():
            yield "", history, session
            return
        history += [{"role": "user", "content": safe_text(question)}, {"role": "assistant", "content": "<em>Searching the abstracts…</em>"}]
        yield "", history, session
        try:
            for event in session.stream(question):
                if event.kind == "status":
                    history[-1] = {"role": "assistant", "content": f"<em>{safe_text(event.message)} Writing the answer…</em>"}
                elif event.answer is not None:
                    history[-1] = {"role": "assistant", "content": answer_markdown(event.answer, final=event.kind == "final")}
                yield "", history, session
        except AssistantError as e:
            logger.warning("question failed: %s", e)
            history[-1] = {"role": "assistant", "content": error_markdown(str(e))}
            yield "", history, session
        except Exception:
            logger.exception("unexpected error while answering")
            history[-1] = {"role": "assistant", "content": error_markdown("Something went wrong while answering; the details are in the server log. Please try again.")}
            yield "", history, session

    def new_chat() -> tuple[list[Message], None, str]:
        return [], None, ""

    with gr.Blocks(title=title) as demo:
        gr.Markdown(f"## {title}\nAsk about the {assistant.paper_count} indexed abstracts. Every sentence is checked against the abstracts and cited.")
        gr.Markdown(f"Answering with: **{safe_text(assistant.model_label)}**", elem_id="model-line")
        session_state = gr.State(None)
        chatbot = gr.Chatbot(elem_id="chat", height=560, sanitize_html=True, render_markdown=True,
                             placeholder="Ask a question about the papers.", feedback_options=None)
        with gr.Row():
            box = gr.Textbox(elem_id="question", placeholder="Ask about the papers…", show_label=False, scale=8, autofocus=True)
            send = gr.Button("Send", variant="primary", elem_id="send", scale=1)
            clear = gr.Button("New chat", elem_id="new-chat", scale=1)
        gr.Examples(EXAMPLES, inputs=box, label="Examples")
        for trigger in (box.submit, send.click):
            trigger(respond, [box, chatbot, session_state], [box, chatbot, session_state], concurrency_limit=CONCURRENCY_LIMIT)
        clear.click(new_chat, None, [chatbot, session_state, box])
    return demo


def serve(assistant: Assistant, settings: Settings) -> None:
    """Build the app and block serving it on ``settings.ui_host:ui_port`` until interrupted."""
    demo = build_app(assistant)
    demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT)
    logger.info("UI on http://%s:%d", settings.ui_host, settings.ui_port)
    demo.launch(server_name=settings.ui_host, server_port=settings.ui_port, share=False, inbrowser=False,
                show_error=False, footer_links=[], css=CSS, mcp_server=False, ssr_mode=False)
