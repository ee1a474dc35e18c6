"""What every entry point shares around a command: start-up (offline switches, settings, logging), writing
results, one ``error:`` line instead of a traceback (:func:`guarded`, :func:`explaining`), and the cheap checks
of files and ports made before any model loads."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from assistant.cli.parser import settings_from_args
from assistant.config import FOREIGN_PREFIXES, OTHER_VARIABLES, Settings, env_names, unknown_variables
from assistant.errors import AssistantError, ConfigError

logger = logging.getLogger(__name__)


def start(
    args: argparse.Namespace, *, known_env: Iterable[str] = (), ignore_prefixes: Sequence[str] = FOREIGN_PREFIXES
) -> Settings:
    """What every entry point does first: offline switches, settings, logging, and one ``warning:`` line
    on stderr per ``ASSISTANT_*`` variable that nothing reads (with a "did you mean").

    Args:
        args: parsed command line (global options).
        known_env: variable names the calling entry point reads besides :class:`Settings`' own.
        ignore_prefixes: name spaces another entry point checks.

    Raises:
        ConfigError: invalid settings.
    """
    from assistant.logs import configure_logging
    from assistant.offline import enforce_offline

    enforce_offline()
    known = env_names(Settings) | set(OTHER_VARIABLES) | set(known_env)
    for line in unknown_variables(os.environ, known, ignore_prefixes=ignore_prefixes):
        print(f"warning: {line}", file=sys.stderr)
    settings = settings_from_args(args)
    configure_logging(settings.log_level)
    return settings


def emit(text: str) -> None:
    """Write a result to stdout and flush it now, so a full disk or closed pipe is reported where it
    happens (as one error line) rather than at interpreter exit."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _silence_stdout() -> None:
    """Point a broken stdout at /dev/null so the interpreter's final flush does not print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _thread_failed(hook: threading.ExceptHookArgs) -> None:
    logger.debug(
        "thread %s failed",
        getattr(hook.thread, "name", "?"),
        exc_info=(hook.exc_type, hook.exc_value, hook.exc_traceback),  # type: ignore[arg-type]
    )
    if hook.exc_type is not SystemExit:
        print(f"error: background work failed: {hook.exc_type.__name__}: {hook.exc_value}", file=sys.stderr)


def guarded(body: Callable[[], int]) -> int:
    """Run a command's ``body`` so that no traceback reaches the user, whatever it raises.

    Returns ``body()``'s exit code, or 1 after one ``error: ...`` line on stderr (:class:`AssistantError`:
    its message; anything else is an internal error, a bug: ``error: internal error, unexpected <type>: <message>``,
    the traceback in the DEBUG log), 130 on Ctrl-C / SIGTERM,
    1 when stdout is gone (closed pipe, full disk).
    """
    previous_hook, threading.excepthook = threading.excepthook, _thread_failed
    try:
        return body()
    except AssistantError as e:
        logger.debug("error", exc_info=True)
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `assistant ask ... | head -1`: the reader left; nothing more to say
        _silence_stdout()
        return 1
    except Exception as e:  # noqa: BLE001 - a user sees one line, never a traceback; DEBUG logs it
        logger.debug("unexpected error", exc_info=True)
        if isinstance(e, OSError) and _stdout_broken():
            _silence_stdout()
            print(f"error: could not write the output to stdout ({e.strerror or e}).", file=sys.stderr)
        else:
            print(
                f"error: internal error, unexpected {type(e).__name__}: {e} (a bug in the assistant, not in your "
                "input or the model; run with --log-level DEBUG for the traceback)",
                file=sys.stderr,
            )
        return 1
    finally:
        threading.excepthook = previous_hook


def _stdout_broken() -> bool:
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        return True
    return False


# --- cheap checks (no model, no Chroma); the index folder: assistant.index.store.require_existing_storage --------
def check_output_file(path: Path, flag: str) -> None:
    """``path`` can be written: not a folder, and its folder exists (or can be made).

    Raises:
        ConfigError: names ``flag`` and the path.
    """
    if path.is_dir():
        raise ConfigError(f"{flag} {path}: is a folder; pass a file name.")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise ConfigError(f"{flag} {path}: cannot create a file under {parent}.")


def check_session_file(path: Path) -> dict[str, Any] | None:
    """Read a ``--session`` file before anything loads: its saved state, or None when it does not exist yet
    (then its folder must exist, so that saving it later works).

    Raises:
        AssistantError: the file is not a saved conversation, or its folder does not exist.
    """
    from assistant.conversation.store import read_saved_session

    if path.is_dir():
        raise ConfigError(f"--session {path}: is a folder; pass a file name such as {path / 'chat.json'}.")
    if path.exists():
        return read_saved_session(path)
    if not path.parent.is_dir():
        raise ConfigError(
            f"--session {path}: the folder {path.parent} does not exist. Create it first or pass another path."
        )
    if not os.access(path.parent, os.W_OK):
        raise ConfigError(f"--session {path}: cannot write in {path.parent}.")
    return None


def check_listen(host: str, port: int, flags: str) -> None:
    """Fail at once, before any model loads, when ``host:port`` cannot be bound.

    Raises:
        ConfigError: the port is taken or the address is not local (names both, and ``flags`` to change them).
    """
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(address)
    except OSError as e:
        raise ConfigError(
            f"cannot listen on {host}:{port} ({e.strerror or e}). Pass another {flags}, or stop what uses it."
        ) from e


def explaining(settings: Settings, body: Callable[[], int]) -> int:
    """Run ``body``; a failure whose cause is known (a read-only or full disk under the index, a vector-size
    mismatch: :func:`assistant.index.store.explain_failure`) is raised again as that one-line
    :class:`AssistantError` (so :func:`guarded` prints the cause and the fix, not "unexpected InternalError")."""
    try:
        return body()
    except AssistantError:
        raise
    except OSError as e:
        if _stdout_broken():  # the full disk or closed pipe is stdout's: guarded() says so
            raise
        _explain(e, settings)
        raise
    except Exception as e:  # a failure whose cause is known (read-only / full disk, vector size) gets its own line
        _explain(e, settings)
        raise


def _explain(error: Exception, settings: Settings) -> None:
    """Raise the known-cause :class:`AssistantError` for ``error`` (see :func:`explaining`); return if none."""
    from assistant.index.store import explain_failure

    known = explain_failure(error, settings)
    if known is not None:
        logger.debug("storage failure", exc_info=True)
        raise known from error
