"""Gradio chat UI: layout and event wiring only. Depends on ``assistant``; never the reverse.

One :class:`assistant.conversation.session.ChatSession` per browser session, kept in ``gr.State`` (and its record
in the browser's ``localStorage``, ``ui/chat_state.py``). HTML comes from
``ui.render``, export files from ``ui.export`` (content) and ``ui.downloads`` (files).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import gradio as gr

from assistant.errors import AssistantError
from assistant.types import INTENTS
from assistant.understand.question import MAX_QUESTION_CHARS
from ui.chat_state import CHAT_KEY, PENDING_KEY, Gate, browser_secret, chat_record, pending_record, restored_chat
from ui.clipboard import CLEAN_COPY_JS, answer_content, question_content
from ui.downloads import write_export
from ui.export import bibtex, conversation_markdown
from ui.listing import button_state, show_more_button, wire_show_more
from ui.render import (
    answer_markdown,
    error_markdown,
    progress_markdown,
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
#: Shown above the quotes (or the comparison table) from the abstracts while the model writes its answer.
INTERIM = (
    "Quoted from the abstracts while the language model writes its answer; its sentences replace these quotes "
    "once each is checked against the abstracts…"
)
#: Shown above the model's checked sentences while it may still add more (they are never reordered).
CHECKING = (
    "Writing: each further sentence of the language model is added here once it is checked against the abstracts…"
)
#: The send button's label, and while an answer is being written (the button is disabled then).
SEND = "Send"
ANSWERING = "Answering…"
#: Shown under the box when a question is sent while the previous answer is still being written (and only then).
BUSY = (
    "The answer to your last question is still being written; your new question stays in the box. "
    "Send it when that answer is finished."
)
#: The chat's height on a wide screen (on a phone the chat grows with its messages: ``CSS``).
CHAT_HEIGHT = "min(620px, 58vh)"
#: Brings the new question to the top of the chat (on a phone, of the page) as soon as it is posted, so its answer
#: is read from the start as it grows (gradio's own autoscroll would follow the bottom of long answers). Runs in the
#: browser.
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
      else msg.scrollIntoView({block: 'start'});  // a phone: the page itself scrolls
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
.interim { opacity: 0.8; border-left: 3px solid var(--border-color-primary); padding-left: 0.5em; }
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
.answer-details { margin-top: 0.2em; font-size: 0.85em; opacity: 0.8; }
.answer-details > summary { cursor: pointer; }
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
  /* a phone: one scroll (the page's; the chat grows with its messages), text at full width (no nested frames),
     the question box kept on screen at the bottom */
  #chat { border: none !important; height: auto !important; max-height: none !important; }
  #chat .bubble-wrap { height: auto !important; max-height: none !important; overflow: visible !important; }
  #chat .message.bot { border: none !important; padding: 2px 0 !important; }
  #chat table.compare { border: none; padding: 0; }
  #chat table.compare tr { padding: 6px; }
  #chat .message-row.bot-row { margin-left: 0 !important; margin-right: 0 !important; max-width: 100% !important; }
  #ask-row {
    position: sticky; bottom: 0; z-index: 10; background: var(--body-background-fill); padding: 4px 0;
    flex-wrap: nowrap;
  }
  #ask-row > * { min-width: 0 !important; }
  #ask-row #send { flex: 0 0 auto; min-width: 4.5em !important; }
}
"""

