"""The chat a researcher keeps open all day (issue 43), in a real browser (Chromium) against the real UI over the
seeds plus tests/fixtures/special_seeds, answering through a scripted model (``special_ui_url``):

- a reload restores the conversation with its references and ``[n]`` numbering; a reload in the middle of an
  answer puts the question back in the box and says so; "New chat" forgets it;
- Send shows the busy note only when a question is really held back; Enter pressed twice asks once, without an
  error badge;
- Copy gives clean text with ``[n]`` and the references, and each message's ``aria-label`` is text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import SLOW_QUESTION
from tests.support.browser import ask, new_tab, open_ui

pytestmark = pytest.mark.browser

A_BENCH_Q = "Which paper proposes A-Bench?"
NUPA_Q = "Which paper studies the numerical understanding and processing ability (NUPA) of language models?"
A_BENCH_TITLE = "A-Bench: Are LMMs Masters at Evaluating AI-generated Images?"
#: Records what the page puts on the clipboard (``window.__copied``) instead of writing it.
RECORD_CLIPBOARD_JS = """
window.__copied = [];
Object.defineProperty(navigator, 'clipboard', {value: {
  writeText: (t) => { window.__copied.push(t); return Promise.resolve(); },
  readText: () => Promise.resolve(window.__copied[window.__copied.length - 1] || ''),
}, configurable: true});
"""


@pytest.fixture
def page(browser, special_ui_url: str) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A fresh browser profile (empty localStorage) on the special-text UI."""
    with new_tab(browser, special_ui_url) as pg:
        yield pg


def _messages(page: Any, role: str) -> Any:
    return page.locator(f"#chat [data-testid='{role}']")


def _reload(page: Any, bots: int) -> None:
    page.reload()
    page.wait_for_selector("#question textarea")
    page.wait_for_function(
        "(n) => document.querySelectorAll(\"#chat [data-testid='bot']\").length === n", arg=bots, timeout=20_000
    )
    time.sleep(0.5)  # the side panel and the "Show more" button follow the chat


def test_a_reload_restores_the_conversation_with_its_references_and_numbering(page) -> None:  # type: ignore[no-untyped-def]
    ask(page, A_BENCH_Q, 1)
    ask(page, NUPA_Q, 2)
    chat, panel = page.locator("#chat").inner_text(), page.locator("#refs-so-far").inner_text()
    assert "[2]" in panel and A_BENCH_TITLE in panel
    _reload(page, 2)
    assert page.locator("#chat").inner_text() == chat and page.locator("#refs-so-far").inner_text() == panel
    assert page.locator("#export-md").is_enabled()  # the export follows the restored conversation
    third = ask(page, A_BENCH_Q, 3)  # the same paper keeps its number after the reload
    assert re.search(r"\[1\]\s*" + re.escape(A_BENCH_TITLE), third.inner_text())
    assert "[3]" not in page.locator("#refs-so-far").inner_text()


def test_a_reload_mid_answer_puts_the_question_back_and_new_chat_forgets(page) -> None:  # type: ignore[no-untyped-def]
    ask(page, A_BENCH_Q, 1)
    page.locator("#question textarea").fill(SLOW_QUESTION)
    page.locator("#send").click()
    _messages(page, "bot").nth(1).locator(".status").wait_for(timeout=30_000)  # the slow answer is being written
    _reload(page, 1)
    assert page.locator("#question textarea").input_value() == SLOW_QUESTION
    assert "reloaded before the answer" in page.locator("#input-note").inner_text()
    assert _messages(page, "user").count() == 1
    page.locator("#new-chat").click()
    page.wait_for_function("() => !document.querySelector(\"#chat [data-testid='bot']\")", timeout=10_000)
    time.sleep(1.0)
    page.reload()
    page.wait_for_selector("#question textarea")
    time.sleep(3.0)  # what a restore would have shown by now
    assert _messages(page, "user").count() == 0 and page.locator("#question textarea").input_value() == ""
    assert "No papers cited yet" in page.locator("#refs-so-far").inner_text()


SHOWN_TEXT_JS = """e => {
    const shown = x => { for (; x && x !== e.parentNode; x = x.parentElement) {
        const style = getComputedStyle(x); if (style.opacity === '0' || style.display === 'none') return false; }
        return true; };
    return [...e.querySelectorAll('*')].filter(x => !x.children.length && x.textContent.trim() && shown(x))
        .map(x => x.textContent.trim()).join(' ');
}"""  # text a user can see (Gradio fades its timer in and out)


