"""Chat completions through the ``openai`` client against any OpenAI-compatible endpoint.

Every failure of a request *or of its stream* (connection refused or reset, an incomplete chunked read,
a malformed event, a stalled or over-long stream, an HTTP error, any other httpx/openai exception) is
raised as :class:`~assistant.errors.LLMUnavailableError` with a ``reason``, so no library exception type
reaches a user: the answerer turns it into the cited extractive answer with a notice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from typing import Protocol

import httpx

from assistant.errors import LLMUnavailableError

logger = logging.getLogger(__name__)

Message = dict[str, str]
#: Alternatives asked for with each yes/no token (OpenAI allows at most 20).
YES_NO_TOP_LOGPROBS = 10
_URL_HINT = "Check ASSISTANT_LLM_BASE_URL, or unset it to use the bundled model."


def connection_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "the model connection failed", not "our code failed".

    :class:`~assistant.errors.LLMUnavailableError` (what every backend here raises), and the ``openai``
    client's and ``httpx``'s own errors, which a third-party :class:`ChatBackend` may let through. The
    answerer turns exactly these into the model-failed notice; anything else is an internal error and
    propagates (issue 26.1). Imports ``openai`` (~0.8 s, once).
    """
    import openai

    return (LLMUnavailableError, openai.OpenAIError, httpx.HTTPError)


def yes_share(top: Sequence[tuple[str, float]]) -> float:
    """``P(yes) / (P(yes) + P(no))`` from one position's ``(token, log-probability)`` alternatives; a token
    counts as yes or no whatever its case and surrounding spaces. 0.0 when neither is among them.

    >>> round(yes_share([("Yes", -0.1), (" no", -2.4), ("Maybe", -3.0)]), 3)
    0.909
    """
    import math

    yes = sum(math.exp(lp) for t, lp in top if t.strip().lower() == "yes")
    no = sum(math.exp(lp) for t, lp in top if t.strip().lower() == "no")
    return yes / (yes + no) if yes + no > 0 else 0.0


class ChatBackend(Protocol):
    """Streams the reply to a list of ``{"role", "content"}`` messages as text deltas."""

    model: str

    def stream(self, messages: Sequence[Message], max_tokens: int | None = None) -> Iterator[str]:
        """Yield text pieces of the reply (at most ``max_tokens`` tokens when given). Raises LLMUnavailableError."""
        ...

    def yes_probability(self, messages: Sequence[Message]) -> float:
        """``P(yes)`` in [0, 1] of the reply to ``messages``, whose last turn asks a yes/no question (the
        self-check of :mod:`assistant.verify.self_check`). Raises LLMUnavailableError."""
        ...


