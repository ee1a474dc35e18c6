"""Seed files -> list of :class:`Paper`: header, blank-line separated abstracts, ids, metadata join.

Seed format (seeds/): line 1 is the collection name (e.g. ``ICLR 2025 Papers``); abstracts
follow, separated by blank lines. ``papers.jsonl`` next to the seed files gives per-abstract
metadata keyed by ``seed_file`` + ``position`` (1-based, header not counted).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from assistant.errors import CorpusFormatError
from assistant.ingest.paper_fields import derive_title, parse_authors, safe_url
from assistant.ingest.records import ROW_READERS, note_skip, read_records
from assistant.tuning import METADATA_MATCH_PREFIX_CHARS
from assistant.types import Paper

logger = logging.getLogger(__name__)

METADATA_FILE = "papers.jsonl"
#: How a skipped entry for a whole file reads (after ``<file>: ``) in the ingest summary.
FILE_SKIPPED = "whole file not indexed"
_MAX_HEADER_CHARS = 200
_WS = re.compile(r"\s+")


def discover_seed_files(paths: Sequence[Path]) -> list[Path]:
    """Expand files and directories into a sorted list of input files: seed ``.txt`` files and JSONL/CSV
    exports (``records.py``); a directory's ``papers.jsonl`` is metadata, not input.

    Raises:
        CorpusFormatError: a path does not exist, or a directory holds no input file.
    """
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(
                x for x in p.iterdir() if x.is_file() and x.name != METADATA_FILE and x.suffix in INPUT_READERS
            )
            if not found:
                raise CorpusFormatError(f"{p}: no {supported_formats()} files in this directory.")
            files.extend(found)
        elif p.is_file():
            if p.suffix not in INPUT_READERS:
                raise CorpusFormatError(
                    f"{p}: not an input format ({p.suffix or 'no suffix'}); supported: {supported_formats()} files."
                )
            files.append(p)
        else:
            raise CorpusFormatError(
                f"{p}: no such file or directory. Pass {supported_formats()} files or directories of them."
            )
    return sorted(dict.fromkeys(f.resolve() for f in files))


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if b"\x00" in raw[:4096]:
        raise CorpusFormatError(f"{path}: looks like a binary file, not a UTF-8 seed text file.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise CorpusFormatError(f"{path}:{line}: not valid UTF-8 ({e.reason}). Re-save the file as UTF-8.") from e
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_seed_text(text: str, file_name: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Split one seed file's text into its header and abstracts.

    Args:
        text: the whole file, newlines normalised to ``\\n``.
        file_name: used in error messages.

    Returns:
        ``(venue, [(position, line_number, abstract_text), ...])`` with 1-based positions and
        whitespace-collapsed abstract text.

    Raises:
        CorpusFormatError: the file is empty, has no header line, or holds no abstracts.
    """
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise CorpusFormatError(
            f"{file_name}: the file is empty. Expected a header line such as 'ICLR 2025 Papers' then abstracts."
        )
    header = lines[first].strip()
    next_line = lines[first + 1].strip() if first + 1 < len(lines) else ""
    if len(header) > _MAX_HEADER_CHARS or next_line:
        raise CorpusFormatError(
            f"{file_name}:{first + 1}: missing header line. The first line must be the collection name "
            "(e.g. 'ICLR 2025 Papers') followed by a blank line, then abstracts separated by blank lines."
        )
    abstracts: list[tuple[int, int, str]] = []
    block: list[str] = []
    block_start = 0
    for i in range(first + 1, len(lines) + 1):
        line = lines[i] if i < len(lines) else ""
        if line.strip():
            if not block:
                block_start = i + 1
            block.append(line.strip())
        elif block:
            abstracts.append((len(abstracts) + 1, block_start, _WS.sub(" ", " ".join(block)).strip()))
            block = []
    if not abstracts:
        raise CorpusFormatError(f"{file_name}: header found but no abstracts after it.")
    return header, abstracts


