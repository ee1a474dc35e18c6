"""An OpenAI-compatible chat API over the assistant: ``GET /v1/models`` and ``POST /v1/chat/completions``
(streamed as server-sent events or not), for chat clients that speak the OpenAI API (Open WebUI, LibreChat,
the ``openai`` SDK, ``llm``).

* The conversation is the request's ``messages``: earlier user/assistant turns rebuild a
  :class:`~assistant.conversation.session.ChatSession` per request (``chat.rebuild_session``), so "it" and "the second
  one" resolve as in the chat and ``[n]`` stays stable, with no chat state on the server.
* The reply's ``content`` is the answer with its ``[n]`` markers and a references block; ``annotations``
  holds one ``url_citation`` per marker (the paper's link and title, the marker's character offsets); the
  full answer JSON (docs/answer.schema.json) is in the message's extra field ``answer``. A stream sends the
  text as it is verified (its concatenation equals the non-streamed text), then a last chunk with
  ``annotations``, ``answer`` and ``finish_reason``.
* Errors have OpenAI's shape ``{"error": {"message", "type", "param", "code"}}`` with the matching HTTP
  status; an error after a stream started is sent as one ``data: {"error": …}`` event.
* With an API key configured, every request needs ``Authorization: Bearer <key>`` (401 otherwise).
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assistant.api.chat import PriorTurn, cited_in, rebuild_session, render_answer
from assistant.errors import AssistantError, StoreNotReadyError
from assistant.types import Intent

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from assistant.answer.answerer import AnswerEvent
    from assistant.service import Assistant

#: Characters per streamed text chunk (the client's display granularity, not a latency knob).
STREAM_PIECE_CHARS = 80

logger = logging.getLogger(__name__)

#: The model name this API serves (what ``GET /v1/models`` lists and requests must name).
MODEL_ID = "paper-assistant"
#: Answers computed at the same time; more requests wait their turn (the bundled model serves one at a time).
DEFAULT_CONCURRENCY = 4


class APIError(Exception):
    """An error to answer with OpenAI's error shape.

    Args:
        status: HTTP status; message: what went wrong and what to do; type: ``invalid_request_error``,
            ``authentication_error``, ``not_found_error`` or ``server_error``; code: a short machine code;
            param: the request field at fault, if any.
    """

    def __init__(self, status: int, message: str, type: str, code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type, code, param

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


class ChatRequest(BaseModel):
    """The body of ``POST /v1/chat/completions`` (OpenAI's fields; sampling options are accepted and ignored:
    answers are verified against the abstracts, not sampled). ``intent`` (extra): force
    lookup|summary|compare|topic|choice|metadata."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[MessageIn] = Field(min_length=1)
    stream: bool = False
    n: int = 1
    intent: Intent | None = None


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
    for part in message.content:
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
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


def _chunk(cid: str, created: int, delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


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
        """Starlette routes: ``GET /v1/models``, ``GET /v1/models/{model}``, ``POST /v1/chat/completions``."""
        from starlette.routing import Route

        return [
            Route("/v1/models", self._guard(self.list_models), methods=["GET"]),
            Route("/v1/models/{model:path}", self._guard(self.get_model), methods=["GET"]),
            Route("/v1/chat/completions", self._guard(self.chat_completions), methods=["POST"]),
        ]

    def _guard(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        from starlette.responses import JSONResponse

        async def endpoint(request: Request) -> Response:
            try:
                if not bearer_ok(request.headers.get("authorization"), self.api_key):
                    raise unauthorized()
                return await handler(request)
            except APIError as e:
                headers = {"WWW-Authenticate": "Bearer"} if e.status == 401 else None
                return JSONResponse(e.body(), status_code=e.status, headers=headers)

        return endpoint

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
            err = e.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise APIError(
                400, f"{where}: {err['msg']}", "invalid_request_error", "invalid_value", where or None
            ) from e
        self._check_model(req.model)
        if req.n != 1:
            raise APIError(400, "n: only one choice (n=1) is produced.", "invalid_request_error", "invalid_value", "n")
        return req

    async def chat_completions(self, request: Request) -> Response:
        """Answer the last user message of ``messages`` in the conversation the earlier ones make."""
        from starlette.concurrency import run_in_threadpool
        from starlette.responses import JSONResponse, StreamingResponse

        from assistant.understand.question import EmptyQuestionError, clean_question

        req = await self._parse(request)
        turns, question = split_conversation(req.messages)
        try:
            question = clean_question(question)
        except EmptyQuestionError as e:
            raise APIError(400, str(e), "invalid_request_error", "invalid_value", "messages") from e
        try:
            session = await run_in_threadpool(rebuild_session, self.assistant, turns)
        except StoreNotReadyError as e:
            raise APIError(503, str(e), "server_error", "index_not_ready") from e
        events = self._events(session.stream, question, req.intent)
        cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        if req.stream:
            return StreamingResponse(
                self._sse(events, cid, created),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        try:
            final = await run_in_threadpool(_last_final, events)
        except AssistantError as e:
            raise APIError(500, str(e), "server_error", "answer_failed") from e
        except Exception as e:
            logger.exception("unexpected error while answering over the API")
            raise APIError(500, f"Answering failed ({type(e).__name__}); see the server log.", "server_error") from e
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
            }
        )

    def _events(
        self, stream: Callable[..., Iterator[AnswerEvent]], question: str, intent: Intent | None
    ) -> Iterator[AnswerEvent]:
        """The answer's events, holding one of the concurrency slots while it is computed."""
        self._slots.acquire()
        try:
            yield from stream(question, intent=intent)
        finally:
            self._slots.release()

    async def _sse(self, events: Iterator[AnswerEvent], cid: str, created: int) -> AsyncIterator[str]:
        """Server-sent events: the role at once, then the verified answer's text in pieces, the last chunk
        (annotations, answer JSON, ``finish_reason``), ``[DONE]``; an error as one ``{"error": …}`` event.

        The text is sent once the answer is final: the chat shows the answer built from the abstracts first
        and lets a verified model sentence replace a quote, and text already streamed to a client cannot be
        taken back, so a stream gives exactly the non-streamed text."""
        from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

        from assistant.answer.render import answer_to_dict

        yield _chunk(cid, created, {"role": "assistant", "content": ""})
        try:
            async for event in iterate_in_threadpool(events):
                if event.answer is None or event.kind != "final":
                    continue
                rendered = render_answer(event.answer, final=True)
                for piece in _pieces(rendered.text):
                    yield _chunk(cid, created, {"content": piece})
                last = {"annotations": rendered.url_citations(), "answer": answer_to_dict(event.answer)}
                yield _chunk(cid, created, last, "stop")
            yield "data: [DONE]\n\n"
        except Exception as e:  # noqa: BLE001 - the client gets one error event, the log the details
            if isinstance(e, AssistantError):
                logger.warning("streamed answer failed: %s", e)
                error = APIError(500, str(e), "server_error", "answer_failed")
            else:
                logger.exception("unexpected error while streaming an answer")
                error = APIError(500, f"Answering failed ({type(e).__name__}); see the server log.", "server_error")
            yield f"data: {json.dumps(error.body())}\n\n"
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                try:
                    await run_in_threadpool(close)
                except ValueError:  # still running in its thread (the client left mid-answer): it ends there
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


def _last_final(events: Iterator[AnswerEvent]) -> Any:
    from assistant.answer.answerer import final_answer

    return final_answer(events)
