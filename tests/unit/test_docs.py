"""Docs stay in sync with the code: every setting is in the README table, the CLI documents its commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.cli import main
from assistant.config import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


@pytest.mark.parametrize("field", sorted(Settings.model_fields))
def test_every_setting_is_in_the_readme_table(field: str) -> None:
    assert f"| `ASSISTANT_{field.upper()}` |" in README


def test_readme_has_the_two_commands() -> None:
    assert "./scripts/run.sh" in README and "./scripts/test.sh" in README
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert "./scripts/test.sh" in ci


def test_cli_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("ingest", "ask", "serve", "eval", "delete", "eval-claims"):
        assert cmd in out


def test_bad_setting_names_field_and_env_var(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ASSISTANT_TOP_K", "zero")
    assert main(["ask", "hello"]) == 1
    err = capsys.readouterr().err
    assert "ASSISTANT_TOP_K" in err
