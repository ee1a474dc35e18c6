"""Written answers, side by side: the figures of the written-answers issue from ``assistant eval --json`` reports.

    .venv/bin/python benchmarks/written_answers.py NAME=REPORT.json [NAME=REPORT.json ...] [--markdown]

Each REPORT is the ``--json`` output of ``assistant eval`` on one question set with one model (make them with
``assistant eval --questions eval/questions-3.jsonl --json out.json``, the model chosen by ``ASSISTANT_LLM_BUNDLED``
or ``ASSISTANT_LLM_BASE_URL``). Per report it prints:

- ``facts``, ``cit_P``, ``cit_R``: the eval's overall facts hit, citation precision and recall;
- ``cmp_facts``: facts hit over comparison items (type ``compare``, or conversation turns of kind ``compare``);
- ``refused``: of the answerable items, the share answered as not covered by the abstracts (mode ``abstained``);
- ``false_not_stated``: of the answerable items, the share answered "not stated";
- ``kept``: of the items where the model was asked, the share whose answer shows at least one sentence the model
  wrote (``model_sentences`` > 0);
- ``first_text``, ``first_token``, ``total``: p50 / p95 in seconds, over the items that have the timing.

Quote latencies with the machine's load beside them (``benchmarks/run_all.sh`` stamps it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def figures(report: dict[str, Any]) -> dict[str, float | int | None]:
    """The figures of one ``assistant eval --json`` report (module docstring)."""
    items = [i for i in report["items"] if "error" not in i]
    answerable = [i for i in items if i.get("gold_ids")]
    compare = [i for i in items if i.get("type") == "compare" or i.get("kind") == "compare"]
    cmp_facts = [i["metrics"]["facts_hit"] for i in compare if i["metrics"].get("facts_hit") is not None]
    out: dict[str, float | int | None] = {
        "n": len(report["items"]),
        "errors": len(report["items"]) - len(items),
        "facts": report["overall"].get("facts_hit"),
        "cit_P": report["overall"].get("citation_precision"),
        "cit_R": report["overall"].get("citation_recall"),
        "cmp_facts": _mean(cmp_facts),
        "asked": len([i for i in items if i.get("model_used")]),
        "refused": _mean([1.0 if i.get("mode") == "abstained" else 0.0 for i in answerable]),
        "false_not_stated": _mean([1.0 if i.get("mode") == "not_stated" else 0.0 for i in answerable]),
        "kept": _mean([1.0 if i.get("model_sentences", 0) > 0 else 0.0 for i in items if i.get("model_used")]),
    }
    for stage in ("first_text", "first_token", "total"):
        secs = [i["timings_ms"][stage] / 1000 for i in items if stage in i.get("timings_ms", {})]
        out[f"{stage}_p50"], out[f"{stage}_p95"] = _pct(secs, 0.5), _pct(secs, 0.95)
    return out


COLUMNS = ["n", "facts", "cit_P", "cit_R", "cmp_facts", "asked", "refused", "false_not_stated", "kept",
           "first_text_p50", "first_text_p95", "first_token_p50", "total_p50", "total_p95"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", metavar="NAME=REPORT.json")
    args = ap.parse_args(argv)
    rows = []
    for spec in args.reports:
        name, _, path = spec.partition("=")
        if not path:
            name, path = Path(spec).stem, spec
        try:
            rows.append((name, figures(json.loads(Path(path).read_text()))))
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {path}: not an `assistant eval --json` report ({e})", file=sys.stderr)
            return 2
    fmt = lambda v: "-" if v is None else (str(v) if isinstance(v, int) else f"{v:.3f}")  # noqa: E731
    print("| set / model | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for name, f in rows:
        print(f"| {name} | " + " | ".join(fmt(f[c]) for c in COLUMNS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
