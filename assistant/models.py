"""The registry of every trained artifact that ships in the package: name -> file, format, model card.

One row per model (:data:`ARTIFACTS`); the code that uses a model asks :func:`artifact` for its file and reads it
with the one loader of its format:

* ``npz``: :func:`read_npz` (numpy arrays; the linear classifiers of :mod:`assistant.lang.classifier`:
  the question and sentence models of ``understand/`` and the steering detector of ``ingest/``).

A new model is one row here (its file under the package, listed in ``pyproject.toml``'s package-data, and a
model card); ``tests/unit/test_models.py`` checks that every file and card exists and loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assistant.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

PACKAGE_DIR = Path(__file__).resolve().parent
#: The repository root (model cards under docs/ are not installed with the package).
REPO_DIR = PACKAGE_DIR.parent

Format = Literal["npz"]


@dataclass(frozen=True, slots=True)
class Artifact:
    """One shipped model.

    Attributes:
        name: the registry key (``intent``, ``steering``).
        file: the weights, inside the package.
        format: how :attr:`file` is read (``npz``: :func:`read_npz`).
        card: the model card (data, seed, held-out metrics, limits), relative to the repository root.
        trained_by: the script that rebuilds :attr:`file`, relative to the repository root.
        what: the model in words, as error messages name it.
    """

    name: str
    file: Path
    format: Format
    card: str
    trained_by: str
    what: str


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
        Artifact(
            "steering",
            PACKAGE_DIR / "ingest" / "steering_model.npz",
            "npz",
            "docs/models/steering.md",
            "scripts/train_steering.py",
            "the steering detector's model",
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
