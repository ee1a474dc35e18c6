"""Docs stay in sync with the code: every setting is in the settings table (docs/configuration.md), every
``ASSISTANT_*`` name the docs mention exists, the ``--json`` schema file is the typed model's and docs/usage.md
names its every field, the CLIs document their commands, the README stays a five-minute read."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import import_module
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from assistant.cli import main
from assistant.config import GROUPS, OTHER_VARIABLES, Settings, env_fields, env_names
from ui.settings import UISettings

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
#: The settings table (moved out of the README by issue 31).
CONFIGURATION = (REPO / "docs" / "configuration.md").read_text()
#: The command reference: the ``--json`` fields, every command (moved out of the README by issue 31).
USAGE = (REPO / "docs" / "usage.md").read_text()
DOCS = {p.relative_to(REPO).as_posix(): p.read_text() for p in [REPO / "README.md",
                                                                *sorted((REPO / "docs").glob("*.md"))]}


@pytest.mark.parametrize("name", sorted(env_names(Settings) | env_names(UISettings)))
def test_every_setting_is_in_the_settings_table(name: str) -> None:
    assert f"| `{name}` |" in CONFIGURATION


#: Misspellings the docs show on purpose (what the start-up warning says about them).
TYPO_EXAMPLES = {"ASSISTANT_TOPK"}


def test_every_variable_named_in_the_docs_exists() -> None:
    known = env_names(Settings) | env_names(UISettings) | set(OTHER_VARIABLES) | TYPO_EXAMPLES
    unknown = sorted({f"{doc}: {name}" for doc, text in DOCS.items()
                      for name in re.findall(r"\bASSISTANT_[A-Z0-9_]*[A-Z0-9]\b", text) if name not in known})
    assert unknown == [], "docs mention settings that do not exist"


def test_every_other_variable_is_read_where_it_says() -> None:
    for name, where in OTHER_VARIABLES.items():
        path = where.split(":")[0]
        files = [REPO / path] if (REPO / path).is_file() else sorted((REPO / path).rglob("*.py"))
        assert any(name in f.read_text() for f in files), (name, where)


def test_readme_has_the_two_commands() -> None:
    assert "./scripts/run.sh" in README and "./scripts/test.sh" in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "./scripts/test.sh" in ci


def test_readme_is_a_five_minute_read() -> None:
    """At most 1,500 words (``wc -w``), and it says where each kind of change goes (issue 31)."""
    assert len(README.split()) <= 1500, f"README.md has {len(README.split())} words: move detail to docs/"
    table = README[README.index("## Where a change goes"):]
    for change in ("an intent", "a ranker", "a verifier", "an input format", "a UI element"):
        assert f"\n| {change}" in table, change


def test_readme_names_docs_that_exist() -> None:
    named = set(re.findall(r"`((?:docs|eval)/[\w./-]+)`", README))
    assert "docs/usage.md" in named and "docs/configuration.md" in named
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert missing == [], missing


def test_cli_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("ingest", "ask", "eval", "delete", "eval-claims", "assistant-ui"):
        assert cmd in out


def test_ui_help_lists_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    from ui.cli import main as ui_main

    with pytest.raises(SystemExit) as exit_:
        ui_main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--host", "--port", "--no-ingest", "--storage-dir", "--verbose"):
        assert opt in out


def test_console_scripts_point_at_the_entry_points() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"assistant": "assistant.cli:main", "assistant-ui": "ui.cli:main"}
    for target in scripts.values():
        module, func = target.split(":")
        assert callable(getattr(import_module(module), func))


def test_bad_setting_names_field_and_env_var(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ASSISTANT_TOP_K", "zero")
    assert main(["ask", "hello"]) == 1
    err = capsys.readouterr().err
    assert "ASSISTANT_TOP_K" in err


def test_answer_schema_file_is_generated_from_the_model() -> None:
    from assistant.answer.render import answer_schema

    assert json.loads((REPO / "docs" / "answer.schema.json").read_text()) == answer_schema(), \
        ("regenerate: python -c 'import json; from assistant.answer.render import answer_schema; "
         "print(json.dumps(answer_schema(), indent=2))' > docs/answer.schema.json")


def test_usage_doc_lists_every_json_field() -> None:
    from assistant.answer.render import AnswerJSON, TimingsJSON

    start = USAGE.index("`ask --json` prints one object")
    described = USAGE[start:USAGE.index("Intents are decided by a", start)]
    for name in [*AnswerJSON.model_fields, *TimingsJSON.model_fields]:
        assert re.search(rf"\b{name}\b", described), name


def _documented_command_lines() -> list[tuple[str, list[str]]]:
    """``(doc, argv)`` for every ``.venv/bin/assistant…`` line inside a fenced code block of the README or docs/."""
    import shlex

    out = []
    for doc, text in DOCS.items():
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            for line in block.splitlines():
                argv = shlex.split(line, comments=True) if line.startswith(".venv/bin/assistant") else []
                if argv:
                    out.append((doc, argv))
    return out


def test_every_documented_command_line_parses() -> None:
    """Each command shown in a code block is accepted by its parser as written (docs/usage.md's "Using it"
    block, which holds the README's, is also run, by tests/e2e/test_readme_commands.py)."""
    from assistant.cli import _parser, parse
    from ui.cli import _parser as ui_parser

    lines = _documented_command_lines()
    assert len(lines) >= 15
    for doc, argv in lines:
        parser = {".venv/bin/assistant": _parser, ".venv/bin/assistant-ui": ui_parser}[argv[0]]()
        try:
            parse(parser, argv[1:])
        except SystemExit as e:
            pytest.fail(f"{doc}: `{' '.join(argv)}` does not parse (exit {e.code})")


# --- quoted defaults (issue 26.5): a doc that states a default the code no longer has fails here ----------------

def _doc_value_matches(doc: str, default: object) -> bool:
    """``doc`` (a settings table cell, backticks stripped) states ``default``: numbers compare as numbers, paths
    relative to the repository, secrets by value, booleans as ``true``/``false``, ``unset`` as None."""
    from pydantic import SecretStr

    if isinstance(default, SecretStr):
        default = default.get_secret_value()
    if doc == "unset":
        return default in (None, "")
    if isinstance(default, Path):
        return default.resolve() == (REPO / doc).resolve()
    if isinstance(default, bool):
        return doc.lower() == str(default).lower()  # env values: `true` / `false`
    if not isinstance(default, int | float):
        return doc == str(default)
    try:
        return float(doc) == float(default)
    except ValueError:
        return False


_TABLE_ROW = re.compile(r"^\| `(ASSISTANT_[A-Z0-9_]+)` \| `?([^`|]*?)`? \|", re.M)


@pytest.mark.parametrize(
    ("settings_class", "env"),
    [(cls, env) for cls in (Settings, UISettings) for env in env_fields(cls)],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_settings_table_quotes_the_code_defaults(settings_class: type[BaseSettings], env: str) -> None:
    rows = dict(_TABLE_ROW.findall(CONFIGURATION))
    default = env_fields(settings_class)[env].default
    assert env in rows, env
    assert _doc_value_matches(rows[env], default), \
        f"docs/configuration.md says {env} defaults to {rows[env]!r}; the code: {default!r}"


def test_ablation_doc_labels_the_current_defaults() -> None:
    """docs/ablation.md's "default" row and its "What we kept" bold ``**setting value**`` items name the
    defaults of assistant.config.Settings (the 0.28 label outlived the change to 0.32 once)."""
    text = (REPO / "docs" / "ablation.md").read_text()
    defaults = {env.removeprefix("ASSISTANT_").lower(): f for env, f in env_fields(Settings).items()}
    row = re.search(r"^\| default: ([^|]*)\|", text, re.M)
    assert row, "docs/ablation.md has no '| default: ...' row"
    stated = dict(re.findall(r"\b([a-z_]+) ([\d.]+)\b", row.group(1)))
    windows = re.search(r"(\d+)-sentence windows", row.group(1))
    assert windows and int(windows.group(1)) == defaults["window_sentences"].default
    assert defaults["retrieval_mode"].default in row.group(1)
    kept = dict(re.findall(r"\*\*([a-z_]+) ([\d.]+)\*\*", text))
    checked = 0
    for name, value in {**stated, **kept}.items():
        if name in defaults:
            assert float(value) == float(defaults[name].default), \
                f"docs/ablation.md: {name} {value}, code {defaults[name].default}"
            checked += 1
    assert checked >= 2  # min_similarity and candidate_k at least


def _quoted_value(name: str) -> float | None:
    """The value of ``tuning.NAME`` or of a settings group field ``group.field`` (None: no such number)."""
    import assistant.tuning as tuning

    if name.startswith("tuning."):
        value = getattr(tuning, name.removeprefix("tuning."), None)
    else:
        group, _, field = name.partition(".")
        info = GROUPS[group].model_fields.get(field) if group in GROUPS else None
        value = info.default if info is not None else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


#: "`tuning.NAME` (V)", "`tuning.NAME` = V", "`group.field` (V)" (a history "(0.3, later 0.25)": the last number).
_QUOTE_AFTER = re.compile(r"`((?:tuning\.[A-Z_]+)|(?:[a-z]+\.[a-z0-9_]+))`\s*(?:=\s*([\d.]*\d)|\(([^)]*)\))")
#: "V ... (`tuning.NAME`)": a number, a few words, then the constant it is (how descriptions interpolate).
_QUOTE_BEFORE = re.compile(r"(\d+(?:\.\d+)?)[^\d()`]{0,40}\(`((?:tuning\.[A-Z_]+)|(?:[a-z]+\.[a-z0-9_]+))`\)")


def _wrong_quotes(where: str, text: str) -> tuple[int, list[str]]:
    """How many quoted values ``text`` has, and those that differ from the code."""
    quoted = [(m.group(1), m.group(2) or m.group(3)) for m in _QUOTE_AFTER.finditer(text)]
    quoted += [(m.group(2), m.group(1)) for m in _QUOTE_BEFORE.finditer(text)]
    wrong = []
    for name, value in quoted:
        if not name.startswith("tuning.") and name.split(".")[0] not in GROUPS:
            continue  # `os.environ` and the like
        numbers = re.findall(r"\d+(?:\.\d+)?", value)
        code = _quoted_value(name)
        if not numbers or code is None:
            wrong.append(f"{where}: {name} ({value}) is not a tuning constant or setting with a number")
        elif float(numbers[-1]) != code:
            wrong.append(f"{where}: {name} quoted as {numbers[-1]}, code {code:g}")
    return len(quoted), wrong


def test_tuning_constants_quoted_in_the_docs_are_current() -> None:
    """"`tuning.NAME` (V)" or "`tuning.NAME` = V" (or "`retrieval.top_k` (V)", a group field) in README/docs
    quotes the code's value; in a history such as "(0.3, later 0.25)" the last number is the current one; so does
    "V ... (`tuning.NAME`)"."""
    found, wrong = 0, list[str]()
    for doc, text in DOCS.items():
        n, w = _wrong_quotes(doc, text)
        found, wrong = found + n, wrong + w
    assert found
    assert wrong == [], "\n".join(wrong)


def _descriptions() -> dict[str, tuple[object, str]]:
    """``{"group.field": (default, description)}`` of every settings field, groups included."""
    out: dict[str, tuple[object, str]] = {}
    for group, cls in GROUPS.items():
        for name, info in cls.model_fields.items():
            out[f"{group}.{name}"] = (info.default, info.description or "")
    for env, info in env_fields(UISettings).items():
        out[env] = (info.default, info.description or "")
    return out


def test_descriptions_interpolate_the_values_they_quote() -> None:
    """A setting's description quotes another fitted value only as "V ... (`tuning.NAME`)" built from the code
    (an f-string), and never writes its own value by hand: a number there that differs from the code fails."""
    found, wrong = 0, list[str]()
    for name, (default, description) in _descriptions().items():
        n, w = _wrong_quotes(name, description)
        found, wrong = found + n, wrong + w
        if isinstance(default, int | float) and not isinstance(default, bool):
            own = [v for v in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)", description) if float(v) == default]
            if own:
                wrong.append(f"{name}: its description repeats its value {own[0]} by hand")
    assert found >= 1  # min_similarity's top papers
    assert wrong == [], "\n".join(wrong)


def test_a_hand_written_number_beside_a_constant_fails() -> None:
    """The check above catches the mistake it is for (issue 31: config.py repeated 64 and 4 by hand)."""
    import assistant.tuning as tuning

    stale = tuning.PROMPT_EVIDENCE_SENTENCES + 1
    assert _wrong_quotes("x", f"{stale} sentences per paper (`tuning.PROMPT_EVIDENCE_SENTENCES`)")[1]
    current = tuning.PROMPT_EVIDENCE_SENTENCES
    assert not _wrong_quotes("x", f"{current} sentences per paper (`tuning.PROMPT_EVIDENCE_SENTENCES`)")[1]
    assert _wrong_quotes("x", "the top 5 papers (`retrieval.top_k`)")[1] == []
    assert _wrong_quotes("x", "the top 6 papers (`retrieval.top_k`)")[1]


_FITTED_ROW = re.compile(r"^\| `([a-z]+\.[a-z0-9_]+)` \| `([^`]*)` \| (.*) \|$", re.M)


def test_fitted_values_table_is_the_code() -> None:
    """docs/configuration.md's "Fitted values" table lists every fitted field of the settings groups (those
    without a variable) with the code's value and description (regenerate the rows from the fields)."""
    from assistant.config import FLAT

    with_variable = {".".join(where) for where in FLAT.values()}
    fitted = {f"{g}.{n}": f for g, cls in GROUPS.items() for n, f in cls.model_fields.items()
              if f"{g}.{n}" not in with_variable}
    rows = {name: (value, meaning) for name, value, meaning in _FITTED_ROW.findall(CONFIGURATION)}
    fix = "; regenerate the rows with `PYTHONPATH=. .venv/bin/python scripts/fitted_table.py`"
    assert not set(fitted) - set(rows), f"fields without a row: {sorted(set(fitted) - set(rows))}{fix}"
    assert not set(rows) - set(fitted), f"rows without a field: {sorted(set(rows) - set(fitted))}{fix}"
    for name, info in fitted.items():
        value, meaning = rows[name]
        assert float(value) == float(info.default), f"{name}: docs {value}, code {info.default}{fix}"
        assert meaning == (info.description or "").replace("|", "\\|"), f"{name}: the description differs{fix}"
