"""``assistant eval-claims``: score the citation verifier on labelled claims (eval/README.md, "Claims").

Each claim is checked by exactly the code the answerer uses for a generated sentence
(:class:`assistant.verify.attribution.Attributor` built as in ``Answerer._generate``, then ``.attribute``),
against a context of the claim's own papers plus the two highest-ranked retrieved papers that are
not among them (distractors). The answering model is started: it checks each claim as it checks an answer sentence.

Report (printed as a per-kind table; written by ``--json``)::

    {"claims": path, "seconds": float,
     "overall": {"n": int, "supported_kept": float | None, "unsupported_dropped": float | None,
                 "balanced_accuracy": float | None, "wrong_paper_citations": int},
     "by_kind": {kind: same keys as overall},
     "latency_ms": {"attribute": {"p50": ms, "p95": ms, "n": int}, "embed": {...}, "checks": {...}, "setup": {...}},
     "items": [{id, kind, label, claim, paper_ids, context_ids, kept, cited_ids, correct,
                wrong_citation, support, probability, verdict, gold_verdict, alignment, reasons,
                evidence, timings_ms: {"setup", "attribute", "embed", "checks"}}, ...]}

``verdict`` is what decided (:data:`assistant.verify.verifiers.Verdict`); ``probability`` the self-check's
``P(yes)`` when the model was asked (0 otherwise); ``gold_verdict`` the row's ``verdict`` field, or "".

Timings (ms): ``attribute`` is one ``Attributor.attribute`` call (what the answerer pays per sentence), of which
``embed`` is the embedding of the sentence and ``checks`` the rest; ``setup`` builds the Attributor (once per
answer; evidence vectors come from the embedder's cache).

``supported_kept`` = share of supported claims kept *and* cited to one of their ``paper_ids``;
``unsupported_dropped`` = share of unsupported claims dropped; ``wrong_paper_citations`` = number of
kept claims citing a paper outside ``paper_ids``. A share is ``None`` for a group without such claims.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from assistant.eval import metrics as M
from assistant.eval.eval_report import format_tables
from assistant.eval.evaluation import EvalFormatError, read_jsonl

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.llm.client import ChatBackend
    from assistant.types import PaperHit
    from assistant.verify.attribution import Embedder
    from assistant.verify.verifiers import VerifierSettings

logger = logging.getLogger(__name__)

LABELS = ("supported", "unsupported")
#: The last kinds of each tuple are those of external data converted to this format (scripts/external_claims.py:
#: Check-COVID ``supported`` -> ``finding``, refuted -> ``refuted``, not enough information -> ``nei``), then
#: ``written``: a sentence the answering model wrote in an answer, labelled blind (eval/written-sentences-1.jsonl).
SUPPORTED_KINDS = ("paraphrase", "synthesis", "multi_paper", "number", "finding", "written")
UNSUPPORTED_KINDS = (
    "number_swap",
    "entity_swap",
    "negation",
    "relation_swap",
    "wrong_paper",
    "overclaim",
    "truncated",
    "refuted",
    "nei",
    "written",
)
#: The three-way gold ``verdict`` a row may carry (eval/claims-seeds-2.jsonl and later sets); optional.
VERDICTS = ("supported", "contradicted", "not_stated")
#: Retrieved papers outside ``paper_ids`` added to each claim's context.
DISTRACTORS = 2
#: Papers retrieved per question to find the distractors.
DISTRACTOR_POOL = 10
_TIMING_STAGES = ("attribute", "embed", "checks", "setup")


@dataclass(frozen=True, slots=True)
class ClaimItem:
    """One labelled claim (``label`` is ``supported`` or ``unsupported``; ``kind`` one of the README kinds)."""

    id: str
    question: str
    claim: str
    paper_ids: tuple[str, ...]
    label: str
    kind: str
    support: str = ""
    notes: str = ""
    split: str = ""
    verdict: str = ""


class ClaimRetriever(Protocol):
    """What the claims evaluation needs from a retriever (:class:`assistant.retrieve.retrieval.PaperRetriever` fits)."""

    papers: Mapping[str, Any]

    def retrieve(self, query: str, top_k: int | None = None) -> list[PaperHit]: ...

    def hits_for(self, query: str, paper_ids: list[str]) -> list[PaperHit]: ...


def _text(obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = obj.get(key, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise EvalFormatError(
            f"{where}: field '{key}' must be a non-empty string, got {value!r}"
            if required
            else f"{where}: field '{key}' must be a string, got {value!r}"
        )
    return value.strip()


def parse_claim(obj: object, where: str) -> ClaimItem:
    """Validate one decoded JSON line (``where`` = ``"file:line"``).

    Raises:
        EvalFormatError: not an object, or a missing/empty/ill-typed field; the message names the field.
    """
    if not isinstance(obj, dict):
        raise EvalFormatError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    item_id, question, claim = (_text(obj, k, where) for k in ("id", "question", "claim"))
    ids = obj.get("paper_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i.strip() for i in ids):
        raise EvalFormatError(f"{where}: field 'paper_ids' must be a non-empty list of paper id strings, got {ids!r}")
    label = obj.get("label")
    if label not in LABELS:
        raise EvalFormatError(f"{where}: field 'label' is {label!r}; expected one of {', '.join(LABELS)}")
    kinds = SUPPORTED_KINDS if label == "supported" else UNSUPPORTED_KINDS
    kind = obj.get("kind")
    if kind not in kinds:
        raise EvalFormatError(f"{where}: field 'kind' is {kind!r}; a {label} claim needs one of {', '.join(kinds)}")
    verdict = obj.get("verdict", "")
    if verdict and (verdict not in VERDICTS or (verdict == "supported") != (label == "supported")):
        raise EvalFormatError(
            f"{where}: field 'verdict' is {verdict!r}; expected one of {', '.join(VERDICTS)}, agreeing with 'label'"
        )
    return ClaimItem(
        item_id,
        question,
        claim,
        tuple(i.strip() for i in ids),
        str(label),
        str(kind),
        _text(obj, "support", where, required=False),
        _text(obj, "notes", where, required=False),
        _text(obj, "split", where, required=False),
        str(verdict),
    )


def load_claims(path: Path) -> list[ClaimItem]:
    """Read a claims JSON Lines file (blank lines ignored).

    Raises:
        EvalFormatError: unreadable file, invalid JSON, a malformed row or duplicate id (``file:line``), no rows.
    """
    return read_jsonl(path, parse_claim, file_label="claims", plural="claims")


def claim_context(retriever: ClaimRetriever, item: ClaimItem, distractors: int = DISTRACTORS) -> list[PaperHit]:
    """The claim's papers (``hits_for(question, paper_ids)``, in that order) followed by the ``distractors``
    highest-ranked papers retrieved for the question that are not among them."""
    own = retriever.hits_for(item.question, list(item.paper_ids))
    ranked = retriever.retrieve(item.question, top_k=DISTRACTOR_POOL)
    others = [h for h in ranked if h.paper.id not in item.paper_ids][:distractors]
    return [*own, *others]


def check_claim(
    item: ClaimItem,
    context: Sequence[PaperHit],
    embed: Embedder,
    verify: VerifierSettings,
    backend: ChatBackend,
) -> dict[str, Any]:
    """Run ``item.claim`` through the answerer's verifier against ``context``; one report item (module docstring).
    ``verify``: the verifier settings (``Settings.verify``), built by :func:`build_verifier` as an answer builds
    them. ``backend``: the answering model, for the ``self_check`` verifier."""
    from assistant.verify.attribution import Attributor
    from assistant.verify.verifiers import build_verifier

    embed_ms = [0.0]

    def timed_embed(texts: list[str]) -> list[list[float]]:
        t = time.perf_counter()
        try:
            return embed(texts)
        finally:
            embed_ms[0] += (time.perf_counter() - t) * 1000

    t0 = time.perf_counter()
    verifier = build_verifier(verify, backend)
    attributor = Attributor(context, timed_embed, verifier, item.question)  # as in Answerer._generate
    t1 = time.perf_counter()
    embed_ms[0] = 0.0
    alignment, verdict = attributor.check(item.claim)
    t2 = time.perf_counter()
    kept = verdict is not None
    cited = [context[n - 1].paper.id for n in verdict[0].citations] if verdict else []
    wrong = kept and any(pid not in item.paper_ids for pid in cited)
    correct = (kept and any(pid in item.paper_ids for pid in cited)) if item.label == "supported" else not kept
    return {
        "id": item.id,
        "kind": item.kind,
        "label": item.label,
        "claim": item.claim,
        "paper_ids": list(item.paper_ids),
        "context_ids": [h.paper.id for h in context],
        "kept": kept,
        "cited_ids": cited,
        "correct": correct,
        "wrong_citation": wrong,
        "support": verdict[0].support if verdict else None,
        "probability": round(alignment.score, 4),
        "verdict": alignment.verdict,
        "gold_verdict": item.verdict,
        "alignment": round(alignment.alignment, 4),
        "reasons": list(alignment.reasons),
        "evidence": verdict[1] if verdict else "",
        "timings_ms": {
            "setup": round((t1 - t0) * 1000, 2),
            "attribute": round((t2 - t1) * 1000, 2),
            "embed": round(embed_ms[0], 2),
            "checks": round((t2 - t1) * 1000 - embed_ms[0], 2),
        },
    }


def summarize(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"n", "supported_kept", "unsupported_dropped", "balanced_accuracy", "wrong_paper_citations"}`` over
    ``records`` (balanced accuracy: the mean of the two shares, None unless both exist)."""
    sup = [r for r in records if r["label"] == "supported"]
    uns = [r for r in records if r["label"] == "unsupported"]
    kept = M.mean(1.0 if r["correct"] else 0.0 for r in sup) if sup else None
    dropped = M.mean(1.0 if r["correct"] else 0.0 for r in uns) if uns else None
    return {
        "n": len(records),
        "supported_kept": kept,
        "unsupported_dropped": dropped,
        "balanced_accuracy": (kept + dropped) / 2 if kept is not None and dropped is not None else None,
        "wrong_paper_citations": sum(1 for r in records if r["wrong_citation"]),
    }