def load_metadata(path: Path, skipped: list[str] | None = None) -> dict[tuple[str, int], dict[str, object]]:
    """Read ``papers.jsonl`` into ``{(seed_file, position): row}``; bad rows are skipped and listed in
    ``skipped`` as ``"file:line: reason"`` (logged as warnings when ``skipped`` is None).

    A missing file gives an empty mapping (papers then get derived titles).
    """
    if not path.is_file():
        return {}
    rows: dict[tuple[str, int], dict[str, object]] = {}
    for n, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            note_skip(skipped, f"{path}:{n}", f"metadata row not valid JSON ({e.msg} at column {e.colno})")
            continue
        if not isinstance(row, dict):
            note_skip(skipped, f"{path}:{n}", "metadata row is not a JSON object")
            continue
        seed, pos = row.get("seed_file"), row.get("position")
        if not isinstance(seed, str) or not isinstance(pos, int):
            note_skip(skipped, f"{path}:{n}", "metadata row needs string 'seed_file' and integer 'position'")
            continue
        rows[(seed, pos)] = row
    return rows


def _str_field(row: dict[str, object], key: str) -> str:
    value = row.get(key)
    return value.strip() if isinstance(value, str) else ""


def _add_export_papers(
    papers: list[Paper], found: list[Paper], path: Path, kept: dict[str, tuple[int, Path]], skipped: list[str] | None
) -> None:
    """Append one export's papers; an id already read from another export keeps the row of the file modified
    last (the newer export; the later name on a tie), and the other row is noted in ``skipped``, naming
    both files and lines."""
    for p in found:
        if p.id not in kept:
            kept[p.id] = (len(papers), path)
            papers.append(p)
            continue
        i, other_path = kept[p.id]
        other = papers[i]
        if path.stat().st_mtime_ns >= other_path.stat().st_mtime_ns:  # ``path`` comes later in name order
            papers[i] = p
            kept[p.id] = (i, path)
            loser, winner = other, p
        else:
            loser, winner = p, other
        note_skip(
            skipped,
            f"{loser.source_file}:{loser.position}",
            f"id {p.id!r} also at {winner.source_file}:{winner.position} (kept that row: its file is newer)",
        )


@dataclass
class _Reading:
    """What one :func:`read_papers` call has read so far: the ``papers``, export paper id -> (index in papers,
    its file) in ``kept``, each directory's metadata rows, and the ``skipped`` notes (None: log them)."""

    papers: list[Paper]
    kept: dict[str, tuple[int, Path]]
    metadata_cache: dict[Path, dict[tuple[str, int], dict[str, object]]]
    skipped: list[str] | None


def _read_export(path: Path, r: _Reading) -> None:
    """Append the papers of one JSONL/CSV export (:mod:`assistant.ingest.records`).

    Raises:
        CorpusFormatError: the file is unreadable, binary, not UTF-8, or yields no paper.
    """
    papers, kept, skipped = r.papers, r.kept, r.skipped
    rows: list[str] = []
    found = read_records(path, _read_text(path), rows)
    if not found:
        first = f" Every row was skipped, e.g. {rows[0]}." if rows else " The file has no rows."
        raise CorpusFormatError(
            f"{path}: no abstract to index.{first} Each record needs an abstract "
            "(field 'abstract', 'text' or 'summary')."
        )
    for skipped_row in rows:
        note_skip(skipped, *skipped_row.split(": ", 1))
    _add_export_papers(papers, found, path, kept, skipped)


