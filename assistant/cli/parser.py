"""The ``assistant`` command line: the parser of every command and its options, the "did you mean" of a
mistyped command or option, and the settings the global options give."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

from assistant.config import Settings, load_settings
from assistant.ingest.corpus import supported_formats
from assistant.types import INTENTS

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
        help=f"Input files ({supported_formats()}) or directories of them (default: ASSISTANT_SEEDS_DIR).",
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
