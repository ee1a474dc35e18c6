"""Issue 20: every message says what really happened and what to do, in one line, run as real subprocesses
against real Chroma: an option before its command, a storage path that is a file, a ``--session`` file that
is the user's own data, a delete while an ingest writes, a bad file inside a folder, a read-only index folder,
a full disk, an old SQLite, an invalid collection prefix, a missing tiktoken cache. No message calls a
healthy index damaged, and none advises deleting or moving the user's files."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robustness.test_cli_mistakes import _cheap

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "tiny_seeds"
GUARD = REPO / "tests" / "support" / "netguard"
DEAD_LLM = "http://127.0.0.1:9/v1"  # nothing listens: answers are extractive, no model server starts


def _cli(args: list[str], env: dict[str, str] | None = None, wrap: list[str] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO), "ASSISTANT_LLM_BASE_URL": DEAD_LLM, **(env or {})}
    argv = [*(wrap or []), sys.executable, "-m", "assistant", *args]
    return subprocess.run(argv, env=full, capture_output=True, text=True, timeout=300, cwd=cwd or REPO)


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.strip().splitlines() if not ln.startswith("warning:")]
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "unexpected" not in lines[0] and "\x1b[" not in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real index of the three tiny seed papers (built once by a real `assistant ingest`)."""
    d = tmp_path_factory.mktemp("true-messages") / "index"
    proc = _cli(["ingest", str(TINY), "--no-progress"], {"ASSISTANT_STORAGE_DIR": str(d)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return d


def test_an_option_before_its_command_is_named(tmp_path: Path) -> None:
    proc = _cli(["--json", "ask", "Which paper proposes A-Bench?"], {"ASSISTANT_STORAGE_DIR": str(tmp_path / "x")})
    assert proc.returncode == 2
    assert "--json is an option of `ask`: put it after `ask` (assistant ask --json ...)" in proc.stderr
    assert "did you mean --json" not in proc.stderr
    proc = _cli(["delete", "--rebuild", "x#1"])
    assert proc.returncode == 2 and "--rebuild is not an option of `delete` (only of `ingest`)" in proc.stderr


def test_cheap_mistakes_name_the_path_and_what_to_do(tmp_path: Path) -> None:
    data = tmp_path / "birdsong.csv"
    data.write_text("species,calls\nwren,12\nrobin,7\n", encoding="utf-8")
    listing = tmp_path / "notes.json"
    listing.write_text('[{"species": "wren"}]', encoding="utf-8")
    a_file = tmp_path / "index.txt"
    a_file.write_text("my notes", encoding="utf-8")
    cases = [
        (["ask", "--session", str(data), "Which paper proposes A-Bench?"], {},
         [f"--session {data}: not a saved conversation (the file is not JSON); it is left as it is. Pass another file "
          f"name"]),
        (["ask", "--session", str(listing), "Which paper?"], {},
         ["not a saved conversation (it holds other JSON", "another file name"]),
        (["ask", "--storage-dir", str(a_file), "Which paper?"], {},
         [f"The index folder {a_file} (--storage-dir / ASSISTANT_STORAGE_DIR) is a file, not a folder",
          "file is left as it is"]),
        (["ingest", str(TINY), "--storage-dir", str(a_file / "sub")], {}, [f"is inside {a_file}, which is a file"]),
        (["ask", "Which paper?"], {"ASSISTANT_COLLECTION_PREFIX": "-my papers"},
         ["ASSISTANT_COLLECTION_PREFIX", "'-my papers' cannot start a Chroma collection name", "letters, digits"]),
    ]
    for argv, env, expected in cases:
        rc, err, _, heavy = _cheap(tmp_path, "assistant", argv, env)
        assert rc == 1 and len(err.splitlines()) == 1 and err.startswith("error: "), (argv, err)
        assert all(e in err for e in expected), (argv, err)
        assert "elete" not in err and "Run `assistant ingest`" not in err, (argv, err)  # never "Delete it"
        assert heavy == [], (argv, heavy)  # said before any model or Chroma loads
    assert data.read_text(encoding="utf-8") == "species,calls\nwren,12\nrobin,7\n" and a_file.read_text() == "my notes"


def test_delete_during_an_ingest_says_wait_and_retry(index: Path) -> None:
    with open(index / ".ingest.lock", "a+") as lock:  # what a running ingest holds
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.seek(0)
        lock.truncate()
        lock.write("pid 4242")
        lock.flush()
        try:
            line = _error_line(_cli(["delete", "tiny.txt#1"], {"ASSISTANT_STORAGE_DIR": str(index)}))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    assert "an ingest (pid 4242) is writing to" in line and "Nothing removed" in line
    assert "Wait for the ingest to finish, then run `assistant delete tiny.txt#1` again." in line
    assert "run ingest again" not in line


def test_a_bad_file_in_a_folder_is_listed_and_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    shutil.copytree(TINY, folder)
    (folder / "birdsong.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (folder / "latin1.txt").write_bytes("ICLR 2025 Papers\n\nCaf\xe9 abstracts.\n".encode("latin-1"))
    env = {"ASSISTANT_STORAGE_DIR": str(tmp_path / "index")}
    proc = _cli(["ingest", str(folder), "--no-progress"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("Indexed 3 papers"), proc.stdout
    assert "Skipped 2 files (not indexed):" in proc.stdout
    assert f"{folder / 'birdsong.txt'}: whole file not indexed (looks like a binary file" in proc.stdout
    assert f"{folder / 'latin1.txt'}: whole file not indexed (line 3: not valid UTF-8" in proc.stdout
    line = _error_line(_cli(["ingest", str(folder / "birdsong.txt"), "--no-progress"], env))  # named directly: an error
    assert "birdsong.txt: looks like a binary file" in line


def test_a_missing_tiktoken_cache_is_never_needed(index: Path, tmp_path: Path) -> None:
    """Reading used to build llama-index's default node parser, which loads a tiktoken encoding and, without
    the cache, downloads it (a raw ConnectionError offline). Nothing on the answer path needs it now."""
    empty = tmp_path / "tiktoken"
    empty.mkdir()
    env = {"ASSISTANT_STORAGE_DIR": str(index), "TIKTOKEN_CACHE_DIR": str(empty),
           "PYTHONPATH": f"{GUARD}{os.pathsep}{REPO}", "NETGUARD_LOG": str(tmp_path / "net.log")}
    proc = _cli(["ask", "What does DUALFormer propose?"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "References:" in proc.stdout
    assert not (tmp_path / "net.log").exists(), (tmp_path / "net.log").read_text()
    assert not list(empty.iterdir())


def test_an_old_sqlite_is_named_without_colour_codes(tmp_path: Path) -> None:
    site = tmp_path / "oldsqlite"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sqlite3\nsqlite3.sqlite_version_info = (3, 31, 1)\nsqlite3.sqlite_version = '3.31.1'\n")
    env = {"ASSISTANT_STORAGE_DIR": str(tmp_path / "index"), "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    line = _error_line(_cli(["ingest", str(TINY), "--no-progress"], env))
    assert "SQLite 3.31.1" in line and "needs SQLite 3.35.0 or newer" in line and "newer SQLite" in line


def _mount_namespace_allowed() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode == 0


needs_mounts = pytest.mark.skipif(not _mount_namespace_allowed(), reason="needs root and `unshare --mount`")


@needs_mounts
def test_a_read_only_index_is_named_read_only_never_damaged(index: Path, tmp_path: Path) -> None:
    """The folder is bind-mounted read-only in a private mount namespace (root ignores permission bits, so
    chmod would not do): every command says read-only, none says damaged or --rebuild, and `ingest --rebuild`
    leaves the index where it is."""
    copy = tmp_path / "index"
    shutil.copytree(index, copy)
    ro = ["unshare", "--mount", "--", "bash", "-c",
          f'mount --bind "{copy}" "{copy}" && mount -o remount,ro,bind "{copy}" "{copy}" && exec "$@"', "ro"]
    env = {"ASSISTANT_STORAGE_DIR": str(copy)}
    for argv in (["ask", "What does DUALFormer propose?"], ["ingest", str(TINY), "--no-progress"],
                 ["ingest", "--rebuild", str(TINY), "--no-progress"], ["delete", "tiny.txt#1"]):
        line = _error_line(_cli(argv, env, wrap=ro))
        assert f"The index folder {copy} is read-only" in line and "the index is not damaged" in line, (argv, line)
        assert "damaged-" not in line and "--rebuild" not in line, (argv, line)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # nothing moved aside
    proc = _cli(["ask", "What does DUALFormer propose?"], env)  # writable again: the same index answers
    assert proc.returncode == 0 and "References:" in proc.stdout, proc.stderr[-2000:]


@needs_mounts
def test_a_full_disk_is_named_full(tmp_path: Path) -> None:
    """A 2.5 MB tmpfs fills up during the ingest of the 38 seed abstracts: Chroma says "Error in compaction";
    the user is told the disk is full and what to do."""
    disk = tmp_path / "disk"
    disk.mkdir()
    small = ["unshare", "--mount", "--", "bash", "-c", f'mount -t tmpfs -o size=2500k tmpfs "{disk}" && exec "$@"',
             "full"]
    line = _error_line(_cli(["ingest", str(REPO / "seeds"), "--no-progress"],
                            {"ASSISTANT_STORAGE_DIR": str(disk / "index")}, wrap=small))
    assert f"The disk holding the index folder {disk / 'index'} is full" in line, line
    assert "Free some space" in line and "damaged" in line and "not damaged" in line
