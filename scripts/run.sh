#!/usr/bin/env bash
# Fresh machine -> chat UI: install everything (scripts/setup.sh), index seeds/ if missing or stale,
# and serve the UI on http://127.0.0.1:7860 with the bundled local model. Extra args go to `assistant-ui` (ui/cli.py).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/assistant-ui "$@"
