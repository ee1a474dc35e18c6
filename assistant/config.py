"""Typed settings: one object read from ``ASSISTANT_*`` environment variables (and CLI flags), in groups
(assistant/setting_groups.py).

Built only by entry points (``assistant.cli.main``) and by tests; importing this module reads nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from assistant.setting_groups import (
    FLAT,
    GROUPS,
    PROJECT_ROOT,
    TOP_LEVEL,
    AnswerSettings,
    APISettings,
    ConversationSettings,
    EmbeddingSettings,
    LLMSettings,
    RetrievalSettings,
    StorageSettings,
    VerifySettings,
    flat_names,
)

__all__ = [
    "FLAT",
    "FOREIGN_PREFIXES",
    "GROUPS",
    "OTHER_VARIABLES",
    "PROJECT_ROOT",
    "TOP_LEVEL",
    "APISettings",
    "AnswerSettings",
    "ConversationSettings",
    "EmbeddingSettings",
    "LLMSettings",
    "RetrievalSettings",
    "Settings",
    "StorageSettings",
    "VerifySettings",
    "build_settings",
    "env_fields",
    "env_names",
    "flat_names",
    "load_settings",
    "unknown_variables",
]

S = TypeVar("S", bound=BaseSettings)


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
    conversation: ConversationSettings = Field(
        default_factory=ConversationSettings, description=ConversationSettings.__doc__
    )
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
