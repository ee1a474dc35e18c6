"""Gradio chat UI: layout and event wiring only. Depends on ``assistant``; never the reverse.

One :class:`assistant.conversation.session.ChatSession` per browser session, kept in ``gr.State``. HTML comes from
``ui.render``, export files from ``ui.export`` (content) and ``ui.downloads`` (files).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import gradio as gr

from assistant.errors import AssistantError
from assistant.types import INTENTS
from assistant.understand.question import MAX_QUESTION_CHARS
from ui.downloads import write_export
from ui.export import bibtex, conversation_markdown
from ui.listing import button_state, show_more_button, wire_show_more
from ui.render import (
    answer_markdown,
    error_markdown,
    progress_markdown,
    question_html,
    references_panel,
    safe_text,
)
from ui.text import LATEX_DELIMITERS

if TYPE_CHECKING:
    from assistant.conversation.session import ChatSession
    from assistant.service import Assistant
    from ui.settings import UISettings

logger = logging.getLogger(__name__)

TITLE = "Paper assistant"
EXAMPLES = [
    "Which paper runs graph-transformer self-attention over the feature dimension?",
    "What benchmark does the CAD code generation paper release?",
    "Which papers work with molecules or proteins?",
    "Compare the A-Bench paper with the Number Cookbook paper.",
]
#: Intent choices; "auto" lets the core detect the intent from the wording.
AUTO = "auto"
INTENT_CHOICES = [AUTO, *INTENTS]
#: Chats answered at the same time (the bundled model server itself serves one request at a time).
CONCURRENCY_LIMIT = 4
#: The one concurrency group every answering event belongs to, so the limit is shared.
CONCURRENCY_ID = "respond"
SEARCHING = "Searching the abstracts…"
#: Shown above the answer built from the abstracts while the model may still add to it (after the papers
#: are found, before the final answer).
CHECKING = "Checking for more: a sentence the language model writes is added once it is checked against the abstracts…"
#: The send button's label, and while an answer is being written (the button is disabled then).
SEND = "Send"
ANSWERING = "Answering…"
#: Shown (as a notice) when a question is sent while the previous answer is still being written.
BUSY = (
    "The answer to your last question is still being written; your new question stays in the box. "
    "Send it when that answer is finished."
)
#: Runs in the browser when a question is sent: the note under the box says why nothing happens while an
#: answer is being written (Send is disabled then; Enter in the box is refused by ``take_question``).
BUSY_NOTE_JS = "() => (document.querySelector('#send')?.disabled ? %s : '')" % json.dumps(f"*{BUSY}*")
#: The chat's height: on a phone (390 x 844 px) the question box stays on screen below it.
CHAT_HEIGHT = "min(620px, 58vh)"
#: Brings the new question to the top of the chat as soon as it is posted, so its answer is read from the
#: start as it grows (gradio's own autoscroll would follow the bottom of long answers). Runs in the browser.
SCROLL_TO_NEW_QUESTION_JS = """
() => {
  const count = document.querySelectorAll('#chat [data-testid="user"]').length;
  const started = Date.now();
  const tick = () => {
    const asked = document.querySelectorAll('#chat [data-testid="user"]');
    if (asked.length > count) {
      const msg = asked[asked.length - 1];
      let box = msg.parentElement;
      while (box && !(box.scrollHeight > box.clientHeight + 1
                      && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) {
        box = box.parentElement;
      }
      if (box) box.scrollTop += msg.getBoundingClientRect().top - box.getBoundingClientRect().top - 8;
    } else if (Date.now() - started < 10000) {
      setTimeout(tick, 50);
    }
  };
  tick();
}
"""

CSS = """
.refs, .topic-list { list-style: none; padding-left: 0; }
.topic-list li { margin: 0.3em 0; }
.topic-list .reason { font-size: 0.95em; }
.found-list { margin: 0.2em 0; }
.status { opacity: 0.85; }
.search-link { font-size: 0.85em; white-space: nowrap; }
sup.cite a { text-decoration: none; }
.answer .quote q { font-style: italic; }
.refs .card:target { outline: 2px solid var(--color-accent); }
#chat table.compare th, #chat table.compare td, #chat .title {
  word-break: normal; overflow-wrap: normal; hyphens: manual;
}
#chat table.compare th[scope=row] { min-width: 9em; }
.refs .card {
  border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 0.4em 0.6em; margin: 0.4em 0;
}
.refs blockquote { font-size: 0.9em; margin: 0.2em 0 0.4em 0; }
.refs details { font-size: 0.9em; }
.refs mark { padding: 0 0.1em; }
.refs .withheld { border-left: 3px solid var(--color-red-500, #d33); padding-left: 0.5em; opacity: 0.85; }
.ref-n { font-weight: 600; }
.meta { opacity: 0.75; }
table.compare { font-size: 0.88em; border-collapse: collapse; }
table.compare th, table.compare td {
  border: 1px solid var(--border-color-primary); padding: 0.3em; vertical-align: top;
}
.refs-so-far { padding-left: 0; list-style: none; }
.refs-so-far li { margin-bottom: 0.5em; }
#model-line { opacity: 0.8; }
#chat .table-scroll { max-width: 100%; overflow-x: auto; }
#chat .col-label { display: none; font-weight: 600; }
#chat .long-message summary { cursor: pointer; }
#chat .long-message-text { max-height: 40vh; overflow-y: auto; margin-top: 0.4em; }
@media (max-width: 640px) {
  #chat table.compare, #chat table.compare tbody, #chat table.compare tr,
  #chat table.compare th, #chat table.compare td { display: block; width: auto; }
  #chat table.compare thead { display: none; }
  #chat table.compare tr { border: 1px solid var(--border-color-primary); border-radius: 8px; margin: 0 0 0.6em 0; }
  #chat table.compare th, #chat table.compare td { border: none; }
  #chat table.compare th[scope=row] { min-width: 0; }
  #chat .col-label { display: inline; }
}
"""

Message = dict[str, Any]


def _intent(value: str | None) -> str | None:
    return value if value in INTENTS else None


def _download(path: object) -> dict[str, Any]:
    """An update for a download button: the file to serve, enabled only when there is one."""
    return gr.update(value=str(path) if path else None, interactive=bool(path))


def _kept(hits: tuple[Any, ...], partial: Any, anchor: str, error: str) -> str:
    """After a failure: what was already shown (verified sentences, table, papers found) stays, the error
    line follows it."""
    if partial is not None:
        return answer_markdown(partial, final=False, anchor=anchor) + "\n\n" + error
    if hits:
        return progress_markdown("The answer could not be finished.", hits) + "\n\n" + error
    return error


def side_panel(session: ChatSession | None) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """References so far + the two export buttons, for ``session`` (None: a fresh chat)."""
    if session is None or not session.turns:
        return references_panel([]), _download(None), _download(None)
    cited = session.cited_papers()
    md = write_export("conversation.md", conversation_markdown(session.turns, cited))
    bib = write_export("references.bib", bibtex(cited)) if cited else None
    return references_panel(cited), _download(md), _download(bib)


def build_app(assistant: Assistant, *, title: str = TITLE) -> gr.Blocks:
    """The chat page: model line, chatbot with examples, question box, intent choice, send and new-chat
    buttons; beside it the references cited so far and the export buttons.

    Args:
        assistant: the shared answering service (stateless across chats).
        title: page title.
    """

    def respond(
        question: str, intent: str | None, history: list[Message] | None, session: ChatSession | None
    ) -> Iterator[tuple[str, list[Message], ChatSession]]:
        history = list(history or [])
        session = session or assistant.new_session()
        if not (question or "").strip():
            yield "", history, session
            return
        anchor = f"m{len(history) + 2}"  # this message's position: unique card ids within the chat
        history += [
            {"role": "user", "content": question_html(question)},
            {"role": "assistant", "content": progress_markdown(SEARCHING)},
        ]
        yield "", history, session
        hits: tuple[Any, ...] = ()
        partial = None  # the verified part of the answer shown so far
        try:
            for event in session.stream(question, intent=_intent(intent)):  # type: ignore[arg-type]
                if event.kind == "final" and event.answer is not None:
                    content = answer_markdown(event.answer, anchor=anchor)
                else:
                    hits = event.hits or hits
                    partial = event.answer or partial
                    message = event.message if event.kind == "status" and partial is None else CHECKING
                    content = progress_markdown(message, hits, partial, anchor)
                history[-1] = {"role": "assistant", "content": content}
                yield "", history, session
        except AssistantError as e:
            logger.warning("question failed: %s", e)
            history[-1] = {"role": "assistant", "content": _kept(hits, partial, anchor, error_markdown(str(e)))}
            yield "", history, session
        except Exception as e:
            known = assistant.explain(e)  # a read-only / full disk, a vector-size mismatch: said in one line
            if known is not None:
                logger.warning("question failed: %s", known)
                error = error_markdown(str(known))
            else:
                logger.exception("unexpected error while answering")
                error = error_markdown(
                    "Internal error: the assistant itself failed while finishing this answer (a bug, not the "
                    "language model and not your question); the details are in the server log. Please try again."
                )
            history[-1] = {"role": "assistant", "content": _kept(hits, partial, anchor, error)}
            yield "", history, session

    max_chars = getattr(getattr(assistant, "settings", None), "max_question_chars", MAX_QUESTION_CHARS)

    def take_question(question: str, busy: bool) -> tuple[Any, ...]:
        """The first step of asking, run at once (unqueued): the question moves from the box to the hidden
        ``asked`` box that :func:`respond` reads, and Send is disabled ("Answering…") until the answer is
        finished, so text typed meanwhile is never overwritten. Raises ``gr.Error`` (which stops the chain,
        leaving the box as it is) while an answer is being written (a visible notice) or for a blank box
        (silently). A question over the length limit stays in the box, to be shortened; respond says why."""
        if busy:  # the note under the box says so (BUSY_NOTE_JS, in the browser)
            raise gr.Error(BUSY, visible=False, print_exception=False)
        if not (question or "").strip():
            raise gr.Error("Type a question first.", visible=False, print_exception=False)
        keep = len(" ".join(question.split())) > max_chars
        return (gr.update() if keep else "", question, True, gr.update(value=ANSWERING, interactive=False))

    def finished() -> tuple[Any, ...]:
        """After an answer (or its failure): Send is enabled again, the busy note cleared."""
        return False, gr.update(value=SEND, interactive=True), ""

    def new_chat(session: ChatSession | None) -> tuple[Any, ...]:
        if session is not None:
            session.reset()
        return ([], None, *side_panel(None), *finished())

    def pick_example(evt: gr.SelectData) -> str:
        value = evt.value
        return str(value.get("text", "")) if isinstance(value, dict) else str(value or "")

    with gr.Blocks(title=title) as demo:
        gr.Markdown(
            f"## {title}\nAsk about the {assistant.paper_count} indexed abstracts. "
            "Every sentence is checked against the abstracts and cited."
        )
        gr.Markdown(f"Answering with: **{safe_text(assistant.model_label)}**", elem_id="model-line")
        session_state = gr.State(None)
        busy = gr.State(False)  # an answer is being written in this chat
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    elem_id="chat",
                    height=CHAT_HEIGHT,
                    show_label=False,
                    sanitize_html=True,
                    render_markdown=True,
                    latex_delimiters=LATEX_DELIMITERS,
                    buttons=["copy", "copy_all"],
                    autoscroll=False,
                    placeholder="Ask a question about the papers, or pick an example.",
                    feedback_options=None,
                    examples=[{"text": q} for q in EXAMPLES],
                )
                with gr.Row():
                    box = gr.Textbox(
                        elem_id="question",
                        placeholder="Ask about the papers…",
                        show_label=False,
                        scale=8,
                        max_lines=4,  # a pasted page scrolls inside the box; Send stays on screen
                        autofocus=True,
                    )
                    send = gr.Button(SEND, variant="primary", elem_id="send", scale=1)
                # the question being answered (respond's input; also the /respond API's question)
                asked_box = gr.Textbox(visible=False, elem_id="asked")
                input_note = gr.Markdown("", elem_id="input-note")
                with gr.Row():
                    intent = gr.Dropdown(
                        INTENT_CHOICES,
                        value=AUTO,
                        label="Answer as",
                        elem_id="intent",
                        scale=3,
                        info="auto: detected from the question",
                    )
                    clear = gr.Button("New chat", elem_id="new-chat", scale=1)
                more = show_more_button()  # a topic listing's next page (ui/listing.py)
            with gr.Column(scale=2):
                gr.Markdown("### References so far")
                panel = gr.HTML(references_panel([]), elem_id="refs-so-far", js_on_load=None)
                gr.Markdown("### Export")
                with gr.Row():
                    md_btn = gr.DownloadButton("Conversation (.md)", elem_id="export-md", interactive=False, size="sm")
                    bib_btn = gr.DownloadButton("References (.bib)", elem_id="export-bib", interactive=False, size="sm")

        take_io = dict(
            fn=take_question,
            inputs=[box, busy],
            outputs=[box, asked_box, busy, send],
            queue=False,
            api_visibility="private",
        )
        answer_io = dict(
            inputs=[asked_box, intent, chatbot, session_state],
            outputs=[asked_box, chatbot, session_state],
            concurrency_limit=CONCURRENCY_LIMIT,
            concurrency_id=CONCURRENCY_ID,
        )
        side_io = dict(
            fn=side_panel, inputs=[session_state], outputs=[panel, md_btn, bib_btn], api_visibility="private"
        )
        done_io = dict(
            fn=finished, inputs=None, outputs=[busy, send, input_note], queue=False, api_visibility="private"
        )
        more_io = dict(fn=button_state, inputs=[session_state], outputs=[more], api_visibility="private", queue=False)
        taken = gr.on([box.submit, send.click], **take_io)
        asked = taken.success(respond, api_name="respond", **answer_io)
        asked.then(**side_io).then(**done_io).then(**more_io)
        more_answer = wire_show_more(more, box, take_io, respond, answer_io)  # a topic list's next page
        more_answer.then(**side_io).then(**done_io).then(**more_io)
        gr.on([box.submit, send.click, chatbot.example_select], None, js=SCROLL_TO_NEW_QUESTION_JS, queue=False)
        gr.on([box.submit, send.click], None, None, input_note, js=BUSY_NOTE_JS, queue=False)
        picked = chatbot.example_select(pick_example, None, box, api_visibility="private", queue=False)
        picked_answer = picked.then(**take_io).success(respond, api_visibility="private", **answer_io)
        picked_answer.then(**side_io).then(**done_io).then(**more_io)
        reset_io = dict(
            inputs=[session_state],
            outputs=[chatbot, session_state, panel, md_btn, bib_btn, busy, send, input_note],
            cancels=[asked, picked_answer, more_answer],
        )
        clear.click(new_chat, api_name="new_chat", **reset_io).then(**more_io)
        chatbot.clear(new_chat, api_visibility="private", **reset_io)  # the chat's own trash button
    return demo


def serve(assistant: Assistant, settings: UISettings, api_key: str | None = None) -> None:
    """Serve the chat page at ``/`` and, in the same process and port, the OpenAI-compatible API at ``/v1``
    and the MCP server at ``/mcp`` (``assistant.api.server``); block on ``settings.host:port`` until
    interrupted. Prints the URLs to stdout.

    Args:
        assistant: the shared answering service.
        settings: where to listen, and the login the page asks for.
        api_key: the bearer key ``/v1`` and ``/mcp`` requests need (None: none); see
            :func:`assistant.api.server.api_key_for`.
    """
    from assistant.api.server import build_api_app, run_app

    demo = build_app(assistant)
    demo.queue(default_concurrency_limit=CONCURRENCY_LIMIT)
    auth = settings.login()
    app = build_api_app(assistant, api_key=api_key, host=settings.host, concurrency=CONCURRENCY_LIMIT)
    app = gr.mount_gradio_app(
        app,
        demo,
        path="/",
        server_name=settings.host,
        server_port=settings.port,
        footer_links=[],
        auth=auth,
        show_error=False,
        ssr_mode=False,
        mcp_server=False,
        css=CSS,
    )
    base = f"http://{settings.host}:{settings.port}"
    print(
        f"Chat UI on {base}{' (login required)' if auth else ''}; OpenAI-compatible API on {base}/v1, MCP on "
        f"{base}/mcp{' (bearer key required)' if api_key else ''}; Ctrl-C stops it.",
        flush=True,
    )
    run_app(app, settings.host, settings.port)
