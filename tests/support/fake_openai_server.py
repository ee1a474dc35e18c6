"""A scripted OpenAI-compatible chat server (stdlib, loopback) for deterministic tests of parsing and errors.

Each POST /v1/chat/completions pops the next scripted reply:

* a string: streamed as SSE events of a few characters over HTTP/1.1 chunked transfer (as uvicorn,
  which serves llama-cpp-python, does); ``""`` streams nothing;
* an int: an HTTP status to fail with; a float: seconds to stall before answering (timeouts);
* a string with a prefix:
  ``TRUNCATE:`` streams half of the rest, then closes the connection cleanly without ``[DONE]``;
  ``CUT:`` streams half, then announces a chunk and closes the socket in the middle of it (the client
  sees an incomplete chunked read, as when a server process is killed mid-answer);
  ``STALL:`` streams the first event, then sends nothing more while keeping the socket open (30 s);
  ``MALFORMED:`` streams half, then an event that is not JSON;
  ``WORDS:`` streams one word per event *with the space after it* (``"a "``, ``"benchmark"``);
  ``PACED:`` streams one sentence per event, :data:`PACE_S` seconds apart (a slow model, for watching an
  answer grow); ``PACED_CUT:`` does the same, then breaks off like ``CUT:`` instead of finishing.

``replies`` may also be a function of the request payload returning such a reply (replies chosen by
question rather than by order).

A yes/no question asked for its log-probabilities (``"logprobs": true``, the answer verifier's self-check,
``ChatBackend.yes_probability``) does not take a scripted reply: it is answered at once, as one JSON completion (or
one streamed event when the request streams, as the client asks),
with ``P(yes) = yes_probability`` (a number, or a function of the request payload; default 0.9); a function that
returns None makes that self-check fail with HTTP 500.

A translation request of the language step (system prompt ``prompts.LANGUAGE_SYSTEM``,
understand/language.py) does not take a scripted reply either: it is streamed back as the question unchanged (what
the real model does with an English question langid misreads), or as ``translate(question)`` when given.

Token usage is reported as OpenAI does: in each JSON completion, and, when the request asks for it with
``stream_options: {"include_usage": true}``, in a last streamed event with ``choices: []`` (before ``[DONE]``):
``prompt_tokens`` = :func:`prompt_tokens` of the request's messages, ``completion_tokens`` = the events of text sent.

Requests are recorded in ``requests``, self-checks apart in ``self_checks``, translations in ``translations``.
A client that closes its connection while a ``PACED:`` reply waits between sentences is seen at once (the socket
is watched during the wait): the reply stops and the moment is recorded in ``hangups`` (``time.monotonic()``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from assistant.llm.prompts import LANGUAGE_SYSTEM

TRUNCATE = "TRUNCATE:"
CUT = "CUT:"
STALL = "STALL:"
#: How long a ``STALL:`` reply keeps the socket open without sending anything (seconds).
STALL_S = 30.0
MALFORMED = "MALFORMED:"
WORDS = "WORDS:"
PACED = "PACED:"
PACED_CUT = "PACED_CUT:"
_PREFIXES = (TRUNCATE, CUT, STALL, MALFORMED, WORDS, PACED_CUT, PACED)
#: Seconds between the sentences of a ``PACED:`` reply.
PACE_S = 1.5


def _event(text: str) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
             "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def prompt_tokens(payload: dict[str, Any]) -> int:
    """The ``prompt_tokens`` this server reports for a request: the characters of its messages' JSON over 4."""
    return len(json.dumps(payload.get("messages", []))) // 4


def _usage_event(prompt: int, completion: int) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "scripted", "choices": [],
             "usage": usage}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _yes_no_completion(p_yes: float) -> dict[str, Any]:
    """A one-token chat completion whose top log-probabilities give ``P(yes) = p_yes`` against "no"."""
    import math

    yes, no = math.log(max(p_yes, 1e-9)), math.log(max(1.0 - p_yes, 1e-9))
    token = "yes" if p_yes >= 0.5 else "no"
    top = [{"token": "yes", "logprob": yes, "bytes": None}, {"token": "no", "logprob": no, "bytes": None}]
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": token},
                         "logprobs": {"content": [{"token": token, "logprob": max(yes, no), "bytes": None,
                                                   "top_logprobs": top}]}}]}


