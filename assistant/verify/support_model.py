"""The trained support (entailment) model: P(supported) of a claim against its evidence, and for a three-way model
P(contradicted) and P(not stated) too, with onnxruntime (issues 22, 40).

A cross-encoder fine-tuned from the bundled all-MiniLM-L6-v2 weights by ``scripts/train_verifier.py``
reads ``[CLS] claim [SEP] evidence [SEP]`` (the one to three abstract sentences the claim is aligned to,
joined by spaces, in abstract order) and outputs one logit (``sigmoid`` = the support probability; the shipped
issue 22 model) or three, one per verdict (supported, contradicted, not stated; softmax; the format
``scripts/train_verifier.py`` trains since issue 40): :meth:`SupportModel.verdict_probabilities` reads both. The
weights ship in the package (``assistant/verify/model/support-minilm-int8.onnx``, int8, ~22 MB; data, seed,
metrics and training time in ``assistant/verify/model/MODEL_CARD.md``), the tokenizer is the bundled MiniLM's
``tokenizer.json``: nothing is downloaded and torch is never imported.

This module is the single definition of the model's input (:func:`evidence_text`, :data:`MAX_LENGTH`);
the training script imports it, so training and inference read pairs the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from assistant.errors import ConfigError
from assistant.models import artifact, open_onnx, read_json

_ARTIFACT = artifact("support")
MODEL_DIR = _ARTIFACT.file.parent
ONNX_FILE = _ARTIFACT.file.name
META_FILE = _ARTIFACT.meta.name if _ARTIFACT.meta else "support-minilm.json"
#: Word pieces per (claim, evidence) pair; the evidence is cut first when longer.
MAX_LENGTH = 160


def evidence_text(evidence: Sequence[str]) -> str:
    """The evidence side of a pair: the sentences joined by one space (``[]`` -> ``""``)."""
    return " ".join(" ".join(s.split()) for s in evidence)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class SupportModel:
    """Support probabilities for (claim, evidence sentences) pairs; thread-safe, one onnxruntime session.

    Args:
        model_path: the ONNX file (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``: int64
            ``(batch, seq)``; output ``logits``: float32 ``(batch, 1)``).
        tokenizer_path: a ``tokenizers`` JSON file (the bundled MiniLM's ``tokenizer.json``).
        threads: onnxruntime intra-op threads (1 keeps per-sentence latency steady on 2 shared cores).

    Raises:
        ConfigError: a file is missing or onnxruntime cannot load it (the message names the file).
    """

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        for p in (model_path, tokenizer_path):
            if not Path(p).is_file():
                raise ConfigError(f"Support model file {p} is missing: reinstall the package (pip install -e .).")
        try:
            tok = Tokenizer.from_file(str(tokenizer_path))
            tok.no_padding()
            tok.enable_truncation(max_length=MAX_LENGTH, strategy="longest_first")
            session = open_onnx(model_path, threads)
        except Exception as e:  # noqa: BLE001 - onnxruntime/tokenizers raise their own types
            raise ConfigError(f"Cannot load the support model {model_path}: {e}") from e
        self._tok = tok
        self._session = session
        self._inputs = [i.name for i in session.get_inputs()]
        self._lock = threading.Lock()
        self.path = Path(model_path)

    def verdict_probabilities(self, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[float, float, float]]:
        """``(P(supported), P(contradicted), P(not stated))`` for each ``(claim, evidence sentences)`` pair, in
        order, each triple summing to 1 ([] -> []). A one-logit model file (the issue 22 format) gives
        ``(p, 0, 1 - p)``."""
        if not pairs:
            return []
        with self._lock:  # a Tokenizer's truncation state is shared; encode_batch is fast
            encs = self._tok.encode_batch([(c, evidence_text(ev) or ".") for c, ev in pairs])
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        logits = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        z = np.asarray(logits, dtype=np.float64).reshape(len(pairs), -1)
        if z.shape[1] == 1:
            p = _sigmoid(z[:, 0])
            return [(float(x), 0.0, float(1.0 - x)) for x in p]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        return [(float(a), float(b), float(c)) for a, b, c in probs[:, :3]]

    def probabilities(self, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        """``P(supported)`` in [0, 1] for each ``(claim, evidence sentences)`` pair, in order ([] -> [])."""
        return [v[0] for v in self.verdict_probabilities(pairs)]


def model_meta(model_dir: Path = MODEL_DIR) -> dict[str, Any]:
    """The shipped model's metadata (``threshold`` chosen on validation data, metrics, training facts).

    Raises:
        ConfigError: the metadata file is missing or not JSON.
    """
    return read_json(model_dir / META_FILE, what=_ARTIFACT.what)


@lru_cache(maxsize=2)
def load_support_model(model_dir: Path = MODEL_DIR, threads: int = 1) -> SupportModel:
    """The shipped support model with the bundled MiniLM tokenizer (loaded once per process, ~0.2 s).

    Raises:
        ConfigError: see :class:`SupportModel`; the bundled MiniLM package is missing.
    """
    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    return SupportModel(model_dir / ONNX_FILE, resolve_model_path(BUNDLED_MINILM) / "tokenizer.json", threads)
