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
"""

from __future__ import annotations

import argparse
import difflib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from assistant.config import FOREIGN_PREFIXES, OTHER_VARIABLES, Settings, env_names, load_settings, unknown_variables
from assistant.errors import AssistantError, ConfigError
from assistant.index.store import require_existing_storage
from assistant.types import INTENTS

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.ingest.identity import Resolution
    from assistant.types import IngestReport

logger = logging.getLogger(__name__)

#: Commands that moved to another entry point: what to type instead.
MOVED: dict[str, str] = {}
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class CLIParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors add a "did you mean" for a mistyped command."""

    def error(self, message: str) -> NoReturn:
        """Print this parser's usage and ``message`` (plus a suggestion) to stderr and exit 2."""
        m = _INVALID_CHOICE.search(message)
        if m:
            typed, choices = m.group(1), re.findall(r"'([^']*)'", m.group(2))
            if typed in MOVED:
                message = f"'{typed}' is not an `assistant` command any more: {MOVED[typed]}"
            else:
                message += did_you_mean(typed, choices)
        super().error(message)


def did_you_mean(typed: str, choices: Iterable[str]) -> str:
    """``" (did you mean X?)"`` for the choice closest to ``typed``, or ``""`` when none is close."""
    close = difflib.get_close_matches(typed, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def global_options() -> CLIParser:
    """The options every command takes, before or after the command name (a parent parser; an option not
    given is absent from the namespace, so a later default never hides an earlier value)."""
    g = CLIParser(add_help=False)
    opts = g.add_argument_group("settings (anywhere on the command line; override ASSISTANT_* variables)")
    opts.add_argument(
        "--storage-dir",
        type=Path,
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="Chroma index directory (ASSISTANT_STORAGE_DIR).",
    )
    opts.add_argument(
        "--llm-base-url",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="OpenAI-compatible endpoint (ASSISTANT_LLM_BASE_URL); unset = bundled model.",
    )
    opts.add_argument(
        "--llm-model", default=argparse.SUPPRESS, metavar="NAME", help="Model name (ASSISTANT_LLM_MODEL)."
    )
    opts.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        default=argparse.SUPPRESS,
        help="Logging level on stderr (ASSISTANT_LOG_LEVEL, default WARNING).",
    )
    opts.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="Log progress (INFO) on stderr."
    )
    return g


