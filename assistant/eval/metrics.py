"""Pure evaluation metrics (no I/O, no models): fact matching, recall@k, citations, abstention, latency.

There is deliberately no "faithfulness" here: the share of shown sentences whose support score passes
``support_threshold`` is 1.0 by construction (the verifier already dropped every other sentence), so it
measured nothing (issue 26.2). How often the verifier keeps an unsupported claim is measured on labelled
claims instead (``assistant eval-claims``, claims_eval.py).

Implements the scoring rules of ``eval/README.md`` (a copy of the gold set's README); see
docs/evaluation.md for what each number means. Every function here is deterministic and cheap, so
tests/unit/test_metrics.py checks them with hand-made inputs.

Conventions: ids are paper ids (``"<seed file>#<position>"``); scores are fractions in [0, 1];
``None`` means "not applicable to this item" and is skipped when averaging.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

#: Separator of alternatives inside one ``answer_facts`` string.
ALTERNATIVE_SEPARATOR = " | "
#: Apostrophe look-alikes turned into ``'`` (rule 2).
_CURLY_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201b": "'", "\u02bc": "'"})
#: A comma between a digit and exactly three digits (a thousands separator, rule 4).
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WHITESPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Normalize an answer or a fact for matching (README rules 1-5, in order).

    1. lowercase; 2. curly apostrophes -> ``'``; 3. ``\\%`` -> ``%``, drop ``$``, ``\\``, ``{``, ``}``;
    4. drop thousands commas between digits (``2,864`` -> ``2864``); 5. collapse whitespace runs to one
    space and remove any space before ``%``. Leading/trailing whitespace is stripped.
    """
    s = text.lower().translate(_CURLY_APOSTROPHES)
    s = s.replace("\\%", "%")
    for ch in "$\\{}":
        s = s.replace(ch, "")
    s = _THOUSANDS_COMMA.sub("", s)
    s = _WHITESPACE.sub(" ", s).strip()
    return s.replace(" %", "%")


def alternative_pattern(alternative: str) -> re.Pattern[str] | None:
    """Regex for one alternative: token boundaries on both sides, or the left only for a ``stem*``.

    Returns ``None`` when the alternative is empty after normalization (it can never match).
    """
    alt = alternative.strip()
    is_stem = alt.endswith("*")
    core = normalize(alt[:-1] if is_stem else alt)
    if not core:
        return None
    return re.compile(r"(?<![a-z0-9])" + re.escape(core) + ("" if is_stem else r"(?![a-z0-9])"))


def fact_hit(answer: str, fact: str, *, normalized: bool = False) -> bool:
    """True when any `` | ``-separated alternative of ``fact`` occurs in ``answer`` on token boundaries.

    Args:
        answer: the answer text (raw, or already passed through :func:`normalize` if ``normalized``).
        fact: one ``answer_facts`` entry, e.g. ``"Florence2 | Florence-2"`` or ``"prototyp*"``.
    """
    text = answer if normalized else normalize(answer)
    for alt in fact.split(ALTERNATIVE_SEPARATOR):
        pattern = alternative_pattern(alt)
        if pattern is not None and pattern.search(text):
            return True
    return False


def facts_hit(answer: str, facts: Sequence[str]) -> list[bool]:
    """One bool per fact of ``facts`` (same order): is it found in ``answer``?"""
    text = normalize(answer)
    return [fact_hit(text, f, normalized=True) for f in facts]


def facts_hit_rate(hits: Sequence[bool]) -> float | None:
    """Share of facts hit; ``None`` when the item has no facts (skipped in averages)."""
    return sum(hits) / len(hits) if hits else None


def recall_at_k(gold_ids: Sequence[str], ranked_ids: Sequence[str], k: int) -> float | None:
    """``|gold ∩ top-k ranked| / |gold|``; ``None`` when there is no gold (unanswerable: skipped)."""
    gold = set(gold_ids)
    if not gold:
        return None
    return len(gold & set(ranked_ids[:k])) / len(gold)


def citation_precision(cited_ids: Iterable[str], gold_ids: Sequence[str]) -> float | None:
    """Share of distinct cited ids that are gold; 0.0 when nothing is cited; ``None`` without gold."""
    gold = set(gold_ids)
    if not gold:
        return None
    cited = set(cited_ids)
    return len(cited & gold) / len(cited) if cited else 0.0


def citation_recall(cited_ids: Iterable[str], gold_ids: Sequence[str]) -> float | None:
    """Share of gold ids that are cited; ``None`` without gold (unanswerable: skipped)."""
    gold = set(gold_ids)
    if not gold:
        return None
    return len(gold & set(cited_ids)) / len(gold)


def abstention_correct(abstained: bool, cited_ids: Sequence[str]) -> float:
    """1.0 when an unanswerable item was answered correctly: the answer abstains **and** cites nothing."""
    return 1.0 if abstained and not cited_ids else 0.0


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the non-``None`` values; ``None`` when there are none."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation between order statistics (numpy's default).

    Returns ``None`` for an empty sequence.
    """
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(
    timings: Iterable[Mapping[str, float]],
    stages: Sequence[str] = ("retrieve", "first_token", "generate", "check_after_stream", "total"),
) -> dict[str, dict[str, float]]:
    """``{stage: {"p50": ms, "p95": ms, "n": count}}`` over the items' ``timings_ms``; missing keys are skipped.

    Stages with no measurement at all are left out.
    """
    per_stage: dict[str, list[float]] = {s: [] for s in stages}
    for t in timings:
        for s in stages:
            if s in t:
                per_stage[s].append(float(t[s]))
    out: dict[str, dict[str, float]] = {}
    for s, vals in per_stage.items():
        if vals:
            out[s] = {"p50": percentile(vals, 50) or 0.0, "p95": percentile(vals, 95) or 0.0, "n": len(vals)}
    return out


def aggregate(
    items: Sequence[Mapping[str, object]], metric_names: Sequence[str]
) -> tuple[dict[str, float | int | None], dict[str, dict[str, float | int | None]]]:
    """Mean of each metric overall and per item type.

    Args:
        items: per-item records with ``"type"`` (str) and ``"metrics"`` (``{name: float | None}``).
        metric_names: the metrics to average, in display order.

    Returns:
        ``(overall, by_type)``: ``overall = {"n": items, name: mean or None, ...}`` and
        ``by_type = {type: same shape}``, types in first-appearance order.
    """

    def summarize(group: Sequence[Mapping[str, object]]) -> dict[str, float | int | None]:
        row: dict[str, float | int | None] = {"n": len(group)}
        for name in metric_names:
            row[name] = mean(m.get(name) for m in (g["metrics"] for g in group))  # type: ignore[attr-defined]
        return row

    types: dict[str, list[Mapping[str, object]]] = {}
    for it in items:
        types.setdefault(str(it["type"]), []).append(it)
    return summarize(items), {t: summarize(group) for t, group in types.items()}
