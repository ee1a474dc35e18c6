"""``assistant ingest`` and ``assistant delete``: read and check the inputs, confirm a rebuild's losses, index,
and print what was indexed, skipped, flagged or removed."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.cli.runtime import emit
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.index.store import require_existing_storage

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.ingest.identity import Resolution
    from assistant.types import IngestReport

logger = logging.getLogger(__name__)


# --- commands ------------------------------------------------------------------------------------
def ingest_summary(report: IngestReport) -> str:
    """The lines ``assistant ingest`` prints: counts, skipped rows (file:line: why) and flagged abstracts."""
    papers = f"{report.papers} paper{'' if report.papers == 1 else 's'}"
    lines = [
        f"Indexed {papers} as {report.windows} windows: {report.added} added, {report.updated} updated, "
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
        return [settings.storage.seeds_dir]
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
    inputs = rebuild_inputs(settings, paths) if rebuild else list(paths) or [settings.storage.seeds_dir]
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


def delete_command(settings: Settings, typed: Sequence[str]) -> int:
    require_existing_storage(settings)
    from assistant.index.store import PaperStore
    from assistant.ingest.identity import resolve_ids
    from assistant.ingest.pipeline import delete_papers

    resolution = resolve_ids(typed, PaperStore.open_for_read(settings).load_papers())
    removed = delete_papers(settings, resolution.ids) if resolution.ids else []
    emit(delete_summary(removed, resolution))
    return 0 if removed else 1