#: Page-level rules (``<head>``; ``CSS`` is scoped inside the app's container): on a phone the page is the one
#: scroll (Gradio's container clips overflow, which would also stop the question box from sticking) and the app's
#: side margins are narrow, so text has the width.
PHONE_HEAD = """<style>
@media (max-width: 640px) {
  .gradio-container { overflow: visible !important; }
  .gradio-container .main.fillable { padding-left: 6px !important; padding-right: 6px !important; }
}
</style>"""

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
    buttons; beside it the references cited so far and the export buttons. The conversation is kept in the
    browser after each answer and restored when the page loads (``ui/chat_state.py``); the copy buttons give
    clean text (``ui/clipboard.py``).

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
            {"role": "user", "content": question_content(question)},
            {"role": "assistant", "content": progress_markdown(SEARCHING)},
        ]
        yield "", history, session
        hits: tuple[Any, ...] = ()
        partial = None  # the verified part of the answer shown so far
        try:
            for event in session.stream(question, intent=_intent(intent)):  # type: ignore[arg-type]
                if event.kind == "final" and event.answer is not None:
                    content = answer_content(event.answer, anchor)
                else:
                    hits = event.hits or hits
                    partial = event.answer or partial
                    if partial is None:
                        message = event.message if event.kind == "status" else SEARCHING
                    else:
                        message = CHECKING if partial.mode == "generated" else INTERIM
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

    def busy_note(question: str, gate: Gate) -> str:
        """The note under the box when a question is sent: :data:`BUSY` when it is held back because an answer is
        being written (:meth:`Gate.holds_back`), else nothing. Run first, before the question is taken."""
        return f"*{BUSY}*" if gate.holds_back(question or "") else ""

    def take_question(question: str, gate: Gate) -> tuple[str, dict[str, str]]:
        """Take the question for answering (run at once, unqueued): it goes into the hidden ``asked`` box that
        :func:`respond` reads, and into the browser as the question being answered. Raises ``gr.Error`` without a
        message (which stops the chain; its outputs are hidden, so nothing shows) for a blank box, and while an
        answer is being written: the text stays in the box (:func:`busy_note` said why), and a double Enter
        asks once."""
        if not (question or "").strip() or not gate.take(question):
            raise gr.Error("not taken", visible=False, print_exception=False)
        return question, pending_record(question)

    def lock_box(question: str) -> tuple[Any, ...]:
        """After a question is taken: the box is cleared (a question over the length limit stays there, to be
        shortened; respond says why), and Send is disabled ("Answering…") until the answer is finished, so text
        typed meanwhile is never overwritten."""
        keep = len(" ".join(question.split())) > max_chars
        return (gr.update() if keep else "", gr.update(value=ANSWERING, interactive=False))

    def finished(gate: Gate, session: ChatSession | None) -> tuple[Any, ...]:
        """After an answer (or its failure): the next question can be taken, Send is enabled again, the note
        cleared; the browser keeps the conversation (:func:`chat_record`) and forgets the question taken."""
        gate.release()
        return gr.update(value=SEND, interactive=True), "", chat_record(session), pending_record(None)

    def new_chat(session: ChatSession | None, gate: Gate) -> tuple[Any, ...]:
        if session is not None:
            session.reset()
        gate.release()
        return ([], None, *side_panel(None), gr.update(value=SEND, interactive=True), "", {}, pending_record(None))

    def restore(saved: object, pending: object) -> tuple[Any, ...]:
        """On page load: the conversation kept in this browser (:func:`restored_chat`), with its side panel."""
        chat = restored_chat(assistant, saved, pending)
        box_update = chat.box if chat.box else gr.update()
        return (chat.history, chat.session, box_update, chat.note, *side_panel(chat.session))

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
        gate = gr.State(Gate())  # the question being answered in this chat
        secret = browser_secret(
            getattr(getattr(getattr(assistant, "settings", None), "storage", None), "storage_dir", None)
        )
        saved = gr.BrowserState({}, storage_key=CHAT_KEY, secret=secret)  # the conversation, kept in the browser
        pending = gr.BrowserState({}, storage_key=PENDING_KEY, secret=secret)  # the question being answered
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
                with gr.Row(elem_id="ask-row"):
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

        answer_io = dict(
            inputs=[asked_box, intent, chatbot, session_state],
            outputs=[asked_box, chatbot, session_state],
            concurrency_limit=CONCURRENCY_LIMIT,
            concurrency_id=CONCURRENCY_ID,
        )
        quick = dict(queue=False, api_visibility="private", show_progress="hidden")  # instant: no "0.0s" timer
        side_io = dict(
            fn=side_panel, inputs=[session_state], outputs=[panel, md_btn, bib_btn], api_visibility="private"
        )
        done_io = dict(fn=finished, inputs=[gate, session_state], outputs=[send, input_note, saved, pending], **quick)
        more_io = dict(fn=button_state, inputs=[session_state], outputs=[more], **quick)

        def answer_after(event: Any, **respond_api: Any) -> Any:
            """Chain, after ``event`` (the question is in the box): the busy note, taking the question, the box
            cleared and Send disabled, the answer, then the side panel, Send enabled and the chat kept in the
            browser. Returns the answering event (for "New chat" to cancel)."""
            noted = event.then(busy_note, [box, gate], input_note, **quick)
            taken = noted.then(take_question, [box, gate], [asked_box, pending], **quick)
            locked = taken.success(lock_box, asked_box, [box, send], **quick)
            answering = locked.success(respond, **respond_api, **answer_io)
            answering.then(**side_io).then(**done_io).then(**more_io)
            return answering

        sent = gr.on([box.submit, send.click], None, js=SCROLL_TO_NEW_QUESTION_JS, queue=False)
        asked = answer_after(sent, api_name="respond")
        more_answer = wire_show_more(more, box, lambda typed: answer_after(typed, api_visibility="private"))
        picked = chatbot.example_select(pick_example, None, box, **quick)
        picked_answer = answer_after(picked, api_visibility="private")
        picked.then(None, js=SCROLL_TO_NEW_QUESTION_JS, queue=False)
        reset_io = dict(
            inputs=[session_state, gate],
            outputs=[chatbot, session_state, panel, md_btn, bib_btn, send, input_note, saved, pending],
            cancels=[asked, picked_answer, more_answer],
            show_progress="hidden",
        )
        clear.click(new_chat, api_name="new_chat", **reset_io).then(**more_io)
        chatbot.clear(new_chat, api_visibility="private", **reset_io)  # the chat's own trash button
        loaded = demo.load(
            restore, [saved, pending], [chatbot, session_state, box, input_note, panel, md_btn, bib_btn], **quick
        )
        loaded.then(**more_io)
        demo.load(None, js=CLEAN_COPY_JS, queue=False)
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
        head=PHONE_HEAD,
    )
    base = f"http://{settings.host}:{settings.port}"
    print(
        f"Chat UI on {base}{' (login required)' if auth else ''}; OpenAI-compatible API on {base}/v1, MCP on "
        f"{base}/mcp{' (bearer key required)' if api_key else ''}; Ctrl-C stops it.",
        flush=True,
    )
    run_app(app, settings.host, settings.port)
