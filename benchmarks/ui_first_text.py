"""Through the chat UI in a real browser: milliseconds from Send to the first cited text on screen (a cited
sentence or a comparison table) and to the finished answer ("answered by"), per question, then p50/p95.
Starts ``python -m ui --no-ingest`` on a free port over ``ASSISTANT_STORAGE_DIR`` (bundled model unless
``ASSISTANT_LLM_BASE_URL`` is set) and drives Debian's chromium with Playwright. Not a test.

Usage: ASSISTANT_STORAGE_DIR=... .venv/bin/python benchmarks/ui_first_text.py [--questions eval/dev.jsonl] [--limit 42]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from assistant.llm.local import free_port
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.support.browser import ANSWER_LOG_JS, open_ui


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))] if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=Path("eval/dev.jsonl"))
    ap.add_argument("--limit", type=int, default=42)
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    questions = [r.get("question") or r["turns"][0] for r in rows][: args.limit]
    port = free_port()
    env = {**os.environ, "ASSISTANT_UI_PORT": str(port)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ui", "--no-ingest"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/"
    firsts: list[float] = []
    totals: list[float] = []
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            deadline = time.monotonic() + 180
            while True:
                try:
                    page = open_ui(browser.new_page(viewport={"width": 1280, "height": 900}), url)
                    break
                except Exception:  # noqa: BLE001 - the UI is still starting
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(2)
            page.close()
            for q in questions:
                page = open_ui(browser.new_page(viewport={"width": 1280, "height": 900}), url)
                page.evaluate(ANSWER_LOG_JS)
                page.locator("#question textarea").fill(q)
                page.locator("#send").click()
                page.locator("#chat [data-testid='bot']").first.get_by_text("answered by").wait_for(timeout=120_000)
                log = page.evaluate("window.__answerLog")
                first = next((e["ms"] for e in log if e["cited"] or e["table"]), None)
                total = next(e["ms"] for e in log if e["final"])
                firsts.append(first if first is not None else total)
                totals.append(total)
                print(f"{firsts[-1] / 1000:6.2f} s first text {total / 1000:6.2f} s full  {q[:70]}", flush=True)
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    first = f"{_pct(firsts, 0.5) / 1000:.2f}/{_pct(firsts, 0.95) / 1000:.2f}"
    full = f"{_pct(totals, 0.5) / 1000:.2f}/{_pct(totals, 0.95) / 1000:.2f}"
    print(f"\n{len(questions)} questions; first cited text p50/p95 {first} s; full answer p50/p95 {full} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
