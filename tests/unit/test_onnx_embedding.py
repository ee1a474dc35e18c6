"""The ONNX embedding runtime gives the sentence-transformers vectors of the bundled MiniLM (real model,
no mocks), imports no torch, and never uses a stale or damaged export."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.index.embeddings import BUNDLED_MINILM, build_embed_model, resolve_model_path
from assistant.index.onnx_embedding import (
    MANIFEST_FILE,
    ONNX_FILE,
    OnnxEmbedding,
    ensure_export,
    export_dir,
    export_onnx,
    read_valid_export,
)
from assistant.ingest.chunking import split_sentences
from assistant.ingest.corpus import read_papers

REPO = Path(__file__).resolve().parents[2]
MODEL_DIR = resolve_model_path(BUNDLED_MINILM)
HEAVY = ("torch", "transformers", "sentence_transformers", "llama_index.embeddings.huggingface")
#: Unicode, accents, digits, punctuation: the tokenizer's normaliser must match sentence-transformers'.
ODD_TEXTS = ["Schrödinger's naïve café — 東京 (≈ 3.5×10⁻³) ÀÉÎ", "  leading and trailing spaces  ", "x"]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model cache holding one valid export of the bundled MiniLM (exported once for this module)."""
    cache = tmp_path_factory.mktemp("models")
    ensure_export(MODEL_DIR, cache)
    return cache


@pytest.fixture(scope="module")
def onnx_model(cache_dir: Path) -> OnnxEmbedding:
    model = build_embed_model(Settings().updated(model_cache_dir=cache_dir, embed_threads=2))
    assert isinstance(model, OnnxEmbedding)
    return model


@pytest.fixture(scope="module")
def torch_model():  # type: ignore[no-untyped-def]
    return build_embed_model(Settings().updated(embed_runtime="torch"))


@pytest.fixture(scope="module")
def seed_sentences() -> list[str]:
    """40 sentences spread over the seed abstracts (short and long ones)."""
    sentences = [s for p in read_papers([REPO / "seeds"]) for s in split_sentences(p.text)]
    step = max(1, len(sentences) // 40)
    return sentences[::step][:40]


@pytest.fixture(scope="module")
def long_text(cache_dir: Path) -> str:
    """Seed abstracts joined into a text of well over 256 word pieces."""
    from tokenizers import Tokenizer

    text = " ".join(p.text for p in read_papers([REPO / "seeds"])[:3])
    tokenizer = Tokenizer.from_file(str(export_dir(MODEL_DIR, cache_dir) / "tokenizer.json"))
    tokenizer.no_truncation()
    assert len(tokenizer.encode(text).ids) > 400
    return text


def _cosines(a: list[list[float]], b: list[list[float]]) -> np.ndarray:
    x, y = np.asarray(a), np.asarray(b)
    return (x * y).sum(axis=1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1))


def test_onnx_vectors_equal_the_sentence_transformers_ones(onnx_model, torch_model, seed_sentences, long_text) -> None:  # type: ignore[no-untyped-def]
    texts = [*seed_sentences, long_text, *ODD_TEXTS]
    onnx_vectors = onnx_model.get_text_embedding_batch(texts)
    torch_vectors = torch_model.get_text_embedding_batch(texts)
    assert len(onnx_vectors[0]) == 384
    cos = _cosines(onnx_vectors, torch_vectors)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, f"cosine {cos[worst]:.6f} for {texts[worst][:80]!r}"
    assert np.allclose(np.linalg.norm(np.asarray(onnx_vectors), axis=1), 1.0, atol=1e-5)  # L2-normalised
    query = "Which paper scales graph transformers to large graphs?"
    assert _cosines([onnx_model.get_query_embedding(query)], [torch_model.get_query_embedding(query)])[0] >= 0.9999


def test_truncation_at_256_word_pieces_is_the_torch_one(onnx_model, torch_model, long_text) -> None:  # type: ignore[no-untyped-def]
    longer = long_text + " Words past the limit change nothing at all."
    v, w = onnx_model.get_text_embedding(long_text), onnx_model.get_text_embedding(longer)
    assert _cosines([v], [w])[0] > 0.999999
    assert _cosines([v], [torch_model.get_text_embedding(long_text)])[0] >= 0.9999


@pytest.mark.parametrize("run_tokens", [1, 512, 1 << 20])  # one text per run ... all texts in one padded run
def test_padding_in_a_mixed_batch_does_not_change_vectors(run_tokens: int, cache_dir: Path, onnx_model, seed_sentences,  # type: ignore[no-untyped-def]
                                                          long_text) -> None:
    model = OnnxEmbedding(export_dir(MODEL_DIR, cache_dir), run_tokens=run_tokens)
    texts = ["short", seed_sentences[0], long_text, "a mid-length sentence about graph neural networks", *ODD_TEXTS,
             *seed_sentences[1:9]]
    batch = np.asarray(model.get_text_embedding_batch(texts))
    alone = np.asarray([onnx_model.get_text_embedding(t) for t in texts])
    assert np.abs(batch - alone).max() < 1e-5