def _parser() -> CLIParser:
    common = global_options()
    p = CLIParser(
        prog="assistant",
        parents=[common],
        description="Cited answers about research-paper abstracts, offline by default. Settings come from "
        "ASSISTANT_* environment variables (see README); flags override them. The chat UI is `assistant-ui`.",
    )
    sub = p.add_subparsers(
        dest="command", required=True, metavar="{ingest,delete,ask,papers,serve,mcp,eval,eval-claims}"
    )

    ing = sub.add_parser("ingest", parents=[common], help="Index seed files (default: the seeds directory).")
    ing.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="Seed .txt files, JSONL/CSV exports, or directories of them (default: ASSISTANT_SEEDS_DIR).",
    )
    ing.add_argument(
        "--rebuild",
        action="store_true",
        help="Build a new index from the given paths (none given: from the inputs recorded in the index) and "
        "replace the index with it when done; lists the indexed papers it would remove and asks first.",
    )
    ing.add_argument(
        "-y", "--yes", action="store_true", help="With --rebuild: remove papers not in the inputs without asking."
    )
    ing.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    ing.add_argument(
        "--json",
        action="store_true",
        help="Print the report as one JSON object (papers, added, updated, removed, "
        "unchanged, seconds, embedded_tokens, corpus_tokens, windows...) instead of the summary lines.",
    )

    rm = sub.add_parser(
        "delete",
        parents=[common],
        help="Remove papers from the index by id (e.g. '000_43469673d6f8aaa0.txt#3', "
        "an export's own id such as 'bat-002', an arXiv id or DOI).",
    )
    rm.add_argument(
        "ids",
        nargs="+",
        help="Paper ids as shown in references and --json; for export rows also the "
        "row's own id, arXiv id, DOI or OpenReview id.",
    )

    ask = sub.add_parser("ask", parents=[common], help="Answer one question and print it with references.")
    ask.add_argument("question", help="The question, in quotes.")
    ask.add_argument("--json", action="store_true", help="Print the answer as JSON (schema: docs/answer.schema.json).")
    ask.add_argument(
        "--session",
        type=Path,
        metavar="FILE",
        help="Conversation file: continue the conversation saved there, then save it.",
    )
    ask.add_argument("--intent", choices=list(INTENTS), help="Force an intent (default: detected from the wording).")
    ask.add_argument(
        "--limit", type=int, default=None, metavar="N", help="Papers listed for a topic question (default 10)."
    )
    ask.add_argument(
        "--offset", type=int, default=0, metavar="N", help="Topic papers to skip: --offset 10 lists papers 11-20."
    )

    pp = sub.add_parser(
        "papers",
        parents=[common],
        help="List, count or search the indexed papers (the records the MCP tools return).",
    )
    pp.add_argument("--count", action="store_true", help="Print only how many papers pass the filters.")
    pp.add_argument("--author", default="", metavar="NAME", help="Only papers with an author whose name contains NAME.")
    pp.add_argument("--venue", default="", metavar="TEXT", help="Only papers whose venue contains TEXT.")
    pp.add_argument("--search", metavar="QUERY", help="Rank papers by QUERY (loads the embedding model).")
    pp.add_argument("--json", action="store_true", help="Print one JSON object (the records of the MCP tools).")
    pp.add_argument("--limit", type=int, default=None, metavar="N", help="Papers shown (default 20; 10 for --search).")
    pp.add_argument("--offset", type=int, default=0, metavar="N", help="Papers to skip (paging; not with --search).")

    sv = sub.add_parser(
        "serve",
        parents=[common],
        help="Serve the OpenAI-compatible API (/v1) and MCP over HTTP (/mcp) without the chat UI.",
    )
    sv.add_argument("--host", help="Bind address (ASSISTANT_API_HOST, default 127.0.0.1).")
    sv.add_argument("--port", type=int, help="Port (ASSISTANT_API_PORT, default 7860).")

    sub.add_parser(
        "mcp",
        parents=[common],
        help="Run the MCP server over stdio (for Claude Desktop, Cursor, Claude Code: see README).",
    )

    ev = sub.add_parser(
        "eval", parents=[common], help="Score answers (or retrieval only) on a gold question file (docs/evaluation.md)."
    )
    ev.add_argument(
        "--questions", type=Path, required=True, metavar="FILE", help="JSON Lines gold file, e.g. eval/dev.jsonl."
    )
    ev.add_argument(
        "--k", default="1,3,5,10", metavar="K1,K2,...", help="Comma-separated cut-offs for recall@k (default 1,3,5,10)."
    )
    ev.add_argument(
        "--json",
        type=Path,
        dest="json_out",
        metavar="OUT",
        help="Also write the full report (per item) to this JSON file.",
    )
    ev.add_argument("--retrieval-only", action="store_true", help="Rank papers only: recall@k, no LLM (seconds).")
    ev.add_argument("--limit", type=int, metavar="N", help="Evaluate only the first N items.")
    ev.add_argument(
        "--split",
        metavar="NAME",
        help="Only the items whose 'split' field is NAME (val or test in the frozen sets, eval/README.md).",
    )
    ev.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    ec = sub.add_parser(
        "eval-claims",
        parents=[common],
        help="Score the citation verifier on labelled claims (no LLM; docs/evaluation.md).",
    )
    ec.add_argument(
        "--claims", type=Path, required=True, metavar="FILE", help="JSON Lines claims file, e.g. eval/claims-dev.jsonl."
    )
    ec.add_argument(
        "--json",
        type=Path,
        dest="json_out",
        metavar="OUT",
        help="Also write the full report (per claim) to this JSON file.",
    )
    ec.add_argument(
        "--split",
        metavar="NAME",
        help="Score only the claims whose `split` field is NAME (e.g. val of eval/claims-corpus.jsonl).",
    )
    ec.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return p


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; an unknown option is reported with the usage of the command it was given to and
    a "did you mean" (argparse alone would print the top-level usage). Exits 2 on a usage error."""
    args, extra = parser.parse_known_args(argv)
    if not extra:
        return args
    target: argparse.ArgumentParser = parser
    command = getattr(args, "command", None)
    for action in parser._actions:  # noqa: SLF001 - argparse has no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:  # noqa: SLF001
            target = action.choices[command]
    options = [o for a in target._actions for o in a.option_strings if o.startswith("--")]  # noqa: SLF001
    typed = extra[0].split("=", 1)[0]
    if command and typed.startswith("-"):
        owners = [name for name, sub in _subparsers(parser).items() if typed in sub._option_string_actions]  # noqa: SLF001
        if command in owners:  # `assistant --json ask "..."`: a command's own option given before the command
            target.error(
                f"{typed} is an option of `{command}`: put it after `{command}` ({parser.prog} {command} {typed} ...)"
            )
        if owners:
            target.error(f"{typed} is not an option of `{command}` (only of {', '.join(f'`{o}`' for o in owners)})")
    hint = did_you_mean(typed, options) if typed.startswith("-") else ""
    target.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """``{command: its parser}`` of ``parser``'s sub-commands ({} when it has none)."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def settings_from_args(args: argparse.Namespace) -> Settings:
    """:class:`Settings` from the environment with the global options in ``args`` on top (``--verbose``
    means log level INFO unless ``--log-level`` says otherwise).

    Raises:
        ConfigError: a value is invalid (names the field and its variable).
    """
    level = getattr(args, "log_level", None) or ("INFO" if getattr(args, "verbose", False) else None)
    return load_settings(
        storage_dir=getattr(args, "storage_dir", None),
        log_level=level,
        llm_base_url=getattr(args, "llm_base_url", None),
        llm_model=getattr(args, "llm_model", None),
    )


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


