"""``python -m assistant`` -> :func:`assistant.cli.main`."""

from assistant.cli import main

raise SystemExit(main())
