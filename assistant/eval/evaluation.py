"""``assistant eval``: score the assistant on a gold question file (format: eval/README.md).

Two modes (docs/evaluation.md):

* :func:`evaluate_retrieval` ranks papers only (no LLM, seconds): recall@k.
* :func:`evaluate_answers` runs every item through the same path as the UI (one
  :class:`~assistant.conversation.session.ChatSession` per item, follow-up turns asked in order, the last one
  scored) and adds citation precision/recall, fact hits, abstention and latency. (No faithfulness: the
  support score of a shown sentence passed the verifier's own threshold by construction; metrics.py.)

Both return the report dict written by ``--json``::

    {"mode": "retrieval" | "answers", "ks": [1, 3, 5, 10],
     "overall": {"n": int, "recall@1": float | None, ..., "false_abstention": float | None},
     "by_type": {type: same keys as overall},
     "latency_ms": {stage: {"p50": ms, "p95": ms, "n": int}},
     "items": [{id, type, question, query, gold_ids, retrieved_ids, cited_ids, answer, abstained,
                answer_facts, facts_hit, sentence_support, sentences: [{text, cited_ids, written_by, check,
                support_probability}], dropped, timings_ms, metrics: {name: float | None}}, ...]}

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

ITEM_TYPES = (
    "lookup",
    "fact",
    "summary",
    "compare",
    "choice",  # which of two named papers ...? (both are gold: a right answer reads both)
    "topic",
    "followup",
    "unanswerable",
    "paraphrase",
    "adversarial",
)
#: The parts a summary must state (an item's ``summary_parts``: part -> alternatives, matched as answer_facts).
SUMMARY_PARTS = ("problem", "method", "result")
#: Kinds of scored turns in a conversation file (eval/conversations.jsonl): every turn is scored, in order,
#: through one chat session; the kind is the turn's ``type`` in the report.
CONVERSATION_KINDS = (
    "first",
    "pronoun",
    "ordinal",
    "switch",
    "which_of_them",
    "compare",
    "summary",
    "unanswerable",
    "pasted",  # a sentence pasted from an abstract: "which paper is this from?"
)
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
ANSWER_METRICS = (
    "citation_precision",
    "citation_recall",
    "facts_hit",
    "abstention_accuracy",
    "false_abstention",
    "quote_fallback",
    *(f"summary_{part}" for part in SUMMARY_PARTS),
)
T = TypeVar("T")


class EvalFormatError(AssistantError):
    """A question file or option is malformed; the message names ``file:line`` and the problem."""


@dataclass(frozen=True, slots=True)
class EvalItem:
    """One gold question. ``turns`` is ``(question,)`` except for ``followup`` items (last turn scored).

    A turn of a conversation file is one item per turn (``id`` = ``<conversation>.<n>``, n from 1,
    ``conversation`` = the conversation's id, ``turns`` = the questions up to and including this one);
    :func:`evaluate_answers` asks a conversation's turns in order in one session and scores each.
    """

    id: str
    type: str
    turns: tuple[str, ...]
    gold_ids: tuple[str, ...]
    answer_facts: tuple[str, ...]
    notes: str = ""
    #: The frozen split (``val`` / ``test``) of files that mark one (eval/README.md); "" when unmarked.
    split: str = ""
    #: The conversation this turn belongs to (conversation files only); "" for a standalone item.
    conversation: str = ""
    #: For a summary: ``(part, alternatives)`` for each of :data:`SUMMARY_PARTS` the item gives; () otherwise.
    summary_parts: tuple[tuple[str, str], ...] = ()

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

    @property
    def catalog(self) -> Any: ...  # venues(), for the narrowing of a one-paper search (answer/listing.py)

    def query(self, text: str, cache: Any = None) -> Any: ...

    def retrieve(
        self, query: Any, top_k: int | None = None, *, aspects: bool = False, allowed: Any = None
    ) -> list[PaperHit]: ...


def _str_list(obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = obj.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise EvalFormatError(f"{where}: '{key}' must be a list of non-empty strings, got {value!r}")
    return tuple(v.strip() for v in value)


def parse_conversation(obj: dict[str, Any], where: str) -> list[EvalItem]:
    """One conversation line (``{"id", "split", "turns": [{"question", "gold_ids", "answer_facts", "kind"}]}``)
    as one :class:`EvalItem` per turn, in order. Raises EvalFormatError naming ``file:line`` and the turn."""
    conv_id, split = obj.get("id"), obj.get("split", "")
    if not isinstance(conv_id, str) or not conv_id.strip():
        raise EvalFormatError(f"{where}: missing or empty 'id'")
    if not isinstance(split, str):
        raise EvalFormatError(f"{where}: 'split' must be a string such as 'val' or 'test', got {split!r}")
    turns = obj.get("turns")
    if not isinstance(turns, list) or not turns:
        raise EvalFormatError(f"{where}: a conversation needs a non-empty 'turns' list")
    items: list[EvalItem] = []
    questions: list[str] = []
    for n, turn in enumerate(turns, start=1):
        at = f"{where} turn {n}"
        if not isinstance(turn, dict):
            raise EvalFormatError(f"{at}: expected a JSON object, got {type(turn).__name__}")
        kind, q = turn.get("kind"), turn.get("question")
        if kind not in CONVERSATION_KINDS:
            raise EvalFormatError(f"{at}: 'kind' is {kind!r}; expected one of {', '.join(CONVERSATION_KINDS)}")
        if not isinstance(q, str) or not any(ch.isalnum() for ch in q):
            raise EvalFormatError(f"{at}: needs a 'question' string with letters or digits")
        questions.append(q.strip())
        gold = _str_list(turn, "gold_ids", at)
        if (kind == "unanswerable") != (not gold):
            raise EvalFormatError(f"{at}: 'gold_ids' must be [] for unanswerable turns and non-empty otherwise")
        facts = _str_list(turn, "answer_facts", at) if turn.get("answer_facts") else ()
        items.append(
            EvalItem(f"{conv_id.strip()}.{n}", kind, tuple(questions), gold, facts, "", split.strip(), conv_id.strip())
        )
    return items


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
    parts = obj.get("summary_parts", {})
    if not isinstance(parts, dict) or not all(k in SUMMARY_PARTS and isinstance(v, str) for k, v in parts.items()):
        raise EvalFormatError(
            f"{where}: 'summary_parts' must map {', '.join(SUMMARY_PARTS)} to strings of ' | '-separated alternatives"
        )
    return EvalItem(
        item_id,
        kind,
        turns,
        gold,
        _str_list(obj, "answer_facts", where),
        notes if isinstance(notes, str) else "",
        split.strip(),
        summary_parts=tuple((k, parts[k]) for k in SUMMARY_PARTS if k in parts),
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
    rows = read_jsonl(path, _parse_row, file_label="question", plural="questions")
    items = [it for row in rows for it in row.items]
    if split is not None:
        chosen = [it for it in items if it.split == split]
        if not chosen:
            have = sorted({it.split or "(none)" for it in items})
            raise EvalFormatError(f"{path}: no questions with split {split!r}; the file has: {', '.join(have)}")
        items = chosen
    return items[:limit] if limit is not None else items


@dataclass(frozen=True, slots=True)
class _Row:
    """One line of a question file: one item, or a conversation's turns."""

    id: str
    items: tuple[EvalItem, ...]


def _parse_row(obj: object, where: str) -> _Row:
    if (
        isinstance(obj, dict)
        and isinstance(obj.get("turns"), list)
        and obj["turns"]
        and isinstance(obj["turns"][0], dict)
    ):
        turns = parse_conversation(obj, where)
        return _Row(turns[0].conversation, tuple(turns))
    item = parse_item(obj, where)
    return _Row(item.id, (item,))


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
    """Paper ids ranked for ``query`` (up to ``max_k``) as the strategy of ``intent`` searches (a one-paper intent:
    narrowed by the question's venue words and author, with aspect coverage: strategy.one_paper_search), and the
    time taken in ms."""
    from assistant.answer.strategies import STRATEGIES
    from assistant.answer.strategy import one_paper_search

    t0 = time.perf_counter()
    strategy = STRATEGIES.get(intent)
    if strategy and strategy.one_paper:
        hits = one_paper_search(ranker, query, query, top_k=max_k)  # type: ignore[arg-type]  # a PaperRetriever
    else:
        hits = ranker.retrieve(query, top_k=max_k)
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
    if answer.listing is not None and answer.listing.total == 0:  # an empty list cites the near papers it left out
        cited = []
    hits = M.facts_hit(answer_text(answer), item.answer_facts) if item.answerable else []
    metrics: dict[str, float | None] = {f"recall@{k}": M.recall_at_k(item.gold_ids, ranked_ids, k) for k in ks}
    metrics.update(
        {
            "citation_precision": M.citation_precision(cited, item.gold_ids),
            "citation_recall": M.citation_recall(cited, item.gold_ids),
            "facts_hit": M.facts_hit_rate(hits),
            "abstention_accuracy": None if item.answerable else M.abstention_correct(answer.abstained, cited),
            "false_abstention": (1.0 if answer.abstained else 0.0) if item.answerable else None,
            # the model wrote, nothing it wrote passed, and abstract sentences were shown instead
            "quote_fallback": (
                (1.0 if answer.model_used and answer.mode == "extractive" else 0.0) if item.answerable else None
            ),
        }
    )
    text = answer_text(answer)
    for part, alternatives in item.summary_parts:
        metrics[f"summary_{part}"] = 1.0 if M.facts_hit(text, [alternatives])[0] else 0.0
    paper_of = {c.n: c.paper.id for c in answer.citations}
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
        "sentences": [
            {
                "text": s.text,
                "cited_ids": [paper_of[n] for n in s.citations if n in paper_of],
                "written_by": "model" if s.by_model else "abstract",
                "check": s.check,
                "support_probability": s.probability,
            }
            for s in answer.sentences
        ],
        "dropped": list(answer.dropped),
        "model_used": answer.model_used,
        "model_sentences": sum(1 for s in answer.sentences if s.by_model),
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
    session, conversation = None, ""
    for item in _progress(items, progress, "answer eval"):
        try:
            if item.conversation and item.conversation == conversation and session is not None:
                pass  # the next turn of the same conversation: same session, earlier turns already asked
            else:
                session, conversation = assistant.new_session(), item.conversation
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
            session, conversation = None, ""  # a later turn of this conversation replays the earlier ones
        if item.conversation:
            record["conversation"] = item.conversation
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
            "quote_fallback": None,
            **{f"summary_{part}": 0.0 for part, _ in item.summary_parts},
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
