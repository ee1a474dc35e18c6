"""Browser tests of what the chat shows, against the real UI over the seeds plus tests/fixtures/special_seeds
(hostile and special characters), answering through a scripted model (tests/e2e/conftest.py
``special_ui_url``): the text on screen is exactly the abstracts' text, and answers appear as they are
produced and survive a model failure.

The text rule checked for every card (ui/text.py): whitespace collapsed; Markdown emphasis (``**x**``,
``*x*``) and text-mode LaTeX commands (``\\emph{x}``, ``\\%``) show their content; every formula
(``$…$``, ``$$…$$``; a single ``$`` before a digit that no formula closes is a dollar amount, not math) is
rendered by KaTeX from exactly its source (an unescaped ``%`` in it escaped); every other character is shown
as it is in the abstract: no entity, no lost backslash, underscore or dollar.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from assistant.ingest.corpus import read_papers
from tests.conftest import SEEDS
from tests.e2e.conftest import (
    BROKEN_QUESTION,
    SLOW_COMPARE_QUESTION,
    SLOW_QUESTION,
    SLOW_SENTENCES,
    SPECIAL_SEEDS,
)
from tests.support.browser import ANSWER_LOG_JS, ask, collapse, new_tab, set_intent, visible_text
from tests.support.fake_openai_server import PACE_S
from ui.text import display_text, split_math, text_style

pytestmark = pytest.mark.browser

CROISSANT_TITLE = "Don't <Panic>: Croissant_Net & the $5 Bakery Scheduler"
CROISSANT_AUTHORS = "Ryan D'Orazio, Ada_Lovelace <ada@example.org>, Bob & Alice $mith"
CROISSANT_ABSTRACT = (
    "We don't price GPU rental for $5 and $10 per hour; a full run costs $1,200 or about 10% of the budget. "
    "Our bakery-scheduling model, dubbed Croissant_Net, minimises an $\\ell_1$ loss subject to $a < b$ and $$E = "
    "mc^2$$, "
    "and it keeps <script>alert(1)</script> and <b>tags</b> as plain text. Markdown such as [a "
    "link](http://evil.example), "
    "![an image](http://evil.example/x.png), `code`, # a hash and snake_case_names must show literally, as must A & B, "
    "\"quotes\" and O'Neil's apostrophes.")
LEVAIN_TITLE = "Levain-Former: O'Brien's $\\alpha$-Timing for Sourdough_Fermentation"
LEVAIN_AUTHORS = "Zoë D'Angelo, Jean-Luc O'Brien"
LEVAIN_ABSTRACT = (
    "Sourdough fermentation timing is predicted from dough temperature with a model called Levain-Former, which "
    "reaches "
    "an error of $\\pm 3$ minutes. The baker's schedule, written by Zoë D'Angelo's team, uses 5 < 7 thresholds and "
    "costs "
    "under $20 to run, while a mixed recipe adds 2% salt. Levain-Former's code is at https://example.org/levain_former "
    "and it outperforms naive timers by $2.5\\times$.")
#: Written by hand (not derived by the code under test): title, authors and abstract as a reader must see them.
#: Its second sentence carries raw HTML, so ingest withholds it from answers (issue 37): the
#: card's abstract is the first sentence; the withheld sentence is shown below it, marked, as literal text.
CROISSANT_SHOWN = (CROISSANT_ABSTRACT.split(" Our bakery-scheduling")[0] + " Markdown such as"
                   + CROISSANT_ABSTRACT.split(" Markdown such as", 1)[1])
HAND_CHECKED = {"special.txt#1": (CROISSANT_TITLE, CROISSANT_AUTHORS, CROISSANT_SHOWN),
                "special.txt#2": (LEVAIN_TITLE, LEVAIN_AUTHORS, LEVAIN_ABSTRACT)}
_A, _B = "000_43469673d6f8aaa0.txt#", "004_c45bebc30e22eceb.txt#"
#: The seeds' expected text, by hand (issue 26.3: not computed with ui.text): every markup spot in the 38 seed
#: abstracts, read off the abstracts, and what a reader must see there by the module rule. Everything else
#: (formulas such as ``$\ell_1$``, plain ``%``, ``~``, quotes, ``na{\"i}ve``) shows as it is in the abstract.
SEED_SPOTS: dict[str, list[tuple[str, str]]] = {
    _A + "1": [("\\emph{efficiently}", "efficiently")],
    _A + "8": [("**A-Bench**", "A-Bench"),
               ("*whether LMMs are masters at evaluating AIGIs*", "whether LMMs are masters at evaluating AIGIs")],
    _A + "9": [("Models~(LLMs)", "Models (LLMs)"),  # a TeX tie (issue 43.8)
               ("**Specificity Failure**", "Specificity Failure"), ("**Attention Drift**", "Attention Drift"),
               ("**S**elective **A**ttention **D**rift **R**estriction(**SADR**)",
                "Selective Attention Drift Restriction(SADR)")],
    _A + "12": [("$11.25%$%", "$11.25$%")],  # a TeX comment inside a formula is dropped, as TeX does (issue 43.8)
    _A + "13": [("377\\%", "377%"), ("3.5\\%", "3.5%")],
    _B + "2": [("**with a Total score of 85.13**", "with a Total score of 85.13")],
    _B + "3": [("\\textit{Adam with Combinatorial Bandit Sampling}", "Adam with Combinatorial Bandit Sampling")],
    _B + "9": [("*de facto*", "de facto"), ("90\\%", "90%")],
    _B + "11": [("29\\%", "29%"), ("17\\%", "17%"), ("$\\textit{trying}$", "trying"),
                ("$\\underline{Le}$arning to $\\underline{Re}$trieve by $\\underline{T}$rying",
                 "Learning to Retrieve by Trying")],  # text-styling formulas are styled text (issue 43.8)
}


def seed_expected(paper_id: str, raw: str) -> str:
    """A seed's text as a reader must see it, from :data:`SEED_SPOTS` (formulas as ``$source$``)."""
    for markup, visible in SEED_SPOTS.get(paper_id, []):
        assert markup in raw, (paper_id, markup)
        raw = raw.replace(markup, visible)
    return collapse(raw)