def evaluate_claims(
    retriever: ClaimRetriever,
    embed: Embedder,
    items: Sequence[ClaimItem],
    verify: VerifierSettings,
    *,
    backend: ChatBackend,
    progress: bool = False,
) -> dict[str, Any]:
    """Check every claim (see :func:`check_claim`; ``backend`` for the ``self_check`` verifier) and aggregate.
    Returns the report dict (module docstring)."""
    from tqdm import tqdm

    unknown = sorted({p for it in items for p in it.paper_ids} - set(retriever.papers))
    if unknown:
        logger.warning("%d paper id(s) are not in the index: %s", len(unknown), ", ".join(unknown[:10]))
    embed(["warm-up sentence for the embedding model"])  # first call pays one-off start-up costs
    records = []
    for item in tqdm(items, desc="claims eval", unit="claim", disable=not progress, file=sys.stderr):
        records.append(
            check_claim(
                item,
                claim_context(retriever, item),
                embed,
                verify,
                backend,
            )
        )
    kinds = [k for k in (*SUPPORTED_KINDS, *UNSUPPORTED_KINDS) if any(r["kind"] == k for r in records)]
    return {
        "overall": summarize(records),
        "by_kind": {k: summarize([r for r in records if r["kind"] == k]) for k in kinds},
        "latency_ms": M.latency_summary((r["timings_ms"] for r in records), _TIMING_STAGES),
        "items": records,
    }


