"""Paper identity: which id a paper gets, how an id the user types is found, and what a re-ingest replaces.

Ids (the ``Paper.id`` shown in references, ``--json`` and taken by ``assistant delete``):

* seed ``.txt`` files: ``<file name>#<position>``, e.g. ``000_43469673d6f8aaa0.txt#1`` (unchanged);
* JSONL/CSV export rows, first that applies (none of them depends on the export's file name, so a renamed
  or re-downloaded export updates the same papers):

  1. the row's own ``id`` (or ``paper_id``), whitespace-trimmed, case kept: ``bat-001``. An own id that
     is an arXiv/DOI/OpenReview link is read as that identifier (2-4), so ``http://arxiv.org/abs/2401.01234v2``
     and ``…v3`` are one paper;
  2. OpenReview forum id (``openreview_id``/``openreview`` field, or an ``openreview.net/forum?id=`` link in
     ``url``/``link``/``openreview_url``): ``openreview:<forum id>`` (case kept);
  3. arXiv id (``arxiv_id``/``arxiv`` field or an ``arxiv.org/abs|pdf/`` link): ``arxiv:<id>``, version
     dropped (``2401.01234v2`` -> ``arxiv:2401.01234``);
  4. DOI (``doi`` field or a ``doi.org`` link): ``doi:<doi>``, lower case (DOIs ignore case).
     OpenReview and arXiv come before DOI because a DOI is usually added to a paper later, and an id
     that appears in a later export would make the paper a new one;
  5. none of these: ``abstract:<12 hex>``, a hash of the abstract (case and spacing ignored). Such a
     row keeps its id when its title, authors or link change, but an edited abstract makes it a new
     paper: re-ingesting its file removes the old version (see :func:`plan_sync`).

An export id of the form ``<name>.txt#…``/``.jsonl#…``/``.csv#…`` is refused (it would be taken for a seed
id or an id of the old scheme). Indexes built before this scheme named export papers
``<export file name>#<id or line>``; :func:`plan_sync` migrates them when those exports (or any file
holding the same papers) are ingested again, and :func:`resolve_ids` finds them by their bare id meanwhile.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from assistant.types import Paper

logger = logging.getLogger(__name__)

_WS = re.compile(r"\s+")
_OPENREVIEW_URL = re.compile(r"openreview\.net/(?:forum|pdf)/?\?(?:[^#\s]*&)?id=([A-Za-z0-9_\-]+)", re.I)
_OPENREVIEW_ID = re.compile(r"^(?:openreview:\s*)?([A-Za-z0-9_\-]{6,})$", re.I)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf|html)/([a-z\-]+(?:\.[A-Za-z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d+)?", re.I)
_ARXIV_ID = re.compile(r"^(?:arxiv:\s*)?([a-z\-]+(?:\.[A-Za-z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v\d+)?$", re.I)
_DOI = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)$", re.I)
#: A file-based id: a seed id (``x.txt#3``) or an export id of the old scheme (``export.jsonl#bat-001``).
_FILE_BASED = re.compile(r"^(?P<file>[^#]+\.(?P<ext>txt|jsonl|csv))#(?P<key>.+)$", re.I)
_OWN_ID_FIELDS = ("id", "paper_id")
_URL_FIELDS = ("url", "link", "openreview_url", "arxiv_url", "doi_url")
_MAX_LISTED = 10


def _text(value: object) -> str:
    return _WS.sub(" ", str(value)).strip() if isinstance(value, (str, int, float)) else ""


def openreview_key(value: str, *, bare: bool = False) -> str:
    """``openreview:<forum id>`` from an OpenReview link or ``openreview:`` id (or a bare forum id when
    ``bare``), else ""."""
    m = _OPENREVIEW_URL.search(value)
    if m:
        return f"openreview:{m.group(1)}"
    if "://" in value or not (bare or value.lower().startswith("openreview:")):
        return ""
    m = _OPENREVIEW_ID.match(value)
    return f"openreview:{m.group(1)}" if m else ""


def arxiv_key(value: str, *, bare: bool = True) -> str:
    """``arxiv:<id>`` (version dropped) from an arXiv link, ``arXiv:`` id or (when ``bare``) a bare id
    such as ``2401.01234v2`` or ``hep-th/9901001``, else ""."""
    m = _ARXIV_URL.search(value)
    if m:
        return f"arxiv:{m.group(1)}"
    if "://" in value or not (bare or value.lower().startswith("arxiv:")):
        return ""
    m = _ARXIV_ID.match(value)
    return f"arxiv:{m.group(1)}" if m else ""


def doi_key(value: str, *, bare: bool = True) -> str:
    """``doi:<doi>`` in lower case from a DOI, ``doi:`` id or doi.org link (a bare ``10.…/…`` DOI only
    when ``bare``), else ""."""
    value = value.strip()
    m = _DOI.match(value)
    if not m or (value.startswith("10.") and not bare):
        return ""
    return f"doi:{m.group(1).rstrip('.,;').lower()}"


def external_key(value: str, *, bare: bool = False) -> str:
    """The normalised identifier a link or prefixed id stands for (``openreview:…``, ``arxiv:…``,
    ``doi:…``), or "" when ``value`` is none of them. ``bare`` also reads bare arXiv ids, DOIs and
    OpenReview forum ids (what a user may type), in that order."""
    return (
        openreview_key(value)
        or arxiv_key(value, bare=bare)
        or doi_key(value, bare=bare)
        or (openreview_key(value, bare=True) if bare else "")
    )


def abstract_key(abstract: str) -> str:
    """``abstract:<12 hex>``: the id of an export row without any identifier (sha1 of the abstract with
    case and runs of whitespace ignored)."""
    norm = _WS.sub(" ", abstract).strip().casefold()
    return "abstract:" + hashlib.sha1(norm.encode("utf-8")).hexdigest()[:12]


def is_file_based(paper_id: str) -> bool:
    """True for ids of the form ``<name>.txt#…``, ``<name>.jsonl#…`` or ``<name>.csv#…``."""
    return bool(_FILE_BASED.match(paper_id))


