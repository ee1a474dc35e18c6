#!/usr/bin/env bash
# Lint the whole repository (configuration: pyproject.toml): ruff's checks on every file, ruff's format on the
# core (assistant/, ui/), mypy on what [tool.mypy] files lists (assistant, ui, scripts, benchmarks, tests).
# scripts/test.sh runs this before any test, so a lint finding fails the test command within a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "[lint] ruff check ."
.venv/bin/ruff check .
echo "[lint] ruff format --check assistant ui"
.venv/bin/ruff format --check assistant ui
echo "[lint] mypy"
.venv/bin/python -m mypy
