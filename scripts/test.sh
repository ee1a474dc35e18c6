#!/usr/bin/env bash
# Fresh machine -> whole test suite: install everything (scripts/setup.sh), lint the whole repository
# (scripts/lint.sh: ruff and mypy; fails fast), make sure Debian's chromium (browser tests) and strace (the
# offline test traces every process's system calls) are present, then run pytest (below: which tests).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/lint.sh
if [ ! -x "${ASSISTANT_TEST_CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "[test] installing Debian's chromium for the browser tests"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -q chromium >/dev/null 2>&1 || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q chromium >/dev/null; }
fi
if ! command -v strace >/dev/null 2>&1; then
  echo "[test] installing strace for the offline test"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -q strace >/dev/null 2>&1 || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q strace >/dev/null; }
fi
# no arguments: every tier (`tests`) but the tests marked `slow` (each a minute or more; the default run stays under
# 20 minutes); `--all`: every test, the slow ones too (what CI runs, .ci/run); other arguments go to pytest as given.
# (`pytest` alone runs only the fast tier: pyproject testpaths.)
if [ "$#" -eq 0 ]; then
  set -- tests -m "not slow"
elif [ "$1" = "--all" ]; then
  shift
  set -- tests "$@"
fi
exec .venv/bin/python -m pytest --durations=15 "$@"
