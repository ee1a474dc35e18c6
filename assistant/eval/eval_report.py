"""Printing evaluation reports: the score and latency tables of ``assistant eval`` and ``assistant
eval-claims``, as rich tables on a terminal and fixed-width text otherwise. Computing the reports is
evaluation.py's (answers, retrieval) and claims_eval.py's (verifier) job."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

_LABELS = {
    "citation_precision": "cit_prec",
    "citation_recall": "cit_rec",
    "facts_hit": "facts",
    "abstention_accuracy": "abstain_acc",
    "false_abstention": "false_abst",
}


def report_tables(report: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The printed tables as ``(title, header, rows)`` of strings: scores (overall, then per type) and latency."""
    names = [k for k in report["overall"] if k != "n"]
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    header = ["group", "n", *(_LABELS.get(n, n) for n in names)]
    groups = [("overall", report["overall"]), *report["by_type"].items()]
    rows = [[g, str(row["n"]), *(fmt(row[n]) for n in names)] for g, row in groups]
    lat = [[s, str(v["n"]), f"{v['p50']:.0f}", f"{v['p95']:.0f}"] for s, v in report["latency_ms"].items()]
    return [(f"Scores ({report['mode']})", header, rows), ("Latency (ms)", ["stage", "n", "p50", "p95"], lat)]


def format_report(report: Mapping[str, Any]) -> str:
    """Plain fixed-width text of :func:`report_tables` (used when stdout is not a terminal)."""
    return format_tables(report_tables(report))


def format_tables(tables: Sequence[tuple[str, list[str], list[list[str]]]]) -> str:
    """``(title, header, rows)`` tables as fixed-width text: first column left-aligned, the rest right."""
    out = []
    for title, header, rows in tables:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
        out += [title, line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows), ""]
    return "\n".join(out)


def print_report(report: Mapping[str, Any]) -> None:
    """Print the tables to stdout: with rich on a terminal, plain text otherwise."""
    try:
        if not sys.stdout.isatty():
            raise ImportError
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(format_report(report))
        return
    console = Console()
    for title, header, rows in report_tables(report):
        table = Table(title=title, title_justify="left")
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for r in rows:
            table.add_row(*r)
        console.print(table)
