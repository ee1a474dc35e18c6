"""The command line as a new user meets it: options anywhere, typos answered with the command's usage and a
"did you mean", unknown variables reported, and every cheap mistake caught before any model loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.cli import _parser, main, parse
from assistant.ingest.corpus import read_papers
from assistant.types import IngestReport

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [
    ["--storage-dir", "X", "--llm-base-url", "http://h/v1", "ask", "--json", "q?"],
    ["ask", "--storage-dir", "X", "q?", "--llm-base-url", "http://h/v1", "--json"],
    ["--llm-base-url", "http://h/v1", "ask", "q?", "--storage-dir", "X", "--json"],
])
def test_global_options_go_anywhere(argv: list[str]) -> None:
    args = parse(_parser(), argv)
    assert (args.command, args.question, args.json) == ("ask", "q?", True)
    assert args.storage_dir == Path("X") and args.llm_base_url == "http://h/v1"


def test_an_option_given_before_the_command_is_not_reset_by_it() -> None:
    args = parse(_parser(), ["--log-level", "DEBUG", "-v", "ingest", "seeds"])
    assert args.log_level == "DEBUG" and args.verbose is True and args.paths == [Path("seeds")]


def test_a_mistyped_option_shows_the_commands_usage_and_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["ask", "--jsn", "Which paper proposes A-Bench?"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: assistant ask ")
    assert "unrecognized arguments: --jsn (did you mean --json?)" in err


def test_a_mistyped_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["injest", "seeds"])
    assert "(did you mean ingest?)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["papres", "--count"])
    assert "(did you mean papers?)" in capsys.readouterr().err


def test_ingest_summary_counts_skipped_rows_with_file_and_line(tmp_path: Path) -> None:
    from assistant.cli import ingest_summary

    export = tmp_path / "export.jsonl"
    export.write_text('{"abstract": ""}\n{"abstract": "We study graphs. It works."}\nnot json\n'
                      '{"id": "a", "abstract": "One."}\n{"id": "a", "abstract": "Two."}\n', encoding="utf-8")
    skipped: list[str] = []
    papers = read_papers([export], skipped=skipped)
    assert len(papers) == 2
    assert skipped == ["export.jsonl:1: no abstract (fields abstract/text/summary)",
                       "export.jsonl:3: not valid JSON (Expecting value at column 1)",
                       "export.jsonl:5: duplicate id 'a' (first on line 4)"]
    text = ingest_summary(IngestReport(2, 4, 4, 0, 0, 0, "c", 1.0, skipped_rows=tuple(skipped)))
    assert "Skipped 3 rows (not indexed):\n  export.jsonl:1: no abstract" in text
    assert text.startswith("Indexed 2 papers as 4 windows")
    one = ingest_summary(IngestReport(1, 3, 3, 0, 0, 0, "c", 1.0))
    assert one.startswith("Indexed 1 paper as 3 windows")


def test_session_file_written_by_save_reads_back(tmp_path: Path) -> None:
    from assistant.conversation.store import read_saved_session

    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"version": 1, "labels": {"a#1": 1}, "turns": [{"question": "q", "cited": ["a#1"]}]}))
    assert read_saved_session(path) == {"labels": {"a#1": 1}, "turns": [{"question": "q", "cited": ["a#1"]}]}
    path.write_text(json.dumps({"labels": {}, "turns": "nope"}))
    with pytest.raises(Exception, match="not a saved conversation"):
        read_saved_session(path)


def test_ingest_summary_says_many_rows_without_an_abstract_once_per_file() -> None:
    from assistant.cli import ingest_summary

    skipped = [f"big.jsonl:{n}: no abstract (fields abstract/text/summary)" for n in range(2, 1002)]
    skipped += ["big.jsonl:1500: not valid JSON (Expecting value)",
                "small.jsonl:3: no abstract (fields abstract/text/summary)"]
    text = ingest_summary(IngestReport(2, 4, 4, 0, 0, 0, "c", 1.0, skipped_rows=tuple(skipped)))
    assert "Skipped 1002 rows (not indexed):" in text
    assert ("  big.jsonl: 1,000 rows: no abstract (fields abstract/text/summary) - lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11"
            " and 990 more (--json lists every row)") in text
    assert "  big.jsonl:1500: not valid JSON" in text and "  small.jsonl:3: no abstract" in text
    assert text.count("\n") == 4  # counts, "Skipped ...", three lines: never one line per row
