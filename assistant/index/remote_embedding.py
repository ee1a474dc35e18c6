"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` server (text-embeddings-inference, vLLM, Infinity,
Ollama, OpenAI) as a llama-index ``BaseEmbedding``. When ``ASSISTANT_EMBED_BASE_URL`` is set, ingest, queries
and the sentence embeddings the answer checks use all go through it
(see :func:`assistant.index.embeddings.build_embed_model`).

* Batched: llama-index's ``get_text_embedding_batch`` sends ``embed_batch_size`` texts per request.
* Retried by the ``openai`` client itself (``max_retries``): connection errors, timeouts and HTTP
  408/409/429/5xx, with exponential backoff (0.5 s, 1 s, 2 s ... at most 8 s, with jitter; a ``Retry-After``
  up to 2 min is honoured). Other statuses (400, 401, 404, 413, 422) fail at once: retrying cannot help.
  A retried batch replaces nothing twice: ingest writes windows by id.
* Checked: one vector per input (placed by the response's ``index``), all of one dimension (also across
  batches: a different dimension later means the model behind the URL changed), finite and non-zero; then
  L2-normalised, since not every server normalises and the index stores cosine-ready unit vectors.
* Every failure is an :class:`~assistant.errors.EmbeddingUnavailableError` whose message names the URL, the
  model and what to do; the API key is never logged or shown.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import openai
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import Field, PrivateAttr

from assistant.errors import ConfigError, EmbeddingUnavailableError

if TYPE_CHECKING:
    from assistant.config import Settings

logger = logging.getLogger(__name__)

_RETRYABLE_HINT = (
    "Check that the server is running and serves /v1/embeddings (ASSISTANT_EMBED_BASE_URL), then run the "
    "command again (an interrupted ingest resumes where it stopped); or unset ASSISTANT_EMBED_BASE_URL "
    "to embed with the bundled model (that is another index, built by `assistant ingest`)."
)


