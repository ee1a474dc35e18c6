"""Helpers for the Playwright browser tests: what a reader sees, where things are on screen, and a log of
how an answer grew. Only reads the page (``visible_text`` replaces rendered formulas by their source)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Per-answer wait: the bundled model on 2 busy CPUs takes 2-30 s (first answer: caches warming up).
ANSWER_TIMEOUT_MS = 90_000

#: The element's rendered text (``innerText``), each KaTeX formula replaced by ``$source$`` (``$$…$$`` for
#: display math) taken from its TeX annotation, so it can be compared with the abstract's text.
_VISIBLE_TEXT_JS = """(el) => {
  for (const k of el.querySelectorAll('.katex-display, .katex')) {
    if (!k.isConnected) continue;
    const ann = k.querySelector('annotation[encoding="application/x-tex"]');
    const display = k.classList.contains('katex-display');
    const tex = ann ? ann.textContent : '(no annotation)';
    k.replaceWith(document.createTextNode(display ? '$$' + tex + '$$' : '$' + tex + '$'));
  }
  return el.innerText;
}"""

#: Words (split at spaces and hyphens) whose letters are laid out on more than one line: a word broken
#: in the middle.
_BROKEN_WORDS_JS = """(el) => {
  const broken = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const re = /[^\\s\\-]+/g;
    let m;
    while ((m = re.exec(node.data))) {
      const r = document.createRange();
      r.setStart(node, m.index);
      r.setEnd(node, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  return broken;
}"""

#: Records, on every change of the chat, what the newest answer shows (``window.__answerLog``), with the
#: milliseconds since the send button was clicked.
ANSWER_LOG_JS = """() => {
  window.__answerLog = [];
  let t0 = null;
  document.querySelector('#send').addEventListener('click', () => { t0 = performance.now(); }, {capture: true});
  const snap = () => {
    if (t0 === null) return;
    const bots = document.querySelectorAll('#chat [data-testid="bot"]');
    const m = bots[bots.length - 1];
    if (!m) return;
    const text = m.innerText;
    window.__answerLog.push({
      ms: performance.now() - t0,
      found: [...m.querySelectorAll('.found-list a')].map(a => a.href),
      status: !!m.querySelector('.status'),
      sentences: [...m.querySelectorAll('p.answer')].map(p => p.innerText).join(' '),
      cited: m.querySelectorAll('p.answer sup.cite').length,
      table: m.querySelectorAll('table.compare tbody tr').length,
      final: text.includes('answered by'),
      error: !!m.querySelector('.error'),
    });
  };
  new MutationObserver(snap).observe(document.querySelector('#chat'),
                                     {subtree: true, childList: true, characterData: true});
}"""


def collapse(text: str) -> str:
    """Whitespace runs as one space."""
    return " ".join(text.split())


def visible_text(locator: Any) -> str:
    """What the reader sees in ``locator``'s element, formulas as ``$source$``, whitespace collapsed."""
    return collapse(str(locator.evaluate(_VISIBLE_TEXT_JS)))


def broken_words(locator: Any) -> list[str]:
    """Words inside ``locator``'s element that are split across two lines."""
    return list(locator.evaluate(_BROKEN_WORDS_JS))


_NO_PENDING_OVERLAY_JS = """() => ![...document.querySelectorAll("[data-testid='status-tracker'].full")]
  .some((el) => !el.classList.contains("hide") && el.getBoundingClientRect().height > 0)"""


#: The elements the tests act on; Gradio mounts components one by one, so a tab that shows the question box
#: may not have the send button yet.
_READY_SELECTORS = ("#question textarea", "#send", "#chat")


def open_ui(page: Any, url: str, timeout_ms: int = 30_000) -> Any:
    """Load the chat at ``url`` in ``page`` and wait until the question box, send button and chat are all
    mounted; returns ``page``. Raises Playwright's ``TimeoutError`` after ``timeout_ms``."""
    page.goto(url)
    page.wait_for_function(
        "(sels) => sels.every((s) => document.querySelector(s) !== null)", arg=list(_READY_SELECTORS),
        timeout=timeout_ms)
    return page


@contextmanager
def new_tab(browser: Any, url: str, width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A fresh tab (a new browser session, so a new conversation) on the chat at ``url``, opened with
    :func:`open_ui`; closed on exit."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        yield open_ui(page, url)
    finally:
        page.close()


def ask(page: Any, question: str, turn: int, timeout_ms: int = ANSWER_TIMEOUT_MS) -> Any:
    """Ask ``question`` as the ``turn``-th (1-based) question; return that turn's finished bot message."""
    page.locator("#question textarea").fill(question)
    page.locator("#send").click()
    message = page.locator("#chat [data-testid='bot']").nth(turn - 1)
    message.get_by_text("answered by").wait_for(timeout=timeout_ms)
    # the event is over only when Gradio drops its "pending" overlays (they swallow clicks under load)
    page.wait_for_function(_NO_PENDING_OVERLAY_JS, timeout=timeout_ms)
    assert "could not be verified" not in message.inner_text()  # issue 25: never an answer's headline
    return message


def set_intent(page: Any, intent: str) -> None:
    """Pick ``intent`` in the "Answer as" dropdown."""
    page.locator("#intent input").click()
    page.get_by_role("option", name=intent, exact=True).click()
    assert page.locator("#intent input").input_value() == intent


def in_view(inner: dict[str, float], outer: dict[str, float], slack: float = 1.0) -> bool:
    """True when box ``inner`` lies vertically within box ``outer`` (bounding boxes from Playwright)."""
    return inner["y"] >= outer["y"] - slack and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack


_SCROLL_CHAT_TO_JS = """(el) => {
  let box = el.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(box).overflowY)))
    box = box.parentElement;
  if (box) box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - 8;
}"""


def scroll_chat_to(locator: Any) -> None:
    """Scroll the chat so that ``locator``'s element is at its top (for a screenshot)."""
    locator.evaluate(_SCROLL_CHAT_TO_JS)
    locator.page.wait_for_timeout(200)
