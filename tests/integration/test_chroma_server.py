"""Client/server mode: a real `chroma run` server on loopback; ingest (idempotent) and answer through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.ingest.pipeline import ingest
from assistant.llm.client import OpenAIChatBackend
from assistant.llm.local import free_port
from assistant.service import build_assistant
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.servers import chroma_server as run_chroma_server

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_seeds"


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with run_chroma_server(tmp_path_factory.mktemp("chroma-server")) as port:
        yield port


def test_ingest_and_answer_through_chroma_server(chroma_server: int, embed_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_server, storage_dir=tmp_path / "cache")
    first = ingest(settings, [FIXTURES], embed_model, progress=False)
    assert first.papers == 3 and first.added == first.windows
    again = ingest(settings, [FIXTURES], embed_model, progress=False)
    assert again.added == 0 and again.skipped == first.windows
    # locally only the catalog: a cache of paper records and BM25 synced from the server (catalog.py)
    assert {p.name.split(".")[-2:][0] for p in (tmp_path / "cache").iterdir()} <= {"catalog"}
    with FakeOpenAIServer(["DUALFormer performs the global self-attention on feature dimensions [1]."]) as llm:
        backend = OpenAIChatBackend(llm.base_url, "k", "scripted", timeout_s=10)
        with build_assistant(settings, embed_model=embed_model, backend=backend) as assistant:
            answer = assistant.ask("Which graph transformer runs self-attention on feature dimensions?")
    assert answer.citations[0].paper.id == "tiny.txt#1"
    assert answer.mode == "generated"


def test_unreachable_chroma_server_is_a_clear_error(embed_model) -> None:  # type: ignore[no-untyped-def]
    from assistant.errors import StoreNotReadyError

    settings = Settings().updated(chroma_host="127.0.0.1", chroma_port=free_port())
    with pytest.raises(StoreNotReadyError, match="Chroma server"):
        ingest(settings, [FIXTURES], embed_model, progress=False)


def test_a_new_replica_builds_its_catalog_from_the_server(chroma_server: int, embed_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from assistant.retrieve.retrieval import PaperRetriever

    writer = Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_server, storage_dir=tmp_path / "writer")
    ingest(writer, [FIXTURES], embed_model, progress=False)
    replica = Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_server, storage_dir=tmp_path / "replica")
    retriever = PaperRetriever.open(replica, embed_model)  # no local catalog yet: synced from the server
    assert len(retriever.papers) == 3
    assert retriever.retrieve("dual graph transformer feature dimension")[0].paper.id == "tiny.txt#1"
    assert retriever._catalog.bm25("graph transformer self-attention", 5)  # BM25 from the replica's own catalog
