"""``assistant ask | papers | serve | mcp | eval | eval-claims``, and the dispatch of every command."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from assistant.cli.ingest import delete_command, ingest_command
from assistant.cli.parser import _parser, parse
from assistant.cli.runtime import check_listen, check_output_file, check_session_file, emit, explaining, guarded, start
from assistant.config import Settings
from assistant.errors import AssistantError, ConfigError
from assistant.index.store import require_existing_storage

logger = logging.getLogger(__name__)


def _ask(settings: Settings, args: argparse.Namespace) -> int:
    from assistant.understand.question import clean_question

    question = clean_question(args.question, settings.retrieval.max_question_chars)
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
        details = bool(getattr(args, "verbose", False))  # -v: what the chat's "Details" toggle holds
        emit(
            json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False)
            if args.json
            else answer_to_text(answer, details=details)
        )
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

    host = args.host or settings.api.host
    port = args.port or settings.api.port
    check_listen(host, port, "--host / --port (ASSISTANT_API_HOST / ASSISTANT_API_PORT)")
    require_existing_storage(settings)
    key = api_key_for(settings)
    if not key and not is_loopback(host):
        print(f"warning: {host} is reachable from other machines and no ASSISTANT_API_KEY is set.", file=sys.stderr)
    from assistant.service import build_assistant

    with build_assistant(settings, read_ahead=True) as assistant:
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


def _run(args: argparse.Namespace) -> int:
    settings = start(args)
    return explaining(settings, lambda: _dispatch(settings, args))


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
        return delete_command(settings, args.ids)
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