def _read_seed_file(path: Path, r: _Reading) -> None:
    """Append the abstracts of one seed ``.txt`` file, with its directory's ``papers.jsonl`` metadata.

    Raises:
        CorpusFormatError: the file is unreadable, binary, not UTF-8, or malformed (no header, no abstract).
    """
    papers, metadata_cache, skipped = r.papers, r.metadata_cache, r.skipped
    meta_path = path.parent / METADATA_FILE
    if meta_path not in metadata_cache:
        metadata_cache[meta_path] = load_metadata(meta_path, skipped)
    meta = metadata_cache[meta_path]
    venue, abstracts = parse_seed_text(_read_text(path), str(path))
    seen: dict[str, int] = {}
    for position, line_no, text in abstracts:
        if text in seen:
            note_skip(skipped, f"{path.name}:{line_no}", f"abstract {position} repeats abstract {seen[text]}")
            continue
        seen[text] = position
        row = meta.get((path.name, position), {})
        first_words = _WS.sub(" ", _str_field(row, "first_words"))
        if first_words and not text.startswith(first_words.rstrip(". ")[:METADATA_MATCH_PREFIX_CHARS]):
            logger.warning(
                "%s line %d: papers.jsonl row for position %d starts %r, which does not match the abstract; "
                "metadata ignored",
                path.name,
                line_no,
                position,
                first_words[:METADATA_MATCH_PREFIX_CHARS],
            )
            row = {}
        title = _str_field(row, "title")
        papers.append(
            Paper(
                id=f"{path.name}#{position}",
                venue=venue,
                title=title or derive_title(text),
                authors=parse_authors(row.get("authors")),
                url=safe_url(_str_field(row, "url")),
                text=text,
                source_file=path.name,
                position=position,
                title_derived=not title,
            )
        )
    logger.info("read %s: %d abstracts (%s)", path.name, len(abstracts), venue)


#: Every input format: file suffix -> its reader (appends the file's papers; nothing when it raises) and how
#: messages name it. A new format is one row here (an export format: one row of ``records.ROW_READERS``).
INPUT_READERS: dict[str, tuple[Callable[[Path, _Reading], None], str]] = {
    ".txt": (_read_seed_file, "seed .txt"),
    **{suffix: (_read_export, suffix) for suffix in ROW_READERS},
}


def supported_formats() -> str:
    """The input formats in words, for messages: ``"seed .txt, .jsonl or .csv"``."""
    names = [name for _, name in INPUT_READERS.values()]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]


def _read_file(path: Path, r: _Reading) -> None:
    """Append the papers of one input file to ``r.papers`` with the reader of its format (see :func:`read_papers`);
    nothing is appended when it raises.

    Raises:
        CorpusFormatError: an unknown format, or the file is unreadable, binary, not UTF-8, malformed, or yields
            no paper.
    """
    entry = INPUT_READERS.get(path.suffix)
    if entry is None:
        raise CorpusFormatError(
            f"{path}: not an input format ({path.suffix or 'no suffix'}); supported: {supported_formats()} files."
        )
    entry[0](path, r)


def read_papers(paths: Iterable[Path], skipped: list[str] | None = None) -> list[Paper]:
    """Parse seed files (with each directory's ``papers.jsonl``) and JSONL/CSV exports into papers, in file
    then position order.

    Args:
        paths: files or directories.
        skipped: collects ``"file:line: reason"`` for every row or abstract not indexed (bad or duplicate
            records, repeated abstracts, bad metadata rows); None logs them as warnings instead. Paper ids
            are unique in the result: an export row whose id another export also has is kept from the file
            modified last (see :mod:`assistant.ingest.identity` for the ids).

    A file found in a directory that cannot be read (binary, not UTF-8, malformed, no abstract) is skipped and
    listed in ``skipped`` as ``"<file>: whole file not indexed (<reason>)"``; the rest is read.

    Raises:
        CorpusFormatError: a path does not exist, or a file named in ``paths`` is unreadable or malformed or
            yields no paper at all (message names the file and line, and the first skipped row), or no file
            of a directory could be read.
    """
    reading = _Reading([], {}, {}, skipped)
    papers = reading.papers
    paths = list(paths)
    named = {p.resolve() for p in paths if p.is_file()}  # files the user named: a bad one stays an error
    bad_files: list[str] = []
    for path in discover_seed_files(paths):
        try:
            _read_file(path, reading)
        except CorpusFormatError as e:
            if path in named:
                raise
            reason = str(e).removeprefix(f"{path}")  # the message starts with the path (and maybe a line)
            m = re.match(r":(\d+):\s*", reason)
            reason = f"line {m.group(1)}: {reason[m.end() :]}" if m else reason.lstrip(": ")
            bad_files.append(f"{path}: {reason}")
            note_skip(skipped, str(path), f"{FILE_SKIPPED} ({reason})")
    if not papers and bad_files:
        raise CorpusFormatError(f"No file could be indexed; the first: {bad_files[0]}")
    return papers
