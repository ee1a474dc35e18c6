"""An OpenAI-compatible chat API over the assistant: ``GET /v1/models`` and ``POST /v1/chat/completions``
(streamed as server-sent events or not), for chat clients that speak the OpenAI API (Open WebUI, LibreChat,
the ``openai`` SDK, ``llm``).

* The conversation is the request's ``messages``: earlier user/assistant turns rebuild a
  :class:`~assistant.conversation.session.ChatSession` per request (``chat.rebuild_session``), so "it" and "the second
  one" resolve as in the chat and ``[n]`` stays stable, with no chat state on the server.
* The reply's ``content`` is the answer with its ``[n]`` markers and a references block; ``annotations``
  holds one ``url_citation`` per marker (the paper's link and title, the marker's character offsets); the
  full answer JSON (docs/answer.schema.json) is in the message's extra field ``answer``. A stream sends the
  model's sentences as soon as each is verified (its concatenation equals the non-streamed text), then a last
  chunk with ``annotations``, ``answer`` and ``finish_reason``.
* ``usage`` counts the tokens of the model requests made for the answer (:class:`~assistant.llm.client.ModelCalls`:
  what the model server reports, else an estimate; 0 for an answer made without the model); a stream asked
  with ``stream_options: {"include_usage": true}`` ends with a chunk holding it and ``choices: []``.
* Every error under ``/v1`` has OpenAI's shape ``{"error": {"message", "type", "param", "code"}}`` with the
  matching HTTP status (400 for a request field of the wrong type or out of range, naming it in ``param``; 404
  and 405 for a path or method no route serves); an error after a stream started is sent as one
  ``data: {"error": …}`` event.
* A client that hangs up cancels its answer: the model request in flight is cut off at once (its server sees
  the connection close), for streamed and non-streamed requests alike.
* With an API key configured, every request needs ``Authorization: Bearer <key>`` (401 otherwise).
"""

from __future__ import annotations

import functools
import hmac
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from assistant.api.chat import PriorTurn, cited_in, rebuild_session, render_answer
from assistant.errors import AssistantError, StoreNotReadyError
from assistant.llm.client import ModelCalls
from assistant.types import Intent

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import BaseRoute
    from starlette.types import Receive, Scope, Send

    from assistant.answer.answerer import AnswerEvent
    from assistant.service import Assistant
    from assistant.types import Answer

#: Characters per streamed text chunk (the client's display granularity, not a latency knob).
STREAM_PIECE_CHARS = 80

logger = logging.getLogger(__name__)

#: The model name this API serves (what ``GET /v1/models`` lists and requests must name).
MODEL_ID = "paper-assistant"
#: Answers computed at the same time; more requests wait their turn (the bundled model serves one at a time).
DEFAULT_CONCURRENCY = 4
#: Seconds between looks at whether a request waiting for a concurrency slot was given up by its client.
SLOT_POLL_S = 0.2
#: Every HTTP method: what the catch-all ``/v1`` route answers (404, or 405 on a path served for other methods).
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")
#: Pydantic's names of the members of a union in an error location (``stop.str``): not request fields.
_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict", "none", "is-instance"}


