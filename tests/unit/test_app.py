"""UI wiring without a browser: the app built around a stub assistant (no model, no index)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.answer.answerer import AnswerEvent
from assistant.service import EmptyQuestionError
from assistant.types import Answer, AnswerSentence, Citation, Paper, PaperHit

PAPER = Paper("f.txt#1", "ICLR 2025 Papers", "XNet & co", ("Ada Lovelace",), "https://example.org/x", "XNet is fast.",
              "f.txt", 1)


HIT = PaperHit(PAPER, 0.03, 0.7, (), ("XNet is fast.",))
SEARCH = Paper("f.txt#2", "ICLR 2025 Papers", "YNet", (), "https://openreview.net/search?term=YNet", "YNet is slow.",
               "f.txt", 2)


class StubSession:
    """Streams like the core: status with the papers found, a partial answer, then the final one; a
    question containing "crash" raises after the partial answer (a bug, not a model failure)."""

    def __init__(self) -> None:
        self.turns: list[Any] = []
        self.calls: list[tuple[str, str | None]] = []

    def stream(self, question: str, intent: str | None = None) -> Iterator[AnswerEvent]:
        self.calls.append((question, intent))
        if not question.strip("?! "):
            raise EmptyQuestionError("Please type a question about the indexed papers.")
        hits = (HIT, PaperHit(SEARCH, 0.02, 0.6, (), ("YNet is slow.",)))
        yield AnswerEvent("status", "Found 2 candidate papers; checking them.", hits=hits)
        answer = Answer(question, (AnswerSentence("XNet is fast.", (1,), 0.9, 0.9, by_model=True, check="self_check"),),
                        (Citation(1, PAPER, ("XNet is fast.",)),), hits,
                        "generated", "stub", intent=intent or "lookup", resolved_query=question, model_used=True)
        yield AnswerEvent("partial", answer=answer, hits=hits)
        if "crash" in question:
            raise RuntimeError("boom")
        if "read-only disk" in question:  # what Chroma's SQLite raises when the index folder is read-only
            import sqlite3

            raise sqlite3.OperationalError("attempt to write a readonly database")
        self.turns.append(SimpleNamespace(question=question, resolved_query=question, answer=answer))
        yield AnswerEvent("final", answer=answer, hits=hits)

    def cited_papers(self) -> list[tuple[int, Paper]]:
        return [(1, PAPER)] if self.turns else []

    def reset(self) -> None:
        self.turns.clear()


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    import ui.downloads
    from ui.app import build_app

    monkeypatch.setattr(ui.downloads, "export_root", lambda: tmp_path)
    from assistant.config import Settings
    from assistant.index.store import explain_failure

    settings = Settings().updated(storage_dir=tmp_path / "index")
    stub = SimpleNamespace(paper_count=1, model_label="stub", new_session=StubSession,
                           explain=lambda e: explain_failure(e, settings))
    demo = build_app(stub)  # type: ignore[arg-type]
    return {f.api_name: f for f in demo.fns.values()}


def test_respond_is_a_named_endpoint_sharing_one_concurrency_limit(app) -> None:  # type: ignore[no-untyped-def]
    from ui.app import CONCURRENCY_LIMIT

    responders = [f for f in app.values() if f.name == "respond"]
    assert "respond" in app and len(responders) == 3  # typed question, example click, "Show more" (private)
    assert ({f.concurrency_id for f in responders} == {"respond"}
            and {f.concurrency_limit for f in responders} == {CONCURRENCY_LIMIT})
    assert [type(c).__name__ for c in app["respond"].inputs] == ["Textbox", "Dropdown", "Chatbot", "State"]
    assert not app["respond"].inputs[0].visible  # the hidden "asked" box, filled from the question box at Send


def test_first_yield_says_searching_before_the_core_is_called(app) -> None:  # type: ignore[no-untyped-def]
    steps = app["respond"].fn("What is XNet?", "auto", [], None)
    box, history, session = next(steps)
    assert box == "" and "Searching the abstracts…" in history[-1]["content"] and session.calls == []
    shown = [history[-1]["content"] for _, history, _ in steps]  # what each later yield shows
    assert session.calls == [("What is XNet?", None)]  # "auto" -> the core detects the intent
    status, partial, final = shown
    # the papers found, with links, as soon as retrieval is done; a search link says it is one
    assert ("Found 2 candidate papers" in status and 'href="https://example.org/x"' in status
            and "XNet &amp; co" in status)
    assert "(search on OpenReview)" in status and "answered by" not in status
    # verified sentences as they come, with their cards, before the end
    assert "XNet is fast.<sup class='cite'><a href='#m2-ref-1'>[1]</a></sup>" in partial and "id='m2-ref-1'" in partial
    assert "answered by" not in partial
    assert "XNet is fast.<sup class='cite'>" in final and "class='refs'" in final and "answered by stub" in final
    assert "intent" not in final  # no pipeline jargon


def test_an_unexpected_failure_keeps_what_was_shown(app) -> None:  # type: ignore[no-untyped-def]
    *_, (_, history, _) = app["respond"].fn("crash now", "auto", [], None)
    content = history[-1]["content"]
    assert "XNet is fast.<sup class='cite'>" in content and "id='m2-ref-1'" in content  # kept
    assert content.rstrip().endswith("Please try again.</p>") and "Internal error" in content
    assert "language model failed" not in content


def test_a_storage_failure_is_one_clear_line_not_something_went_wrong(app) -> None:  # type: ignore[no-untyped-def]
    *_, (_, history, _) = app["respond"].fn("read-only disk please", "auto", [], None)
    content = history[-1]["content"]
    assert "Something went wrong" not in content
    assert "is read-only for this process" in content and "the index is not damaged" in content
    assert "--rebuild" not in content


def test_card_anchors_are_unique_per_message(app) -> None:  # type: ignore[no-untyped-def]
    *_, (_, history, session) = app["respond"].fn("What is XNet?", "auto", [], None)
    *_, (_, history, _) = app["respond"].fn("And YNet?", "auto", history, session)
    assert "id='m2-ref-1'" in history[1]["content"] and "id='m4-ref-1'" in history[3]["content"]
    assert "href='#m4-ref-1'" in history[3]["content"] and "#m2-" not in history[3]["content"]


def test_chat_renders_katex_only_for_our_delimiters_and_has_no_share_button(app) -> None:  # type: ignore[no-untyped-def]
    chat = app["respond"].inputs[2]
    assert [d["left"] for d in chat.latex_delimiters] == ["\\(", "\\["]  # never "$": dollar amounts stay text
    assert "share" not in chat.buttons and chat.sanitize_html


def test_forced_intent_and_errors(app) -> None:  # type: ignore[no-untyped-def]
    *_, (_, history, session) = app["respond"].fn("Compare XNet", "compare", [], None)
    assert session.calls == [("Compare XNet", "compare")]
    *_, (_, history, _) = app["respond"].fn("???", "auto", history, session)
    assert history[-1]["content"].startswith("<p class='error'>⚠️ Please type a question")
    assert list(app["respond"].fn("   ", "auto", [], None))[-1][1] == []  # blank: nothing asked


def test_side_panel_and_exports_follow_the_session(app) -> None:  # type: ignore[no-untyped-def]
    html, md_btn, bib_btn = app["side_panel"].fn(None)
    assert "No papers cited yet" in html and md_btn["interactive"] is False and bib_btn["interactive"] is False
    *_, (_, _, session) = app["respond"].fn("What is XNet?", "auto", [], None)
    html, md_btn, bib_btn = app["side_panel"].fn(session)
    assert "[1]</span>" in html and "https://example.org/x" in html
    md, bib = Path(md_btn["value"]), Path(bib_btn["value"])
    assert (md.name == "conversation.md" and "What is XNet?" in md.read_text()
            and "https://example.org/x" in md.read_text())
    assert bib.name == "references.bib" and r"XNet \& co" in bib.read_text()
    from ui.chat_state import Gate

    gate = Gate()
    assert gate.take("What is XNet?")
    chat, state, html, md_btn, _, send, note, saved, pending = app["new_chat"].fn(session, gate)
    assert chat == [] and state is None and "No papers cited yet" in html and md_btn["interactive"] is False
    assert session.turns == [] and send["interactive"] is True  # the question box is left alone
    assert saved == {} and pending == {} and gate.answering is None  # the browser forgets the chat too


def _fn(app: dict[str, Any], name: str) -> Any:
    return app[next(k for k, f in app.items() if f.name == name)].fn


def test_a_question_is_taken_once_and_send_waits_for_the_answer(app) -> None:  # type: ignore[no-untyped-def]
    """Issue 43.3/43.4: the busy note only when a question is really held back; a double Enter asks once; a
    blank box or a held-back question stops the chain without a visible error (the take step's outputs are
    hidden)."""
    import gradio as gr

    from ui.app import ANSWERING, BUSY, SEND
    from ui.chat_state import Gate

    gate = Gate()
    note, take, lock = _fn(app, "busy_note"), _fn(app, "take_question"), _fn(app, "lock_box")
    assert note("What is XNet?", gate) == ""  # nothing being answered: no notice
    asked, pending = take("What is XNet?", gate)
    assert asked == "What is XNet?" and pending == {"question": "What is XNet?"} and gate.answering == asked
    box, send = lock(asked)
    assert box == "" and send == {"__type__": "update", "value": ANSWERING, "interactive": False}
    assert note("What is XNet?", gate) == ""  # Enter pressed twice: the same question again, no notice...
    with pytest.raises(gr.Error) as again:
        take("What is XNet?", gate)  # ...and not asked twice
    assert not again.value.visible
    assert note("And YNet?", gate) == f"*{BUSY}*"  # a new question while answering: held back, and said so
    with pytest.raises(gr.Error):
        take("And YNet?", gate)
    outputs = app[next(k for k, f in app.items() if f.name == "take_question")].outputs
    assert all(isinstance(c, gr.BrowserState) or not c.visible for c in outputs)  # an error badge shows nowhere
    send, note_text, saved, pending = _fn(app, "finished")(gate, None)
    assert send["value"] == SEND and send["interactive"] is True and note_text == "" and pending == {}
    assert gate.answering is None and note("And YNet?", gate) == ""
    with pytest.raises(gr.Error) as blank:
        take("   ", gate)
    assert not blank.value.visible and gate.answering is None  # a blank box: nothing happens
    asked, _ = take("x" * 2001, gate)
    assert lock(asked)[0] == {"__type__": "update"}  # too long: kept in the box to shorten; respond says why


def test_the_take_step_is_atomic_under_concurrent_sends() -> None:
    """Two sends at once (Gradio runs unqueued events on worker threads): exactly one takes the question."""
    import threading

    from ui.chat_state import Gate

    for _ in range(50):
        gate, taken = Gate(), list[bool]()
        barrier = threading.Barrier(4)

        def send(gate: Gate = gate, taken: list[bool] = taken, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            taken.append(gate.take("What is XNet?"))

        threads = [threading.Thread(target=send) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(taken) == [False, False, False, True]


def test_a_long_message_is_collapsed_in_the_chat(app) -> None:  # type: ignore[no-untyped-def]
    from ui.render import COLLAPSE_CHARS

    note = "Notes on graph transformers. " * 800
    *_, (_, history, _) = app["respond"].fn(note, "auto", [], None)
    from ui.clipboard import copy_text_of

    shown = history[0]["content"]
    assert copy_text_of(shown) == note.strip()  # Copy gives the message as typed
    assert (shown.split("-->", 1)[1].startswith("<details class='long-message'><summary>Notes on graph transformers.")
            and f"{len(note.strip()):,} characters" in shown)
    short = "What is XNet?"
    *_, (_, history, _) = app["respond"].fn(short, "auto", [], None)
    assert history[0]["content"] == short and len(short) < COLLAPSE_CHARS  # API clients read the question back