def format_claims_report(report: Mapping[str, Any]) -> str:
    """Fixed-width text: one row per kind then overall, then per-claim latency."""
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    header = ["group", "n", "supported_kept", "unsupported_dropped", "balanced_accuracy", "wrong_paper_citations"]
    groups = [*report["by_kind"].items(), ("overall", report["overall"])]
    rows = [
        [
            g,
            str(r["n"]),
            fmt(r["supported_kept"]),
            fmt(r["unsupported_dropped"]),
            fmt(r["balanced_accuracy"]),
            str(r["wrong_paper_citations"]),
        ]
        for g, r in groups
    ]
    lat = [[s, str(v["n"]), f"{v['p50']:.1f}", f"{v['p95']:.1f}"] for s, v in report["latency_ms"].items()]
    return format_tables(
        [("Citation verifier (claims)", header, rows), ("Latency per claim (ms)", ["stage", "n", "p50", "p95"], lat)]
    )


def run_claims_command(
    settings: Settings, claims: Path, *, json_out: Path | None = None, progress: bool = True, split: str | None = None
) -> int:
    """``assistant eval-claims``: load, check, print the table, optionally write the JSON report. Returns 0.
    With ``split``, only the claims whose ``split`` field equals it are scored.

    Raises:
        EvalFormatError: bad claims file, or no claim of that split; StoreNotReadyError / ConfigError from
            opening the index or model.
    """
    from tqdm.contrib.logging import logging_redirect_tqdm

    items = load_claims(claims)
    if split is not None:
        splits = sorted({i.split for i in items})
        items = [i for i in items if i.split == split]
        if not items:
            raise EvalFormatError(f"{claims}: no claim has split {split!r} (splits present: {splits})")
    logger.info("checking %d claim(s) from %s", len(items), claims)
    t0 = time.perf_counter()
    with logging_redirect_tqdm(), contextlib.ExitStack() as stack:
        from assistant.service import build_assistant

        assistant = stack.enter_context(build_assistant(settings))  # the answering model checks, as in an answer
        retriever, embedder, backend = assistant.retriever, assistant.answerer.embedder, assistant.answerer.backend
        report = evaluate_claims(retriever, embedder, items, settings.verify, backend=backend, progress=progress)
    report = {
        "claims": str(claims),
        "split": split,
        "verifier": f"self_check >= {settings.verify.self_check_probability:g} ({assistant.model_label})",
        "seconds": round(time.perf_counter() - t0, 1),
        **report,
    }
    print(format_claims_report(report))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        logger.info("wrote %s", json_out)
    return 0
