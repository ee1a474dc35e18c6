"""E2E fixtures: the real UI (``python -m ui --no-ingest``) as a subprocess over the session's
seeded index, on a free port, with the bundled model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.llm.local import free_port
from tests.support.servers import wait_for_http

UI_START_TIMEOUT_S = 120
CHROMIUM = os.environ.get("ASSISTANT_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
SPECIAL_SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "special_seeds"
#: Seconds the UI gets to shut down (it stops its model server) before it is killed.
UI_STOP_TIMEOUT_S = 20


def _children(pid: int) -> list[int]:
    """Direct child process ids of ``pid`` (Linux /proc; empty elsewhere or when it is gone)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return out


def _stop_leftover(pid: int) -> None:
    """SIGTERM, then SIGKILL, a child the UI started (its model server) if it outlived the UI."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if not Path(f"/proc/{pid}").exists() or "zombie" in _state(pid):
                return
            time.sleep(0.1)


def _state(pid: int) -> str:
    try:
        return next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("State:")).lower()
    except (OSError, StopIteration):
        return ""


def _running_ui(overrides: dict[str, str | None], log: Path) -> Iterator[str]:
    """Start ``python -m ui`` on a free port with ``overrides`` on top of this environment (None removes a
    variable), wait until its page answers, yield its URL, stop it (its log goes to ``log``)."""
    port = free_port()
    env = {**os.environ, "ASSISTANT_UI_PORT": str(port)}
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = _serve(env, log)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_http(url, proc, timeout_s=UI_START_TIMEOUT_S, log=log)
        yield url
    finally:
        _stop(proc, log)


def _serve(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "ui", "--no-ingest"], env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def _stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Stop the UI and any child it left running (its bundled model server)."""
    children = _children(proc.pid)  # the bundled model server: must not outlive the UI
    proc.terminate()
    try:
        proc.wait(timeout=UI_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    leftovers = [pid for pid in children if Path(f"/proc/{pid}").exists()]
    for pid in leftovers:
        _stop_leftover(pid)
    if proc.returncode not in (0, 130, -15, 143, None) or leftovers:
        print(f"UI exit code {proc.returncode}; children left running: {leftovers}\n{log.read_text()[-3000:]}")


#: Questions the scripted model of :func:`special_ui_url` answers slowly, one verified sentence every
#: ``PACE_S`` seconds (the second one breaks off after two sentences); any other question gets an
#: unsupported reply, so its answer is the cited extractive one.
SLOW_QUESTION = "How does Levain-Former predict sourdough fermentation timing?"
BROKEN_QUESTION = "What error does Levain-Former reach on sourdough fermentation timing?"
SLOW_COMPARE_QUESTION = "Compare Levain-Former with the Croissant_Net bakery scheduler."
SLOW_SENTENCES = ("Sourdough fermentation timing is predicted from dough temperature with a model called Levain-Former "
                  "[1].",
                  "Levain-Former reaches an error of $\\pm 3$ minutes [1].",
                  "Levain-Former outperforms naive timers by $2.5\\times$ [1].")


def scripted_reply(payload: dict[str, object]) -> str:
    """The scripted model's reply to a chat request (see :data:`SLOW_QUESTION`)."""
    from tests.support.fake_openai_server import PACED, PACED_CUT

    prompt = str(payload.get("messages", [{}])[-1].get("content", ""))  # type: ignore[index]
    if SLOW_QUESTION in prompt:
        return PACED + " ".join(SLOW_SENTENCES)
    if BROKEN_QUESTION in prompt:
        return PACED_CUT + " ".join(SLOW_SENTENCES)  # breaks off after the third sentence
    if SLOW_COMPARE_QUESTION in prompt:
        return PACED + "Bananas are yellow. Apples are red. Cherries are dark."  # slow, and never supported
    return "Bananas are yellow."


@pytest.fixture(scope="session")
def special_ui_url(embed_model, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The real UI over the seeds plus ``tests/fixtures/special_seeds`` (titles, authors and abstracts with
    apostrophes, underscores, ``<``, ``&``, dollar amounts, LaTeX, Markdown), answering through a scripted
    LLM (:func:`scripted_reply`): fast, unsupported replies (so answers are the cited extractive ones), and a
    slow one and a broken one for watching an answer grow."""
    from assistant.config import Settings
    from assistant.ingest.pipeline import ingest
    from tests.conftest import SEEDS
    from tests.support.fake_openai_server import FakeOpenAIServer

    settings = Settings().updated(storage_dir=tmp_path_factory.mktemp("special-index"))
    ingest(settings, [SEEDS, SPECIAL_SEEDS], embed_model, progress=False)
    with FakeOpenAIServer(scripted_reply) as llm:
        yield from _running_ui({"ASSISTANT_STORAGE_DIR": str(settings.storage.storage_dir),
                                "ASSISTANT_LLM_BASE_URL": llm.base_url},
                               tmp_path_factory.mktemp("special-ui") / "ui.log")


@pytest.fixture(scope="session")
def mixed_ui_url(embed_model, local_llm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The real UI over the seeds plus the 45 real corpus papers of ``eval/claims-corpus-papers.jsonl`` (83
    papers, venues and authors): enough for a topic list with more than one page. It answers with the session's
    bundled 1.5B server (``local_llm``)."""
    from assistant.config import Settings
    from assistant.ingest.pipeline import ingest
    from tests.conftest import REPO, SEEDS

    settings = Settings().updated(storage_dir=tmp_path_factory.mktemp("mixed-index"))
    ingest(settings, [SEEDS, REPO / "eval" / "claims-corpus-papers.jsonl"], embed_model, progress=False)
    yield from _running_ui({"ASSISTANT_STORAGE_DIR": str(settings.storage.storage_dir), **_bundled(local_llm)},
                           tmp_path_factory.mktemp("mixed-ui") / "ui.log")


@pytest.fixture(scope="session")
def ui_url(seeded_settings, local_llm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """``python -m ui`` on a free port over the seeded index (one per test session, shared
    by the browser and API tests), answering with the session's bundled 1.5B server (``local_llm``: one model
    process for the whole session); yields its URL."""
    yield from _running_ui(
        {"ASSISTANT_STORAGE_DIR": str(seeded_settings.storage.storage_dir), **_bundled(local_llm)},
        tmp_path_factory.mktemp("ui") / "ui.log",
    )


def _bundled(server: object) -> dict[str, str | None]:
    """Environment that points a UI subprocess at the session's bundled model server."""
    return {"ASSISTANT_LLM_BASE_URL": server.base_url, "ASSISTANT_LLM_MODEL": server.model}  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's chromium driven by Playwright (one per test module)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: install Debian's chromium (scripts/test.sh does) or set "
                    f"ASSISTANT_TEST_CHROMIUM")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where browser tests save their screenshots: ``ASSISTANT_SCREENSHOT_DIR`` (``docs/screenshots`` to
    refresh the README's pictures), else a temp dir."""
    env = os.environ.get("ASSISTANT_SCREENSHOT_DIR")
    path = Path(env) if env else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path
