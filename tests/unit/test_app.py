"""UI wiring without a browser: the app built around a stub assistant (no model, no index)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assistant.answer import AnswerEvent
from assistant.service import EmptyQuestionError
from assistant.types import Answer, AnswerSentence, Citation, Paper

PAPER = Paper("f.txt#1", "ICLR 2025 Papers", "XNet & co", ("Ada Lovelace",), "https://example.org/x", "XNet is fast.", "f.txt", 1)


class StubSession:
    def __init__(self) -> None:
        self.turns: list[Any] = []
        self.calls: list[tuple[str, str | None]] = []

    def stream(self, question: str, intent: str | None = None) -> Iterator[AnswerEvent]:
        self.calls.append((question, intent))
        if not question.strip("?! "):
            raise EmptyQuestionError("Please type a question about the indexed papers.")
        yield AnswerEvent("status", "Found 1 relevant papers; reading 1.")
        answer = Answer(question, (AnswerSentence("XNet is fast.", (1,), 0.9),), (Citation(1, PAPER, ("XNet is fast.",)),), (),
                        "generated", "stub", intent=intent or "lookup", resolved_query=question, model_used=True)
        self.turns.append(SimpleNamespace(question=question, resolved_query=question, answer=answer))
        yield AnswerEvent("final", answer=answer)

    def cited_papers(self) -> list[tuple[int, Paper]]:
        return [(1, PAPER)] if self.turns else []

    def reset(self) -> None:
        self.turns.clear()


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    import ui.downloads
    from ui.app import build_app

    monkeypatch.setattr(ui.downloads, "export_root", lambda: tmp_path)
    stub = SimpleNamespace(paper_count=1, model_label="stub", new_session=StubSession)
    demo = build_app(stub)  # type: ignore[arg-type]
    return {f.api_name: f for f in demo.fns.values()}


def test_respond_is_a_named_endpoint_sharing_one_concurrency_limit(app) -> None:  # type: ignore[no-untyped-def]
    from ui.app import CONCURRENCY_LIMIT

    responders = [f for f in app.values() if f.name == "respond"]
    assert "respond" in app and len(responders) == 2  # typed question, and example click (private)
    assert {f.concurrency_id for f in responders} == {"respond"} and {f.concurrency_limit for f in responders} == {CONCURRENCY_LIMIT}
    assert [type(c).__name__ for c in app["respond"].inputs] == ["Textbox", "Dropdown", "Chatbot", "State"]


def test_first_yield_says_searching_before_the_core_is_called(app) -> None:  # type: ignore[no-untyped-def]
    steps = app["respond"].fn("What is XNet?", "auto", [], None)
    box, history, session = next(steps)
    assert box == "" and "Searching the abstracts…" in history[-1]["content"] and session.calls == []
    shown = [history[-1]["content"] for _, history, _ in steps]  # what each later yield shows
    assert session.calls == [("What is XNet?", None)]  # "auto" -> the core detects the intent
    assert "Found 1 relevant papers" in shown[0]
    final = shown[-1]
    assert "XNet is fast.<sup>[1]</sup>" in final and "class='refs'" in final and "answered by stub" in final


def test_forced_intent_and_errors(app) -> None:  # type: ignore[no-untyped-def]
    *_, (_, history, session) = app["respond"].fn("Compare XNet", "compare", [], None)
    assert session.calls == [("Compare XNet", "compare")] and "intent: compare" in history[-1]["content"]
    *_, (_, history, _) = app["respond"].fn("???", "auto", history, session)
    assert history[-1]["content"].startswith("⚠️ Please type a question")
    assert list(app["respond"].fn("   ", "auto", [], None))[-1][1] == []  # blank: nothing asked


def test_side_panel_and_exports_follow_the_session(app) -> None:  # type: ignore[no-untyped-def]
    html, md_btn, bib_btn = app["side_panel"].fn(None)
    assert "No papers cited yet" in html and md_btn["interactive"] is False and bib_btn["interactive"] is False
    *_, (_, _, session) = app["respond"].fn("What is XNet?", "auto", [], None)
    html, md_btn, bib_btn = app["side_panel"].fn(session)
    assert "[1]</span>" in html and "https://example.org/x" in html
    md, bib = Path(md_btn["value"]), Path(bib_btn["value"])
    assert md.name == "conversation.md" and "What is XNet?" in md.read_text() and "https://example.org/x" in md.read_text()
    assert bib.name == "references.bib" and r"XNet \& co" in bib.read_text()
    chat, state, box, html, md_btn, _ = app["new_chat"].fn(session)
    assert chat == [] and state is None and box == "" and "No papers cited yet" in html and md_btn["interactive"] is False
    assert session.turns == []
