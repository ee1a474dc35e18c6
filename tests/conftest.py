"""Shared fixtures: offline switches, the real bundled embedding model, a real Chroma index of the seeds
in a temp dir (built once per session), and the real bundled LLM server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from assistant.offline import enforce_offline

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"

enforce_offline()  # before any test imports transformers / chromadb / gradio
# The suite answers with the 135M bundled model (fast); tests/e2e/test_bundled_qwen.py runs the 1.5B default writer.
# Subprocesses the tests start inherit it. Set ASSISTANT_LLM_BUNDLED=qwen1.5b to run everything with the 1.5B model.
os.environ.setdefault("ASSISTANT_LLM_BUNDLED", "smollm2")
TINY_SEEDS = REPO / "tests" / "fixtures" / "tiny_seeds"


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    """A writable copy of the three-paper fixture corpus (``tiny.txt`` + ``papers.jsonl``)."""
    import shutil

    d = tmp_path / "seeds"
    shutil.copytree(TINY_SEEDS, d)
    return d


@pytest.fixture(scope="session")
def embed_model():  # type: ignore[no-untyped-def]
    """The bundled all-MiniLM-L6-v2 as a llama-index embedding (loaded once)."""
    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model

    return build_embed_model(Settings())


@pytest.fixture(scope="session")
def seeded_settings(tmp_path_factory: pytest.TempPathFactory, embed_model):  # type: ignore[no-untyped-def]
    """Settings whose ``storage_dir`` holds a real Chroma index of ``seeds/`` (ingested once)."""
    from assistant.config import Settings
    from assistant.ingest.pipeline import ingest

    settings = Settings().updated(storage_dir=tmp_path_factory.mktemp("index"))
    ingest(settings, [SEEDS], embed_model, progress=False)
    return settings


@pytest.fixture(scope="session")
def local_llm() -> Iterator[object]:
    """The bundled SmolLM2 server on a free loopback port (one per test session)."""
    from assistant.llm.local import LocalLLMServer

    with LocalLLMServer() as server:
        yield server


@pytest.fixture(scope="session")
def sentence_embedder(embed_model):  # type: ignore[no-untyped-def]
    """One cached sentence embedder for the test session: abstract sentences are embedded once, not once
    per assistant built."""
    from assistant.index.embeddings import CachedEmbedder

    return CachedEmbedder(embed_model)


@pytest.fixture
def scripted_assistant(seeded_settings, embed_model, sentence_embedder) -> Callable[..., AbstractContextManager[Any]]:  # type: ignore[no-untyped-def]
    """Factory for an Assistant on the seed index whose model is a scripted OpenAI-compatible server
    (tests/support/fake_openai_server.py) or any endpoint:

        with FakeOpenAIServer([reply]) as server, scripted_assistant(server) as assistant: ...

    Keyword arguments: ``timeout_s``, ``model``, ``max_output_tokens`` for the client; ``settings`` to use
    another index; ``strategies`` an intent registry; anything else updates the settings
    (e.g. ``llm_profile="capable"``).
    """
    from assistant.llm.client import OpenAIChatBackend
    from assistant.service import build_assistant

    @contextmanager
    def make(server: Any, *, timeout_s: float = 10.0, model: str = "scripted", max_output_tokens: int = 160,
             settings: Any = None, strategies: Any = None, **updates: Any) -> Iterator[Any]:
        base_url = server if isinstance(server, str) else server.base_url
        backend = OpenAIChatBackend(base_url, "k", model, timeout_s=timeout_s, max_output_tokens=max_output_tokens)
        chosen = settings or seeded_settings
        with build_assistant(chosen.updated(**updates) if updates else chosen, embed_model=embed_model,
                             backend=backend, strategies=strategies, sentence_embedder=sentence_embedder) as assistant:
            yield assistant

    return make