def test_query_text_and_async_calls_agree(onnx_model) -> None:  # type: ignore[no-untyped-def]
    q = "graph transformers for node classification"
    v = onnx_model.get_query_embedding(q)
    assert np.allclose(v, onnx_model.get_text_embedding(q), atol=1e-6)
    assert np.allclose(v, asyncio.run(onnx_model.aget_query_embedding(q)), atol=1e-6)
    assert np.allclose(v, asyncio.run(onnx_model.aget_text_embedding(q)), atol=1e-6)
    assert np.allclose([v, v], asyncio.run(onnx_model.aget_text_embedding_batch([q, q])), atol=1e-6)


def test_building_the_onnx_model_imports_no_torch(cache_dir: Path) -> None:
    code = (
        "import json, sys\n"
        "from assistant.config import Settings\n"
        "from assistant.index.embeddings import build_embed_model\n"
        f"m = build_embed_model(Settings().updated(model_cache_dir={str(cache_dir)!r}))\n"
        "v = m.get_query_embedding('graph transformers') + m.get_text_embedding_batch(['a', 'b c'])[0]\n"
        f"print(json.dumps([type(m).__name__, len(v), [h for h in {HEAVY!r} if h in sys.modules]]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env,
                         timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["OnnxEmbedding", 768, []]


def _copy_export(cache_dir: Path, tmp_path: Path) -> Path:
    """A second cache holding a copy of the module's valid export; returns the copy's folder."""
    folder = export_dir(MODEL_DIR, tmp_path)
    shutil.copytree(export_dir(MODEL_DIR, cache_dir), folder)
    assert read_valid_export(MODEL_DIR, tmp_path) is not None
    return folder


def test_touched_but_identical_weights_keep_the_export(cache_dir: Path, tmp_path: Path) -> None:
    folder = _copy_export(cache_dir, tmp_path)
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    manifest["weights_mtime_ns"] += 1  # as after a reinstall: re-hashed, same sha1, still valid
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    assert read_valid_export(MODEL_DIR, tmp_path) is not None


@pytest.mark.parametrize("damage", ["other weights", "other max_seq_length", "truncated onnx"])
def test_a_stale_or_damaged_export_is_redone_not_used(damage: str, cache_dir: Path,  # type: ignore[no-untyped-def]
                                                     tmp_path: Path, onnx_model, caplog) -> None:
    folder = _copy_export(cache_dir, tmp_path)
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    if damage == "other weights":
        manifest.update(weights_mtime_ns=1, weights_sha1="0" * 40)
    elif damage == "other max_seq_length":
        manifest["max_seq_length"] = 128
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    if damage == "truncated onnx":
        data = (folder / ONNX_FILE).read_bytes()
        (folder / ONNX_FILE).write_bytes(data[: len(data) // 2])
    assert read_valid_export(MODEL_DIR, tmp_path) is None
    caplog.set_level("INFO", logger="assistant.index.onnx_embedding")
    model = build_embed_model(Settings().updated(model_cache_dir=tmp_path))
    assert any(r.getMessage().startswith("exporting ") and "to ONNX once" in r.getMessage() for r in caplog.records)
    assert read_valid_export(MODEL_DIR, tmp_path) is not None
    text = "Graph transformers scale to large graphs."
    assert _cosines([model.get_text_embedding(text)], [onnx_model.get_text_embedding(text)])[0] > 0.999999
    assert not list(folder.parent.glob(".*")), "temporary export folders are left behind"


def test_a_corrupt_onnx_file_of_the_right_size_is_a_config_error_naming_the_folder(cache_dir: Path,
                                                                                   tmp_path: Path) -> None:
    folder = _copy_export(cache_dir, tmp_path)
    size = (folder / ONNX_FILE).stat().st_size
    (folder / ONNX_FILE).write_bytes(b"\0" * size)
    with pytest.raises(ConfigError, match=re.escape(str(folder))):
        OnnxEmbedding(folder)


def test_missing_or_unusable_model_folders_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        export_onnx(tmp_path / "nowhere", tmp_path / "cache")
    empty = tmp_path / "empty-model"
    empty.mkdir()
    with pytest.raises(ConfigError, match=f"{re.escape(str(empty))}.*model.safetensors"):
        OnnxEmbedding.from_model_dir(empty, tmp_path / "cache")
    broken = tmp_path / "broken-model"
    shutil.copytree(MODEL_DIR, broken, ignore=shutil.ignore_patterns("model.safetensors"))
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ConfigError,
                       match=f"Exporting {re.escape(str(broken))} to ONNX .* failed.*ASSISTANT_EMBED_RUNTIME=torch"):
        export_onnx(broken, tmp_path / "cache")
    assert read_valid_export(broken, tmp_path / "cache") is None
    assert not [p for p in (tmp_path / "cache" / "onnx").iterdir()], "a failed export leaves files behind"


def test_onnx_is_the_default_runtime() -> None:
    assert Settings().embedding.runtime == "onnx"
