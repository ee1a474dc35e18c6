"""A running reader sees what another process writes: papers added, replaced or deleted by a real second
process (`python -m assistant ingest` / `delete`) show up in the dense index, the BM25 index and the paper
records within a few seconds, without a restart; embedded and against a real `chroma run` server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.config import Settings
from assistant.ingest.pipeline import ingest
from assistant.retrieve.retrieval import REFRESH_INTERVAL_S, PaperRetriever
from tests.support.servers import chroma_server as run_chroma_server

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_seeds"
ZEBRA = ("We present StripeSeg, a segmentation model that segments zebra stripes in savanna photographs. StripeSeg "
         "follows "
         "the black and white bands across the animal body with a striped attention mechanism. On a new zebra dataset, "
         "stripe-aware segmentation improves boundary accuracy by 12 points over generic segmenters.")
ZEBRA_V2 = ZEBRA.replace("12 points", "17 points") + " The model also counts individual animals in a herd."
QUESTION = "Which model segments zebra stripes?"


def _run(settings: Settings, *args: str) -> None:
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(settings.storage.storage_dir)}
    if settings.storage.chroma_host:
        env |= {
            "ASSISTANT_CHROMA_HOST": settings.storage.chroma_host,
            "ASSISTANT_CHROMA_PORT": str(settings.storage.chroma_port),
        }
    done = subprocess.run([sys.executable, "-m", "assistant", *args], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


def _eventually(retriever: PaperRetriever, check, timeout_s: float = 10.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        hits = retriever.retrieve(QUESTION)
        if check(hits) or time.monotonic() > deadline:
            return hits
        time.sleep(REFRESH_INTERVAL_S / 2)


def _write_zebra(folder: Path, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "zebra.txt"
    path.write_text(f"ICLR 2025 Papers\n\n{text}\n", encoding="utf-8")
    return path


def _add_replace_delete(settings: Settings, embed_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ingest(settings, [FIXTURES], embed_model, progress=False)
    retriever = PaperRetriever.open(settings, embed_model)
    assert "zebra.txt#1" not in [h.paper.id for h in retriever.retrieve(QUESTION)]

    _run(settings, "ingest", "--no-progress", str(_write_zebra(tmp_path / "extra", ZEBRA)))
    hits = _eventually(retriever, lambda hits: hits and hits[0].paper.id == "zebra.txt#1")
    assert hits[0].paper.id == "zebra.txt#1" and "12 points" in hits[0].paper.text
    assert len(retriever.papers) == 4
    assert any(pid == "zebra.txt#1" for _, pid, *_ in retriever._catalog.bm25("zebra stripes", 5))  # lexical side too
    assert "12 points" in " ".join(hits[0].sentences)

    _run(settings, "ingest", "--no-progress", str(_write_zebra(tmp_path / "extra", ZEBRA_V2)))
    hits = _eventually(retriever, lambda hits: hits and "17 points" in hits[0].paper.text)
    assert hits[0].paper.id == "zebra.txt#1" and "17 points" in " ".join(hits[0].sentences)
    assert "counts individual animals" in hits[0].sentences[-1]  # the new sentence has its vector: evidence complete
    assert len(retriever.papers) == 4

    _run(settings, "delete", "zebra.txt#1")
    hits = _eventually(retriever, lambda hits: "zebra.txt#1" not in [h.paper.id for h in hits])
    assert "zebra.txt#1" not in [h.paper.id for h in hits] and len(retriever.papers) == 3
    assert "zebra.txt#1" not in retriever.papers


def test_embedded_reader_sees_another_process_add_replace_and_delete(embed_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _add_replace_delete(Settings().updated(storage_dir=tmp_path / "index"), embed_model, tmp_path)


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with run_chroma_server(tmp_path_factory.mktemp("chroma-server")) as port:
        yield port


def test_server_replica_sees_another_process_add_replace_and_delete(  # type: ignore[no-untyped-def]
        chroma_server: int, embed_model, tmp_path: Path) -> None:
    _add_replace_delete(
        Settings().updated(chroma_host="127.0.0.1", chroma_port=chroma_server, storage_dir=tmp_path / "cache"),
        embed_model,
        tmp_path,
    )
