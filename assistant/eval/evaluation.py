"""``assistant eval``: score the assistant on a gold question file (format: eval/README.md).

Two modes (docs/evaluation.md):

* :func:`evaluate_retrieval` ranks papers only (no LLM, seconds): recall@k.
* :func:`evaluate_answers` runs every item through the same path as the UI (one
  :class:`~assistant.session.ChatSession` per item, follow-up turns asked in order, the last one
  scored) and adds citation precision/recall, fact hits, abstention and latency. (No faithfulness: the
  support score of a shown sentence passed the verifier's own threshold by construction; metrics.py.)

Both return the report dict written by ``--json``::

    {"mode": "retrieval" | "answers", "ks": [1, 3, 5, 10],
     "overall": {"n": int, "recall@1": float | None, ..., "false_abstention": float | None},
     "by_type": {type: same keys as overall},
     "latency_ms": {stage: {"p50": ms, "p95": ms, "n": int}},
     "items": [{id, type, question, query, gold_ids, retrieved_ids, cited_ids, answer, abstained,
                answer_facts, facts_hit, sentence_support, dropped, timings_ms, metrics: {name: float | None}}, ...]}

A metric is ``None`` where it does not apply (README "Scoring"); means skip ``None``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from assistant.errors import AssistantError
from assistant.eval import metrics as M
from assistant.llm.prompts import CITATION_MARKER

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.service import Assistant
    from assistant.types import Answer, Paper, PaperHit

logger = logging.getLogger(__name__)

ITEM_TYPES = ("lookup", "fact", "summary", "compare", "topic", "followup", "unanswerable", "paraphrase", "adversarial")
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
ANSWER_METRICS = (
    "citation_precision",
    "citation_recall",
    "facts_hit",
    "abstention_accuracy",
    "false_abstention",
)
T = TypeVar("T")


class EvalFormatError(AssistantError):
    """A question file or option is malformed; the message names ``file:line`` and the problem."""


@dataclass(frozen=True, slots=True)
class EvalItem:
    """One gold question. ``turns`` is ``(question,)`` except for ``followup`` items (last turn scored)."""

    id: str
    type: str
    turns: tuple[str, ...]
    gold_ids: tuple[str, ...]
    answer_facts: tuple[str, ...]
    notes: str = ""
    #: The frozen split (``val`` / ``test``) of files that mark one (eval/README.md); "" when unmarked.
    split: str = ""

    @property
    def question(self) -> str:
        """The scored (last) user turn."""
        return self.turns[-1]

    @property
    def answerable(self) -> bool:
        """False for ``unanswerable`` items (which have no gold ids)."""
        return self.type != "unanswerable"


class PaperRanker(Protocol):
    """What evaluation needs from a retriever (:class:`assistant.retrieve.retrieval.PaperRetriever` fits)."""

    papers: Mapping[str, Paper]

    def retrieve(self, query: str, top_k: int | None = None, *, aspects: bool = False) -> list[PaperHit]: ...


def _str_list(obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = obj.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise EvalFormatError(f"{where}: '{key}' must be a list of non-empty strings, got {value!r}")
    return tuple(v.strip() for v in value)


def parse_item(obj: object, where: str) -> EvalItem:
    """Validate one decoded JSON line (``where`` = ``"file:line"`` for messages). Raises EvalFormatError."""
    if not isinstance(obj, dict):
        raise EvalFormatError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    item_id, kind = obj.get("id"), obj.get("type")
    if not isinstance(item_id, str) or not item_id.strip():
        raise EvalFormatError(f"{where}: missing or empty 'id'")
    if kind not in ITEM_TYPES:
        raise EvalFormatError(f"{where}: 'type' is {kind!r}; expected one of {', '.join(ITEM_TYPES)}")
    if kind == "followup":
        turns = _str_list(obj, "turns", where)
        if not turns:
            raise EvalFormatError(f"{where}: followup item needs a non-empty 'turns' list")
    else:
        q = obj.get("question")
        if not isinstance(q, str):
            raise EvalFormatError(f"{where}: '{kind}' item needs a 'question' string")
        turns = (q.strip(),)
    if not all(any(ch.isalnum() for ch in t) for t in turns):
        raise EvalFormatError(f"{where}: a question has no letters or digits")
    gold = _str_list(obj, "gold_ids", where)
    if (kind == "unanswerable") != (not gold):
        raise EvalFormatError(f"{where}: 'gold_ids' must be [] for unanswerable items and non-empty otherwise")
    notes = obj.get("notes", "")
    split = obj.get("split", "")
    if not isinstance(split, str):
        raise EvalFormatError(f"{where}: 'split' must be a string such as 'val' or 'test', got {split!r}")
    return EvalItem(
        item_id,
        kind,
        turns,
        gold,
        _str_list(obj, "answer_facts", where),
        notes if isinstance(notes, str) else "",
        split.strip(),
    )


def read_jsonl(path: Path, parse: Callable[[object, str], T], *, file_label: str, plural: str) -> list[T]:
    """Parse each non-blank line of a JSON Lines file with ``parse(obj, "file:line")``; ids must be unique.

    ``file_label`` and ``plural`` word the errors ("cannot read question file …", "no questions found").

    Raises:
        EvalFormatError: unreadable file, invalid JSON, a malformed row (from ``parse``), a duplicate ``id``
            (``file:line``), or no rows at all.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise EvalFormatError(f"cannot read {file_label} file {path}: {e}") from e
    items: list[T] = []
    seen: dict[str, int] = {}
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvalFormatError(f"{where}: invalid JSON ({e.msg} at column {e.colno})") from e
        item = parse(obj, where)
        item_id = item.id  # type: ignore[attr-defined]
        if item_id in seen:
            raise EvalFormatError(f"{where}: duplicate id {item_id!r} (first on line {seen[item_id]})")
        seen[item_id] = no
        items.append(item)
    if not items:
        raise EvalFormatError(f"{path}: no {plural} found")
    return items


