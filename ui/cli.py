"""``assistant-ui`` / ``python -m ui``: index the seeds if needed, then serve the chat UI.

The UI owns its launch: its flags (``--host``, ``--port``, ``--no-ingest``) and settings
(:class:`ui.settings.UISettings`, ``ASSISTANT_UI_*``) live here; the core settings and conventions
(global options anywhere, cheap checks first, one-line errors, results on stdout) come from
:mod:`assistant.cli`.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from assistant.cli import CLIParser, explaining, global_options, guarded, ingest_command, parse, start
from assistant.config import Settings
from assistant.index.store import require_existing_storage
from ui.settings import UISettings, load_ui_settings


def _parser() -> CLIParser:
    p = CLIParser(
        prog="assistant-ui",
        parents=[global_options()],
        description="The chat UI (Gradio) over the indexed abstracts: updates the index from the seeds "
        "directory first (unless --no-ingest), then serves until Ctrl-C. Settings: "
        "ASSISTANT_* and ASSISTANT_UI_* variables (README); flags override them.",
    )
    p.add_argument("--host", help="Bind address (ASSISTANT_UI_HOST, default 127.0.0.1).")
    p.add_argument("--port", type=int, help="Port (ASSISTANT_UI_PORT, default 7860).")
    p.add_argument("--no-ingest", action="store_true", help="Do not update the index before serving.")
    return p


def check_port_free(ui: UISettings) -> None:
    """Fail at once, before any model loads, when ``ui.host:ui.port`` cannot be bound (``assistant.cli.check_listen``).

    Raises:
        ConfigError: the port is taken or the address is not local (names both, and the flags to change them).
    """
    from assistant.cli import check_listen

    check_listen(ui.host, ui.port, "--port / --host (ASSISTANT_UI_PORT / ASSISTANT_UI_HOST)")


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve(argv: Sequence[str] | None) -> int:
    args = parse(_parser(), argv)

    def body() -> int:
        from assistant.config import env_names

        settings = start(args, known_env=env_names(UISettings), ignore_prefixes=())
        return explaining(settings, lambda: launch(settings))

    def launch(settings: Settings) -> int:
        ui = load_ui_settings(host=args.host, port=args.port)
        check_port_free(ui)
        if args.no_ingest:
            require_existing_storage(settings)
        embed = None
        if not args.no_ingest:
            from assistant.errors import WriterBusyError

            try:
                embed = ingest_command(settings, [], rebuild=False, progress=True)
            except WriterBusyError as e:  # another process is writing: serve the index as it is meanwhile
                require_existing_storage(settings)
                print(
                    f"warning: {e} Serving the index as it is; new papers appear as they are written.", file=sys.stderr
                )

        from assistant.api.server import api_key_for
        from assistant.service import build_assistant
        from ui.app import serve

        signal.signal(signal.SIGTERM, _raise_interrupt)  # `kill` stops the UI like Ctrl-C: cleanup runs
        with build_assistant(settings, embed_model=embed, read_ahead=True) as assistant:
            auth = ui.auth.get_secret_value() if ui.auth is not None else None
            serve(assistant, ui, api_key=api_key_for(settings, auth))
        return 0

    return guarded(body)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``assistant-ui``. Returns the exit code: 0 stopped, 1 error (one line on stderr), 2 usage,
    130 interrupted."""
    return _serve(argv)