# --- commands ------------------------------------------------------------------------------------
def ingest_summary(report: IngestReport) -> str:
    """The lines ``assistant ingest`` prints: counts, skipped rows (file:line: why) and flagged abstracts."""
    lines = [
        f"Indexed {report.papers} papers as {report.windows} windows: {report.added} added, {report.updated} updated, "
        f"{report.removed} removed, {report.skipped} unchanged in {report.seconds:.1f} s ({report.collection})."
    ]
    from assistant.ingest.corpus import FILE_SKIPPED

    files = [row for row in report.skipped_rows if f": {FILE_SKIPPED} (" in row]
    rows = [row for row in report.skipped_rows if row not in files]
    for kind, entries in (("file", files), ("row", rows)):
        if entries:
            n = len(entries)
            lines.append(f"Skipped {n} {kind}{'s' if n != 1 else ''} (not indexed):")
            lines += [f"  {entry}" for entry in (_grouped_rows(entries) if kind == "row" else entries)]
    if report.flagged:
        lines.append(
            f"Flagged {len(report.flagged)} abstract(s) whose text looks like instructions to the assistant "
            f"(indexed as quoted data only): {', '.join(report.flagged)}"
        )
    return "\n".join(lines)


#: A file with more than this many rows skipped for the same reason gets one summary line for them.
SKIPPED_ROWS_LISTED = 5