def export_paper_id(record: Mapping[str, object], abstract: str) -> str:
    """The id of one export row (keys lower-cased), by the rules in this module's docstring.

    Raises:
        ValueError: the row's own id has the form of a file-based id (``x.txt#3``); the message says why.
    """
    own = next((v for v in (_text(record.get(k)) for k in _OWN_ID_FIELDS) if v), "")
    if own:
        if is_file_based(own):
            raise ValueError(f"id {own!r} has the form of a file-based id (<file>#<n>); give the row another id")
        return external_key(own) or own
    candidates = [
        *(openreview_key(_text(record.get(k)), bare=True) for k in ("openreview_id", "openreview")),
        *(openreview_key(_text(record.get(k))) for k in _URL_FIELDS),
        *(arxiv_key(_text(record.get(k))) for k in ("arxiv_id", "arxiv")),
        *(arxiv_key(_text(record.get(k)), bare=False) for k in _URL_FIELDS),
        *(doi_key(_text(record.get(k))) for k in ("doi",)),
        *(doi_key(_text(record.get(k)), bare=False) for k in _URL_FIELDS),
    ]
    return next((c for c in candidates if c), "") or abstract_key(abstract)


def _source(paper_id: str, paper: Paper) -> str:
    if paper.source_file:
        return paper.source_file
    m = _FILE_BASED.match(paper_id)
    return m.group("file") if m else ""


def _legacy_key(paper_id: str, paper: Paper) -> str:
    """The row key of an export paper stored under the old ``<export file>#<key>`` id, else ""."""
    m = _FILE_BASED.match(paper_id)
    if not m or m.group("ext").lower() == "txt":
        return ""
    return m.group("key")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def _listed(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_MAX_LISTED])
    return shown + (f" and {len(ids) - _MAX_LISTED} more" if len(ids) > _MAX_LISTED else "")


