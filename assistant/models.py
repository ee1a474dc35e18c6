"""The registry of every trained artifact that ships in the package: name -> file, format, model card.

One row per model (:data:`ARTIFACTS`); the code that uses a model asks :func:`artifact` for its file and reads it
with the one loader of its format:

* ``npz``: :func:`read_npz` (numpy arrays; the linear classifiers of :mod:`assistant.lang.classifier`:
  the question and sentence models of ``understand/`` and the steering detector of ``ingest/``);
* ``onnx``: :func:`open_onnx` (an onnxruntime CPU session; the support model of ``verify/``), with its JSON
  metadata read by :func:`read_json`.

A new model is one row here (its file under the package, listed in ``pyproject.toml``'s package-data, and a
model card); ``tests/unit/test_models.py`` checks that every file and card exists and loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from assistant.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

PACKAGE_DIR = Path(__file__).resolve().parent
#: The repository root (model cards under docs/ are not installed with the package).
REPO_DIR = PACKAGE_DIR.parent

Format = Literal["npz", "onnx"]


@dataclass(frozen=True, slots=True)
class Artifact:
    """One shipped model.

    Attributes:
        name: the registry key (``intent``, ``steering``, ``support``).
        file: the weights, inside the package.
        format: how :attr:`file` is read (``npz``: :func:`read_npz`; ``onnx``: :func:`open_onnx`).
        card: the model card (data, seed, held-out metrics, limits), relative to the repository root.
        trained_by: the script that rebuilds :attr:`file`, relative to the repository root.
        what: the model in words, as error messages name it.
        meta: a JSON metadata file next to the weights (threshold, metrics), or None.
    """

    name: str
    file: Path
    format: Format
    card: str
    trained_by: str
    what: str
    meta: Path | None = None


_UNDERSTAND = PACKAGE_DIR / "understand" / "models"
_UNDERSTANDING_CARD = "docs/models/understanding.md"
_TRAIN_UNDERSTANDING = "scripts/train_understanding.py"
_CLASSIFIER = "a trained classifier"

#: Every shipped model, by name.
ARTIFACTS: dict[str, Artifact] = {
    a.name: a
    for a in (
        Artifact("intent", _UNDERSTAND / "intent.npz", "npz", _UNDERSTANDING_CARD, _TRAIN_UNDERSTANDING, _CLASSIFIER),
        Artifact("roles", _UNDERSTAND / "roles.npz", "npz", _UNDERSTANDING_CARD, _TRAIN_UNDERSTANDING, _CLASSIFIER),
        Artifact("topic", _UNDERSTAND / "topic.npz", "npz", _UNDERSTANDING_CARD, _TRAIN_UNDERSTANDING, _CLASSIFIER),
        Artifact("answer", _UNDERSTAND / "answer.npz", "npz", _UNDERSTANDING_CARD, _TRAIN_UNDERSTANDING, _CLASSIFIER),
        Artifact("stated", _UNDERSTAND / "stated.npz", "npz", _UNDERSTANDING_CARD, _TRAIN_UNDERSTANDING, _CLASSIFIER),
        Artifact(
            "steering",
            PACKAGE_DIR / "ingest" / "steering_model.npz",
            "npz",
            "docs/models/steering.md",
            "scripts/train_steering.py",
            "the steering detector's model",
        ),
        Artifact(
            "support",
            PACKAGE_DIR / "verify" / "model" / "support-minilm-int8.onnx",
            "onnx",
            "assistant/verify/model/MODEL_CARD.md",
            "scripts/train_verifier.py",
            "the support model",
            meta=PACKAGE_DIR / "verify" / "model" / "support-minilm.json",
        ),
    )
}


def artifact(name: str) -> Artifact:
    """The registry row of model ``name``.

    Raises:
        KeyError: no such model (the message lists the known names).
    """
    try:
        return ARTIFACTS[name]
    except KeyError:
        raise KeyError(f"no shipped model named {name!r}; known: {', '.join(ARTIFACTS)}") from None


def read_npz(path: Path, *, what: str, trained_by: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path`` (no pickles), read into memory.

    Args:
        what: the model in words, for the error message (``"a trained classifier"``).
        trained_by: the script that rebuilds the file, for the error message.

    Raises:
        ConfigError: the file is missing or unreadable; the message names it and how to recreate it.
    """
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, KeyError, ValueError) as e:
        raise unreadable(path, what=what, trained_by=trained_by, error=e) from e


def unreadable(path: Path, *, what: str, trained_by: str, error: Exception) -> ConfigError:
    """The error for a model file that is missing or not what its loader expects (names it and how to
    recreate it)."""
    return ConfigError(
        f"{path}: {what} could not be read ({error}); it ships with the repository "
        f"(git checkout it, or rebuild it with {trained_by})."
    )


def open_onnx(path: Path, threads: int = 1) -> Any:
    """An onnxruntime CPU session over the ONNX file ``path``, with ``threads`` intra-op threads (no spinning).

    Raises:
        Exception: whatever onnxruntime raises for a missing or invalid file (callers name the model).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def read_json(path: Path, *, what: str) -> dict[str, Any]:
    """The JSON object in ``path`` (a model's metadata).

    Raises:
        ConfigError: the file is missing or not JSON.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"Cannot read {what} metadata {path}: {e}. Reinstall the package.") from e
