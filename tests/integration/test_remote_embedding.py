"""Embeddings through an OpenAI-compatible ``/v1/embeddings`` server (``ASSISTANT_EMBED_BASE_URL``), against a
scripted server on loopback (tests/support/fake_embeddings_server.py) that computes real vectors with the
bundled MiniLM and returns them unnormalised: ingest and questions through it give what the in-process model
gives; retries, a server that is down or answers wrongly, and models that must not be mixed."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.config import Settings
from assistant.errors import ConfigError, EmbeddingUnavailableError, StoreNotReadyError
from assistant.index.remote_embedding import RemoteEmbedding, build_remote_embedding
from assistant.index.store import PaperStore, StoreInfo
from assistant.ingest.pipeline import ingest
from assistant.retrieve.retrieval import PaperRetriever
from tests.support.fake_embeddings_server import FakeEmbeddingsServer
from tests.support.fake_openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "seeds"
TINY = REPO / "tests" / "fixtures" / "tiny_seeds"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEV_QUESTIONS = [json.loads(line)["question"] for line in (REPO / "eval" / "dev.jsonl").read_text().splitlines()[:8]]


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    d = tmp_path / "seeds"
    shutil.copytree(TINY, d)
    return d


@pytest.fixture
def minilm(embed_model) -> Callable[[list[str]], list[list[float]]]:  # type: ignore[no-untyped-def]
    """What the scripted server computes: the bundled MiniLM's vectors."""
    return embed_model.get_text_embedding_batch


def remote_settings(url: str, storage: Path, **kw: object) -> Settings:
    return Settings().updated(storage_dir=storage, embed_base_url=url, **{"embed_model": MODEL, **kw})


def remote(settings: Settings) -> RemoteEmbedding:
    return build_remote_embedding(settings)


# --- fingerprint ---------------------------------------------------------------------------------------
def test_fingerprint_records_the_model_not_the_url() -> None:
    local = Settings()
    key = b"bundled:all-MiniLM-L6-v2|window=3|v2"  # v2: sentence vectors + catalog (schema 2)
    assert local.collection_name() == f"papers_{hashlib.sha1(key).hexdigest()[:10]}"
    a = Settings().updated(embed_base_url="http://10.0.0.1:8080/v1", embed_model=MODEL)
    b = Settings().updated(embed_base_url="http://embed.internal/v1", embed_model=MODEL)
    assert (a.embed_identity() == f"remote:{MODEL}"
            and a.collection_name() == b.collection_name() != local.collection_name())
    assert Settings().updated(embed_base_url="http://10.0.0.1:8080/v1",
                    embed_model="BAAI/bge-small-en-v1.5").collection_name() != a.collection_name()


def test_remote_settings_are_checked_before_any_request() -> None:
    with pytest.raises(ConfigError, match="ASSISTANT_EMBED_MODEL must be the model name"):
        build_remote_embedding(Settings().updated(embed_base_url="http://127.0.0.1:1/v1"))
    with pytest.raises(ConfigError, match="not an http"):
        build_remote_embedding(Settings().updated(embed_base_url="127.0.0.1:8080", embed_model=MODEL))