def yes_no_chunk(p_yes: float) -> dict[str, Any]:
    """:func:`_yes_no_completion` as the one event of a stream (how the client asks for it)."""
    choice = _yes_no_completion(p_yes)["choices"][0]
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "delta": {"content": choice["message"]["content"]},
                         "logprobs": choice["logprobs"], "finish_reason": "length"}]}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (the answerer stops reading once it has what it needs) is normal here: no
    traceback on the test process's stderr, which the CLI tests read for tracebacks of their own."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    """Context manager; ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(
        self,
        replies: list[str | int | float] | Callable[[dict[str, Any]], str | int | float],
        yes_probability: float | Callable[[dict[str, Any]], float | None] = 0.9,
        translate: Callable[[str], str] | None = None,
    ) -> None:
        self.replies = replies if callable(replies) else list(replies)
        self.yes_probability = yes_probability
        self.translate = translate
        self.requests: list[dict[str, Any]] = []
        self.self_checks: list[dict[str, Any]] = []
        self.translations: list[dict[str, Any]] = []
        #: streamed replies sent to the end (``[DONE]``)
        self.finished = 0
        #: ``time.monotonic()`` when each streamed reply was sent to the end
        self.finished_at: list[float] = []
        #: ``time.monotonic()`` when a client closed its connection while a ``PACED:`` reply was under way
        self.hangups: list[float] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, obj: object) -> None:
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _client_left(self, seconds: float) -> bool:
                """Wait ``seconds``, watching the socket: True (recorded in ``hangups``) as soon as the client
                closes the connection (the request was read whole, so anything readable is its end)."""
                import select
                import socket

                deadline = time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0:
                    if not select.select([self.connection], [], [], left)[0]:
                        continue
                    try:
                        gone = self.connection.recv(1, socket.MSG_PEEK) == b""
                    except OSError:
                        gone = True
                    if gone:
                        with outer._lock:
                            outer.hangups.append(time.monotonic())
                        self.close_connection = True
                        return True
                    time.sleep(min(left, 0.05))
                return False

            def _yes_no_stream(self, p_yes: float, payload: dict[str, Any]) -> None:
                """The one-token yes/no reply as a stream: one event with the token and its top log-probabilities
                (as OpenAI and llama-cpp-python stream them), the usage event when asked for, then ``[DONE]``."""
                chunk = yes_no_chunk(p_yes)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
                if (payload.get("stream_options") or {}).get("include_usage"):
                    self._chunk(_usage_event(prompt_tokens(payload), 1))
                self._chunk(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                if payload.get("logprobs"):
                    with outer._lock:
                        outer.self_checks.append(payload)
                    p = outer.yes_probability
                    value = p(payload) if callable(p) else p
                    if value is None:
                        self._json(500, {"error": {"message": "scripted failure", "type": "server_error"}})
                    elif payload.get("stream"):
                        self._yes_no_stream(value, payload)
                    else:
                        self._json(200, {**_yes_no_completion(value),
                                         "usage": {"prompt_tokens": prompt_tokens(payload), "completion_tokens": 1,
                                                   "total_tokens": prompt_tokens(payload) + 1}})
                    return
                messages = payload.get("messages") or [{}]
                translating = messages[0].get("content") == LANGUAGE_SYSTEM
                if translating:
                    question = messages[-1]["content"].rsplit("Question: ", 1)[-1]
                    with outer._lock:
                        outer.translations.append(payload)
                    reply: str | int | float = outer.translate(question) if outer.translate else question
                else:
                    with outer._lock:
                        outer.requests.append(payload)
                        reply = outer._next_reply(payload)
                if isinstance(reply, float):

                    time.sleep(reply)
                    reply = "Too late."
                if isinstance(reply, int):
                    self._json(reply, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                prefix = next((p for p in _PREFIXES if reply.startswith(p)), "")
                text = reply.removeprefix(prefix)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if prefix in (TRUNCATE, CUT, MALFORMED):
                    text = text[: len(text) // 2]
                pieces = re.findall(r"\S+\s*", text) if prefix == WORDS else [text[i:i + 7] for i in range(0, len(text),
                                                                                                           7)]
                if prefix in (PACED, PACED_CUT):
                    pieces = re.findall(r".+?(?:[.!?]\s+|$)", text)
                if prefix == STALL:
                    pieces = pieces[:1]
                for i, piece in enumerate(pieces):
                    if i and prefix in (PACED, PACED_CUT) and self._client_left(PACE_S):
                        return
                    self._chunk(_event(piece))
                if prefix == STALL:
                    time.sleep(STALL_S)
                elif prefix in (CUT, PACED_CUT):  # a chunk announced as 200 bytes, 10 sent, then the socket closes
                    self.wfile.write(b"c8\r\n" + _event("cut")[:10])
                    self.wfile.flush()
                elif prefix == MALFORMED:
                    self._chunk(b"data: {this is not json\n\n")
                    self._chunk(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                elif prefix != TRUNCATE:
                    if (payload.get("stream_options") or {}).get("include_usage"):
                        self._chunk(_usage_event(prompt_tokens(payload), len(pieces)))
                    self._chunk(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    with outer._lock:
                        outer.finished += 1
                        outer.finished_at.append(time.monotonic())
                    return
                if prefix == TRUNCATE:
                    self.wfile.write(b"0\r\n\r\n")  # stream ends cleanly, just without [DONE]
                self.wfile.flush()
                self.close_connection = True
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _next_reply(self, payload: dict[str, Any]) -> str | int | float:
        """The scripted reply to ``payload`` (called under the lock): the function's, else the next in order."""
        if callable(self.replies):
            return self.replies(payload)
        return self.replies.pop(0) if self.replies else "OK."

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
