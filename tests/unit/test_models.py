"""The model registry (assistant/models.py): every shipped artifact is listed, its file and model card exist,
it is package data, and it loads with the loader of its format."""

from __future__ import annotations

import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from assistant.models import ARTIFACTS, PACKAGE_DIR, REPO_DIR, artifact

REPO = Path(__file__).resolve().parents[2]


def _shipped_model_files() -> set[str]:
    out = subprocess.run(["git", "ls-files", "assistant"], cwd=REPO, capture_output=True, text=True, check=True)
    return {p for p in out.stdout.split() if p.endswith((".npz", ".onnx"))}


def test_every_shipped_model_file_is_in_the_registry() -> None:
    listed = {str(a.file.relative_to(REPO_DIR)) for a in ARTIFACTS.values()}
    assert _shipped_model_files() == listed


@pytest.mark.parametrize("name", sorted(ARTIFACTS))
def test_each_entry_has_its_file_card_and_script_and_is_package_data(name: str) -> None:
    a = artifact(name)
    assert a.file.is_file() and a.file.stat().st_size > 0, a.file
    assert (REPO_DIR / a.card).is_file(), a.card
    assert (REPO_DIR / a.trained_by).is_file(), a.trained_by
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    rel = a.file.relative_to(PACKAGE_DIR)
    package = ".".join(("assistant", *rel.parts[:1])) if len(rel.parts) > 1 else "assistant"
    inside = Path(*rel.parts[1:]).as_posix()
    assert any(fnmatch(inside, pat) for pat in package_data.get(package, [])), f"{a.file} is not package data"


@pytest.mark.parametrize("name", sorted(ARTIFACTS))
def test_each_entry_loads(name: str) -> None:
    from assistant.lang.classifier import TextClassifier

    a = artifact(name)
    if name == "steering":
        from assistant.ingest.steering import SteeringModel

        assert len(SteeringModel.load(a.file).indices) > 0
    else:
        assert a.format == "npz"
        assert len(TextClassifier.load(a.file).classes) >= 2


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="intent"):
        artifact("nope")