def load_items(path: Path, limit: int | None = None, split: str | None = None) -> list[EvalItem]:
    """Read a JSON Lines question file (blank lines ignored), keeping the items of ``split`` (``val``,
    ``test``; None: all), then the first ``limit`` of them.

    Raises:
        EvalFormatError: unreadable file, invalid JSON, a malformed item or a duplicate id (``file:line``);
            a ``split`` no item of the file has (the error lists the splits it has).
    """
    items = read_jsonl(path, parse_item, file_label="question", plural="questions")
    if split is not None:
        chosen = [it for it in items if it.split == split]
        if not chosen:
            have = sorted({it.split or "(none)" for it in items})
            raise EvalFormatError(f"{path}: no questions with split {split!r}; the file has: {', '.join(have)}")
        items = chosen
    return items[:limit] if limit is not None else items


def parse_ks(text: str) -> tuple[int, ...]:
    """``"1,3,5,10"`` -> ``(1, 3, 5, 10)`` (sorted, unique, each >= 1). Raises EvalFormatError."""
    try:
        ks = sorted({int(p) for p in text.split(",") if p.strip()})
    except ValueError as e:
        raise EvalFormatError(f"--k must be comma-separated integers, got {text!r}") from e
    if not ks or ks[0] < 1:
        raise EvalFormatError(f"--k values must be integers >= 1, got {text!r}")
    return tuple(ks)


def retrieval_only_query(item: EvalItem) -> str:
    """Query used without an LLM: the last turn, plus earlier user turns in parentheses for follow-ups.

    (With answers, the session's own resolution is used instead; see :func:`evaluate_answers`.)
    """
    if len(item.turns) == 1:
        return item.question
    return f"{item.question} ({' '.join(item.turns[:-1])})"


def _warn_unknown_gold(items: Sequence[EvalItem], papers: Mapping[str, object]) -> None:
    unknown = sorted({g for it in items for g in it.gold_ids} - set(papers))
    if unknown:
        logger.warning(
            "%d gold id(s) are not in the index (recall for them is 0): %s", len(unknown), ", ".join(unknown[:10])
        )


