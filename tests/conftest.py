"""Shared fixtures: offline switches, the real bundled embedding model, a real Chroma index of the seeds
in a temp dir (built once per session), and the real bundled LLM server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from assistant.offline import enforce_offline

REPO = Path(__file__).resolve().parent.parent
SEEDS = REPO / "seeds"

enforce_offline()  # before any test imports transformers / chromadb / gradio
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
def local_llm() -> Iterator[Any]:
    """The bundled 1.5B model's server on a free loopback port (one per test session: a cold load is ~45 s on
    2 cores, so every module that answers with the real model shares it)."""
    from assistant.config import Settings
    from assistant.llm.local import LocalLLMServer

    with LocalLLMServer(prompt_cache_mb=Settings().llm.prompt_cache_mb) as server:  # as shipped: papers read once
        yield server


@pytest.fixture(scope="module")
def bundled_assistant(seeded_settings, embed_model, sentence_embedder, local_llm) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """An Assistant on the seed index answering with the session's bundled 1.5B server (:func:`local_llm`), the
    default writer, through its OpenAI-compatible endpoint (one per module)."""
    from assistant.service import build_assistant

    settings = seeded_settings.updated(llm_base_url=local_llm.base_url, llm_model=local_llm.model, llm_timeout_s=180.0)
    with build_assistant(settings, embed_model=embed_model, sentence_embedder=sentence_embedder) as assistant:
        yield assistant


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
    (e.g. ``top_k=3``).
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
