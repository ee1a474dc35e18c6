"""The bundled models' files: a split model is joined in order and sha256-checked, a wrong or missing part
is named with its fix, and a checked file is not re-hashed at every start (assistant/llm/bundled.py)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.errors import LLMUnavailableError
from assistant.llm import bundled
from assistant.llm.bundled import BUNDLED, BundledModel, bundled_model, join_parts, part_paths, verify_file


def _fake_parts(root: Path, chunks: list[bytes], monkeypatch: pytest.MonkeyPatch) -> BundledModel:
    """Packages fakepartN/data/partNN.bin on sys.path holding ``chunks``; a model whose digest is theirs."""
    names = []
    for i, chunk in enumerate(chunks, start=1):
        pkg = root / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        names.append(f"fakepart{i}")
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(chunks)
    return replace(
        BUNDLED["qwen1.5b"],
        packages=tuple(names),
        part_files=tuple(f"data/part{i:02d}.bin" for i in range(1, len(chunks) + 1)),
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
    )


def test_parts_are_joined_in_order_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_parts(tmp_path / "site", [b"aaa", b"bb", b"c"], monkeypatch)
    target = tmp_path / "cache" / "m.gguf"
    assert join_parts(model, target) == target
    assert target.read_bytes() == b"aaabbc"
    assert target.stat().st_mode & 0o044  # readable by others: one cache for every user's server
    assert not list(target.parent.glob("*.part"))  # no temporary file left behind

    def no_rehash(path: Path) -> str:
        raise AssertionError("a checked file was hashed again")

    monkeypatch.setattr(bundled, "sha256_of", no_rehash)
    verify_file(target, model)  # the stamp records the passing check: one stat


def test_a_corrupt_part_is_refused_and_nothing_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_parts(tmp_path / "site", [b"aaa", b"bb"], monkeypatch)
    (tmp_path / "site" / "fakepart2" / "data" / "part02.bin").write_bytes(b"bX")  # same size, other bytes
    target = tmp_path / "cache" / "m.gguf"
    with pytest.raises(LLMUnavailableError) as e:
        join_parts(model, target)
    assert model.sha256 is not None
    assert "corrupt" in str(e.value) and model.sha256 in str(e.value) and "--force-reinstall" in str(e.value)
    assert not target.exists() and not list(target.parent.glob("*"))


def test_a_missing_part_is_named_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_parts(tmp_path / "site", [b"aaa", b"bb"], monkeypatch)
    model = replace(model, packages=(*model.packages[:1], "fakepart_not_installed"))
    with pytest.raises(LLMUnavailableError, match=r"fakepart_not_installed is missing.*scripts/setup\.sh"):
        part_paths(model)


def test_a_changed_joined_file_is_named_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_parts(tmp_path / "site", [b"aaa", b"bb"], monkeypatch)
    target = join_parts(model, tmp_path / "cache" / "m.gguf")
    target.write_bytes(b"aaabx")  # same size, new mtime: the stamp no longer matches, so it is hashed again
    with pytest.raises(LLMUnavailableError, match=r"m\.gguf is corrupt.*Delete it and run scripts/setup\.sh"):
        verify_file(target, model)


def test_unknown_bundled_model_lists_the_names() -> None:
    with pytest.raises(LLMUnavailableError, match="must be one of qwen1.5b"):
        bundled_model("llama-70b")


def test_the_installed_qwen_parts_add_up_to_the_recorded_size() -> None:
    model = BUNDLED["qwen1.5b"]
    paths = part_paths(model)
    assert len(paths) == 22 and [p.name for p in paths] == [f"part{i:02d}.bin" for i in range(1, 23)]
    assert sum(p.stat().st_size for p in paths) == model.size