class APIError(Exception):
    """An error to answer with OpenAI's error shape.

    Args:
        status: HTTP status; message: what went wrong and what to do; type: ``invalid_request_error``,
            ``authentication_error``, ``not_found_error`` or ``server_error``; code: a short machine code;
            param: the request field at fault, if any; headers: extra response headers (``Allow`` of a 405).
    """

    def __init__(
        self,
        status: int,
        message: str,
        type: str,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type, code, param
        self.headers = dict(headers or {})

    def response_headers(self) -> dict[str, str]:
        """The error's headers: ``WWW-Authenticate`` on a 401; ``x-should-retry: false`` on a 500 (the
        ``openai`` SDK would otherwise ask twice more, each time doing the whole answer again)."""
        headers = dict(self.headers)
        if self.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if self.status == 500:
            headers["x-should-retry"] = "false"
        return headers

    def body(self) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class MessageIn(BaseModel):
    """One message of a request; fields the API does not use are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None
    annotations: list[dict[str, Any]] | None = None
    answer: dict[str, Any] | None = None


class StreamOptions(BaseModel):
    """``stream_options``: ``include_usage`` asks for a last chunk with the ``usage`` (and ``choices: []``)."""

    model_config = ConfigDict(extra="allow")

    include_usage: StrictBool | None = None


class ChatRequest(BaseModel):
    """The body of ``POST /v1/chat/completions``: OpenAI's fields, checked for type and range as OpenAI does
    (``"max_tokens": "lots"`` or ``"temperature": 7`` is a 400 naming the field). Sampling and length options
    are then ignored: answers are verified against the abstracts, not sampled. Other fields (``tools``,
    ``response_format``, ...) are accepted and ignored. ``intent`` (extra): force
    lookup|summary|compare|topic|choice|metadata."""

    model_config = ConfigDict(extra="allow")

    model: StrictStr
    messages: list[MessageIn] = Field(min_length=1)
    stream: StrictBool | None = False
    stream_options: StreamOptions | None = None
    n: StrictInt | None = Field(1, ge=1, le=128)
    max_tokens: StrictInt | None = Field(None, ge=1)
    max_completion_tokens: StrictInt | None = Field(None, ge=1)
    temperature: StrictFloat | None = Field(None, ge=0, le=2)
    top_p: StrictFloat | None = Field(None, ge=0, le=1)
    presence_penalty: StrictFloat | None = Field(None, ge=-2, le=2)
    frequency_penalty: StrictFloat | None = Field(None, ge=-2, le=2)
    stop: StrictStr | list[StrictStr] | None = Field(None, max_length=4)
    seed: StrictInt | None = None
    logprobs: StrictBool | None = None
    top_logprobs: StrictInt | None = Field(None, ge=0, le=20)
    user: StrictStr | None = None
    intent: Intent | None = None

    @property
    def include_usage(self) -> bool:
        """True when the stream should end with a ``usage`` chunk."""
        return bool(self.stream_options and self.stream_options.include_usage)


def error_param(loc: Sequence[int | str]) -> str:
    """A pydantic error location as the request field OpenAI's ``param`` names: ``messages[0].content``
    (union members' type names dropped: ``("stop", "str")`` is ``stop``).

    >>> error_param(("messages", 0, "content", "str")), error_param(("stop", "list[str]", 1))
    ('messages[0].content', 'stop[1]')
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier() and part not in _TYPE_TAGS:
            out += f".{part}" if out else part
    return out


def _invalid(error: ValidationError) -> APIError:
    """The 400 of a body that does not fit :class:`ChatRequest`: the first field at fault, what it should be
    (every alternative of a union), and the value sent."""
    errors = error.errors(include_url=False)
    field = errors[0]["loc"][:1]
    # the deepest place the first field failed at (["a", 3] for a list of strings: stop[1], not stop)
    param = max((error_param(e["loc"]) for e in errors if e["loc"][:1] == field), key=len)
    at = [e for e in errors if error_param(e["loc"]) == param]
    reasons = list(dict.fromkeys(e["msg"] for e in at))
    sent = f" (got {json.dumps(at[0].get('input'))[:80]})" if at[0]["type"] != "missing" else ""
    return APIError(
        400, f"{param}: {', or '.join(reasons)}{sent}.", "invalid_request_error", "invalid_value", param or None
    )


def bearer_ok(authorization: str | None, key: str | None) -> bool:
    """True when no key is required, or ``authorization`` is ``Bearer <key>`` (constant-time comparison)."""
    if not key:
        return True
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), key.encode())


def unauthorized() -> APIError:
    """The 401 error of a request without the right bearer key."""
    return APIError(
        401,
        "Missing or wrong API key: send `Authorization: Bearer <key>` with the key set in ASSISTANT_API_KEY "
        "(or ASSISTANT_UI_AUTH's `user:password` when no API key is set).",
        "invalid_request_error",
        "invalid_api_key",
    )