def shown(text: str) -> str:
    """The module rule: ``text`` as the reader must see it, formulas as ``$source$``."""
    out = []
    for seg in split_math(text):
        if seg.math and text_style(seg.text) is not None:
            out.append(text_style(seg.text)[1])  # type: ignore[index]
        elif seg.math:
            out.append(f"$${seg.text}$$" if seg.display else f"${seg.text}$")
        else:
            out.append(display_text(seg.text))
    return collapse("".join(out))


def _authors(authors: tuple[str, ...]) -> str:
    """A card's author line: the first six, then "et al."."""
    return ", ".join(authors[:6]) + (" et al." if len(authors) > 6 else "")


@pytest.fixture
def page(browser, special_ui_url: str) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A fresh tab on the special-text UI (a new conversation)."""
    with new_tab(browser, special_ui_url) as pg:
        yield pg


def test_the_hand_written_seed_spots_cover_every_markup() -> None:
    """No seed has markup outside formulas that :data:`SEED_SPOTS` leaves out (else its expectation would be
    the raw markup); titles and authors have none at all."""
    for paper in read_papers([SEEDS]):
        text = seed_expected(paper.id, paper.text).replace('na{\\"i}ve', "naive")
        outside_math = re.sub(r"\$[^$]*\$", "", text)
        assert not re.search(r"\*\S|\\[a-z%]|[{}]", outside_math), (paper.id,
                                                                    re.findall(r".{20}[*\\{}].{20}", outside_math))
        assert not re.search(r"[*\\{}$_~`^]", paper.title + " ".join(paper.authors)), paper.id


def test_the_rule_itself_on_hand_written_cases() -> None:
    """The rule the browser test applies, against expectations written by hand."""
    marked = "**A-Bench** costs $5 and $10, \\emph{not} 10\\% of $\\ell_1$, $11.25%$%, $\\underline{Le}$arning"
    assert shown(marked) == "A-Bench costs $5 and $10, not 10% of $\\ell_1$, $11.25$%, Learning"
    assert shown(CROISSANT_ABSTRACT.replace("Croissant_Net,", "**Croissant_Net**,")) == CROISSANT_ABSTRACT


def test_every_card_shows_exactly_its_title_authors_and_abstract(page) -> None:  # type: ignore[no-untyped-def]
    papers = read_papers([SEEDS, SPECIAL_SEEDS])
    assert len(papers) == 40 and {p.id for p in papers} >= set(HAND_CHECKED)
    set_intent(page, "summary")  # each title asked as a summary: the answer cites that paper, with its card
    mismatches = []
    for paper in papers:
        if page.locator("#chat [data-testid='bot']").count():  # a fresh conversation: no follow-up resolution
            page.locator("#new-chat").click()
            page.get_by_text("No papers cited yet").wait_for(timeout=30_000)
        message = ask(page, paper.title, 1, timeout_ms=60_000)
        cards = message.locator("li.card")
        assert cards.count() == 1, (paper.id, message.inner_text()[:500])
        card = cards.first
        card.locator("summary").click()
        title, authors, abstract = HAND_CHECKED.get(  # by hand, never via ui.text (see SEED_SPOTS)
            paper.id, (collapse(paper.title), collapse(_authors(paper.authors)), seed_expected(paper.id, paper.text)))
        got = (visible_text(card.locator(".title").first),
               visible_text(card.locator(".authors")) if paper.authors else "",
               visible_text(card.locator(".abstract")))
        for what, seen, want in zip(("title", "authors", "abstract"), got,
                                    (title, authors if paper.authors else "", abstract)):
            if seen != want:
                at = next((i for i, (a, b) in enumerate(zip(seen, want)) if a != b), min(len(seen), len(want)))
                mismatches.append(f"{paper.id} {what}: shows …{seen[max(0, at - 40):at + 40]!r}… expected "
                                  f"…{want[max(0, at - 40):at + 40]!r}…")
        assert card.locator(".katex-error").count() == 0, paper.id
        # all inert, the withheld text too
        assert card.locator(".abstract a, .abstract img, .abstract script, .abstract b").count() == 0, paper.id
        assert card.locator(".withheld a, .withheld img, .withheld script, .withheld b").count() == 0, paper.id
        if paper.id == "special.txt#1":
            assert "<script>alert(1)</script>" in visible_text(card.locator(".withheld"))
    assert not mismatches, "\n".join(mismatches)
    # the references panel (no KaTeX there): title and authors exactly, formulas as their source
    panel = page.locator("#refs-so-far")
    panel.get_by_text("Sourdough_Fermentation", exact=False).first.wait_for(timeout=30_000)
    text = panel.inner_text()
    assert LEVAIN_TITLE in text and LEVAIN_AUTHORS in text
    assert "&#" not in page.locator("#chat").inner_text() and "&amp;" not in text


def test_papers_found_then_the_cited_answer_then_each_model_sentence_as_it_is_verified(page) -> None:  # type: ignore[no-untyped-def]
    """Issue 25.1: the answer built from the abstracts is on screen right after the papers found; each
    sentence the (slow) model writes is added once verified, one by one; no "could not be verified" headline."""
    page.evaluate(ANSWER_LOG_JS)
    message = ask(page, SLOW_QUESTION, 1, timeout_ms=60_000)
    log = page.evaluate("window.__answerLog")
    first_found = next(e for e in log if e["found"])
    assert not first_found["final"], first_found  # papers found are shown while the answer is being written
    assert any("openreview.net/search?term=Levain-Former" in href for href in first_found["found"])
    model = [collapse(s.replace(" [1]", "")) for s in SLOW_SENTENCES]
    first_text = next(e for e in log if e["cited"])  # the cited answer from the abstracts ...
    assert not first_text["final"] and model[0] not in first_text["sentences"], first_text  # ... before the model's
    growing = [e for e in log if not e["final"]]
    one = next(e for e in growing if model[0] in e["sentences"])
    two = next(e for e in growing if model[1].split("$")[0] in e["sentences"])
    # one by one, in the model's order; a checked sentence is shown at the next text the model streams (here a
    # paced server sends a sentence every PACE_S, so two checked sentences may appear together)
    assert first_text["ms"] <= one["ms"] <= two["ms"]
    final_text = message.inner_text()
    for sentence in model:
        assert sentence.split("$")[0] in final_text
    assert "could not be verified" not in final_text and "Papers found" not in final_text
    assert message.locator("p.answer sup.cite").count() >= 3


def test_a_model_failure_keeps_what_was_shown_and_says_so_once(page) -> None:  # type: ignore[no-untyped-def]
    page.evaluate(ANSWER_LOG_JS)
    message = ask(page, BROKEN_QUESTION, 1, timeout_ms=60_000)
    log = page.evaluate("window.__answerLog")
    before = [e for e in log if not e["final"] and e["cited"]]
    assert before, "no cited sentence was shown before the failure"
    final = collapse(message.locator("p.answer").inner_text())
    assert final.startswith(collapse(before[-1]["sentences"]))  # everything already shown is still there, first
    assert message.locator("p.answer sup.cite").count() >= before[-1]["cited"]
    notices = message.locator("p.notice")
    assert notices.count() == 1 and "language model failed" in notices.inner_text()  # one line says what happened
    assert message.locator("li.card").count() >= 1 and message.locator(".error").count() == 0


def test_the_comparison_table_shows_before_the_answer_is_complete(page) -> None:  # type: ignore[no-untyped-def]
    page.evaluate(ANSWER_LOG_JS)
    message = ask(page, SLOW_COMPARE_QUESTION, 1, timeout_ms=60_000)
    log = page.evaluate("window.__answerLog")
    early = [e for e in log if e["table"] and not e["final"]]
    assert early and early[0]["table"] == 2
    final = next(e for e in log if e["final"])
    assert final["ms"] - early[0]["ms"] >= PACE_S * 1000 * 0.6  # on screen while the model was still writing
    assert message.locator("table.compare tbody tr").count() == 2


def test_typing_while_an_answer_is_written_is_kept_and_send_waits(page) -> None:  # type: ignore[no-untyped-def]
    """Issue 25.4: the box is never overwritten by an answer; Send is visibly disabled while one is being
    written, and Enter then says so instead of dropping the question silently."""
    from ui.app import ANSWERING, SEND

    box, send = page.locator("#question textarea"), page.locator("#send")
    box.fill(SLOW_QUESTION)
    send.click()
    message = page.locator("#chat [data-testid='bot']").first
    message.locator(".status").wait_for(timeout=30_000)
    assert box.input_value() == ""  # the question went into the chat
    assert send.is_disabled() and send.inner_text().strip() == ANSWERING
    draft = "What error does Levain-Former reach?"
    box.fill(draft)
    box.press("Enter")  # sent too early: kept, and a notice says why nothing happened
    page.locator("#input-note").get_by_text("still being written").wait_for(timeout=10_000)
    assert message.get_by_text("answered by").count() == 0  # the notice came while the answer was being written
    message.get_by_text("answered by").wait_for(timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#send').disabled", timeout=30_000)
    assert box.input_value() == draft and send.inner_text().strip() == SEND  # still there after the answer
    assert page.locator("#input-note").inner_text().strip() == ""  # the note is gone once Send works again
    assert page.locator("#chat [data-testid='user']").count() == 1  # the early Enter asked nothing
    second = ask(page, draft, 2, timeout_ms=60_000)
    assert "Levain-Former" in second.inner_text()
