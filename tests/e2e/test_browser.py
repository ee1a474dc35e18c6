"""Browser tests: the real UI (subprocess, see conftest.py) with the real bundled model, driven by Debian
chromium via Playwright."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.seeds import url_of

pytestmark = pytest.mark.browser

A_BENCH_URL = url_of("000_43469673d6f8aaa0.txt", 8)
COOKBOOK_URL = url_of("004_c45bebc30e22eceb.txt", 6)
#: Per-answer wait: the bundled model on 2 busy CPUs takes 2-30 s (first answer: caches warming up).
ANSWER_TIMEOUT_MS = 90_000


@pytest.fixture
def page(browser, ui_url: str) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A fresh tab: a new browser session, so a new conversation."""
    pg = browser.new_page()
    pg.goto(ui_url)
    yield pg
    pg.close()


def _ask(page, question: str, turn: int):  # type: ignore[no-untyped-def]
    """Ask ``question`` as the ``turn``-th (1-based) question and return that turn's finished bot message."""
    page.locator("#question textarea").fill(question)
    page.locator("#send").click()
    message = page.locator("#chat [data-testid='bot']").nth(turn - 1)
    message.get_by_text("answered by").wait_for(timeout=ANSWER_TIMEOUT_MS)
    return message


def _label_of(message, url: str) -> str:  # type: ignore[no-untyped-def]
    """The ``[n]`` of the reference card in ``message`` that links to ``url``."""
    card = message.locator(".refs li").filter(has=message.page.locator(f'a[href="{url}"]'))
    return str(card.locator(".ref-n").inner_text()).strip()


def test_question_in_ui_shows_cited_answer_with_link_to_right_paper(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("#question textarea").fill("Which paper introduces A-Bench, a benchmark for evaluating LMMs on AI-generated images?")
    page.locator("#send").click()
    link = page.locator("#chat .refs a").first
    link.wait_for(timeout=ANSWER_TIMEOUT_MS)
    assert "A-Bench" in link.inner_text()
    assert link.get_attribute("href") == A_BENCH_URL
    assert link.get_attribute("target") == "_blank"
    text = page.locator("#chat").inner_text()
    assert "[1]" in text
    assert "answered by smollm2" in text


def test_three_turn_conversation_keeps_labels_and_compares(page) -> None:  # type: ignore[no-untyped-def]
    panel = page.locator("#refs-so-far")
    assert "No papers cited yet" in panel.inner_text()
    assert page.locator("#export-md").is_disabled()

    first = _ask(page, "Which paper introduces A-Bench?", 1)
    label = _label_of(first, A_BENCH_URL)
    assert re.fullmatch(r"\[\d+\]", label), label
    panel.locator(f'a[href="{A_BENCH_URL}"]').wait_for(timeout=30_000)  # panel updated after the answer

    second = _ask(page, "How many text-to-image models did they sample images from?", 2)
    assert _label_of(second, A_BENCH_URL) == label  # "they" resolved to A-Bench, same label
    assert "searched for:" in second.inner_text() and "A-Bench" in second.locator(".meta").inner_text()

    third = _ask(page, "Compare it with the Number Cookbook paper.", 3)
    rows = third.locator("table.compare tbody tr")
    assert rows.count() == 2
    row_links = {rows.nth(i).locator("th a").get_attribute("href"): rows.nth(i).locator("th").inner_text() for i in range(2)}
    assert set(row_links) == {A_BENCH_URL, COOKBOOK_URL}
    assert row_links[A_BENCH_URL].startswith(f"{label} ")  # A-Bench keeps its [n] from turn 1
    assert third.locator("table.compare thead th").count() >= 3
    assert _label_of(third, A_BENCH_URL) == label
    assert third.locator(".refs a").first.get_attribute("target") == "_blank"
    assert "intent: compare" in third.inner_text()

    panel.locator(f'a[href="{COOKBOOK_URL}"]').wait_for(timeout=30_000)
    items = panel.locator("li")
    assert items.count() == 2
    assert {items.nth(i).locator("a").get_attribute("href") for i in range(2)} == {A_BENCH_URL, COOKBOOK_URL}
    assert label in panel.locator("li").filter(has=page.locator(f'a[href="{A_BENCH_URL}"]')).inner_text()

    assert not page.locator("#export-md").is_disabled() and not page.locator("#export-bib").is_disabled()
    with page.expect_download(timeout=30_000) as download:
        page.locator("#export-bib").click()
    bib = Path(download.value.path()).read_text()
    assert bib.count("@inproceedings{") == 2 and A_BENCH_URL in bib and COOKBOOK_URL in bib

    page.locator("#new-chat").click()
    page.get_by_text("No papers cited yet").wait_for(timeout=30_000)
    assert page.locator("#chat [data-testid='bot']").count() == 0


def test_example_on_the_empty_chat_asks_it(page) -> None:  # type: ignore[no-untyped-def]
    from ui.app import EXAMPLES

    topic = next(q for q in EXAMPLES if q.startswith("Which papers"))  # a listing: answered without the model
    example = page.locator("#chat").get_by_text(topic)
    example.wait_for(timeout=30_000)
    example.click()
    message = page.locator("#chat [data-testid='bot']").first
    message.get_by_text("answered by").wait_for(timeout=ANSWER_TIMEOUT_MS)
    assert "intent: topic" in message.inner_text()
    assert topic in page.locator("#chat [data-testid='user']").first.inner_text()
    page.locator("#refs-so-far li").first.wait_for(timeout=30_000)
    assert page.locator("#refs-so-far li").count() == message.locator(".refs li").count() >= 1
