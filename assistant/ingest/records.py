"""Paper exports as JSONL or CSV (e.g. from OpenReview or arXiv) -> list of :class:`Paper`.

One record per line/row with an abstract field (``abstract``, ``text`` or ``summary``) and optional
``id``, ``title``, ``authors`` (list, or a string separated by ``;``, `` and `` or ``,``), ``url`` (or
``link``; http/https only), ``venue`` (empty when absent: a venue guessed from the file name would change
when an export is renamed) and identifiers (``doi``, ``arxiv``/``arxiv_id``,
``openreview``/``openreview_id``). A record's paper id does not depend on the file name: its own ``id``, else
its OpenReview, arXiv or DOI id, else a hash of its abstract (:mod:`assistant.ingest.identity`), so a renamed or
updated export updates the same papers. ``Paper.position`` is the record's line (JSONL) or row's line (CSV,
header = line 1). Bad records are skipped with a warning naming file and line.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from collections.abc import Callable
from pathlib import Path

from assistant.ingest.identity import export_paper_id
from assistant.ingest.paper_fields import derive_title, parse_authors, safe_url
from assistant.types import Paper

logger = logging.getLogger(__name__)

_ABSTRACT_KEYS = ("abstract", "text", "summary")
_WS = re.compile(r"\s+")


def _field(record: dict[str, object], *keys: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return _WS.sub(" ", str(value)).strip()
    return ""


def note_skip(skipped: list[str] | None, where: str, reason: str) -> None:
    """Record that a row was not indexed: appended to ``skipped`` as ``"file:line: reason"`` (the ingest
    summary lists them), or logged as a warning when the caller collects nothing."""
    if skipped is None:
        logger.warning("%s: skipped, %s", where, reason)
    else:
        skipped.append(f"{where}: {reason}")


def _csv_rows(path: Path, text: str, skipped: list[str] | None = None) -> list[tuple[int, dict[str, object]]]:
    """``(line, record)`` per CSV row (header = line 1), column names stripped and lower-cased."""
    reader = csv.DictReader(io.StringIO(text))
    return [(i + 2, {k.strip().lower(): v for k, v in row.items() if k}) for i, row in enumerate(reader)]


def _jsonl_rows(path: Path, text: str, skipped: list[str] | None = None) -> list[tuple[int, dict[str, object]]]:
    """``(line, record)`` per JSON object line, keys lower-cased; a bad line is noted in ``skipped``."""
    rows = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            note_skip(skipped, f"{path.name}:{n}", f"not valid JSON ({e.msg} at column {e.colno})")
            continue
        if not isinstance(record, dict):
            note_skip(skipped, f"{path.name}:{n}", "expected a JSON object")
            continue
        rows.append((n, {str(k).lower(): v for k, v in record.items()}))
    return rows


RowReader = Callable[[Path, str, "list[str] | None"], list[tuple[int, dict[str, object]]]]
#: The export formats: file suffix -> the reader of its rows. ``assistant.ingest.corpus.INPUT_READERS`` (every
#: input format) reads these suffixes with :func:`read_records`.
ROW_READERS: dict[str, RowReader] = {".jsonl": _jsonl_rows, ".csv": _csv_rows}


def _rows(path: Path, text: str, skipped: list[str] | None = None) -> list[tuple[int, dict[str, object]]]:
    return ROW_READERS.get(path.suffix, _jsonl_rows)(path, text, skipped)


#: The suffixes of the export formats (:data:`ROW_READERS`).
RECORD_SUFFIXES = tuple(ROW_READERS)


def read_records(path: Path, text: str, skipped: list[str] | None = None) -> list[Paper]:
    """Papers from one JSONL or CSV export (``text`` is the decoded file).

    Returns:
        the file's papers in row order, ids unique (:func:`assistant.ingest.identity.export_paper_id`),
        ``source_file`` = the file name, ``position`` = the row's line.

    Rows that cannot be indexed (no abstract, bad JSON, an id of the file-based form, an id or abstract-only
    row seen earlier in the file) are listed in ``skipped`` as ``"file:line: reason"`` (logged as warnings when
    ``skipped`` is None); see :func:`note_skip`. Nothing is raised for a bad row.
    """
    papers: list[Paper] = []
    seen: dict[str, int] = {}
    notes: list[str] = []  # sorted by line below, whatever check skipped them
    for line, record in _rows(path, text, notes):
        abstract = _field(record, *_ABSTRACT_KEYS)
        if not abstract:
            note_skip(notes, f"{path.name}:{line}", f"no abstract (fields {'/'.join(_ABSTRACT_KEYS)})")
            continue
        try:
            pid = export_paper_id(record, abstract)
        except ValueError as e:
            note_skip(notes, f"{path.name}:{line}", str(e))
            continue
        if pid in seen:
            why = "repeats the abstract" if pid.startswith("abstract:") else f"duplicate id {pid!r}"
            note_skip(notes, f"{path.name}:{line}", f"{why} (first on line {seen[pid]})")
            continue
        seen[pid] = line
        title = _field(record, "title")
        url = _field(record, "url", "link", "openreview_url", "arxiv_url")
        papers.append(
            Paper(
                id=pid,
                venue=_field(record, "venue"),
                title=title or derive_title(abstract),
                authors=parse_authors(record.get("authors")),
                url=safe_url(url),
                text=abstract,
                source_file=path.name,
                position=line,
                title_derived=not title,
            )
        )
    for note in sorted(notes, key=lambda n: int(n[len(path.name) + 1 :].split(":", 1)[0])):
        note_skip(skipped, *note.split(": ", 1))
    logger.info("read %s: %d records", path.name, len(papers))
    return papers