class OpenAIChatBackend:
    """``openai.OpenAI`` pointed at ``base_url``; maps every client or stream error to :class:`LLMUnavailableError`.

    Args:
        base_url: e.g. ``http://127.0.0.1:8081/v1`` (llama.cpp server, vLLM, Ollama, OpenAI).
        api_key: sent as bearer token (``"not-needed"`` for local servers).
        model: model name sent in each request.
        temperature, max_output_tokens: per request.
        timeout_s: seconds; bounds both each network read (a silent server) and the whole stream
            (a server that trickles forever), so an answer never waits much longer than this.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        *,
        temperature: float = 0.0,
        max_output_tokens: int = 160,
        timeout_s: float = 60.0,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self._temperature = temperature
        self._max_tokens = max_output_tokens
        self._timeout_s = timeout_s
        self._api_key = api_key
        self._openai: object | None = None  # the client, made at the first request (importing openai takes ~0.8 s)

    @property
    def _client(self):
        import openai

        if self._openai is None:
            # max_retries=0: a retry after a timeout would double the wait; the answerer falls back instead.
            self._openai = openai.OpenAI(
                base_url=self.base_url, api_key=self._api_key, timeout=self._timeout_s, max_retries=0
            )
        return self._openai

    def _timed_out(self, cause: BaseException | None = None) -> LLMUnavailableError:
        err = LLMUnavailableError(
            f"The LLM at {self.base_url} (model {self.model!r}) timed out after {self._timeout_s:g} s.",
            reason="timeout",
        )
        err.__cause__ = cause
        return err

    def _unavailable(self, e: BaseException, started: bool) -> LLMUnavailableError:
        """``e`` (a client, transport or decoding failure) as the :class:`LLMUnavailableError` a user reads;
        ``started``: text had already arrived (a cut stream, not an unreachable server)."""
        import openai

        if isinstance(e, openai.APITimeoutError | httpx.TimeoutException):
            return self._timed_out(e)
        if isinstance(e, openai.APIStatusError):
            return LLMUnavailableError(
                f"The LLM at {self.base_url} answered HTTP {e.status_code} for model {self.model!r}: {e.message}",
                reason="http",
            )
        if isinstance(e, openai.APIConnectionError | httpx.TransportError):
            # includes RemoteProtocolError ("incomplete chunked read") when the server dies mid-answer
            if not started and isinstance(e, openai.APIConnectionError | httpx.ConnectError):
                return LLMUnavailableError(
                    f"Cannot reach the LLM at {self.base_url} (model {self.model!r}).",
                    reason="unreachable",
                    hint=_URL_HINT,
                )
            return LLMUnavailableError(
                f"Lost the connection to the LLM at {self.base_url} (model {self.model!r}): {type(e).__name__}: {e}.",
                reason="connection",
                hint=_URL_HINT,
            )
        return LLMUnavailableError(
            f"The LLM at {self.base_url} sent a reply that could not be read: {type(e).__name__}: {e}",
            reason="stream",
        )

    def yes_probability(self, messages: Sequence[Message]) -> float:
        """``P(yes)`` of the reply to ``messages`` (a yes/no question last): the next token's probability mass on
        "yes" over "yes" + "no" (any case and spacing), from the server's ``top_logprobs``
        (:data:`YES_NO_TOP_LOGPROBS`). One token is generated, at temperature 0; a server that keeps the last
        prompt's state (llama.cpp) reads only what follows the longest prefix it already holds.

        A server that returns no log-probabilities is read by its one-token reply: 1.0 for yes, 0.0 otherwise.

        Raises:
            LLMUnavailableError: as :meth:`stream` (``reason`` ``"timeout"``, ``"unreachable"``, ``"http"``, ...).
        """
        try:
            reply = self._client.chat.completions.create(
                model=self.model,
                messages=list(messages),
                temperature=0.0,
                max_tokens=1,
                logprobs=True,
                top_logprobs=YES_NO_TOP_LOGPROBS,
            )
        except Exception as e:  # noqa: BLE001 - mapped as in stream()
            raise self._unavailable(e, False) from e
        if not reply.choices:
            raise LLMUnavailableError(f"The LLM at {self.base_url} returned no choice.", reason="stream")
        choice = reply.choices[0]
        content = choice.logprobs.content if choice.logprobs is not None else None
        if content:
            return yes_share([(t.token, t.logprob) for t in content[0].top_logprobs] or [(content[0].token, 0.0)])
        return 1.0 if (choice.message.content or "").strip().lower().startswith("yes") else 0.0

    def stream(self, messages: Sequence[Message], max_tokens: int | None = None) -> Iterator[str]:
        """Stream the completion; yields non-empty text deltas exactly as the server sent them.

        ``max_tokens`` caps this request below the backend's ``max_output_tokens`` (None: that value).

        Raises:
            LLMUnavailableError: ``reason`` is ``"timeout"`` (no data for ``timeout_s``, or the stream
                lasted longer than that), ``"connection"`` (unreachable, reset, cut mid-stream),
                ``"unreachable"`` (no connection at all), ``"http"`` (an error status) or ``"stream"``
                (malformed events, anything else).
        """
        deadline = time.monotonic() + self._timeout_s
        response = None
        started = False
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=list(messages),
                temperature=self._temperature,
                max_tokens=min(max_tokens or self._max_tokens, self._max_tokens),
                stream=True,
            )
            for chunk in response:
                if time.monotonic() > deadline:
                    raise self._timed_out()
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta.content
                if delta:
                    started = True
                    yield delta
        except LLMUnavailableError:
            raise
        except GeneratorExit:
            raise
        except Exception as e:  # noqa: BLE001 - mapped: every client or stream failure is LLMUnavailableError
            raise self._unavailable(e, started) from e
        finally:
            if response is not None:
                try:
                    response.close()
                except Exception:  # noqa: BLE001 - closing a broken connection may fail again
                    pass