# --- real vectors through the endpoint ---------------------------------------------------------------
def test_ingest_and_retrieval_through_the_endpoint_match_the_local_model(seeded_settings, embed_model, minilm,  # type: ignore[no-untyped-def]
                                                                         tmp_path: Path) -> None:
    with FakeEmbeddingsServer(minilm) as server:
        settings = remote_settings(server.base_url, tmp_path / "index", embed_batch_size=32)
        embed = remote(settings)
        report = ingest(settings, [SEEDS], embed, progress=False)
        assert report.papers == 38 and report.added == report.windows == 297
        batches = [len(p["input"]) for p in server.requests]
        assert max(batches) == 32 and sum(batches) == 1 + 297 + 38  # the probe, then every sentence and title once
        assert {p["model"] for p in server.requests} == {MODEL}

        local_store, remote_store = PaperStore.open_for_read(seeded_settings), PaperStore.open_for_read(settings)
        assert remote_store.info().embed_model == f"remote:{MODEL}" and remote_store.info().dimensions == 384
        pid = "000_43469673d6f8aaa0.txt#1"
        (_, v_local), (_, v_remote) = (local_store.window_embeddings([pid])[pid][0],
                                       remote_store.window_embeddings([pid])[pid][0])
        assert abs(sum(x * x for x in v_remote) - 1) < 1e-5  # normalised although the server sent 2.5x vectors
        assert max(abs(x - y) for x, y in zip(v_local, v_remote)) < 1e-5

        served = len(server.requests)
        local_r = PaperRetriever.open(seeded_settings, embed_model)
        remote_r = PaperRetriever.open(settings, embed)
        for q in DEV_QUESTIONS:
            by_remote, by_local = remote_r.retrieve(q), local_r.retrieve(q)
            # the same retrieval: every cosine is the same to 1e-4. The fused score is rank-based (reciprocal-rank
            # fusion), so vectors equal to 1e-5 may swap two windows whose cosines tie and move a tied paper by
            # one rank or across the cut-off (seen at rank 5, and once as a fused-score jump above 1e-3): the
            # papers are compared as sets, with at most one exchanged at the tail, and each one's cosine
            remote_ids, local_ids = [h.paper.id for h in by_remote], [h.paper.id for h in by_local]
            assert remote_ids[0] == local_ids[0] and len(remote_ids) == len(local_ids), q
            assert len(set(remote_ids) & set(local_ids)) >= len(local_ids) - 1, q
            local_cos = {h.paper.id: h.dense_similarity for h in by_local}
            assert all(abs(h.dense_similarity - local_cos[h.paper.id]) < 1e-4
                       for h in by_remote if h.paper.id in local_cos), q
        assert len(server.requests) > served  # query embeddings went through the endpoint too


