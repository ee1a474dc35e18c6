"""Lint runs in one place, `scripts/lint.sh` (ruff check on the whole repository, ruff format on assistant/ and
ui/, mypy with the pyproject configuration), and the test command runs it before any test: `scripts/test.sh`
fails fast on a finding. These tests check that wiring; they do not run the linters a second time."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINT = (REPO / "scripts" / "lint.sh").read_text()
TEST = (REPO / "scripts" / "test.sh").read_text()


def _commands(script: str) -> list[str]:
    lines = (line.strip() for line in script.splitlines())
    return [line for line in lines if line and not line.startswith(("#", "echo"))]


def test_the_test_command_lints_before_any_test() -> None:
    commands = _commands(TEST)
    lint = commands.index("./scripts/lint.sh")
    assert lint < next(i for i, c in enumerate(commands) if "pytest" in c)
    assert commands.index("./scripts/setup.sh") < lint  # the linters come from the venv setup installs


def test_lint_covers_the_whole_repository() -> None:
    commands = _commands(LINT)
    assert ".venv/bin/ruff check ." in commands
    assert ".venv/bin/ruff format --check assistant ui" in commands
    assert ".venv/bin/python -m mypy" in commands  # the files come from pyproject.toml
    files = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    python_dirs = {d.name for d in REPO.iterdir() if d.is_dir() and not d.name.startswith(".")
                   and d.name not in {"storage", "build"} and next(d.rglob("*.py"), None)}
    assert python_dirs <= set(files), f"mypy does not check {sorted(python_dirs - set(files))}"


def test_no_module_is_over_700_lines() -> None:
    """Issue 31: a module that grows past 700 lines is split by responsibility, not left to grow."""
    repo = Path(__file__).resolve().parents[2]
    modules = sorted([*(repo / "assistant").rglob("*.py"), *(repo / "ui").rglob("*.py")])
    long = {str(p.relative_to(repo)): n for p in modules if (n := len(p.read_text().splitlines())) > 700}
    assert long == {}
