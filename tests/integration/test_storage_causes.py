"""Failures of the index named by their cause, against real Chroma (issue 20): an embedding model whose vectors
have another size than the index's is caught when a reader starts (one line), and Chroma's own dimension error,
should it still happen mid-question, is turned into the same kind of line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.errors import StoreNotReadyError
from assistant.index.store import PaperStore, explain_failure
from assistant.ingest.pipeline import ingest
from assistant.service import build_assistant


def test_a_model_of_another_vector_size_is_named_at_start(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    from llama_index.core.embeddings import MockEmbedding

    settings = Settings().updated(storage_dir=tmp_path / "index", llm_base_url="http://127.0.0.1:9/v1")
    ingest(settings, [seeds], embed_model, progress=False)
    swapped = MockEmbedding(embed_dim=768)  # the model folder now holds a 768-dimensional model
    with pytest.raises(StoreNotReadyError) as err:
        build_assistant(settings, embed_model=swapped, start_llm=False)
    message = str(err.value)
    assert "384-dimensional" in message and "768-dimensional" in message and "\n" not in message
    assert "Set ASSISTANT_EMBED_MODEL" in message  # what to do: the model that built it, or a rebuild

    windows = PaperStore.open_for_read(settings).windows
    with pytest.raises(Exception) as raw:  # what every question used to end in
        windows.query(query_embeddings=[[0.1] * 768], n_results=1)
    explained = explain_failure(raw.value, settings)
    assert (explained is not None and "vectors of another size" in str(explained)
            and "InvalidArgumentError" in str(explained))
    assert explain_failure(RuntimeError("boom"), settings) is None  # a bug stays a bug


def test_the_same_model_passes_the_start_check(tmp_path: Path, seeds: Path, embed_model) -> None:  # type: ignore[no-untyped-def]
    settings = Settings().updated(storage_dir=tmp_path / "index", llm_base_url="http://127.0.0.1:9/v1")
    ingest(settings, [seeds], embed_model, progress=False)
    with build_assistant(settings, embed_model=embed_model, start_llm=False) as assistant:
        assert assistant.paper_count == 3
