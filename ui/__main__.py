"""``python -m ui``: the same as ``assistant serve``."""

from assistant.cli import main

raise SystemExit(main(["serve"]))
