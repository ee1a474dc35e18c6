"""``python -m ui``: the same as ``assistant-ui``."""

from ui.cli import main

raise SystemExit(main())