def test_cli_ingest_and_ask_through_the_endpoint(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEmbeddingsServer(minilm) as server, FakeOpenAIServer(["DUALFormer runs global self-attention on feature "
                                                                   "dimensions [1]."]) as llm:
        monkeypatch.setenv("ASSISTANT_EMBED_BASE_URL", server.base_url)
        monkeypatch.setenv("ASSISTANT_EMBED_MODEL", MODEL)
        monkeypatch.setenv("ASSISTANT_EMBED_API_KEY", "sk-secret-embed-key")
        monkeypatch.setenv("ASSISTANT_LLM_BASE_URL", llm.base_url)
        index = tmp_path / "index"
        assert main(["ingest", "--no-progress", str(TINY), "--storage-dir", str(index), "--verbose"]) == 0
        out, err = capsys.readouterr()
        assert "Indexed 3 papers" in out and "sk-secret-embed-key" not in out + err
        assert main(["ask", "--json", "Which graph transformer runs self-attention on feature dimensions?",
                     "--storage-dir", str(index)]) == 0
        answer = json.loads(capsys.readouterr().out)
    assert answer["sources"][0]["paper_id"] == "tiny.txt#1" and answer["sources"][0]["similarity"] > 0.5
    assert answer["citations"][0]["paper_id"] == "tiny.txt#1"
    assert "Which graph transformer runs self-attention on feature dimensions?" in server.texts_embedded()


# --- faults --------------------------------------------------------------------------------------------
def test_two_server_errors_are_retried_without_duplicates(minilm, seeds: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with FakeEmbeddingsServer(minilm, [None, 500, 503]) as server:  # probe ok, then the first batch fails twice
        settings = remote_settings(server.base_url, tmp_path / "index", embed_batch_size=8)
        report = ingest(settings, [seeds], remote(settings), progress=False)
    assert report.added == report.windows
    sent = server.texts_embedded()
    # probe, two failures, a request per batch, the titles
    assert len(server.requests) == 1 + 2 + -(-report.windows // 8) + 1
    assert sent[1:9] == sent[9:17] == sent[17:25]  # the failed batch was sent again as it was
    store = PaperStore.open_for_read(settings)
    assert store.windows.count() == report.windows and len(store.load_papers()) == 3


def test_a_dropped_connection_is_retried(minilm) -> None:  # type: ignore[no-untyped-def]
    with FakeEmbeddingsServer(minilm, ["CLOSE"]) as server:
        embed = RemoteEmbedding(base_url=server.base_url, model_name=MODEL, max_retries=2)
        assert len(embed.get_query_embedding("graph transformers")) == 384
    assert len(server.requests) == 2


def test_server_down_is_a_clear_error_and_the_index_stays(minilm, seeds: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "index"
    with FakeEmbeddingsServer(minilm) as server:
        settings = remote_settings(server.base_url, index, embed_max_retries=1)
        first = ingest(settings, [seeds], remote(settings), progress=False)
    # the server is gone now (its port refuses connections); an ingest with a changed file fails cleanly
    (seeds / "tiny.txt").write_text((seeds / "tiny.txt").read_text() + "\n\nA new abstract about protein folding. It "
                                                                       "is short.")
    with pytest.raises(EmbeddingUnavailableError,
                       match=rf"{server.base_url} \(model '{MODEL}'\) could not be reached") as e:
        ingest(settings, [seeds], remote(settings), progress=False)
    assert e.value.reason == "unreachable" and "ASSISTANT_EMBED_BASE_URL" in str(e.value)
    # the command line says it in one line, and --rebuild drops nothing while the server is down
    monkeypatch.setenv("ASSISTANT_EMBED_BASE_URL", server.base_url)
    monkeypatch.setenv("ASSISTANT_EMBED_MODEL", MODEL)
    monkeypatch.setenv("ASSISTANT_EMBED_MAX_RETRIES", "0")
    monkeypatch.setenv("ASSISTANT_LLM_BASE_URL", "http://127.0.0.1:1/v1")  # never reached: retrieval fails first
    assert main(["ingest", "--rebuild", "--no-progress", str(seeds), "--storage-dir", str(index)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: The embedding server at {server.base_url} (model '{MODEL}') could not be reached "
        "([Errno 111] Connection refused) (1 attempt). Check that the server is running and serves /v1/embeddings "
        "(ASSISTANT_EMBED_BASE_URL), then run the command again (an interrupted ingest resumes where it stopped); or "
        "unset ASSISTANT_EMBED_BASE_URL to embed with the bundled model (that is another index, built by `assistant "
        "ingest`)."]
    store = PaperStore.open_for_read(settings)
    assert set(store.load_papers()) == {f"tiny.txt#{i}" for i in (1, 2, 3)} and store.windows.count() == first.windows
    # a question while the server is down: one line too
    assert main(["ask", "graph transformers", "--storage-dir", str(index)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "could not be reached" in err and err.count("error:") == 1


@pytest.mark.parametrize(("entry", "message"), [
    ("SHORT", "returned 3 vectors for 4 texts"),
    ("DIM", "returned 192-dimensional vectors after 384-dimensional ones"),
])
def test_wrong_vectors_stop_the_ingest_and_store_nothing_of_them(entry: str, message: str, minilm, seeds: Path,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    with FakeEmbeddingsServer(minilm, [None, None, entry]) as server:  # probe, first batch ok, second batch wrong
        settings = remote_settings(server.base_url, tmp_path / "index", embed_batch_size=4, write_batch_size=4)
        with pytest.raises(EmbeddingUnavailableError, match=message) as e:
            ingest(settings, [seeds], remote(settings), progress=False)
        assert e.value.reason == "invalid" and len(server.requests) == 3  # not retried: the server would say it again
        store = PaperStore.open_for_write(settings, StoreInfo(f"remote:{MODEL}", 384, 3))
        assert store.windows.count() == 4 and store.papers.count() == 0  # the first batch only; no paper half-visible
        report = ingest(settings, [seeds], remote(settings), progress=False)  # the next run completes the job
    assert report.added == report.windows - 4 and len(PaperStore.open_for_read(settings).load_papers()) == 3


def test_vectors_are_put_back_in_input_order_and_normalised(minilm, embed_model) -> None:  # type: ignore[no-untyped-def]
    texts = ["graph transformers", "video anomaly detection", "combinatorial optimisation"]
    with FakeEmbeddingsServer(minilm, ["SHUFFLE"]) as server:
        got = RemoteEmbedding(base_url=server.base_url, model_name=MODEL).get_text_embedding_batch(texts)
    for g, want in zip(got, embed_model.get_text_embedding_batch(texts)):
        assert max(abs(x - y) for x, y in zip(g, want)) < 1e-5


@pytest.mark.parametrize(("status", "hint"), [
    (404, "Check ASSISTANT_EMBED_MODEL"),
    (401, "Check ASSISTANT_EMBED_API_KEY"),
    (413, "The server refused the request: lower ASSISTANT_EMBED_BATCH_SIZE"),
])
def test_client_errors_fail_at_once_with_what_to_do(status: int, hint: str, minilm) -> None:  # type: ignore[no-untyped-def]
    with FakeEmbeddingsServer(minilm, [status]) as server:
        embed = RemoteEmbedding(base_url=server.base_url, model_name=MODEL, api_key="sk-hidden", max_retries=3)
        with pytest.raises(EmbeddingUnavailableError,
                           match=f"answered HTTP {status}: scripted failure {status}. {hint}") as e:
            embed.get_query_embedding("q")
    assert len(server.requests) == 1 and "sk-hidden" not in str(e.value) + repr(embed)


def test_a_silent_server_times_out(minilm) -> None:  # type: ignore[no-untyped-def]
    with FakeEmbeddingsServer(minilm, [3.0]) as server:
        embed = RemoteEmbedding(base_url=server.base_url, model_name=MODEL, timeout_s=0.5, max_retries=0)
        with pytest.raises(EmbeddingUnavailableError, match="did not answer within 0.5 s"):
            embed.get_query_embedding("q")


# --- models are never mixed ------------------------------------------------------------------------------
def test_a_local_index_and_a_remote_index_live_side_by_side(embed_model, minilm, seeds: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index = tmp_path / "index"
    local = Settings().updated(storage_dir=index)
    ingest(local, [seeds], embed_model, progress=False)
    with FakeEmbeddingsServer(minilm) as server:
        settings = remote_settings(server.base_url, index)
        report = ingest(settings, [seeds], remote(settings), progress=False)
        assert report.added == report.windows  # its own collection: nothing of the local index is reused or touched
        assert report.collection == settings.collection_name() != local.collection_name()
        assert PaperStore.open_for_read(local).info().embed_model == "bundled:all-MiniLM-L6-v2"
        assert PaperStore.open_for_read(settings).info().embed_model == f"remote:{MODEL}"
        # an index built by one model refuses vectors of another, naming both
        with pytest.raises(StoreNotReadyError,
                           match=rf"holds vectors made by bundled:all-MiniLM-L6-v2, but these settings "
                                                     rf"embed with remote:{MODEL}; mixing two models in one index is "
                                                     rf"refused"):
            PaperStore.open_for_write(local, StoreInfo(f"remote:{MODEL}", 384, 3))
    # a reader configured for a model no index was built with is told which models the indexes have
    with pytest.raises(StoreNotReadyError) as e:
        PaperStore.open_for_read(remote_settings("http://127.0.0.1:1/v1", index, embed_model="BAAI/bge-small-en-v1.5"))
    msg = str(e.value)
    assert ("No index for the current settings (embedding model remote:BAAI/bge-small-en-v1.5, 3-sentence windows, "
            "index layout v2)") in msg
    assert (f"{local.collection_name()} (embedding model bundled:all-MiniLM-L6-v2, 3-sentence windows, "
            "index layout v2)") in msg
    assert f"{settings.collection_name()} (embedding model remote:{MODEL}, 3-sentence windows, index layout v2)" in msg
    assert "other settings" in msg and "ASSISTANT_EMBED_BASE_URL" in msg


def test_another_model_behind_the_same_name_is_refused(minilm, seeds: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    index = tmp_path / "index"
    with FakeEmbeddingsServer(minilm) as server:
        settings = remote_settings(server.base_url, index)
        first = ingest(settings, [seeds], remote(settings), progress=False)
    (seeds / "tiny.txt").write_text((seeds / "tiny.txt").read_text() + "\n\nA new abstract about protein folding. It "
                                                                       "is short.")

    def other_model(texts: list[str]) -> list[list[float]]:  # same size, other vectors
        return [v[::-1] for v in minilm(texts)]

    def bigger_model(texts: list[str]) -> list[list[float]]:
        return [v + v for v in minilm(texts)]

    for fake, message in [(other_model, r"makes other vectors \(similarity -?0\.\d\d on a probe sentence"),
                          (bigger_model,
                           "holds 384-dimensional vectors made by remote:.* now returns 768-dimensional ones")]:
        with FakeEmbeddingsServer(fake) as swapped:
            with pytest.raises(StoreNotReadyError, match=message):
                swapped_settings = remote_settings(swapped.base_url, index)
                ingest(swapped_settings, [seeds], remote(swapped_settings), progress=False)
            assert len(swapped.requests) == 1  # only the probe: nothing was embedded, nothing written
    store = PaperStore.open_for_read(settings)
    assert len(store.load_papers()) == 3 and store.windows.count() == first.windows
