"""Chat completions through the ``openai`` client against any OpenAI-compatible endpoint.

Every failure of a request *or of its stream* (connection refused or reset, an incomplete chunked read,
a malformed event, a stalled or over-long stream, an HTTP error, any other httpx/openai exception) is
raised as :class:`~assistant.errors.LLMUnavailableError` with a ``reason``, so no library exception type
reaches a user: the answerer turns it into the cited extractive answer with a notice.

The model requests made for one piece of work (an answer over the API) can be watched as a whole with
:class:`ModelCalls`: their token usage added up, and :meth:`ModelCalls.cancel` to cut them off when the
client that asked has gone.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from assistant.errors import LLMUnavailableError

logger = logging.getLogger(__name__)

Message = dict[str, str]
#: Alternatives asked for with each one-token answer (a yes/no, a sentence label; OpenAI allows at most 20).
OPTION_TOP_LOGPROBS = 20
_URL_HINT = "Check ASSISTANT_LLM_BASE_URL, or unset it to use the bundled model."


#: Characters per token of the estimate used when a model server reports no usage (English text, BPE tokenizers).
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: its length over :data:`CHARS_PER_TOKEN`, at least 1 unless empty.

    >>> estimate_tokens("What is A-Bench?"), estimate_tokens("")
    (4, 0)
    """
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a model read (``prompt_tokens``) and wrote (``completion_tokens``), as OpenAI's ``usage`` counts them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)

    def as_dict(self) -> dict[str, int]:
        """``{"prompt_tokens", "completion_tokens", "total_tokens"}``."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


_CALLS: contextvars.ContextVar[ModelCalls | None] = contextvars.ContextVar("model_calls", default=None)


class ModelCalls:
    """The model requests made for one piece of work, whichever threads make them: their :attr:`usage` added up,
    and :meth:`cancel` to cut them off (the client that asked has gone).

    :class:`OpenAIChatBackend` finds it through a context variable: requests made by code running inside
    ``with calls.active():`` count (threads started from there count when they run in a copy of that context,
    ``contextvars.copy_context().run``). Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = Usage()
        self._cancelled = False
        self._open: dict[int, Callable[[], None]] = {}
        self._next_key = 0

    @property
    def usage(self) -> Usage:
        """The tokens of the requests made so far (each as its server reported, else estimated: see
        :meth:`OpenAIChatBackend.stream`)."""
        with self._lock:
            return self._usage

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancelled

    @contextlib.contextmanager
    def active(self) -> Iterator[ModelCalls]:
        """Model requests made in this block (in this thread and context) are this object's."""
        token = _CALLS.set(self)
        try:
            yield self
        finally:
            _CALLS.reset(token)

    def add(self, usage: Usage) -> None:
        """Count one request's tokens."""
        with self._lock:
            self._usage += usage

    def cancel(self) -> None:
        """Cut off the requests in flight (each one's connection is shut down, so a read blocked on it ends at
        once and the model server sees its client leave) and refuse new ones. Idempotent."""
        with self._lock:
            self._cancelled = True
            closers = list(self._open.values())
            self._open.clear()
        for close in closers:
            close()

    def track(self, close: Callable[[], None]) -> Callable[[], None]:
        """Call ``close`` (which cuts one request's connection) on :meth:`cancel` until the returned function is
        called; at once when already cancelled."""
        with self._lock:
            if not self._cancelled:
                key, self._next_key = self._next_key, self._next_key + 1
                self._open[key] = close

                def done() -> None:
                    with self._lock:
                        self._open.pop(key, None)

                return done
        close()
        return _nothing


def _nothing() -> None:
    pass


def current_calls() -> ModelCalls | None:
    """The :class:`ModelCalls` of the code running now (see :meth:`ModelCalls.active`), if any."""
    return _CALLS.get()


def _cut(stream: Any) -> None:
    """Shut the connection of an open streamed response, from any thread: shutting the socket (closing it
    would not) wakes a read blocked on it, and the server sees the client leave. ``stream``: ``openai.Stream``."""
    import socket

    try:
        extensions = getattr(getattr(stream, "response", None), "extensions", None) or {}
        network = extensions.get("network_stream")
        sock = network.get_extra_info("socket") if network is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        else:
            stream.close()
    except Exception:  # noqa: BLE001 - already closed or broken: nothing left to cut
        pass


