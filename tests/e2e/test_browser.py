"""Browser test: the real UI (subprocess) with the real bundled model, driven by Debian chromium via Playwright."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.local_llm import free_port

pytestmark = pytest.mark.browser

def _url_of(seed_file: str, position: int) -> str:
    import json

    for line in (Path(__file__).resolve().parents[2] / "seeds" / "papers.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["seed_file"] == seed_file and row["position"] == position:
            return str(row["url"])
    raise LookupError(seed_file, position)


A_BENCH_URL = _url_of("000_43469673d6f8aaa0.txt", 8)
CHROMIUM = os.environ.get("ASSISTANT_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="module")
def ui_url(seeded_settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """``python -m assistant serve`` on a free port over the seeded index; yields its URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("ui") / "ui.log"
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage_dir), "ASSISTANT_UI_PORT": str(port)}
    env.pop("ASSISTANT_LLM_BASE_URL", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "assistant", "serve", "--no-ingest"], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"UI exited with {proc.returncode}:\n{Path(log).read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"UI did not start in 120 s:\n{Path(log).read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if proc.returncode not in (0, -15, 143, None):
            print(Path(log).read_text()[-3000:])


@pytest.fixture(scope="module")
def page(ui_url: str) -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: install Debian's chromium (scripts/test.sh does) or set ASSISTANT_TEST_CHROMIUM")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page()
        pg.goto(ui_url)
        yield pg
        browser.close()


def test_question_in_ui_shows_cited_answer_with_link_to_right_paper(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("#question textarea").fill("Which paper introduces A-Bench, a benchmark for evaluating LMMs on AI-generated images?")
    page.locator("#send").click()
    link = page.locator("#chat .refs a").first
    link.wait_for(timeout=90_000)
    assert "A-Bench" in link.inner_text()
    assert link.get_attribute("href") == A_BENCH_URL
    assert link.get_attribute("target") == "_blank"
    text = page.locator("#chat").inner_text()
    assert "[1]" in text
    assert "answered by smollm2" in text
