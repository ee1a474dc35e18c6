"""Command line: ``assistant ingest | delete | ask | papers | serve | mcp | eval | eval-claims``. Builds the
settings and passes them down.

The chat UI has its own entry point (``assistant-ui`` / ``python -m ui``, in ``ui/cli.py``), built from the
pieces here: :func:`global_options`, :func:`parse`, :func:`start`, :func:`guarded`, :func:`emit` and
:func:`ingest_command`.

Conventions every command follows:

* Options that configure the run (``--storage-dir``, ``--llm-base-url``, ``--llm-model``, ``--log-level``,
  ``--verbose``) may be given before or after the command name.
* Cheap checks come first (settings, question, session file, input files, index folder, output paths),
  so a mistake is reported in about a second, before any model loads.
* Results go to stdout; logs (WARNING unless ``--verbose``) and errors go to stderr. An error is one
  line, ``error: ...``, never a traceback; the exit code is 0 ok, 1 error, 2 usage, 130 interrupted.

Modules: :mod:`~assistant.cli.parser` (commands and options), :mod:`~assistant.cli.runtime` (start-up, errors as
one line, cheap checks), :mod:`~assistant.cli.ingest` (``ingest``, ``delete``), :mod:`~assistant.cli.commands`
(``ask``, ``papers``, ``serve``, ``mcp``, ``eval``, ``eval-claims`` and :func:`main`).
"""

from __future__ import annotations

from assistant.cli.commands import main
from assistant.cli.ingest import delete_summary, ingest_command, ingest_report_dict, ingest_summary
from assistant.cli.parser import CLIParser, _parser, did_you_mean, global_options, parse, settings_from_args
from assistant.cli.runtime import (
    check_listen,
    check_output_file,
    check_session_file,
    emit,
    explaining,
    guarded,
    start,
)

__all__ = [
    "CLIParser",
    "_parser",
    "check_listen",
    "check_output_file",
    "check_session_file",
    "delete_summary",
    "did_you_mean",
    "emit",
    "explaining",
    "global_options",
    "guarded",
    "ingest_command",
    "ingest_report_dict",
    "ingest_summary",
    "main",
    "parse",
    "settings_from_args",
    "start",
]
