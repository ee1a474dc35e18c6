"""Print the rows of docs/configuration.md's "Fitted values" table from the settings groups' fitted fields
(those with no ``ASSISTANT_*`` variable); tests/unit/test_docs.py checks the table against the same fields.

    PYTHONPATH=. .venv/bin/python scripts/fitted_table.py   # paste over the table's rows
"""

from __future__ import annotations

from assistant.config import FLAT, GROUPS


def fitted_rows() -> list[str]:
    """One ``| `group.field` | `value` | description |`` row per fitted field, in group and field order."""
    with_variable = {".".join(where) for where in FLAT.values()}
    rows = []
    for group, cls in GROUPS.items():
        for name, info in cls.model_fields.items():
            if f"{group}.{name}" not in with_variable:
                meaning = (info.description or "").replace("|", "\\|")
                rows.append(f"| `{group}.{name}` | `{info.default:g}` | {meaning} |")
    return rows


if __name__ == "__main__":
    print("\n".join(fitted_rows()))