def _ranked(ranker: PaperRanker, query: str, max_k: int, intent: str) -> tuple[list[str], float]:
    """Paper ids ranked for ``query`` (up to ``max_k``) as the strategy of ``intent`` searches (with aspect
    coverage for one-paper intents), and the time taken in ms."""
    from assistant.answer.strategies import STRATEGIES

    t0 = time.perf_counter()
    strategy = STRATEGIES.get(intent)
    hits = ranker.retrieve(query, top_k=max_k, aspects=bool(strategy and strategy.one_paper))
    return [h.paper.id for h in hits], (time.perf_counter() - t0) * 1000


def _progress(items: Sequence[EvalItem], progress: bool, desc: str) -> Iterable[EvalItem]:
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit="q", disable=not progress, file=sys.stderr)


def _report(mode: str, ks: Sequence[int], records: list[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    overall, by_type = M.aggregate(records, names)
    return {
        "mode": mode,
        "ks": list(ks),
        "overall": overall,
        "by_type": by_type,
        "latency_ms": M.latency_summary(r["timings_ms"] for r in records),
        "items": records,
    }


def evaluate_retrieval(
    retriever: PaperRanker, items: Sequence[EvalItem], ks: Sequence[int] = DEFAULT_KS, *, progress: bool = False
) -> dict[str, Any]:
    """Recall@k of the paper ranking for each item (no LLM); follow-ups use :func:`retrieval_only_query`.

    Returns:
        the report dict (module docstring) with only ``recall@k`` metrics and ``retrieve`` latency (ms
        for ``retrieve(query, top_k=max(ks))``).
    """
    from assistant.understand.intents import detect_intent

    _warn_unknown_gold(items, retriever.papers)
    records = []
    for item in _progress(items, progress, "retrieval eval"):
        query = retrieval_only_query(item)
        ids, ms = _ranked(retriever, query, max(ks), detect_intent(item.question))
        records.append(
            {
                "id": item.id,
                "type": item.type,
                "question": item.question,
                "turns": list(item.turns),
                "query": query,
                "gold_ids": list(item.gold_ids),
                "retrieved_ids": ids,
                "timings_ms": {"retrieve": round(ms, 1)},
                "metrics": {f"recall@{k}": M.recall_at_k(item.gold_ids, ids, k) for k in ks},
            }
        )
    return _report("retrieval", ks, records, [f"recall@{k}" for k in ks])


def answer_text(answer: Answer) -> str:
    """The answer as shown, without ``[n]`` markers (so a fact ``"1"`` cannot match a marker)."""
    return " ".join(CITATION_MARKER.sub("", answer.text).split())


def score_answer(item: EvalItem, answer: Answer, ranked_ids: Sequence[str], ks: Sequence[int]) -> dict[str, Any]:
    """One item's record (module docstring) from its final ``answer`` and the deeper ranking ``ranked_ids``."""
    cited = list(dict.fromkeys(c.paper.id for c in answer.citations))
    hits = M.facts_hit(answer_text(answer), item.answer_facts) if item.answerable else []
    metrics: dict[str, float | None] = {f"recall@{k}": M.recall_at_k(item.gold_ids, ranked_ids, k) for k in ks}
    metrics.update(
        {
            "citation_precision": M.citation_precision(cited, item.gold_ids),
            "citation_recall": M.citation_recall(cited, item.gold_ids),
            "facts_hit": M.facts_hit_rate(hits),
            "abstention_accuracy": None if item.answerable else M.abstention_correct(answer.abstained, cited),
            "false_abstention": (1.0 if answer.abstained else 0.0) if item.answerable else None,
        }
    )
    return {
        "id": item.id,
        "type": item.type,
        "question": item.question,
        "turns": list(item.turns),
        "gold_ids": list(item.gold_ids),
        "retrieved_ids": list(ranked_ids),
        "cited_ids": cited,
        "answer": answer.text,
        "mode": answer.mode,
        "notice": answer.notice,
        "abstained": answer.abstained,
        "answer_facts": list(item.answer_facts),
        "facts_hit": hits,
        "sentence_support": [round(s.support, 3) for s in answer.sentences],
        "dropped": list(answer.dropped),
        "timings_ms": {k: round(v, 1) for k, v in answer.timings_ms.items()},
        "metrics": metrics,
    }


def evaluate_answers(
    assistant: Assistant,
    items: Sequence[EvalItem],
    ks: Sequence[int] = DEFAULT_KS,
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Ask every item through a fresh chat session (as the UI does) and score the last turn.

    Recall@k uses ``assistant.retriever.retrieve(q, top_k=max(ks))`` where ``q`` is the query the
    session resolved for the scored turn (for follow-ups: after the earlier turns were answered), searched
    as the answer's intent searches (aspect coverage for lookups and summaries).

    Returns:
        the report dict (module docstring) with all metrics and per-stage latency of the scored turns.
    """
    from assistant.understand.question import clean_question

    _warn_unknown_gold(items, assistant.retriever.papers)
    records = []
    for item in _progress(items, progress, "answer eval"):
        try:
            session = assistant.new_session()
            for turn in item.turns[:-1]:
                session.ask(turn)
            answer = session.ask(item.question)
            query = answer.resolved_query or clean_question(item.question)
            ids, _ = _ranked(assistant.retriever, query, max(ks), answer.intent)
            record = score_answer(item, answer, ids, ks)
            record["query"] = query
        except Exception as e:  # noqa: BLE001 - one broken item is recorded as failed; the run goes on
            logger.exception("eval item %s failed", item.id)
            record = failed_record(item, e, ks)
        records.append(record)
    report = _report("answers", ks, records, [*(f"recall@{k}" for k in ks), *ANSWER_METRICS])
    report["errors"] = [{"id": r["id"], "error": r["error"]} for r in records if r.get("error")]
    report["llm_failures"] = sum(
        1
        for r in records
        if r.get("notice", "").startswith("The language model") or "bundled language model" in r.get("notice", "")
    )
    return report


def failed_record(item: EvalItem, error: BaseException, ks: Sequence[int]) -> dict[str, Any]:
    """The record of an item whose answer raised: scored as a miss (0 for every metric that applies)."""
    miss: dict[str, float | None] = {f"recall@{k}": None for k in ks}
    miss.update(
        {
            "citation_precision": 0.0 if item.answerable else None,
            "citation_recall": 0.0 if item.answerable else None,
            "facts_hit": 0.0 if item.answerable and item.answer_facts else None,
            "abstention_accuracy": None if item.answerable else 0.0,
            "false_abstention": None,
        }
    )
    return {
        "id": item.id,
        "type": item.type,
        "question": item.question,
        "turns": list(item.turns),
        "gold_ids": list(item.gold_ids),
        "error": f"{type(error).__name__}: {error}",
        "timings_ms": {},
        "metrics": miss,
    }


def run_eval_command(
    settings: Settings,
    questions: Path,
    *,
    ks_text: str = "1,3,5,10",
    json_out: Path | None = None,
    retrieval_only: bool = False,
    limit: int | None = None,
    progress: bool = True,
    split: str | None = None,
) -> int:
    """``assistant eval``: load, evaluate, print the tables, optionally write the JSON report. Returns 0.

    Raises:
        EvalFormatError: bad question file or ``--k``; StoreNotReadyError / LLMUnavailableError from the pipeline.
    """
    from tqdm.contrib.logging import logging_redirect_tqdm

    from assistant.index.embeddings import build_embed_model

    ks = parse_ks(ks_text)
    if limit is not None and limit < 1:
        raise EvalFormatError(f"--limit must be >= 1, got {limit}")
    items = load_items(questions, limit, split)
    logger.info(
        "evaluating %d item(s) from %s (%s)", len(items), questions, "retrieval only" if retrieval_only else "answers"
    )
    t0 = time.perf_counter()
    with logging_redirect_tqdm():
        if retrieval_only:
            from assistant.retrieve.retrieval import PaperRetriever

            retriever = PaperRetriever.open(settings, build_embed_model(settings))
            report = evaluate_retrieval(retriever, items, ks, progress=progress)
        else:
            from assistant.service import build_assistant

            with build_assistant(settings) as assistant:
                report = evaluate_answers(assistant, items, ks, progress=progress)
    report["questions"], report["seconds"] = str(questions), round(time.perf_counter() - t0, 1)
    report["split"] = split
    from assistant.eval.eval_report import print_report

    print_report(report)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        logger.info("wrote %s", json_out)
    return 0