@dataclass(frozen=True)
class SyncPlan:
    """What an ingest of ``papers`` does to the stored papers before indexing them.

    Attributes:
        gone: stored ids to delete: papers whose recorded source file is being ingested but that are no
            longer in it, and papers stored under the old ``<export file>#<key>`` ids that this run brings
            back under their new ids.
        moved: input ids already stored with another source file (a renamed export): their record is
            rewritten with the new file; their windows, unchanged, are not embedded again.
        legacy_left: stored old-scheme export ids this run does not migrate (their files were not ingested).
    """

    gone: list[str] = field(default_factory=list)
    moved: set[str] = field(default_factory=set)
    legacy_left: list[str] = field(default_factory=list)


def plan_sync(stored: Mapping[str, Paper], papers: Sequence[Paper]) -> SyncPlan:
    """Decide which stored papers a re-ingest of ``papers`` removes or moves, and log what the user should
    know (papers moved between files, leftovers of a replaced export, old-scheme ids not migrated).

    Removal: only papers whose recorded ``source_file`` is among the files of ``papers`` can be removed (a
    file ingested again is the new truth for its papers). Ingesting ``monthly-2.jsonl`` alone therefore never
    removes a paper of ``monthly-1.jsonl``: the papers found in both move to ``monthly-2.jsonl`` in place; the
    others stay indexed, and a warning lists them with the ``assistant delete`` line that removes them.

    Args:
        stored: the index's papers by id (``PaperStore.load_papers()``).
        papers: this run's papers (``read_papers``), ids unique.

    Returns:
        the :class:`SyncPlan`.
    """
    by_id = {p.id: p for p in papers}
    input_ids = set(by_id)
    files = {p.source_file for p in papers}
    by_text = {_norm(p.text): p.id for p in papers}
    gone: list[str] = []
    legacy_left: list[str] = []
    migrated = 0
    for pid, old in stored.items():
        if pid in by_id:
            continue
        if _source(pid, old) in files:
            gone.append(pid)
            migrated += bool(_legacy_key(pid, old))
            continue
        key = _legacy_key(pid, old)
        if not key:
            continue
        # the row's key under the new scheme; a number may have been a line number: then only the abstract tells
        new_ids = set() if key.isdigit() else {key, external_key(key, bare=True), f"openreview:{key}", f"arxiv:{key}"}
        if new_ids & input_ids or _norm(old.text) in by_text:
            gone.append(pid)
            migrated += 1
        else:
            legacy_left.append(pid)
    if migrated:
        logger.warning(
            "%d paper(s) stored under the old '<export file>#<id>' ids get their new ids (embedded again once)",
            migrated,
        )
    if legacy_left:
        old_files = sorted({_source(pid, stored[pid]) for pid in legacy_left})
        logger.warning(
            "%d paper(s) from %s still have ids of the old '<export file>#<id>' form (e.g. %s): ingest %s again "
            "to give them their new ids, or rebuild with `assistant ingest --rebuild` and all your inputs.",
            len(legacy_left),
            ", ".join(old_files),
            legacy_left[0],
            "that file" if len(old_files) == 1 else "those files",
        )

    moved = {pid for pid, p in by_id.items() if pid in stored and _source(pid, stored[pid]) != p.source_file}
    _report_moves(stored, by_id, moved, set(gone), files)
    return SyncPlan(gone=gone, moved=moved, legacy_left=legacy_left)


def _report_moves(
    stored: Mapping[str, Paper], by_id: Mapping[str, Paper], moved: set[str], gone: set[str], files: set[str]
) -> None:
    flows: dict[tuple[str, str], list[str]] = {}
    for pid in sorted(moved):
        old, new = stored[pid], by_id[pid]
        flows.setdefault((_source(pid, old), new.source_file), []).append(pid)
        if _norm(old.title) != _norm(new.title) and _norm(old.text) != _norm(new.text):
            logger.warning(
                "id %r now names another paper: %r (%s) is replaced by %r (%s). If the ids in these files are only "
                "row numbers, drop the id column so that papers are told apart by their abstracts.",
                pid,
                old.title,
                _source(pid, old),
                new.title,
                new.source_file,
            )
    for (src, dst), ids in sorted(flows.items()):
        logger.info("%d paper(s) moved from %s to %s (updated in place)", len(ids), src, dst)
    for src in sorted({s for s, _ in flows} - files):
        left = sorted(
            pid for pid, p in stored.items() if _source(pid, p) == src and pid not in moved and pid not in gone
        )
        if left:
            dests = ", ".join(sorted({d for s, d in flows if s == src}))
            logger.warning(
                "%d paper(s) of %s are now read from %s; %d other(s) of %s were not in the files ingested and stay "
                "indexed (%s). If %s replaces %s, remove them: assistant delete %s",
                sum(len(v) for (s, _), v in flows.items() if s == src),
                src,
                dests,
                len(left),
                src,
                _listed(left),
                dests,
                src,
                " ".join(shlex.quote(i) for i in left),
            )


