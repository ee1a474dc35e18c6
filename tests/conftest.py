"""Shared fixtures: offline switches, the real bundled embedding model, a real Chroma index of the seeds
in a temp dir (built once per session), and the real bundled LLM server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.offline import enforce_offline

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"

enforce_offline()  # before any test imports transformers / chromadb / gradio


@pytest.fixture(scope="session")
def embed_model():  # type: ignore[no-untyped-def]
    """The bundled all-MiniLM-L6-v2 as a llama-index embedding (loaded once)."""
    from assistant.config import Settings
    from assistant.embeddings import build_embed_model

    return build_embed_model(Settings())


@pytest.fixture(scope="session")
def seeded_settings(tmp_path_factory: pytest.TempPathFactory, embed_model):  # type: ignore[no-untyped-def]
    """Settings whose ``storage_dir`` holds a real Chroma index of ``seeds/`` (ingested once)."""
    from assistant.config import Settings
    from assistant.ingest import ingest

    settings = Settings(storage_dir=tmp_path_factory.mktemp("index"))
    ingest(settings, [SEEDS], embed_model, progress=False)
    return settings


@pytest.fixture(scope="session")
def local_llm() -> Iterator[object]:
    """The bundled SmolLM2 server on a free loopback port (one per test session)."""
    from assistant.local_llm import LocalLLMServer

    with LocalLLMServer() as server:
        yield server
