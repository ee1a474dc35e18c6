"""Chat completions through the ``openai`` client against any OpenAI-compatible endpoint."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Protocol

import openai

from assistant.errors import LLMUnavailableError

logger = logging.getLogger(__name__)

Message = dict[str, str]


class ChatBackend(Protocol):
    """Streams the reply to a list of ``{"role", "content"}`` messages as text deltas."""

    model: str

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        """Yield text pieces of the reply. Raises LLMUnavailableError."""
        ...


class OpenAIChatBackend:
    """``openai.OpenAI`` pointed at ``base_url``; maps client errors to :class:`LLMUnavailableError`.

    Args:
        base_url: e.g. ``http://127.0.0.1:8081/v1`` (llama.cpp server, vLLM, Ollama, OpenAI).
        api_key: sent as bearer token (``"not-needed"`` for local servers).
        model: model name sent in each request.
        temperature, max_output_tokens, timeout_s: per request; timeout in seconds.
    """

    def __init__(self, base_url: str, api_key: str, model: str, *, temperature: float = 0.0,
                 max_output_tokens: int = 160, timeout_s: float = 60.0) -> None:
        self.base_url = base_url
        self.model = model
        self._temperature = temperature
        self._max_tokens = max_output_tokens
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=1)

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        """Stream the completion; yields non-empty text deltas.

        Raises:
            LLMUnavailableError: connection failure, timeout, HTTP error, or a malformed stream.
        """
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=self._temperature,
                max_tokens=self._max_tokens,
                stream=True,
            )
            for chunk in response:
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta.content
                if delta:
                    yield delta
        except openai.APITimeoutError as e:
            raise LLMUnavailableError(f"The LLM at {self.base_url} (model {self.model!r}) timed out.") from e
        except openai.APIConnectionError as e:
            raise LLMUnavailableError(
                f"Cannot reach the LLM at {self.base_url} (model {self.model!r}): {e}. "
                "Check ASSISTANT_LLM_BASE_URL, or unset it to use the bundled model."
            ) from e
        except openai.APIStatusError as e:
            raise LLMUnavailableError(
                f"The LLM at {self.base_url} answered HTTP {e.status_code} for model {self.model!r}: {e.message}"
            ) from e
        except openai.OpenAIError as e:
            raise LLMUnavailableError(f"The LLM at {self.base_url} failed: {e}") from e