def shown_url(url: str) -> str:
    """``url`` without any ``user:password@`` part, for messages and logs."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class RemoteEmbedding(BaseEmbedding):
    """A llama-index embedding model served by an OpenAI-compatible endpoint; vectors come back L2-normalised.

    Args:
        base_url: e.g. ``http://127.0.0.1:8080/v1``; ``/embeddings`` is appended by the client.
        model_name: the model name sent in each request (what the server serves).
        api_key: bearer token (``"not-needed"`` for local servers); kept only inside the HTTP client.
        embed_batch_size: texts per request.
        timeout_s: per-request timeout in seconds (each attempt).
        max_retries: extra attempts after a connection error, timeout, 408/409/429 or 5xx.

    Raises (from every embedding call):
        EmbeddingUnavailableError: see the module docstring.
    """

    base_url: str = Field(description="OpenAI-compatible base URL (…/v1).")
    timeout_s: float = Field(60.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries after connection errors, timeouts, 408/409/429/5xx.")
    _client: Any = PrivateAttr()
    _dimensions: int | None = PrivateAttr(default=None)

    def __init__(
        self,
        *,
        base_url: str,
        model_name: str,
        api_key: str = "not-needed",
        embed_batch_size: int = 64,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            base_url=base_url,
            model_name=model_name,
            embed_batch_size=embed_batch_size,
            timeout_s=timeout_s,
            max_retries=max_retries,
            **kwargs,
        )
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=max_retries)

    @classmethod
    def class_name(cls) -> str:
        return "RemoteEmbedding"

    def to_payload(self) -> dict[str, Any]:
        """What llama-index instrumentation sees: model, URL (no credentials), batch size."""
        return {**super().to_payload(), "base_url": shown_url(self.base_url)}

    @property
    def dimensions(self) -> int | None:
        """Vector size the server returned so far (None before the first call)."""
        return self._dimensions

    # --- llama-index hooks ---------------------------------------------------------------------
    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(list(texts))

    # --- one request --------------------------------------------------------------------------
    def _where(self) -> str:
        return f"The embedding server at {shown_url(self.base_url)} (model {self.model_name!r})"

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """One request for ``texts`` (the caller batches); unit vectors in input order."""
        if not texts:
            return []
        attempts = self.max_retries + 1
        try:
            response = self._client.embeddings.create(model=self.model_name, input=texts, encoding_format="float")
        except openai.APIStatusError as e:
            raise self._status_error(e, attempts) from e
        except openai.APIConnectionError as e:  # refused, reset, DNS, and APITimeoutError
            what = (
                f"did not answer within {self.timeout_s:g} s"
                if isinstance(e, openai.APITimeoutError)
                else f"could not be reached ({_root_cause(e)})"
            )
            raise EmbeddingUnavailableError(
                f"{self._where()} {what} ({attempts} attempt{'s' if attempts != 1 else ''}). {_RETRYABLE_HINT}",
                reason="unreachable",
            ) from e
        except openai.OpenAIError as e:  # a body the client cannot parse
            raise self._invalid(f"sent a response that is not an embeddings response ({type(e).__name__}: {e})") from e
        return self._check(response, len(texts))

    def _status_error(self, e: openai.APIStatusError, attempts: int) -> EmbeddingUnavailableError:
        status = e.status_code
        body = (
            e.body.get("error", e.body) if isinstance(e.body, dict) else e.body
        )  # OpenAI-style {"error": {...}} or flat
        detail = str(body.get("message", body) if isinstance(body, dict) else (body or e.response.text or e.message))[
            :300
        ]
        retried = status in (408, 409, 429) or status >= 500
        if retried:
            hint = _RETRYABLE_HINT
        elif status in (401, 403):
            hint = "Check ASSISTANT_EMBED_API_KEY."
        elif status == 404:
            hint = (
                "Check ASSISTANT_EMBED_MODEL (the name the server serves the model under) and that "
                "ASSISTANT_EMBED_BASE_URL ends in /v1."
            )
        else:  # 400 / 413 / 422: input refused
            hint = (
                "The server refused the request: lower ASSISTANT_EMBED_BATCH_SIZE (text-embeddings-inference "
                "accepts 32 texts per request unless started with a larger --max-client-batch-size) or raise "
                "the server's input length limit."
            )
        tries = f" after {attempts} attempts" if retried and attempts > 1 else ""
        return EmbeddingUnavailableError(
            f"{self._where()} answered HTTP {status}{tries}: {detail}. {hint}", reason="http"
        )

    def _invalid(self, what: str) -> EmbeddingUnavailableError:
        return EmbeddingUnavailableError(
            f"{self._where()} {what}. Nothing from this batch was stored. Check that "
            "ASSISTANT_EMBED_BASE_URL points at an embeddings server and ASSISTANT_EMBED_MODEL names an embedding "
            "model.",
            reason="invalid",
        )

    def _check(self, response: Any, n: int) -> list[list[float]]:
        import numpy as np

        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != n:
            got = len(data) if isinstance(data, list) else "no"
            raise self._invalid(f"returned {got} vectors for {n} texts")
        indices = [getattr(d, "index", i) for i, d in enumerate(data)]
        if sorted(indices) != list(range(n)):
            raise self._invalid(f"returned vectors with indices {indices[:10]} for {n} texts")
        ordered = [None] * n
        for i, d in zip(indices, data):
            ordered[i] = getattr(d, "embedding", None)
        try:
            arr = np.asarray(ordered, dtype=np.float64)
        except (TypeError, ValueError):
            lengths = sorted({len(v) if isinstance(v, list) else -1 for v in ordered})
            raise self._invalid(
                f"returned vectors that are not lists of numbers of one length (lengths {lengths})"
            ) from None
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise self._invalid("returned vectors that are not lists of numbers")
        dim = arr.shape[1]
        if self._dimensions is not None and dim != self._dimensions:
            raise self._invalid(
                f"returned {dim}-dimensional vectors after {self._dimensions}-dimensional ones "
                "(did the model behind the URL change?)"
            )
        if not np.isfinite(arr).all():
            raise self._invalid("returned vectors with NaN or infinite values")
        norms = np.linalg.norm(arr, axis=1)
        if (norms == 0).any():
            raise self._invalid("returned all-zero vectors")
        self._dimensions = dim
        return (arr / norms[:, None]).tolist()


def _root_cause(e: BaseException) -> str:
    """The innermost cause's message (e.g. ``[Errno 111] Connection refused``), else the error's own."""
    while e.__cause__ is not None:
        e = e.__cause__
    return str(e) or type(e).__name__


def build_remote_embedding(settings: Settings) -> RemoteEmbedding:
    """The :class:`RemoteEmbedding` for ``settings.embedding.base_url`` (nothing is sent until the first embedding).

    Raises:
        ConfigError: the URL is not http(s), or ``embed_model`` still names the bundled model (the server
            needs the name it serves).
    """
    url = settings.embedding.base_url or ""
    if not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"ASSISTANT_EMBED_BASE_URL={shown_url(url)!r} is not an http(s) URL; use e.g. http://127.0.0.1:8080/v1."
        )
    if settings.embedding.model.startswith("bundled:"):
        raise ConfigError(
            f"ASSISTANT_EMBED_BASE_URL is set, so ASSISTANT_EMBED_MODEL must be the model name that server serves "
            f"(e.g. BAAI/bge-small-en-v1.5), not {settings.embedding.model!r}. "
            "Unset ASSISTANT_EMBED_BASE_URL to use the bundled model."
        )
    logger.info(
        "embeddings from %s (model %s, %d texts per request)",
        shown_url(url),
        settings.embedding.model,
        settings.embedding.batch_size,
    )
    return RemoteEmbedding(
        base_url=url,
        model_name=settings.embedding.model,
        api_key=settings.embedding.api_key.get_secret_value(),
        embed_batch_size=settings.embedding.batch_size,
        timeout_s=settings.embedding.timeout_s,
        max_retries=settings.embedding.max_retries,
    )
