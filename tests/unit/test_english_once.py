"""English is written once (issue 31, item 3): every regex about English wording lives in ``assistant/lang/``, and
the one stemmer (NLTK's Snowball, :mod:`assistant.lang.stemming`) is safe to build from many threads at once."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: ``re`` functions that take a pattern; an inline call counts when its pattern is written in place (a literal).
_PATTERN_FUNCTIONS = frozenset({"search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"})

#: Where patterns may be written (paths relative to the repository root; a folder ends with "/").
ALLOWED_PLACES: dict[str, str] = {
    "assistant/lang/": "English written once: words, numbers, names, references, clause breaks, markup",
    "assistant/understand/": "reading the question's wording is this stage's job (parse, intents, metadata)",
    "assistant/llm/prompts.py": "the citation grammar and our prompt markup (<source> tags, echoed labels)",
    "assistant/ingest/corpus.py": "input-format parser: line/record structure of the corpus files",
    "assistant/ingest/records.py": "input-format parser: JSONL/CSV record fields",
    "assistant/ingest/identity.py": "input-format parser: paper ids (arXiv, OpenReview, DOI, file#key)",
    "assistant/ingest/paper_fields.py": "input-format parser: the author and title fields every reader shares",
}
#: Files outside those places whose patterns are exact structure, never English wording; keep this list short
#: (prefer moving a pattern into lang/).
STRUCTURAL_ALLOW_LIST: dict[str, str] = {
    "assistant/api/chat.py": "our own markdown reference list and [n] markers, parsed back from an answer",
    "assistant/cli/parser.py": "argparse's own error message, rewritten",
    "assistant/eval/metrics.py": "answer-key normalisation: digits, thousands commas, whitespace, key alternatives",
    "assistant/index/storage_env.py": "OS and SQLite error texts (what the system says, not the user)",
    "ui/text.py": "markdown and TeX escaping",
    "ui/export.py": "BibTeX/LaTeX escaping and citation keys",
}


def _allowed(rel: str) -> bool:
    places = {**ALLOWED_PLACES, **STRUCTURAL_ALLOW_LIST}
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in places)


def pattern_calls(source: str) -> list[tuple[int, str]]:
    """``(line, "re.<fn>")`` for each ``re.compile(...)`` and each inline ``re.<fn>(<literal pattern>, ...)`` in
    ``source`` (a pattern built by a function counts too when it is ``re.compile``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        if not (isinstance(func.value, ast.Name) and func.value.id == "re"):
            continue
        literal = bool(node.args) and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        if func.attr == "compile" or (func.attr in _PATTERN_FUNCTIONS and literal):
            out.append((node.lineno, f"re.{func.attr}"))
    return out


def _files() -> list[Path]:
    return sorted([*(REPO / "assistant").rglob("*.py"), *(REPO / "ui").rglob("*.py")])


def test_no_pattern_outside_lang_and_the_allowed_places() -> None:
    offenders = []
    for path in _files():
        rel = path.relative_to(REPO).as_posix()
        if not _allowed(rel):
            offenders += [f"{rel}:{line}: {call}" for line, call in pattern_calls(path.read_text())]
    assert offenders == [], "move these patterns into assistant/lang/:\n" + "\n".join(offenders)


def test_every_allowed_file_exists_and_still_has_patterns() -> None:
    """An allow-list entry whose file moved or no longer writes a pattern is stale: remove it."""
    for rel in STRUCTURAL_ALLOW_LIST:
        assert pattern_calls((REPO / rel).read_text()), f"{rel} writes no pattern any more: drop it from the list"
    for rel in ALLOWED_PLACES:
        assert (REPO / rel).exists(), rel


def test_the_check_finds_compiled_and_inline_patterns() -> None:
    source = (
        "import re\n"
        "A = re.compile(r'\\bthe paper\\b')\n"
        "def f(t, p):\n"
        "    x = re.search(r'\\bnot\\b', t)\n"
        "    y = re.sub(f'{p}s', '', t)\n"
        "    return A.search(t), re.search(p, t), re.escape(t), x, y\n"
    )
    assert pattern_calls(source) == [(2, "re.compile"), (4, "re.search"), (5, "re.sub")]


def test_one_stemmer_for_every_stage() -> None:
    from assistant.lang.stemming import stem
    from assistant.lang.text import stems
    from assistant.understand.question import stem as measured_stem

    assert stem("parameters") == "paramet" and stem("Generating") == stem("generation") == "generat"
    assert measured_stem("-parameters") == stem("parameters")
    assert stems("generating generation") == {"generat"}
    for path in _files():  # no other stemmer: NLTK's Snowball is imported in one place
        rel = path.relative_to(REPO).as_posix()
        if rel != "assistant/lang/stemming.py":
            assert "SnowballStemmer" not in path.read_text(), rel


def test_the_stemmer_is_safe_from_eight_threads_at_once(tmp_path: Path) -> None:
    """Issue 35: NLTK imported lazily by concurrent first calls raced. In a fresh interpreter (nothing imported
    yet), eight threads released together stem a word and split sentences; all succeed with the same result."""
    code = (
        "import sys, threading\n"
        "import assistant.understand.question, assistant.verify.constraints, assistant.verify.answerable\n"
        "from assistant.lang.stemming import stem\n"
        "from assistant.lang.text import split_sentences\n"
        "assert 'nltk' not in sys.modules, 'NLTK imported at import time, outside the lock'\n"
        "barrier = threading.Barrier(8)\n"
        "results, errors = [], []\n"
        "def work():\n"
        "    barrier.wait()\n"
        "    try:\n"
        "        results.append((stem('generations'), len(split_sentences('One sentence here. Another one here.'))))\n"
        "    except Exception as e:\n"
        "        errors.append(repr(e))\n"
        "threads = [threading.Thread(target=work) for _ in range(8)]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "assert not errors, errors\n"
        "assert results == [('generat', 2)] * 8, results\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
