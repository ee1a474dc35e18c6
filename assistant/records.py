"""Paper exports as JSONL or CSV (e.g. from OpenReview or arXiv) -> list of :class:`Paper`.

One record per line/row with an abstract field (``abstract``, ``text`` or ``summary``) and optional
``id``, ``title``, ``authors`` (list, or a string separated by ``;``, `` and `` or ``,``), ``url`` (or
``link``; http/https only) and ``venue``. A record's paper id is ``<file name>#<id>`` when it has an id,
else ``<file name>#<line or row number>``. Bad records are skipped with a warning naming file and line.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from pathlib import Path

from assistant.paper_fields import derive_title, parse_authors, safe_url
from assistant.types import Paper

logger = logging.getLogger(__name__)

RECORD_SUFFIXES = (".jsonl", ".csv")
_ABSTRACT_KEYS = ("abstract", "text", "summary")
_WS = re.compile(r"\s+")


def _field(record: dict[str, object], *keys: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return _WS.sub(" ", str(value)).strip()
    return ""


def _rows(path: Path, text: str) -> list[tuple[int, dict[str, object]]]:
    if path.suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        return [(i + 2, {k.strip().lower(): v for k, v in row.items() if k}) for i, row in enumerate(reader)]
    rows = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            logger.warning("%s:%d: skipped, not valid JSON (%s)", path.name, n, e.msg)
            continue
        if not isinstance(record, dict):
            logger.warning("%s:%d: skipped, expected a JSON object", path.name, n)
            continue
        rows.append((n, {str(k).lower(): v for k, v in record.items()}))
    return rows


def read_records(path: Path, text: str) -> list[Paper]:
    """Papers from one JSONL or CSV export (``text`` is the decoded file)."""
    papers: list[Paper] = []
    seen: set[str] = set()
    for line, record in _rows(path, text):
        abstract = _field(record, *_ABSTRACT_KEYS)
        if not abstract:
            logger.warning("%s:%d: skipped, no abstract (fields %s)", path.name, line, "/".join(_ABSTRACT_KEYS))
            continue
        key = _field(record, "id", "paper_id", "openreview_id", "arxiv_id") or str(line)
        pid = f"{path.name}#{key}"
        if pid in seen:
            logger.warning("%s:%d: skipped, duplicate id %r", path.name, line, key)
            continue
        seen.add(pid)
        title = _field(record, "title")
        url = _field(record, "url", "link", "openreview_url", "arxiv_url")
        papers.append(Paper(
            id=pid, venue=_field(record, "venue") or path.stem, title=title or derive_title(abstract),
            authors=parse_authors(record.get("authors")), url=safe_url(url),
            text=abstract, source_file=path.name, position=len(papers) + 1, title_derived=not title,
        ))
    logger.info("read %s: %d records", path.name, len(papers))
    return papers