@dataclass(frozen=True)
class Resolution:
    """Ids typed by a user, looked up in an index.

    Attributes:
        ids: the stored ids found, in the order asked, without repeats.
        found: typed id -> stored id, for every typed id that was found.
        missing: typed id -> close stored ids (possibly none), for every typed id that was not found.
        ambiguous: typed id -> the stored ids it could mean (nothing of these is chosen).
    """

    ids: list[str]
    found: dict[str, str]
    missing: dict[str, list[str]]
    ambiguous: dict[str, list[str]]


def resolve_ids(typed: Sequence[str], stored: Mapping[str, Paper]) -> Resolution:
    """Find the stored papers ``typed`` ids mean: the exact id; else an arXiv id, DOI or OpenReview id in
    any form (link, prefixed or bare; also matched against each paper's link); else the bare key of an
    id of the old ``<export file>#<key>`` scheme. An id that matches several papers is ambiguous.

    Args:
        typed: what the user typed (``bat-002``, ``2401.01234v2``, ``https://doi.org/10.1/X``, ``a.txt#3``).
        stored: the index's papers by id.

    Returns:
        a :class:`Resolution`; ``missing`` suggests up to 3 close ids (case ignored), none of those found.
    """
    by_url: dict[str, set[str]] = {}
    legacy: dict[str, set[str]] = {}
    for pid, p in stored.items():
        for key in {external_key(p.url), external_key(pid)} - {""}:
            by_url.setdefault(key, set()).add(pid)
        k = _legacy_key(pid, p)
        if k:
            legacy.setdefault(k, set()).add(pid)
            legacy.setdefault(external_key(k, bare=True) or k, set()).add(pid)
    ids: list[str] = []
    found: dict[str, str] = {}
    missing: dict[str, list[str]] = {}
    ambiguous: dict[str, list[str]] = {}
    for raw in typed:
        t = raw.strip()
        key = external_key(t, bare=True)
        matches: set[str] = set()
        if t in stored:
            matches = {t}
        elif key in stored:
            matches = {key}
        elif key and key in by_url:
            matches = by_url[key]
        elif t in legacy or (key and key in legacy):
            matches = legacy.get(t) or legacy[key]
        if len(matches) == 1:
            pid = next(iter(matches))
            found[raw] = pid
            if pid not in ids:
                ids.append(pid)
        elif matches:
            ambiguous[raw] = sorted(matches)
        else:
            missing[raw] = []
    others = {pid: p for pid, p in stored.items() if pid not in ids}  # never suggest what this call removes
    missing = {raw: _suggest(raw.strip(), others) for raw in missing}
    return Resolution(ids, found, missing, ambiguous)


def _suggest(typed: str, stored: Mapping[str, Paper]) -> list[str]:
    """Up to 3 stored ids close to ``typed``, ignoring case (also by the bare key of an old-scheme id)."""
    names: dict[str, str] = {}  # casefolded name -> stored id
    for pid, p in stored.items():
        names.setdefault(pid.casefold(), pid)
        k = _legacy_key(pid, p)
        if k:
            names.setdefault(k.casefold(), pid)
    close = difflib.get_close_matches(typed.casefold(), list(names), n=3, cutoff=0.6)
    return list(dict.fromkeys(names[c] for c in close))[:3]
