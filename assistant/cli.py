"""Command line: ``assistant ingest | delete | ask | serve | eval | eval-claims``. Builds the settings and passes them down."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from assistant.config import Settings, load_settings
from assistant.errors import AssistantError

logger = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="assistant", description="Cited answers about research-paper abstracts, offline by default. Settings come from ASSISTANT_* environment variables (see README); flags override them.")
    p.add_argument("--storage-dir", type=Path, help="Chroma index directory (ASSISTANT_STORAGE_DIR).")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="ASSISTANT_LOG_LEVEL.")
    sub = p.add_subparsers(dest="command", required=True)

    ing = sub.add_parser("ingest", help="Index seed files (default: the seeds directory).")
    ing.add_argument("paths", nargs="*", type=Path, help="Seed .txt files, JSONL/CSV exports, or directories of them (default: ASSISTANT_SEEDS_DIR).")
    ing.add_argument("--rebuild", action="store_true", help="Drop the index for the current settings first.")
    ing.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    rm = sub.add_parser("delete", help="Remove papers from the index by id (e.g. '000_43469673d6f8aaa0.txt#3').")
    rm.add_argument("ids", nargs="+", help="Paper ids as shown in references and --json.")

    for name, help_ in (("ask", "Answer one question and print it with references."), ("serve", "Open the chat UI (ingests first if needed).")):
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--llm-base-url", help="OpenAI-compatible endpoint (ASSISTANT_LLM_BASE_URL); unset = bundled model.")
        sp.add_argument("--llm-model", help="Model name (ASSISTANT_LLM_MODEL).")
        if name == "ask":
            sp.add_argument("question", help="The question, in quotes.")
            sp.add_argument("--json", action="store_true", help="Print the answer as JSON.")
            sp.add_argument("--session", type=Path, help="Conversation file: continue the conversation saved there, then save it.")
            sp.add_argument("--intent", choices=["lookup", "summary", "compare", "topic"], help="Force an intent (default: detected).")
        else:
            sp.add_argument("--host", help="Bind address (ASSISTANT_UI_HOST, default 127.0.0.1).")
            sp.add_argument("--port", type=int, help="Port (ASSISTANT_UI_PORT, default 7860).")
            sp.add_argument("--no-ingest", action="store_true", help="Do not update the index before serving.")

    ev = sub.add_parser("eval", help="Score answers (or retrieval only) on a gold question file (docs/evaluation.md).")
    ev.add_argument("--questions", type=Path, required=True, metavar="FILE", help="JSON Lines gold file, e.g. eval/dev.jsonl.")
    ev.add_argument("--k", default="1,3,5,10", metavar="K1,K2,...", help="Comma-separated cut-offs for recall@k (default 1,3,5,10).")
    ev.add_argument("--json", type=Path, dest="json_out", metavar="OUT", help="Also write the full report (per item) to this JSON file.")
    ev.add_argument("--retrieval-only", action="store_true", help="Rank papers only: recall@k, no LLM (seconds).")
    ev.add_argument("--limit", type=int, metavar="N", help="Evaluate only the first N items.")
    ev.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    ev.add_argument("--llm-base-url", help="OpenAI-compatible endpoint (ASSISTANT_LLM_BASE_URL); unset = bundled model.")
    ev.add_argument("--llm-model", help="Model name (ASSISTANT_LLM_MODEL).")

    ec = sub.add_parser("eval-claims", help="Score the citation verifier on labelled claims (no LLM; docs/evaluation.md).")
    ec.add_argument("--claims", type=Path, required=True, metavar="FILE", help="JSON Lines claims file, e.g. eval/claims-dev.jsonl.")
    ec.add_argument("--json", type=Path, dest="json_out", metavar="OUT", help="Also write the full report (per claim) to this JSON file.")
    ec.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return p


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(
        storage_dir=args.storage_dir, log_level=args.log_level,
        llm_base_url=getattr(args, "llm_base_url", None), llm_model=getattr(args, "llm_model", None),
        ui_host=getattr(args, "host", None), ui_port=getattr(args, "port", None),
    )


def _ingest(settings: Settings, paths: Sequence[Path], *, rebuild: bool, progress: bool, embed_model: object = None) -> object:
    from assistant.embeddings import build_embed_model
    from assistant.ingest import drop_index, ingest

    from assistant.corpus import discover_seed_files

    discover_seed_files(list(paths) or [settings.seeds_dir])  # bad paths fail before the model loads
    embed = embed_model or build_embed_model(settings)
    if rebuild:
        drop_index(settings)
    report = ingest(settings, list(paths) or [settings.seeds_dir], embed, progress=progress)  # type: ignore[arg-type]
    print(f"Indexed {report.papers} papers as {report.windows} windows: {report.added} added, {report.updated} updated, "
          f"{report.removed} removed, {report.skipped} unchanged in {report.seconds:.1f} s ({report.collection}).", file=sys.stderr)
    if report.flagged:
        print(f"Flagged {len(report.flagged)} abstract(s) whose text looks like instructions to the assistant "
              f"(indexed as quoted data only): {', '.join(report.flagged)}", file=sys.stderr)
    return embed


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI. Returns the exit code: 0 ok, 1 user-facing error, 2 usage error."""
    args = _parser().parse_args(argv)
    from assistant.offline import enforce_offline

    enforce_offline()
    try:
        settings = _settings(args)
        from assistant.logs import configure_logging

        configure_logging(settings.log_level)
        if args.command == "ingest":
            _ingest(settings, args.paths, rebuild=args.rebuild, progress=not args.no_progress)
            return 0
        if args.command == "eval":
            from assistant.evaluation import run_eval_command  # lazy: only `eval` needs it

            return run_eval_command(settings, args.questions, ks_text=args.k, json_out=args.json_out,
                                    retrieval_only=args.retrieval_only, limit=args.limit, progress=not args.no_progress)
        if args.command == "eval-claims":
            from assistant.claims_eval import run_claims_command  # lazy: only `eval-claims` needs it

            return run_claims_command(settings, args.claims, json_out=args.json_out, progress=not args.no_progress)
        if args.command == "delete":
            from assistant.ingest import delete_papers

            removed = delete_papers(settings, args.ids)
            print(f"Removed {len(removed)} paper(s): {', '.join(removed) or 'none of these ids are indexed'}.", file=sys.stderr)
            return 0 if removed else 1
        from assistant.service import build_assistant

        if args.command == "ask":
            from assistant.render import answer_to_dict, answer_to_text

            with build_assistant(settings) as assistant:
                session = assistant.new_session()
                if args.session and args.session.exists():
                    session.load(args.session)
                answer = session.ask(args.question, intent=args.intent)
                if args.session:
                    session.save(args.session)
            print(json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False) if args.json else answer_to_text(answer))
            return 0
        if args.command == "serve":
            embed = None if args.no_ingest else _ingest(settings, [], rebuild=False, progress=True)
            from ui.app import serve  # lazy: the core never imports the UI at module level

            signal.signal(signal.SIGTERM, _raise_interrupt)  # `kill` stops the UI like Ctrl-C: cleanup runs

            with build_assistant(settings, embed_model=embed) as assistant:  # type: ignore[arg-type]
                serve(assistant, settings)
            return 0
    except AssistantError as e:
        logger.debug("error", exc_info=True)
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - a user sees one line, never a traceback; DEBUG logs it
        logger.debug("unexpected error", exc_info=True)
        print(f"error: unexpected {type(e).__name__}: {e} (run with --log-level DEBUG for details)", file=sys.stderr)
        return 1
    return 2
