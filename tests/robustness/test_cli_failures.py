"""No traceback reaches a user from any command, whatever fails after the work is done: every command runs
against a real index with a failure injected where its result is written (a full disk on stdout, a
conversation file that cannot be saved, an exception from the renderer or from the UI's or the API's server)."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.llm.local import free_port
from tests.support.fake_openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "tiny_seeds"
Q = "Which paper proposes A-Bench?"


class FullDisk(io.TextIOBase):
    """A stdout on a full disk: every write and flush fails with ENOSPC (as ``> /dev/full`` does)."""

    def write(self, s: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    return errors[0]


@pytest.fixture()
def scripted_env(seeded_settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The seeded index and a scripted LLM endpoint, through the environment (as a user sets them)."""
    with FakeOpenAIServer(["A-Bench is a benchmark for LMMs."] * 50) as server:
        monkeypatch.setenv("ASSISTANT_STORAGE_DIR", str(seeded_settings.storage.storage_dir))
        monkeypatch.setenv("ASSISTANT_LLM_BASE_URL", server.base_url)
        monkeypatch.chdir(tmp_path)
        yield server


def test_ingest_and_delete_with_a_full_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from assistant.config import Settings
    from assistant.index.store import PaperStore

    index = tmp_path / "index"
    monkeypatch.setattr(sys, "stdout", FullDisk())
    assert main(["ingest", "--no-progress", str(TINY), "--storage-dir", str(index)]) == 1
    assert "could not write the output to stdout (No space left on device)" in _one_error_line(capsys.readouterr().err)
    assert (
        len(PaperStore.open_for_read(Settings().updated(storage_dir=index)).load_papers()) == 3
    )  # the work itself was done
    assert main(["delete", "tiny.txt#2", "--storage-dir", str(index)]) == 1
    assert "No space left on device" in _one_error_line(capsys.readouterr().err)
    assert set(PaperStore.open_for_read(Settings().updated(storage_dir=index)).load_papers()) == {
        "tiny.txt#1",
        "tiny.txt#3",
    }


@pytest.mark.parametrize("argv", [
    ["ask", Q],
    ["ask", "--json", Q],
    ["eval", "--questions", str(REPO / "eval" / "dev.jsonl"), "--retrieval-only", "--limit", "2", "--no-progress"],
    ["eval", "--questions", str(REPO / "eval" / "dev.jsonl"), "--limit", "1", "--no-progress"],
    ["eval-claims", "--claims", "claims.jsonl", "--no-progress"],
])
def test_reading_commands_with_a_full_stdout(argv: list[str], scripted_env, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                             capsys: pytest.CaptureFixture[str]) -> None:
    Path("claims.jsonl").write_text("\n".join((REPO / "eval" / "claims-dev.jsonl").read_text().splitlines()[:2]) + "\n")
    monkeypatch.setattr(sys, "stdout", FullDisk())
    assert main(argv) == 1
    assert "No space left on device" in _one_error_line(capsys.readouterr().err)


def test_ask_session_prints_the_answer_then_says_the_save_failed(scripted_env, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from assistant.conversation.session import ChatSession

    assert main(["ask", "--session", "chat.json", Q]) == 0
    saved = Path("chat.json").read_text()
    assert len(json.loads(saved)["turns"]) == 1
    capsys.readouterr()

    def broken_save(self: ChatSession, path: Path) -> None:
        raise RuntimeError("injected after the answer")

    monkeypatch.setattr(ChatSession, "save", broken_save)
    assert main(["ask", "--session", "chat.json", "How many models did they sample images from?"]) == 1
    out, err = capsys.readouterr()
    assert "References:" in out and "[1]" in out  # the answer reached the user
    line = _one_error_line(err)
    assert "not saved to chat.json" in line and "injected after the answer" in line
    assert Path("chat.json").read_text() == saved  # the conversation file is untouched


def test_an_unexpected_exception_after_the_answer_is_one_line(scripted_env, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import assistant.answer.render

    def broken(*a: object, **k: object) -> str:
        raise KeyError("injected")

    monkeypatch.setattr(assistant.answer.render, "answer_to_text", broken)
    assert main(["ask", Q]) == 1
    assert _one_error_line(capsys.readouterr().err).startswith(
        "error: internal error, unexpected KeyError: 'injected'"
    )


def test_ui_launch_failure_is_one_line(  # type: ignore[no-untyped-def]
        scripted_env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import assistant.api.server
    from ui.cli import main as ui_main

    def broken_launch(*a: object, **k: object) -> None:
        raise RuntimeError("injected at launch")

    monkeypatch.setattr(assistant.api.server, "run_app", broken_launch)  # the server that serves the page and API
    assert ui_main(["--no-ingest", "--port", str(free_port())]) == 1
    out, err = capsys.readouterr()
    assert "Chat UI on http://127.0.0.1:" in out
    assert "injected at launch" in _one_error_line(err)


def test_api_server_failure_is_one_line(  # type: ignore[no-untyped-def]
        scripted_env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import assistant.api.server

    def broken_launch(*a: object, **k: object) -> None:
        raise RuntimeError("injected at launch")

    monkeypatch.setattr(assistant.api.server, "run_app", broken_launch)
    assert main(["serve", "--port", str(free_port())]) == 1
    out, err = capsys.readouterr()
    assert "OpenAI-compatible API on http://127.0.0.1:" in out
    assert "injected at launch" in _one_error_line(err)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_real_full_disk_on_stdout_gives_one_line_and_no_exit_time_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(tmp_path / "index")}
    seeds = tmp_path / "seeds"
    shutil.copytree(TINY, seeds)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "assistant", "ingest", "--no-progress", str(seeds)], cwd=REPO,
                              env=env,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 1
    assert "Exception ignored" not in proc.stderr
    assert "No space left on device" in _one_error_line(proc.stderr)


def test_a_broken_citation_verifier_is_an_internal_error_not_a_model_failure(  # type: ignore[no-untyped-def]
    scripted_env, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26.1: a bug in our own checker exits 1 with one "internal error" line; it is never shown as
    "The language model failed" followed by an extractive answer."""
    from assistant.verify.attribution import Attributor

    def broken(self: object, sentence: str, paper: int | None = None) -> None:
        raise ZeroDivisionError("injected into the verifier")

    monkeypatch.setattr(Attributor, "attribute", broken)
    scripted_env.replies[:] = ["A-Bench is a benchmark for LMMs. It was written by Google DeepMind. A-Bench has two "
                               "parts."]
    assert main(["ask", "Which paper introduces A-Bench?"]) == 1
    out, err = capsys.readouterr()
    line = _one_error_line(err)
    assert line.startswith("error: internal error, unexpected ZeroDivisionError: injected into the verifier"), line
    assert "language model" not in (out + err).lower().replace("not in your input or the model", "")
    assert "References:" not in out  # no extractive answer dressed up as a fallback
    assert scripted_env.requests  # the model was asked: the failure came after it answered