def message_text(message: MessageIn, index: int) -> str:
    """The text of a message: its string content, or its ``text`` parts joined.

    Raises:
        APIError: a part that is not text (400).
    """
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    texts = []
    for j, part in enumerate(message.content):
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "text":
            where = f"messages[{index}].content[{j}].text"
            raise APIError(400, f"{where}: should be a string.", "invalid_request_error", "invalid_value", where)
        else:
            raise APIError(
                400,
                f"messages[{index}]: only text content is supported (got a {part.get('type')!r} part).",
                "invalid_request_error",
                "unsupported_content",
                f"messages[{index}].content",
            )
    return "\n".join(texts)


def split_conversation(messages: list[MessageIn]) -> tuple[list[PriorTurn], str]:
    """The earlier turns (each user message with the papers the assistant message after it cited) and the
    question (the last message, which must be the user's). System, developer and tool messages are ignored:
    answers follow the assistant's own rules.

    Raises:
        APIError: the last message is not a user message (400).
    """
    last = len(messages) - 1
    if messages[last].role != "user":
        raise APIError(
            400,
            f"The last message must be the user's question (it is {messages[last].role!r}).",
            "invalid_request_error",
            "invalid_value",
            f"messages[{last}].role",
        )
    turns: list[PriorTurn] = []
    question: str | None = None
    for i, m in enumerate(messages[:last]):
        if m.role == "user":
            if question is not None:
                turns.append(PriorTurn(question, {}))
            question = message_text(m, i)
        elif m.role == "assistant" and question is not None:
            turns.append(PriorTurn(question, cited_in(message_text(m, i), m.annotations or (), m.answer)))
            question = None
    if question is not None:
        turns.append(PriorTurn(question, {}))
    return turns, message_text(messages[last], last)


def _chunk(cid: str, created: int, delta: dict[str, Any], finish: str | None = None, *, usage: bool = False) -> str:
    """One ``chat.completion.chunk`` event; with ``usage`` (the request asked for it), ``"usage": null`` as OpenAI
    sends in every chunk before the last."""
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
    if usage:
        body["usage"] = None
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def _usage_chunk(cid: str, created: int, calls: ModelCalls) -> str:
    """The last chunk of a stream asked with ``include_usage``: ``choices: []`` and the ``usage``."""
    body = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL_ID,
        "choices": [],
        "usage": calls.usage.as_dict(),
    }
    return f"data: {json.dumps(body)}\n\n"