def test_send_shows_no_busy_note_and_a_double_enter_asks_once(page) -> None:  # type: ignore[no-untyped-def]
    box = page.locator("#question textarea")
    box.fill(A_BENCH_Q)
    cdp = page.context.new_cdp_session(page)  # a slow link, as on a busy server: each step's reply comes late
    slow_link = {"offline": False, "latency": 300, "downloadThroughput": -1, "uploadThroughput": -1}
    cdp.send("Network.emulateNetworkConditions", slow_link)
    page.locator("#send").click()
    notes = []
    for _ in range(60):  # what shows under the box while the first answer is written: no note, no progress timer
        notes.append(page.locator("#input-note").evaluate(SHOWN_TEXT_JS))
        time.sleep(0.02)
    _messages(page, "bot").first.get_by_text("answered by").wait_for(timeout=60_000)
    assert set(notes) == {""}, notes
    page.wait_for_function("() => !document.querySelector('#send').disabled", timeout=30_000)
    box.fill(NUPA_Q)
    box.press("Enter")
    page.wait_for_timeout(100)
    box.press("Enter")
    _messages(page, "bot").nth(1).get_by_text("answered by").wait_for(timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#send').disabled", timeout=30_000)
    time.sleep(1.0)
    assert _messages(page, "user").count() == 2  # asked once
    errors = [e.inner_text() for e in page.locator(".error, [data-testid='error']").all() if e.is_visible()]
    assert errors == [] and page.locator("#input-note").inner_text().strip() == ""


def test_copy_gives_clean_text_with_markers_and_references(browser, special_ui_url: str) -> None:  # type: ignore[no-untyped-def]
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    pg.add_init_script(RECORD_CLIPBOARD_JS)
    try:
        open_ui(pg, special_ui_url)
        bot = ask(pg, A_BENCH_Q, 1)
        bot.hover()
        pg.locator("#chat button[aria-label='Copy message']").last.click()
        pg.locator("#chat button[aria-label='Copy conversation']").click()
        pg.wait_for_function("() => window.__copied.length >= 2", timeout=5_000)
        message, conversation = pg.evaluate("window.__copied")
        for text in (message, conversation):
            assert not re.search(r"<(p|span|sup|q|ol|li|a|details)\b|class=|&#39;|<!--", text), text[:400]
            assert "[1]" in text and "\nReferences\n[1] " + A_BENCH_TITLE in text and "https://" in text
        assert conversation.startswith("user: " + A_BENCH_Q) and message in conversation
        labels = pg.eval_on_selector_all("#chat [aria-label*=\"'s message: \"]", "els => els.map(e => e.ariaLabel)")
        assert any(x.startswith("bot's message: ") for x in labels), labels
        assert all("<" not in x for x in labels), labels
    finally:
        pg.close()


#: Records each state of the newest answer: papers-found links, interim quotes, the checked sentences, final.
GROWTH_LOG_JS = """() => {
  window.__growth = [];
  const snap = () => {
    const bots = document.querySelectorAll('#chat [data-testid="bot"]');
    const m = bots[bots.length - 1];
    if (!m) return;
    const answer = [...m.querySelectorAll('p.answer')].filter(p => !p.closest('.interim'));
    window.__growth.push({
      found: m.querySelectorAll('.found-list a').length,
      interim: m.querySelectorAll('.interim p.answer').length,
      sentences: answer.map(p => p.innerText).join(' '),
      final: m.innerText.includes('answered by'),
    });
  };
  new MutationObserver(snap).observe(document.querySelector('#chat'),
                                     {subtree: true, childList: true, characterData: true});
}"""


def test_an_answer_grows_in_place_and_never_reorders(page) -> None:  # type: ignore[no-untyped-def]
    """Issue 43.7: the papers found are replaced by what is verified, not left under it; the quotes shown while
    the model writes are marked interim; the model's checked sentences only ever grow at the end, and the final
    answer shows them in the same order."""
    page.evaluate(GROWTH_LOG_JS)
    page.locator("#question textarea").fill(SLOW_QUESTION)
    page.locator("#send").click()
    _messages(page, "bot").first.get_by_text("answered by").wait_for(timeout=60_000)
    time.sleep(0.5)
    log = page.evaluate("window.__growth")
    assert any(s["found"] for s in log) and any(s["interim"] for s in log)  # both were shown on the way
    assert not [s for s in log if s["found"] and (s["interim"] or s["sentences"])]  # never the list under an answer
    grown = [" ".join(s["sentences"].split()) for s in log if s["sentences"].strip()]
    assert len(set(grown)) >= 2  # the answer grew while the model wrote (paced sentences)
    assert all(later.startswith(earlier) for earlier, later in zip(grown, grown[1:], strict=False)), grown
    final = log[-1]
    assert final["final"] and not final["found"] and not final["interim"] and final["sentences"].strip()


PHONE = {"width": 390, "height": 844}
#: Elements that scroll on their own (content taller than the box, overflow auto/scroll), the page excepted.
INNER_SCROLLERS_JS = """() => [...document.querySelectorAll('body *')].filter((el) => {
  const cs = getComputedStyle(el);
  return /(auto|scroll)/.test(cs.overflowY) && el.scrollHeight > el.clientHeight + 1 && el.clientHeight > 0
    && el.tagName !== 'TEXTAREA';
}).map((el) => el.className.toString().slice(0, 40))"""


def test_on_a_phone_the_page_is_the_one_scroll_and_text_has_the_width(browser, special_ui_url: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 43.9 at 390 px: no scroll box inside the page, the comparison's cells nearly as wide as the screen
    (no nested frames), and the question box on screen wherever the page is scrolled, never over the answer's
    end."""
    pg = browser.new_page(viewport=PHONE)
    try:
        open_ui(pg, special_ui_url)
        ask(pg, "Compare the A-Bench paper with the Number Cookbook paper.", 1)
        ask(pg, NUPA_Q, 2)
        assert pg.evaluate("document.documentElement.scrollHeight") > 2 * PHONE["height"]  # a long chat
        assert pg.evaluate(INNER_SCROLLERS_JS) == []
        widths = pg.eval_on_selector_all("#chat table.compare td",
                                         "els => els.map(e => e.getBoundingClientRect().width)")
        assert widths and min(widths) >= 0.85 * PHONE["width"], widths
        assert pg.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways scrolling
        for y in (0, 1500, 10**6):  # top, middle, end of the page
            pg.evaluate(f"window.scrollTo(0, {y})")
            pg.wait_for_timeout(200)
            row = pg.locator("#ask-row").bounding_box()
            assert row["y"] >= 0 and row["y"] + row["height"] <= PHONE["height"] + 1, (y, row)
        last = _messages(pg, "bot").last.bounding_box()
        assert last["y"] + last["height"] <= pg.locator("#ask-row").bounding_box()["y"] + 1  # the end is readable
    finally:
        pg.close()


def _final_texts(history: list[dict[str, Any]]) -> list[str]:
    """The answers of a chat as shown, without the time each took (the only part that may differ under load)."""
    texts = []
    for m in history[1::2]:
        content = m["content"]
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = content
        texts.append(re.sub(r" in \d+\.\d s</small>", "</small>", str(text)))
    return texts


def test_four_chats_at_once_get_the_answers_each_gets_alone(special_ui_url: str) -> None:
    """Issue 43: under load (four chats answered at once through ``/respond``) every answer, follow-ups included,
    equals the same chat's answer asked alone (a scripted model: the same reply for the same prompt)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from gradio_client import Client

    chats = [(A_BENCH_Q, "What does it diagnose?"), (NUPA_Q, "How many tasks does it cover?"),
             ("Which abstract introduces a State Machine Module (SMM)?", "What problem does it address?"),
             (SLOW_QUESTION, "What error does it reach?")]

    def converse(chat: tuple[str, str], barrier: threading.Barrier | None = None) -> list[str]:
        client = Client(special_ui_url, verbose=False, analytics_enabled=False, download_files=False)
        try:
            history: list[dict[str, Any]] = []
            for question in chat:
                if barrier is not None:
                    barrier.wait(timeout=120)
                _, history = client.submit(question, "auto", history, api_name="/respond").result(timeout=120)
            return _final_texts(history)
        finally:
            client.close()

    alone = [converse(chat) for chat in chats]
    barrier = threading.Barrier(len(chats))
    with ThreadPoolExecutor(len(chats)) as pool:
        together = list(pool.map(lambda c: converse(c, barrier), chats))
    for chat, a, t in zip(chats, alone, together, strict=True):
        assert len(a) == 2 and all("answered by" in x for x in a), (chat, a)
        assert t == a, chat
