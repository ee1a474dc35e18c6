"""Small trained text classifiers: a linear model over hashed word/character n-grams plus optional dense
features (a sentence embedding, a few numbers), stored as a compressed ``.npz`` file in the repository.

Used where a decision about wording is a classification (what a question asks, what role an abstract
sentence plays, whether a paper belongs in a topic list): the weights are learned from labelled data by
``scripts/train_understanding.py`` (data, splits and held-out accuracy: docs/models/understanding.md), not
written as word lists.

Features of one text (:func:`hashed_ngrams`): character 2-5-grams within word boundaries and word 1-2-grams,
lower-cased, each block hashed into ``n_features`` columns and L2-normalised (scikit-learn's
HashingVectorizer), so a typo ("sumarize") still shares most of its n-grams with the word. Dense features are
appended after them, scaled by ``dense_scale``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

_WHAT = "a trained classifier"
_TRAINED_BY = "scripts/train_understanding.py"


def hashed_ngrams(texts: list[str], n_features: int) -> csr_matrix:
    """Texts -> sparse matrix ``len(texts) x 2*n_features``: character 2-5-grams (``char_wb``) then word 1-2-grams,
    lower-cased, each block L2-normalised."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import HashingVectorizer

    chars = HashingVectorizer(analyzer="char_wb", ngram_range=(2, 5), n_features=n_features, alternate_sign=False)
    words = HashingVectorizer(analyzer="word", ngram_range=(1, 2), n_features=n_features, alternate_sign=False)
    return hstack([chars.transform(texts), words.transform(texts)]).tocsr()


@dataclass(frozen=True)
class TextClassifier:
    """A multinomial (or binary: two classes) logistic regression over :func:`hashed_ngrams` features and
    ``dense_dim`` dense features.

    Attributes:
        classes: the class names, in the order of the rows of the weights.
        n_features: hashed columns per n-gram block (0: dense features only).
        dense_dim: number of dense features expected after the hashed ones (0: none).
        dense_scale: factor the dense features are multiplied by (as in training).
        indices: hashed-feature columns with a non-zero weight (int32, sorted, into ``2 * n_features``).
        sparse_weights: ``(len(classes), len(indices))`` float32 weights of those columns.
        dense_weights: ``(len(classes), dense_dim)`` float32 weights of the dense features.
        intercepts: ``(len(classes),)`` float32.
        meta: free-form strings saved with the model (training data, seed, held-out accuracy).
    """

    classes: tuple[str, ...]
    n_features: int
    dense_dim: int
    dense_scale: float
    indices: np.ndarray
    sparse_weights: np.ndarray
    dense_weights: np.ndarray
    intercepts: np.ndarray
    meta: dict[str, str] = field(default_factory=dict)
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_sklearn(
        cls,
        model: object,
        classes: tuple[str, ...],
        n_features: int,
        dense_dim: int,
        dense_scale: float,
        meta: dict[str, str] | None = None,
    ) -> TextClassifier:
        """From a fitted ``sklearn.linear_model.LogisticRegression`` over ``[hashed | dense * dense_scale]``
        columns (``classes`` in the model's ``classes_`` order; a binary model has one row: it is stored as
        ``[-w, w]`` so that a softmax over the two rows equals its sigmoid)."""
        coef = np.asarray(model.coef_, dtype=np.float32)  # type: ignore[attr-defined]
        icpt = np.asarray(model.intercept_, dtype=np.float32)  # type: ignore[attr-defined]
        if coef.shape[0] == 1:
            coef, icpt = np.vstack([-coef / 2, coef / 2]), np.array([-icpt[0] / 2, icpt[0] / 2], dtype=np.float32)
        n_hashed = 2 * n_features
        sparse_part, dense_part = coef[:, :n_hashed], coef[:, n_hashed:]
        nz = (
            np.flatnonzero(np.abs(sparse_part).max(axis=0) > 1e-5).astype(np.int32)
            if n_hashed
            else np.zeros(0, np.int32)
        )
        return cls(
            tuple(classes),
            n_features,
            dense_dim,
            dense_scale,
            nz,
            sparse_part[:, nz].astype(np.float32),
            dense_part.astype(np.float32),
            icpt,
            dict(meta or {}),
        )

    @classmethod
    def load(cls, path: Path) -> TextClassifier:
        """Read a model file written by :meth:`save`.

        Raises:
            ConfigError: the file is missing or unreadable; the message names it and how to recreate it.
        """
        from assistant.models import read_npz, unreadable

        data = read_npz(path, what=_WHAT, trained_by=_TRAINED_BY)
        try:
            meta_keys = [str(k) for k in data["meta_keys"]]
            meta_values = [str(v) for v in data["meta_values"]]
            return cls(
                tuple(str(c) for c in data["classes"]),
                int(data["n_features"]),
                int(data["dense_dim"]),
                float(data["dense_scale"]),
                data["indices"],
                data["sparse_weights"],
                data["dense_weights"],
                data["intercepts"],
                dict(zip(meta_keys, meta_values)),
            )
        except (KeyError, ValueError) as e:
            raise unreadable(path, what=_WHAT, trained_by=_TRAINED_BY, error=e) from e

    def save(self, path: Path) -> None:
        """Write the model as a compressed ``.npz`` file (float16 weights are not used: sizes are small)."""
        np.savez_compressed(
            path,
            classes=np.array(self.classes),
            n_features=np.int64(self.n_features),
            dense_dim=np.int64(self.dense_dim),
            dense_scale=np.float64(self.dense_scale),
            indices=self.indices,
            sparse_weights=self.sparse_weights,
            dense_weights=self.dense_weights,
            intercepts=self.intercepts,
            meta_keys=np.array(list(self.meta)),
            meta_values=np.array(list(self.meta.values())),
        )

    def _dense_sparse_weights(self) -> np.ndarray:
        if "w" not in self._cache:
            w = np.zeros((2 * self.n_features, len(self.classes)), dtype=np.float32)
            w[self.indices] = self.sparse_weights.T
            self._cache["w"] = w
        return self._cache["w"]

    def logits(self, texts: list[str], dense: np.ndarray | None = None) -> np.ndarray:
        """``(len(texts), len(classes))`` scores. ``dense``: ``(len(texts), dense_dim)`` features, required
        when the model has dense features.

        Raises:
            ValueError: ``dense`` is missing or has the wrong shape.
        """
        out = np.tile(self.intercepts.astype(np.float64), (len(texts), 1))
        if not texts:
            return out
        if self.n_features:
            out += np.asarray(hashed_ngrams(texts, self.n_features) @ self._dense_sparse_weights(), dtype=np.float64)
        if self.dense_dim:
            if dense is None or dense.shape != (len(texts), self.dense_dim):
                got = None if dense is None else dense.shape
                raise ValueError(f"expected dense features of shape {(len(texts), self.dense_dim)}, got {got}")
            out += (np.asarray(dense, dtype=np.float64) * self.dense_scale) @ self.dense_weights.T.astype(np.float64)
        return out

    def proba(self, texts: list[str], dense: np.ndarray | None = None) -> np.ndarray:
        """Class probabilities ``(len(texts), len(classes))`` (softmax of :meth:`logits`); rows sum to 1."""
        z = self.logits(texts, dense)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, texts: list[str], dense: np.ndarray | None = None) -> list[str]:
        """The most probable class of each text."""
        if not texts:
            return []
        return [self.classes[i] for i in self.proba(texts, dense).argmax(axis=1)]
