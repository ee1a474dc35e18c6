"""The documented commands are a test: each line of docs/usage.md's "Using it" block is parsed from that doc
(so a changed doc is re-tested) and run as written, in order, from a scratch folder, against a copy of the
seeded index with a scripted OpenAI-compatible endpoint standing in for the model; the README's short "Asking"
block must be a part of that block (so it is run too). ``assistant`` lines run in-process through
``assistant.cli.main``; the servers run as subprocesses until they answer: ``assistant-ui`` as ``python -m ui``
(its page), ``assistant serve`` as ``python -m assistant serve`` (``/v1/models``)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.answer.render import AnswerJSON
from assistant.cli import main
from assistant.llm.local import free_port
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.servers import wait_for_http

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = {".venv/bin/assistant": "assistant", ".venv/bin/assistant-ui": "ui"}


def _block_commands(doc: str, heading: str) -> list[list[str]]:
    """The argv of every line of the first ```bash block under ``heading`` of ``doc`` (comments dropped)."""
    text = (REPO / doc).read_text()
    section = text[text.index(heading):]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, f"{doc}: no ```bash block under {heading!r}"
    commands = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    return [c for c in commands if c]


def readme_commands() -> list[list[str]]:
    """The argv of every line of docs/usage.md's "Using it" block: every command, in the order run."""
    return _block_commands("docs/usage.md", "## Using it")


def test_the_readme_block_is_part_of_the_usage_block() -> None:
    asking = _block_commands("README.md", "## Asking")
    assert asking, "README: no commands under 'Asking'"
    missing = [" ".join(c) for c in asking if c not in readme_commands()]
    assert missing == [], "README commands not in docs/usage.md's block (so not run)"


def test_the_block_shows_every_command() -> None:
    commands = readme_commands()
    assert {c[0] for c in commands} == set(PROGRAMS), "every line runs one of our two programs"
    shown = {c[1] for c in commands if c[0] == ".venv/bin/assistant"}
    assert shown == {"ingest", "delete", "ask", "papers", "serve", "eval", "eval-claims"}


def test_every_readme_command_runs_as_written(seeded_settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                              capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "index"
    shutil.copytree(seeded_settings.storage.storage_dir, index)
    work = tmp_path / "work"
    work.mkdir()
    for name in ("seeds", "eval"):  # what the commands read, relative to the repository root
        (work / name).symlink_to(REPO / name)
    monkeypatch.chdir(work)
    monkeypatch.setenv("ASSISTANT_STORAGE_DIR", str(index))
    monkeypatch.delenv("ASSISTANT_LLM_BASE_URL", raising=False)
    ran = []
    with FakeOpenAIServer(["A-Bench is a benchmark for large multimodal models."] * 200) as llm:
        monkeypatch.setenv("ASSISTANT_LLM_BASE_URL", llm.base_url)
        for argv in readme_commands():
            program, args = PROGRAMS[argv[0]], argv[1:]
            if program == "ui":
                _run_ui(args, work)
                ran.append(argv)
                continue
            if args[:1] == ["serve"]:
                _run_serve(args, work)
                ran.append(argv)
                continue
            code = main(args)
            out, err = capsys.readouterr()
            assert code == 0, (argv, err)
            assert out.strip(), argv  # every command prints its result on stdout
            assert "Traceback" not in err and "error:" not in err, (argv, err)
            if "--json" in args and args[0] == "ask":
                AnswerJSON.model_validate(json.loads(out))
            if args == ["papers", "--count"]:
                assert out.strip() == "38", out
            ran.append(argv)
    assert len(ran) == len(readme_commands())
    assert len(json.loads((work / "chat.json").read_text())["turns"]) == 3  # the documented conversation
    assert json.loads((work / "eval-report.json").read_text())["items"]


def _run_ui(args: list[str], cwd: Path) -> None:
    port = free_port()
    env = {**os.environ, "ASSISTANT_UI_PORT": str(port), "PYTHONPATH": str(REPO)}
    log = cwd / "ui.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ui", *args], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", proc, timeout_s=180, log=log)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert f"Chat UI on http://127.0.0.1:{port}" in text
    assert "share=True" not in text and "Traceback" not in text, text[-3000:]


def _run_serve(args: list[str], cwd: Path) -> None:
    port = free_port()
    env = {**os.environ, "ASSISTANT_API_PORT": str(port), "PYTHONPATH": str(REPO)}
    log = cwd / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "assistant", *args], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/v1/models", proc, timeout_s=180, log=log)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert f"OpenAI-compatible API on http://127.0.0.1:{port}/v1" in text
    assert "Traceback" not in text, text[-3000:]