def _cancelled_error() -> LLMUnavailableError:
    return LLMUnavailableError("The model request was cancelled: the client that asked has gone.", reason="cancelled")


def connection_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "the model connection failed", not "our code failed".

    :class:`~assistant.errors.LLMUnavailableError` (what every backend here raises), and the ``openai``
    client's and ``httpx``'s own errors, which a third-party :class:`ChatBackend` may let through. The
    answerer turns exactly these into the model-failed notice; anything else is an internal error and
    propagates (issue 26.1). Imports ``openai`` (~0.8 s, once).
    """
    import openai

    return (LLMUnavailableError, openai.OpenAIError, httpx.HTTPError)


def option_shares(top: Sequence[tuple[str, float]], options: Sequence[str]) -> dict[str, float]:
    """Each option's share of the probability mass on ``options`` at one position, from its ``(token,
    log-probability)`` alternatives; a token counts for an option whatever its case and surrounding spaces. All 0.0
    when no option is among them.

    >>> {k: round(v, 3) for k, v in option_shares([("B", -0.1), (" a", -2.4), ("x", -1.0)], "ABC").items()}
    {'A': 0.091, 'B': 0.909, 'C': 0.0}
    """
    import math

    mass = {o: 0.0 for o in options}
    keys = {o.strip().lower(): o for o in options}
    for token, lp in top:
        o = keys.get(token.strip().lower())
        if o is not None:
            mass[o] += math.exp(lp)
    total = sum(mass.values())
    return {o: (m / total if total > 0 else 0.0) for o, m in mass.items()}


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
        # ask streams for their usage (OpenAI's stream_options) until the server refuses the option
        self._stream_usage = True

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
        """``P(yes)`` of the reply to ``messages`` (a yes/no question last): :meth:`option_probabilities` over
        "yes" and "no" (the next token's probability mass on
        "yes" over "yes" + "no" (any case and spacing), from the server's ``top_logprobs``
        (:data:`OPTION_TOP_LOGPROBS`). One token is generated, at temperature 0; a server that keeps the last
        prompt's state (llama.cpp) reads only what follows the longest prefix it already holds.

        A server that returns no log-probabilities is read by its one-token reply: 1.0 for yes, 0.0 otherwise.

        Its tokens count in the current :class:`ModelCalls` (the server's ``usage``, else estimated).

        Raises:
            LLMUnavailableError: as :meth:`stream` (``reason`` ``"timeout"``, ``"unreachable"``, ``"http"``, ...,
                ``"cancelled"``).
        """
        return self.option_probabilities(messages, ("yes", "no"))["yes"]

    def option_probabilities(self, messages: Sequence[Message], options: Sequence[str]) -> dict[str, float]:
        """The first reply token's probability mass on each of ``options`` (one-token answers, any case and
        spacing), normalised over ``options``, from the server's ``top_logprobs`` (:data:`OPTION_TOP_LOGPROBS`); one
        token is generated at temperature 0. A server that returns no log-probabilities is read by its one-token
        reply: 1.0 for the option it wrote. All 0.0 when the reply is none of them.

        The one token is asked for as a stream: llama-cpp-python computes a non-streamed reply's log-probabilities
        over every prompt token too (a log-softmax of 151,936 logits a token: about 1 s of a 2.1 s check on 2
        cores, measured in docs/results/issue59), a streamed one's over the generated token only.

        Its tokens count in the current :class:`ModelCalls` (the server's ``usage``, else estimated).

        Raises:
            LLMUnavailableError: as :meth:`stream` (``reason`` ``"timeout"``, ``"unreachable"``, ``"http"``, ...,
                ``"cancelled"``).
        """
        calls = current_calls()
        if calls is not None and calls.cancelled:
            raise _cancelled_error()
        response = None
        top: list[tuple[str, float]] = []
        written = ""
        chose = False
        reported: Usage | None = None
        try:
            response = self._open_stream(messages, 1, temperature=0.0, logprobs=True, top_logprobs=OPTION_TOP_LOGPROBS)
            for chunk in response:
                reported = _reported(getattr(chunk, "usage", None)) or reported
                if not chunk.choices:
                    continue
                chose = True
                choice = chunk.choices[0]
                written += choice.delta.content or ""
                content = choice.logprobs.content if choice.logprobs is not None else None
                if content and not top:
                    top = [(t.token, t.logprob) for t in content[0].top_logprobs] or [(content[0].token, 0.0)]
        except Exception as e:  # noqa: BLE001 - mapped as in stream()
            if calls is not None and calls.cancelled:
                raise _cancelled_error() from e
            raise self._unavailable(e, bool(written)) from e
        finally:
            _close(response)
            if calls is not None:
                calls.add(reported or Usage(_prompt_estimate(messages), 1))
        if not chose:
            raise LLMUnavailableError(f"The LLM at {self.base_url} returned no choice.", reason="stream")
        if top:
            return option_shares(top, options)
        return option_shares([(written.strip(), 0.0)], options)

    def _open_stream(self, messages: Sequence[Message], max_tokens: int | None, **options: Any) -> Any:
        """The streamed completion (``openai.Stream``), asking for its usage while the server accepts the option;
        ``options`` (``temperature``, ``logprobs`` ...) override or add request fields."""
        import openai

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self._temperature,
            "max_tokens": min(max_tokens or self._max_tokens, self._max_tokens),
            "stream": True,
            **options,
        }
        if self._stream_usage:
            try:
                return self._client.chat.completions.create(**kwargs, stream_options={"include_usage": True})
            except (openai.BadRequestError, openai.UnprocessableEntityError) as e:
                if "stream_options" not in str(e):
                    raise
                self._stream_usage = False
                logger.info("the LLM at %s refuses stream_options: its streams' tokens are estimated", self.base_url)
        return self._client.chat.completions.create(**kwargs)

    def stream(self, messages: Sequence[Message], max_tokens: int | None = None) -> Iterator[str]:
        """Stream the completion; yields non-empty text deltas exactly as the server sent them.

        ``max_tokens`` caps this request below the backend's ``max_output_tokens`` (None: that value).

        Under a :class:`ModelCalls` (:func:`current_calls`), the stream's tokens count there: the usage the
        server reports (asked for with ``stream_options.include_usage``; OpenAI, vLLM, llama.cpp's server and
        Ollama report it), else an estimate: the messages' characters over :data:`CHARS_PER_TOKEN`, and one token
        per text event (what llama-cpp-python sends). :meth:`ModelCalls.cancel` shuts the connection at once.

        Raises:
            LLMUnavailableError: ``reason`` is ``"timeout"`` (no data for ``timeout_s``, or the stream
                lasted longer than that), ``"connection"`` (unreachable, reset, cut mid-stream),
                ``"unreachable"`` (no connection at all), ``"http"`` (an error status), ``"cancelled"``
                (:meth:`ModelCalls.cancel`) or ``"stream"`` (malformed events, anything else).
        """
        calls = current_calls()
        if calls is not None and calls.cancelled:
            raise _cancelled_error()
        deadline = time.monotonic() + self._timeout_s
        response = None
        untrack: Callable[[], None] = _nothing
        started = False
        events = 0
        reported: Usage | None = None
        try:
            response = self._open_stream(messages, max_tokens)
            if calls is not None:
                untrack = calls.track(lambda: _cut(response))
            for chunk in response:
                if time.monotonic() > deadline:
                    raise self._timed_out()
                reported = _reported(getattr(chunk, "usage", None)) or reported
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta.content
                if delta:
                    started = True
                    events += 1
                    yield delta
        except LLMUnavailableError:
            raise
        except GeneratorExit:
            raise
        except Exception as e:  # noqa: BLE001 - mapped: every client or stream failure is LLMUnavailableError
            if calls is not None and calls.cancelled:
                raise _cancelled_error() from e
            raise self._unavailable(e, started) from e
        finally:
            untrack()
            if response is not None:
                _close(response)
                if calls is not None:
                    calls.add(reported or Usage(_prompt_estimate(messages), events))


def _close(response: Any) -> None:
    """Close a streamed response (None: nothing opened); closing a broken connection may fail again, ignored."""
    if response is None:
        return
    try:
        response.close()
    except Exception:  # noqa: BLE001 - closing a broken connection may fail again
        pass


def _reported(usage: Any) -> Usage | None:
    """A server's ``usage`` object as :class:`Usage` (None when it sent none)."""
    if usage is None:
        return None
    return Usage(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))


def _prompt_estimate(messages: Sequence[Message]) -> int:
    return sum(estimate_tokens(str(m.get("content") or "")) for m in messages)
