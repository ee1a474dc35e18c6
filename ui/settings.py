"""The UI's own settings: where it listens and whether it asks for a login, read from ``ASSISTANT_UI_*``.

Built only by the UI's entry point (``ui.cli.main``) and by tests; importing this module reads nothing.
The core :class:`assistant.config.Settings` knows nothing of them.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from assistant.config import build_settings


class UISettings(BaseSettings):
    """Where the chat UI listens. Every field ``foo`` is read from ``ASSISTANT_UI_FOO``."""

    model_config = SettingsConfigDict(env_prefix="ASSISTANT_UI_", extra="forbid", validate_default=True)

    host: str = Field("127.0.0.1", description="Interface the UI binds to (loopback by default).")
    port: int = Field(7860, ge=1, le=65535, description="Port of the UI.")
    auth: SecretStr | None = Field(
        None,
        description=(
            "Require a login for the UI, as `user:password` (never logged). Set it whenever the host is not loopback."
        ),
    )

    @field_validator("auth")
    @classmethod
    def _auth_has_user_and_password(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            user, sep, password = v.get_secret_value().partition(":")
            if not (user and sep and password):
                raise ValueError("must be `user:password`")
        return v

    def login(self) -> tuple[str, str] | None:
        """``(user, password)`` for Gradio's ``auth``, or None when no login is required."""
        if self.auth is None:
            return None
        user, _, password = self.auth.get_secret_value().partition(":")
        return user, password


def load_ui_settings(**overrides: object) -> UISettings:
    """Build :class:`UISettings` from the environment with ``overrides`` (CLI flags; None = not given) on top.

    Raises:
        assistant.errors.ConfigError: a value is invalid; the message names the field and env var.
    """
    return build_settings(UISettings, overrides)