def _grouped_rows(entries: Sequence[str]) -> list[str]:
    """``file:line: reason`` entries, with the rows of one file that share a reason said once when there are more
    than :data:`SKIPPED_ROWS_LISTED` of them ("iclr2025.jsonl: 1,587 rows: no abstract (...) - lines 2, 3, 8,
    ... and 1,577 more; --json lists every row"); in first-seen order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for entry in entries:
        where, _, reason = entry.partition(": ")
        file, _, line = where.rpartition(":")
        groups.setdefault((file or where, reason if file else entry), []).append(line if file else "")
    out: list[str] = []
    for (file, reason), lines in groups.items():
        if len(lines) <= SKIPPED_ROWS_LISTED or not all(lines):
            out += [f"{file}:{line}: {reason}" if line else reason for line in lines]
            continue
        shown = ", ".join(lines[:10])
        rest = f" and {len(lines) - 10:,} more" if len(lines) > 10 else ""
        out.append(f"{file}: {len(lines):,} rows: {reason} - lines {shown}{rest} (--json lists every row)")
    return out


def ingest_report_dict(report: IngestReport) -> dict[str, object]:
    """``assistant ingest --json``: paper counts (``added``/``updated``/``removed`` papers, ``unchanged`` =
    papers neither added nor updated), ``seconds``, ``embedded_tokens`` / ``corpus_tokens`` (word pieces,
    see :class:`IngestReport`) and their ratio ``embedding_work``, and the window-level counts."""
    unchanged = report.papers - report.papers_added - report.papers_updated
    return {
        "papers": report.papers,
        "added": report.papers_added,
        "updated": report.papers_updated,
        "removed": report.papers_removed,
        "unchanged": unchanged,
        "seconds": round(report.seconds, 3),
        "embedded_tokens": report.embedded_tokens,
        "corpus_tokens": report.corpus_tokens,
        "embedding_work": round(report.embedded_tokens / report.corpus_tokens, 4) if report.corpus_tokens else 0.0,
        "windows": {
            "total": report.windows,
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": report.skipped,
        },
        "collection": report.collection,
        "skipped_rows": list(report.skipped_rows),
        "flagged": list(report.flagged),
    }


def rebuild_inputs(settings: Settings, paths: Sequence[Path]) -> list[Path]:
    """What ``ingest --rebuild`` reads: ``paths`` if given, else the inputs recorded in the index (those that
    still exist; a warning names the others), else the seeds directory. Says on stderr which it uses."""
    from assistant.ingest.pipeline import recorded_inputs

    if paths:
        return list(paths)
    recorded = recorded_inputs(settings)
    if not recorded:
        return [settings.seeds_dir]
    present = [p for p in recorded if p.exists()]
    for p in recorded:
        if not p.exists():
            print(
                f"warning: {p}, an input of this index, no longer exists; its papers would be removed", file=sys.stderr
            )
    if not present:
        raise ConfigError(
            f"none of the inputs recorded in the index exists any more ({', '.join(map(str, recorded))}); "
            "pass the files to rebuild from: `assistant ingest --rebuild FILE...`."
        )
    print(f"Rebuilding from the inputs recorded in the index: {', '.join(map(str, present))}", file=sys.stderr)
    return present


def confirm_losses(losses: Sequence[Any], inputs: Sequence[Path], *, yes: bool) -> None:
    """Ask before a rebuild removes indexed papers that are not in its inputs (``losses``: :class:`Paper`).
    Lists them (id, title, file) on stderr and asks y/N on a terminal; ``yes`` skips the question.

    Raises:
        ConfigError: refused, or stdin is not a terminal and ``yes`` is not given (one line naming --yes);
            nothing has been changed.
    """
    n = len(losses)
    shown = ", ".join(p.id for p in losses[:5]) + (f" and {n - 5} more" if n > 5 else "")
    if not yes and (sys.stdin is None or not sys.stdin.isatty()):
        raise ConfigError(
            f"--rebuild would remove {n} indexed paper(s) that are not in {', '.join(map(str, inputs))} ({shown}); "
            "nothing was changed. Pass --yes to rebuild anyway, or add the files that hold them."
        )
    print(f"The rebuilt index would not have these {n} paper(s), which are in the index now:", file=sys.stderr)
    for p in losses:
        print(f"  {p.id}  {p.title[:80]}  (from {p.source_file or '?'})", file=sys.stderr)
    if yes:
        return
    sys.stderr.write(f"Rebuild from {', '.join(map(str, inputs))} and remove them? [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise ConfigError("rebuild cancelled; nothing was changed.")


def ingest_command(
    settings: Settings,
    paths: Sequence[Path],
    *,
    rebuild: bool,
    progress: bool,
    embed_model: BaseEmbedding | None = None,
    as_json: bool = False,
    yes: bool = False,
) -> object:
    """Read and check every input file, then load the embedding model, index, and print the summary.
    Returns the embedding model (the UI reuses it).

    With ``rebuild``: the inputs are ``paths``, else those recorded in the index (:func:`rebuild_inputs`);
    indexed papers not in them are listed and the user asked (:func:`confirm_losses`) before anything loads.

    Raises:
        CorpusFormatError: a file is unreadable, malformed or holds no abstract (before any model loads).
        ConfigError: a rebuild that would remove papers was not confirmed (nothing changed).
        StoreNotReadyError: see :func:`assistant.ingest.pipeline.ingest_papers`.
    """
    from assistant.index.store import check_storage_path
    from assistant.ingest.corpus import read_papers
    from assistant.ingest.pipeline import check_no_writer

    check_storage_path(settings)  # a file where the index folder should be: said before any model loads
    check_no_writer(settings)  # another writer: one line now, before reading or asking anything
    inputs = rebuild_inputs(settings, paths) if rebuild else list(paths) or [settings.seeds_dir]
    skipped: list[str] = []
    papers = read_papers(inputs, skipped=skipped)  # every file parsed before the model loads
    from assistant.ingest.pipeline import ingest_papers, rebuild_losses

    losses = rebuild_losses(settings, papers) if rebuild else []
    if losses:
        confirm_losses(losses, inputs, yes=yes)
    from assistant.index.embeddings import build_embed_model

    embed = embed_model or build_embed_model(settings)
    if rebuild:
        from assistant.index.store import PROBE_TEXT

        # the model answers (e.g. an embedding server is up) before anything is built
        embed.get_text_embedding(PROBE_TEXT)
    report = ingest_papers(
        settings,
        papers,
        embed,
        progress=progress,
        skipped_rows=skipped,
        inputs=inputs,
        rebuild=rebuild,
        may_remove={p.id for p in losses} if rebuild else None,
    )
    removed = [p.id for p in losses]
    if as_json:
        out = ingest_report_dict(report)
        if rebuild:
            out["rebuild"] = {"inputs": [str(p) for p in inputs], "removed_papers": removed}
        emit(json.dumps(out))
    else:
        lines = [ingest_summary(report)]
        if rebuild:
            lines.append(
                f"Rebuilt from {', '.join(map(str, inputs))}; "
                + (
                    f"removed {len(removed)} paper(s) not in them: {', '.join(removed)}."
                    if removed
                    else "no paper removed."
                )
            )
        emit("\n".join(lines))
    return embed


def _ask(settings: Settings, args: argparse.Namespace) -> int:
    from assistant.understand.question import clean_question

    question = clean_question(args.question, settings.max_question_chars)
    if args.limit is not None and args.limit < 1:
        raise AssistantError(f"--limit must be at least 1, got {args.limit}")
    if args.offset < 0:
        raise AssistantError(f"--offset must be 0 or more, got {args.offset}")
    saved = check_session_file(args.session) if args.session else None
    require_existing_storage(settings)

    from assistant.answer.render import answer_to_dict, answer_to_text
    from assistant.service import build_assistant
    from assistant.types import Page

    with build_assistant(settings, start_llm=False) as assistant:
        session = assistant.new_session()
        if saved is not None:
            session.restore(saved)
        page = None
        if args.limit is not None or args.offset:
            page = Page(args.offset, args.limit if args.limit is not None else Page().limit)
        answer = session.ask(question, intent=args.intent, page=page)
        emit(json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False) if args.json else answer_to_text(answer))
        if args.session:  # after the answer is out: a failure here loses nothing but the save
            try:
                session.save(args.session)
            except Exception as e:  # noqa: BLE001 - whatever went wrong, say what and where
                logger.debug("saving the session failed", exc_info=True)
                reason = e.strerror if isinstance(e, OSError) and e.strerror else f"{type(e).__name__}: {e}"
                raise AssistantError(
                    f"the answer above was not saved to {args.session} ({reason}); the conversation file is unchanged."
                ) from e
    return 0


def delete_summary(removed: Sequence[str], resolution: Resolution) -> str:
    """What ``assistant delete`` prints: the ids removed (with the typed id when it differs), then one line
    per typed id not found (with close ids) or matching several papers."""
    typed_for = {pid: typed for typed, pid in resolution.found.items() if typed != pid}
    shown = [f"{pid} (for {typed_for[pid]})" if pid in typed_for else pid for pid in removed]
    lines = [f"Removed {len(removed)} paper(s): {', '.join(shown) or 'none of these ids are indexed'}."]
    for typed, close in resolution.missing.items():
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        lines.append(f"Not indexed: {typed}{hint}")
    for typed, ids in resolution.ambiguous.items():
        lines.append(f"Not removed: {typed} could mean {', '.join(ids)}; give the full id.")
    return "\n".join(lines)


def _delete(settings: Settings, typed: Sequence[str]) -> int:
    require_existing_storage(settings)
    from assistant.index.store import PaperStore
    from assistant.ingest.identity import resolve_ids
    from assistant.ingest.pipeline import delete_papers

    resolution = resolve_ids(typed, PaperStore.open_for_read(settings).load_papers())
    removed = delete_papers(settings, resolution.ids) if resolution.ids else []
    emit(delete_summary(removed, resolution))
    return 0 if removed else 1


def _papers(settings: Settings, args: argparse.Namespace) -> int:
    from assistant.api import papers as records

    if args.search is not None and args.offset:
        raise ConfigError("--offset pages a listing; a --search shows the best --limit matches.")
    if args.search is not None and args.count:
        raise ConfigError("--count counts a listing; pass either --count or --search.")
    if args.offset < 0:
        raise ConfigError(f"--offset {args.offset}: must be 0 or more.")
    if args.limit is not None and not 1 <= args.limit <= records.MAX_LIMIT:
        raise ConfigError(f"--limit {args.limit}: must be between 1 and {records.MAX_LIMIT}.")
    require_existing_storage(settings)
    if args.search is not None:
        from assistant.service import build_retriever

        retriever, _ = build_retriever(settings)
        found = records.search_papers(
            retriever, args.search, author=args.author, venue=args.venue, limit=args.limit or 10
        )
        if args.json:
            emit(found.model_dump_json(indent=2))
            return 0
        lines = []
        for match in found.papers:
            lines.append(f"{match.rank}. {match.title}  ({match.similarity:.2f})")
            lines.append(f"   {match.url or '(no link)'}   id: {match.id}")
            lines.append(f"   “{match.best_sentence}”")
        emit("\n".join(lines) if lines else f"No indexed paper matches {args.search!r} with these filters.")
        return 0
    catalog = records.open_papers(settings)
    if args.count:
        n = records.count_papers(catalog, author=args.author, venue=args.venue)
        emit(json.dumps({"total": n}) if args.json else str(n))
        return 0
    page = records.list_papers(
        catalog, author=args.author, venue=args.venue, offset=args.offset, limit=args.limit or records.DEFAULT_LIMIT
    )
    if args.json:
        emit(page.model_dump_json(indent=2))
        return 0
    lines = []
    for p in page.papers:
        by = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
        lines.append(f"{p.id}  {p.title}" + (f" — {by}" if by else "") + (f" ({p.venue})" if p.venue else ""))
        lines.append(f"    {p.url or '(no link)'}")
    shown = f"{page.offset + 1}–{page.offset + len(page.papers)}" if page.papers else "none"
    end = page.offset + len(page.papers)
    more = f"; --offset {end} for more" if end < page.total else ""
    lines.append(f"papers {shown} of {page.total}{more}")
    emit("\n".join(lines))
    return 0


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from assistant.api.openai_compat import MODEL_ID
    from assistant.api.server import api_key_for, build_api_app, is_loopback, run_app

    host = args.host or settings.api_host
    port = args.port or settings.api_port
    check_listen(host, port, "--host / --port (ASSISTANT_API_HOST / ASSISTANT_API_PORT)")
    require_existing_storage(settings)
    key = api_key_for(settings)
    if not key and not is_loopback(host):
        print(f"warning: {host} is reachable from other machines and no ASSISTANT_API_KEY is set.", file=sys.stderr)
    from assistant.service import build_assistant

    with build_assistant(settings) as assistant:
        app = build_api_app(assistant, api_key=key, host=host)
        print(
            f"OpenAI-compatible API on http://{host}:{port}/v1 (model {MODEL_ID}), MCP on http://{host}:{port}/mcp"
            f"{' (bearer key required)' if key else ''}; Ctrl-C stops it.",
            flush=True,
        )
        run_app(app, host, port)
    return 0


def _mcp(settings: Settings) -> int:
    require_existing_storage(settings)
    import signal

    from assistant.api.mcp_server import build_mcp_server
    from assistant.service import build_assistant

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # a desktop app stopping the server: the bundled model stops too
    with build_assistant(settings, start_llm=False) as assistant:
        build_mcp_server(assistant).run("stdio")
    return 0


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


def _run(args: argparse.Namespace) -> int:
    settings = start(args)
    return explaining(settings, lambda: _dispatch(settings, args))


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


def _dispatch(settings: Settings, args: argparse.Namespace) -> int:
    if args.command == "ingest":
        ingest_command(
            settings, args.paths, rebuild=args.rebuild, progress=not args.no_progress, as_json=args.json, yes=args.yes
        )
        return 0
    if args.command == "eval":
        require_existing_storage(settings)
        if args.json_out:
            check_output_file(args.json_out, "--json")
        from assistant.eval.evaluation import run_eval_command  # lazy: only `eval` needs it

        return run_eval_command(
            settings,
            args.questions,
            ks_text=args.k,
            json_out=args.json_out,
            retrieval_only=args.retrieval_only,
            limit=args.limit,
            progress=not args.no_progress,
            split=args.split,
        )
    if args.command == "eval-claims":
        require_existing_storage(settings)
        if args.json_out:
            check_output_file(args.json_out, "--json")
        from assistant.eval.claims_eval import run_claims_command  # lazy: only `eval-claims` needs it

        return run_claims_command(
            settings, args.claims, json_out=args.json_out, progress=not args.no_progress, split=args.split
        )
    if args.command == "delete":
        return _delete(settings, args.ids)
    if args.command == "ask":
        return _ask(settings, args)
    if args.command == "papers":
        return _papers(settings, args)
    if args.command == "serve":
        return _serve(settings, args)
    if args.command == "mcp":
        return _mcp(settings)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI. Returns the exit code: 0 ok, 1 user-facing error, 2 usage error, 130 interrupted."""
    args = parse(_parser(), argv)
    return guarded(lambda: _run(args))
