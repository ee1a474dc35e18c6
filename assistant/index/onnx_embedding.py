"""Sentence embeddings with onnxruntime instead of torch: the same vectors, without importing torch.

``import sentence_transformers`` (torch + transformers) costs ~7 s on the 2-core reference machine,
more than a whole cold ``assistant ask`` may take; onnxruntime + tokenizers import in ~0.25 s. A
sentence-transformers folder is exported once to ONNX (:func:`export_onnx`, run by ``scripts/setup.sh``
and, failing that, at first use); :class:`OnnxEmbedding` then reproduces the sentence-transformers
pipeline of that folder: tokenizer (truncation at ``max_seq_length``, padding to the longest text of
the batch), transformer, mean pooling over the attention mask, L2 normalisation.

An export is a folder ``<model_cache_dir>/onnx/<model folder name>-<10 hex of sha1(absolute path)>/``
holding ``model.onnx``, ``tokenizer.json`` and ``manifest.json``; it is valid only while its manifest
matches the source folder (see :func:`read_valid_export`), so a changed model is re-exported, never
used stale. This module imports torch/transformers only inside :func:`export_onnx`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr

from assistant.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

#: Bumped when the export's layout or contents change: older exports are then redone.
EXPORT_FORMAT = 1
ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"
WEIGHTS_FILE = "model.safetensors"
OPSET = 17
#: Wall time of one export of all-MiniLM-L6-v2 on the 2-core reference machine (docs/benchmarks.md,
#: "Embedding runtime"); only used in the log line that announces an export.
TYPICAL_EXPORT_S = 10
#: sentence-transformers module types this runtime reproduces (modules.json); anything else (Dense,
#: another pooling mode...) needs ``embed_runtime=torch``.
#: Most padded word pieces (texts x longest text) per onnxruntime run. Small runs keep the activations in
#: cache: on the reference machine a run of 64 seed windows (~11k word pieces) embedded ~14 texts per
#: CPU-second, runs of <= 512 word pieces ~23-27 (docs/benchmarks.md, "Embedding runtime").
RUN_TOKENS = 512
_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"


def export_dir(model_dir: Path, cache_dir: Path) -> Path:
    """Folder of the export of ``model_dir`` under ``cache_dir``: ``onnx/<name>-<sha1(abs path)[:10]>``."""
    source = str(Path(model_dir).expanduser().resolve())
    return (
        Path(cache_dir).expanduser() / "onnx" / f"{Path(source).name}-{hashlib.sha1(source.encode()).hexdigest()[:10]}"
    )


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ConfigError(f"Cannot read {path}: {e}. Reinstall the embedding model or fix the file.") from e


def _model_spec(model_dir: Path) -> dict[str, Any]:
    """What the sentence-transformers folder asks for: ``max_seq_length`` and the pooling, from
    ``sentence_bert_config.json``, ``modules.json`` and ``1_Pooling/config.json``.

    Raises:
        ConfigError: the folder is missing, has no ``model.safetensors``/``config.json``, or uses modules
            this runtime does not reproduce.
    """
    if not model_dir.is_dir():
        raise ConfigError(
            f"Embedding model folder {model_dir} does not exist or is not a folder: "
            "set ASSISTANT_EMBED_MODEL to a local sentence-transformers folder."
        )
    for name in (WEIGHTS_FILE, "config.json"):
        if not (model_dir / name).is_file():
            raise ConfigError(
                f"Embedding model folder {model_dir} has no {name}: the ONNX runtime needs a "
                "sentence-transformers folder with safetensors weights (or set ASSISTANT_EMBED_RUNTIME=torch)."
            )
    modules = _read_json(model_dir / "modules.json") or [
        {"type": _TRANSFORMER, "path": ""},
        {"type": _POOLING, "path": "1_Pooling"},
    ]
    types = [m.get("type") for m in modules]
    unsupported = [t for t in types if t not in (_TRANSFORMER, _POOLING, _NORMALIZE)]
    if unsupported or types[:1] != [_TRANSFORMER]:
        raise ConfigError(
            f"{model_dir}/modules.json uses {unsupported or types}, which the ONNX runtime does not "
            "reproduce: set ASSISTANT_EMBED_RUNTIME=torch."
        )
    pooling_path = next((m.get("path", "1_Pooling") for m in modules if m.get("type") == _POOLING), "1_Pooling")
    pooling = _read_json(model_dir / pooling_path / "config.json") or {"pooling_mode_mean_tokens": True}
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
    if modes != ["pooling_mode_mean_tokens"]:
        raise ConfigError(
            f"{model_dir}/{pooling_path}/config.json asks for pooling {modes}; the ONNX runtime does "
            "mean pooling only: set ASSISTANT_EMBED_RUNTIME=torch."
        )
    st_config = _read_json(model_dir / "sentence_bert_config.json") or {}
    config = _read_json(model_dir / "config.json") or {}
    max_len = st_config.get("max_seq_length") or 512
    max_len = min(int(max_len), int(config.get("max_position_embeddings", max_len)))
    if st_config.get("do_lower_case"):
        raise ConfigError(
            f"{model_dir}/sentence_bert_config.json sets do_lower_case, which the ONNX runtime does "
            "not reproduce: set ASSISTANT_EMBED_RUNTIME=torch."
        )
    return {"max_seq_length": max_len, "pooling": "mean", "normalize": True}


def _expected_manifest(model_dir: Path, *, with_sha1: bool) -> dict[str, Any]:
    """The manifest fields that describe the source folder now (``weights_sha1`` only when asked: it reads
    the 90 MB weights)."""
    source = model_dir.expanduser().resolve()
    spec = _model_spec(source)
    stat = (source / WEIGHTS_FILE).stat()
    out = {
        "format": EXPORT_FORMAT,
        "source": str(source),
        "weights_size": stat.st_size,
        "weights_mtime_ns": stat.st_mtime_ns,
        **spec,
    }
    if with_sha1:
        out["weights_sha1"] = _sha1(source / WEIGHTS_FILE)
    return out


def read_valid_export(model_dir: Path, cache_dir: Path) -> dict[str, Any] | None:
    """The manifest of a usable export of ``model_dir``, or None when there is none or it is stale/damaged.

    Valid means: same format, source folder, ``max_seq_length``/pooling, the ``.onnx`` file has the
    recorded size (a truncated copy is not), ``tokenizer.json`` exists, and the weights are the exported
    ones. The weights are re-hashed (sha1, ~0.2 s) only when their size or mtime differ from the
    manifest's; a reinstalled but identical model is therefore still valid.

    Raises:
        ConfigError: see :func:`_model_spec` (the source folder is missing or unsupported).
    """
    model_dir = Path(model_dir).expanduser()
    folder = export_dir(model_dir, cache_dir)
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    now = _expected_manifest(model_dir, with_sha1=False)
    stable = {k: v for k, v in now.items() if not k.startswith("weights_")}
    if any(manifest.get(k) != v for k, v in stable.items()):
        return None
    try:
        if (folder / ONNX_FILE).stat().st_size != manifest.get("onnx_size") or not (folder / TOKENIZER_FILE).is_file():
            return None
    except OSError:
        return None
    same_file = (manifest.get("weights_size"), manifest.get("weights_mtime_ns")) == (
        now["weights_size"],
        now["weights_mtime_ns"],
    )
    if not same_file and manifest.get("weights_sha1") != _sha1(Path(now["source"]) / WEIGHTS_FILE):
        return None
    manifest["dir"] = str(folder)
    return manifest


def export_onnx(model_dir: Path, out_dir: Path) -> Path:
    """Export the transformer of a sentence-transformers folder to ONNX, once; returns the export folder.

    ``out_dir`` is the cache root (``Settings.embedding.model_cache_dir``); the export goes to
    :func:`export_dir` ``(model_dir, out_dir)``. An existing valid export is returned as is. Otherwise
    torch + transformers are imported (~8 s) and the model is traced with the legacy exporter (opset 17;
    inputs ``input_ids``, ``attention_mask`` [, ``token_type_ids``], int64 ``(batch, seq)``; output
    ``last_hidden_state`` float32 ``(batch, seq, hidden)``, both axes dynamic) into a temporary folder that
    is renamed into place when complete (so readers never see half an export; of two concurrent exports
    one wins). ~10 s for all-MiniLM-L6-v2 on 2 cores, imports included.

    Raises:
        ConfigError: the model folder is missing/unsupported or the export failed (message names the
            path and says what to do).
    """
    model_dir = Path(model_dir).expanduser()
    if read_valid_export(model_dir, out_dir) is not None:
        return export_dir(model_dir, out_dir)
    target = export_dir(model_dir, out_dir)
    manifest = _expected_manifest(model_dir, with_sha1=True)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as e:
        raise ConfigError(
            f"Cannot write the ONNX export under {target.parent}: {e}. Set ASSISTANT_MODEL_CACHE_DIR "
            "to a writable folder."
        ) from e
    try:
        t0 = time.perf_counter()
        manifest.update(_export_to(Path(manifest["source"]), tmp))
        manifest["onnx_size"] = (tmp / ONNX_FILE).stat().st_size
        manifest["export_s"] = round(time.perf_counter() - t0, 1)
        (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
        tmp.chmod(0o755)  # mkdtemp makes it 0700
        _move_into_place(tmp, target)
    except ConfigError:
        raise
    except Exception as e:  # torch/onnx raise many kinds; the user needs one message
        raise ConfigError(
            f"Exporting {model_dir} to ONNX in {target} failed ({type(e).__name__}: {e}). "
            "Set ASSISTANT_EMBED_RUNTIME=torch to embed without ONNX."
        ) from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if read_valid_export(model_dir, out_dir) is None:
        raise ConfigError(
            f"The ONNX export in {target} is not valid right after writing it (another process "
            "changing it?). Delete the folder and retry, or set ASSISTANT_EMBED_RUNTIME=torch."
        )
    return target


def _export_to(model_dir: Path, folder: Path) -> dict[str, Any]:
    """Trace ``model_dir``'s transformer into ``folder/model.onnx`` and save its fast tokenizer; returns
    manifest fields (inputs, padding token, versions)."""
    import inspect
    import warnings

    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ConfigError(
            f"{model_dir} has no fast (Rust) tokenizer, which the ONNX runtime needs: "
            "set ASSISTANT_EMBED_RUNTIME=torch."
        )
    backend.save(str(folder / TOKENIZER_FILE))
    model = AutoModel.from_pretrained(str(model_dir)).eval()
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in inspect.signature(model.forward).parameters:
        names.append("token_type_ids")

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: torch.Tensor) -> torch.Tensor:  # keywords: transformers 5 rejects positionals
            return self.model(**dict(zip(names, args))).last_hidden_state

    sample = tokenizer(["an example sentence", "a second, longer example sentence"], padding=True, return_tensors="pt")
    args = tuple(sample[n] if n in sample else torch.zeros_like(sample["input_ids"]) for n in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names} | {"last_hidden_state": {0: "batch", 1: "sequence"}}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about python control flow on shapes (static here)
        torch.onnx.export(
            Wrapper(),
            args,
            str(folder / ONNX_FILE),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    import transformers

    return {
        "inputs": names,
        "pad_token": tokenizer.pad_token,
        "pad_id": tokenizer.pad_token_id,
        "hidden_size": int(model.config.hidden_size),
        "opset": OPSET,
        "exported_with": {"torch": torch.__version__, "transformers": transformers.__version__},
    }


def _move_into_place(tmp: Path, target: Path) -> None:
    """Rename the complete ``tmp`` folder to ``target``, replacing a stale one."""
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        try:
            target.rename(old)
        except OSError:
            pass  # another process moved it meanwhile
        shutil.rmtree(old, ignore_errors=True)
    try:
        tmp.rename(target)
    except OSError:
        if not (target / MANIFEST_FILE).is_file():  # not a concurrent export that won the race
            raise


def ensure_export(model_dir: Path, cache_dir: Path) -> Path:
    """The folder of a valid export of ``model_dir``, exporting first (with one INFO line) if needed.

    Raises:
        ConfigError: see :func:`export_onnx`.
    """
    if read_valid_export(model_dir, cache_dir) is None:
        logger.info("exporting %s to ONNX once (~%d s)", model_dir, TYPICAL_EXPORT_S)
        t0 = time.perf_counter()
        folder = export_onnx(model_dir, cache_dir)
        logger.info("ONNX export in %s written in %.1f s", folder, time.perf_counter() - t0)
    return export_dir(model_dir, cache_dir)


class OnnxEmbedding(BaseEmbedding):
    """A llama-index embedding that runs an :func:`export_onnx` export with onnxruntime on CPU.

    Vectors are lists of ``hidden_size`` floats (384 for all-MiniLM-L6-v2), L2-normalised, equal to the
    sentence-transformers (``HuggingFaceEmbedding``) ones up to float error (cosine >= 0.9999,
    tests/unit/test_onnx_embedding.py): texts are tokenized with the exported ``tokenizer.json``,
    truncated to ``max_seq_length`` word pieces (256 for MiniLM, from ``sentence_bert_config.json``), sorted
    by length and run in groups of at most ``run_tokens`` padded word pieces (each padded to its longest
    text), and the token vectors are mean-pooled over the attention mask.
    Queries and texts are embedded alike (no instruction prefix, as for MiniLM in llama-index).
    Thread-safe (onnxruntime sessions allow concurrent ``run``). Imports no torch/transformers.

    Use :meth:`from_model_dir` (exports if needed) or the constructor on an existing export folder.

    Raises (constructor):
        ConfigError: the export folder is missing or damaged (message names it; delete it to re-export).
    """

    export_path: str = Field(description="Folder holding model.onnx, tokenizer.json and manifest.json.")
    max_length: int = Field(256, gt=0, description="Word pieces per text after truncation (incl. [CLS]/[SEP]).")
    threads: int = Field(
        2, ge=0, description="onnxruntime intra-op threads per batch (0: onnxruntime's default, one per core)."
    )
    run_tokens: int = Field(
        RUN_TOKENS, gt=0, description="Most padded word pieces per onnxruntime run (see RUN_TOKENS)."
    )

    _session: Any = PrivateAttr()
    _tokenizer: Any = PrivateAttr()
    _input_names: list[str] = PrivateAttr()
    _pad_id: int = PrivateAttr()
    _hidden_size: int = PrivateAttr()

    def __init__(
        self,
        export_path: str | Path,
        *,
        threads: int = 2,
        embed_batch_size: int = 64,
        model_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        ort.disable_telemetry_events()  # ORT_DISABLE_TELEMETRY (assistant/offline.py) stops the native client

        folder = Path(export_path)
        try:
            manifest = json.loads((folder / MANIFEST_FILE).read_text())
            tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.log_severity_level = 3
            # Idle pool threads sleep instead of spin-waiting: on 2 cores shared with the LLM server,
            # spinning tripled the query latency (p50 8 -> 23 ms with one core busy; docs/benchmarks.md).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = ort.InferenceSession(str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"])
            max_length = int(manifest["max_seq_length"])
        except Exception as e:  # missing file, bad JSON, invalid protobuf...
            raise ConfigError(
                f"The ONNX export in {folder} cannot be loaded ({type(e).__name__}: {e}). Delete "
                "that folder to export again, or set ASSISTANT_EMBED_RUNTIME=torch."
            ) from e
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.no_padding()  # padded per run in _run
        super().__init__(
            export_path=str(folder),
            max_length=max_length,
            threads=threads,
            embed_batch_size=embed_batch_size,
            model_name=model_name or manifest.get("source", str(folder)),
            **kwargs,
        )
        self._session = session
        self._tokenizer = tokenizer
        self._input_names = [i.name for i in session.get_inputs()]
        self._pad_id = int(manifest.get("pad_id") or 0)
        self._hidden_size = int(manifest.get("hidden_size") or session.get_outputs()[0].shape[-1])

    @classmethod
    def from_model_dir(cls, model_dir: Path, cache_dir: Path, **kwargs: Any) -> OnnxEmbedding:
        """Load the export of a sentence-transformers folder, exporting it first if there is no valid one
        (one INFO line, ~10 s). If the export exists but cannot be loaded (damaged), it is redone once.

        Raises:
            ConfigError: the folder is missing/unsupported, or the export failed.
        """
        folder = ensure_export(model_dir, cache_dir)
        try:
            return cls(folder, **kwargs)
        except ConfigError:
            logger.warning("ONNX export in %s is damaged; exporting again", folder)
            shutil.rmtree(folder, ignore_errors=True)
            return cls(ensure_export(model_dir, cache_dir), **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "OnnxEmbedding"

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` as a float32 array ``(len(texts), hidden_size)``, in order.

        Texts are sorted by length and run in groups of at most ``run_tokens`` padded word pieces, each
        group padded to its own longest text (padding is masked out, so grouping never changes a vector).
        """
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self._hidden_size), dtype=np.float32)
        group: list[int] = []
        for i in sorted(range(len(texts)), key=lambda k: len(encodings[k].ids)):
            if group and (len(group) + 1) * len(encodings[i].ids) > self.run_tokens:
                out[group] = self._run([encodings[k] for k in group])
                group = []
            group.append(i)
        if group:
            out[group] = self._run([encodings[k] for k in group])
        return out

    def _run(self, encodings: list[Any]) -> np.ndarray:
        """One onnxruntime run over tokenized texts: pad, transformer, mean pooling, L2 normalisation."""
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
            types[row, : len(e.ids)] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (hidden,) = self._session.run(["last_hidden_state"], {k: v for k, v in feeds.items() if k in self._input_names})
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(
            weights.sum(axis=1), 1e-9, None
        )  # sentence-transformers' mean pooling
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)  # torch.nn.functional.normalize(p=2, eps=1e-12)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self.embed([query])[0].tolist()

    def _get_text_embedding(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts).tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._get_text_embeddings(texts)