def _event_stream(content: AsyncIterator[str], on_disconnect: Callable[[], None]) -> StreamingResponse:
    """A ``text/event-stream`` response of ``content`` that calls ``on_disconnect`` as soon as the client hangs
    up (Starlette watches for that while it streams under ASGI spec < 2.4, uvicorn's HTTP; under later versions
    it only notices at the next send, where :meth:`ChatCompletionsAPI._sse` cancels instead)."""
    return _event_stream_class()(
        content,
        on_disconnect,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@functools.cache
def _event_stream_class() -> Callable[..., StreamingResponse]:
    """The response class of :func:`_event_stream`, made at first use (Starlette is imported only when the API
    runs)."""
    from starlette.responses import StreamingResponse

    class EventStream(StreamingResponse):
        def __init__(self, content: AsyncIterator[str], on_disconnect: Callable[[], None], **kwargs: Any) -> None:
            super().__init__(content, **kwargs)
            self.on_disconnect = on_disconnect

        async def listen_for_disconnect(self, receive: Receive) -> None:
            await super().listen_for_disconnect(receive)
            self.on_disconnect()

    return EventStream


async def _cancel_on_disconnect(receive: Receive, calls: ModelCalls) -> None:
    """Wait for the client to hang up (the request body was read), then cancel ``calls``."""
    while (await receive())["type"] != "http.disconnect":
        pass
    calls.cancel()


class _Endpoint:
    """A request handler as a plain ASGI app (Starlette routes such an app for every method)."""

    def __init__(self, handler: Callable[[Request], Awaitable[Response]]) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request

        response = await self.handler(Request(scope, receive, send))
        await response(scope, receive, send)


class ChatCompletionsAPI:
    """The ``/v1`` routes over one :class:`Assistant` (shared, stateless across requests).

    Args:
        assistant: the answering service.
        api_key: the bearer key requests must send, or None for none.
        concurrency: answers computed at once (more wait).
    """

    def __init__(self, assistant: Assistant, api_key: str | None = None, concurrency: int = DEFAULT_CONCURRENCY):
        self.assistant = assistant
        self.api_key = api_key or None
        self._slots = threading.BoundedSemaphore(concurrency)

    def routes(self) -> list[BaseRoute]:
        """Starlette routes: ``GET /v1/models``, ``GET /v1/models/{model}``, ``POST /v1/chat/completions``, then
        ``/v1`` and ``/v1/*`` for any other path or method: 404 ``unknown_url``, or 405 ``method_not_allowed``
        (with ``Allow``) on a path served for other methods, in OpenAI's error shape (mounted apps after these,
        such as the chat UI at ``/``, keep their own answers elsewhere)."""
        from starlette.routing import Route

        served: list[BaseRoute] = [
            Route("/v1/models", self._guard(self.list_models), methods=["GET"]),
            Route("/v1/models/{model:path}", self._guard(self.get_model), methods=["GET"]),
            Route("/v1/chat/completions", self._guard(self.chat_completions), methods=["POST"]),
        ]
        fallback = _Endpoint(self._guard(functools.partial(self._no_route, served)))
        return [*served, Route("/v1", fallback, methods=list(_METHODS)), Route("/v1/{path:path}", fallback)]

    def _guard(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` behind the bearer key, every error it raises answered in OpenAI's shape (an unexpected
        one as a 500, logged)."""
        from starlette.responses import JSONResponse

        async def endpoint(request: Request) -> Response:
            try:
                if not bearer_ok(request.headers.get("authorization"), self.api_key):
                    raise unauthorized()
                return await handler(request)
            except APIError as e:
                return JSONResponse(e.body(), status_code=e.status, headers=e.response_headers())
            except Exception as e:  # noqa: BLE001 - a bug of ours: logged, answered in the API's shape
                logger.exception("unexpected error in %s %s", request.method, request.url.path)
                error = APIError(500, f"The request failed ({type(e).__name__}); see the server log.", "server_error")
                return JSONResponse(error.body(), status_code=500, headers=error.response_headers())

        return endpoint

    @staticmethod
    async def _no_route(served: Sequence[BaseRoute], request: Request) -> Response:
        """404 for a path no route serves; 405 for a method another route serves the path with.

        Raises:
            APIError: always.
        """
        from starlette.routing import Match, Route

        allowed = sorted(
            {
                m
                for r in served
                if isinstance(r, Route) and r.matches(request.scope)[0] == Match.PARTIAL
                for m in r.methods or ()
            }
        )
        path = request.url.path
        if allowed:
            raise APIError(
                405,
                f"{request.method} is not allowed on {path}; use {' or '.join(allowed)}.",
                "invalid_request_error",
                "method_not_allowed",
                headers={"Allow": ", ".join(allowed)},
            )
        raise APIError(
            404,
            f"Unknown URL: {request.method} {path}. This server serves GET /v1/models, GET /v1/models/{{model}} "
            "and POST /v1/chat/completions.",
            "invalid_request_error",
            "unknown_url",
        )

    @staticmethod
    def _model(created: int = 0) -> dict[str, Any]:
        return {"id": MODEL_ID, "object": "model", "created": created, "owned_by": "paper-assistant"}

    async def list_models(self, request: Request) -> Response:
        """``{"object": "list", "data": [model]}``: the one model, :data:`MODEL_ID`."""
        from starlette.responses import JSONResponse

        return JSONResponse({"object": "list", "data": [self._model()]})

    async def get_model(self, request: Request) -> Response:
        """The model object, or 404 ``model_not_found``."""
        from starlette.responses import JSONResponse

        self._check_model(request.path_params["model"])
        return JSONResponse(self._model())

    @staticmethod
    def _check_model(model: str) -> None:
        if model != MODEL_ID:
            raise APIError(
                404,
                f"The model {model!r} does not exist here; this server serves {MODEL_ID!r} (GET /v1/models).",
                "invalid_request_error",
                "model_not_found",
                "model",
            )

    async def _parse(self, request: Request) -> ChatRequest:
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError) as e:
            raise APIError(400, f"The request body is not JSON ({e}).", "invalid_request_error", "invalid_json") from e
        try:
            req = ChatRequest.model_validate(body)
        except ValidationError as e:
            raise _invalid(e) from e
        self._check_model(req.model)
        if req.n not in (None, 1):
            raise APIError(400, "n: only one choice (n=1) is produced.", "invalid_request_error", "invalid_value", "n")
        return req

    async def chat_completions(self, request: Request) -> Response:
        """Answer the last user message of ``messages`` in the conversation the earlier ones make.

        Returns a ``chat.completion`` (with ``usage``), or a stream of ``chat.completion.chunk`` events
        (:meth:`_sse`). A client that hangs up cancels the answer and its model request (:class:`ModelCalls`).

        Raises:
            APIError: 400 (a field of the wrong type or range, an empty question, one over
                ``max_question_chars``: ``question_too_long``), 404 (unknown model), 503 (no index), 500 (the
                answer failed).
        """
        from starlette.concurrency import run_in_threadpool
        from starlette.responses import JSONResponse

        from assistant.understand.question import EmptyQuestionError, QuestionTooLongError, clean_question

        req = await self._parse(request)
        turns, question = split_conversation(req.messages)
        try:
            question = clean_question(question, self.assistant.settings.retrieval.max_question_chars)
        except EmptyQuestionError as e:
            raise APIError(400, str(e), "invalid_request_error", "invalid_value", "messages") from e
        except QuestionTooLongError as e:
            where = f"messages[{len(req.messages) - 1}].content"
            raise APIError(400, str(e), "invalid_request_error", "question_too_long", where) from e
        calls = ModelCalls()

        def rebuild() -> Any:
            with calls.active():
                return rebuild_session(self.assistant, turns)

        try:
            session = await run_in_threadpool(rebuild)
        except StoreNotReadyError as e:
            raise APIError(503, str(e), "server_error", "index_not_ready") from e
        events = self._events(session.stream, question, req.intent, calls)
        cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if req.stream:
            return _event_stream(self._sse(events, cid, created, calls, req.include_usage), calls.cancel)
        final = await self._final(events, request, calls)
        if final is None:  # the client hung up: nobody reads this
            return JSONResponse({}, status_code=499)
        rendered = render_answer(final)
        from assistant.answer.render import answer_to_dict

        message = {
            "role": "assistant",
            "content": rendered.text,
            "refusal": None,
            "annotations": rendered.url_citations(),
            "answer": answer_to_dict(final),
        }
        return JSONResponse(
            {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
                "usage": calls.usage.as_dict(),
            }
        )

    async def _final(self, events: Iterator[AnswerEvent], request: Request, calls: ModelCalls) -> Answer | None:
        """The final answer of ``events`` (computed in a worker thread), or None when the client hung up
        first (then ``calls`` is cancelled: the model request in flight is cut off at once).

        Raises:
            APIError: 500 when answering failed.
        """
        import anyio
        from starlette.concurrency import run_in_threadpool

        outcome: list[Answer | None] = []
        failure: list[BaseException] = []

        async def compute() -> None:
            try:
                outcome.append(await run_in_threadpool(_final_or_none, events))
            except Exception as e:  # noqa: BLE001 - answered below, outside the task group
                failure.append(e)

        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_on_disconnect, request.receive, calls)
            await compute()
            group.cancel_scope.cancel()
        if failure:
            e = failure[0]
            if isinstance(e, AssistantError):
                raise APIError(500, str(e), "server_error", "answer_failed") from e
            logger.error("unexpected error while answering over the API", exc_info=e)
            raise APIError(500, f"Answering failed ({type(e).__name__}); see the server log.", "server_error") from e
        final = outcome[0]
        if final is None and not calls.cancelled:
            raise APIError(500, "The answer ended without a final answer; see the server log.", "server_error")
        return final

    def _events(
        self,
        stream: Callable[..., Iterator[AnswerEvent]],
        question: str,
        intent: Intent | None,
        calls: ModelCalls,
    ) -> Iterator[AnswerEvent]:
        """The answer's events, each computed under ``calls`` (its model requests counted there) while holding
        one of the concurrency slots. Once ``calls`` is cancelled (the client hung up) no event is given: the
        answer is closed in the thread computing it, its model request already cut off by the cancel."""
        while not self._slots.acquire(timeout=SLOT_POLL_S):
            if calls.cancelled:
                return
        try:
            answer = stream(question, intent=intent)
            try:
                while not calls.cancelled:
                    with calls.active():
                        event = next(answer, None)
                    if event is None or calls.cancelled:
                        return
                    yield event
            finally:
                close = getattr(answer, "close", None)
                if close is not None:
                    with calls.active():
                        close()
        finally:
            self._slots.release()

    async def _sse(
        self, events: Iterator[AnswerEvent], cid: str, created: int, calls: ModelCalls, include_usage: bool = False
    ) -> AsyncIterator[str]:
        """Server-sent events: the role at once; the model's sentences as each is verified; the rest of the
        final answer's text (notice, references) in pieces; the last chunk (annotations, answer JSON,
        ``finish_reason``); with ``include_usage`` a chunk with ``choices: []`` and the ``usage``; ``[DONE]``.
        An error is one ``{"error": …}`` event.

        Only the model's verified sentences are sent before the answer is final: they are only ever appended to
        (``render_answer(partial, final=False)`` is a prefix of the final text), whereas quotes shown while the
        model writes may be replaced, and text already streamed to a client cannot be taken back; so the deltas
        add up to exactly the non-streamed text. A stream given up by its client cancels ``calls``."""
        from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

        from assistant.answer.render import answer_to_dict

        finished = False
        yield _chunk(cid, created, {"role": "assistant", "content": ""}, usage=include_usage)
        try:
            sent = ""
            async for event in iterate_in_threadpool(events):
                if event.answer is None or event.kind == "status":
                    continue
                if event.kind == "partial":
                    if event.answer.mode != "generated":  # quotes shown while the model writes: may be replaced
                        continue
                    text = render_answer(event.answer, final=False).text
                else:
                    rendered = render_answer(event.answer, final=True)
                    text = rendered.text
                if not text.startswith(sent):  # never: verified sentences are only appended
                    logger.warning("a streamed answer changed what was already sent; sending the rest")
                for piece in _pieces(text[len(sent) :]):
                    yield _chunk(cid, created, {"content": piece}, usage=include_usage)
                sent = text if len(text) > len(sent) else sent
                if event.kind == "final":
                    last = {"annotations": rendered.url_citations(), "answer": answer_to_dict(event.answer)}
                    yield _chunk(cid, created, last, "stop", usage=include_usage)
            if include_usage:
                yield _usage_chunk(cid, created, calls)
            yield "data: [DONE]\n\n"
            finished = True
        except Exception as e:  # noqa: BLE001 - the client gets one error event, the log the details
            if isinstance(e, AssistantError):
                logger.warning("streamed answer failed: %s", e)
                error = APIError(500, str(e), "server_error", "answer_failed")
            else:
                logger.exception("unexpected error while streaming an answer")
                error = APIError(500, f"Answering failed ({type(e).__name__}); see the server log.", "server_error")
            yield f"data: {json.dumps(error.body())}\n\n"
            finished = True
        finally:
            if not finished:  # the client left (its disconnect usually cancelled already)
                calls.cancel()
            close = getattr(events, "close", None)
            if close is not None:
                import anyio

                with anyio.CancelScope(shield=True):
                    try:
                        await run_in_threadpool(close)
                    except ValueError:  # still running in its thread: it stops there, ``calls`` being cancelled
                        pass


def _pieces(text: str, size: int = STREAM_PIECE_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of about ``size`` characters, each ending at a space where one is near
    (their concatenation is ``text``)."""
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space + 1 if space > 0 else end
        yield text[start:end]
        start = end


def _final_or_none(events: Iterator[AnswerEvent]) -> Answer | None:
    """The answer of the ``final`` event (None when the events stop without one: a cancelled answer)."""
    final = None
    for event in events:
        if event.kind == "final":
            final = event.answer
    return final
