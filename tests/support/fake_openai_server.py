"""A scripted OpenAI-compatible chat server (stdlib, loopback) for deterministic tests of parsing and errors.

Each POST /v1/chat/completions pops the next scripted reply: a string (streamed as SSE chunks of a
few characters; "" streams nothing), an int HTTP status to fail with, or a float: seconds to stall
before answering (for timeouts). A string starting ``TRUNCATE:`` streams half of the rest, then drops
the connection without ``[DONE]``. Requests are recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


TRUNCATE = "TRUNCATE:"


class FakeOpenAIServer:
    """Context manager; ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(self, replies: list[str | int | float]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                outer.requests.append(json.loads(self.rfile.read(length)))
                reply = outer.replies.pop(0) if outer.replies else "OK."
                if isinstance(reply, float):
                    time.sleep(reply)
                    reply = "Too late."
                if isinstance(reply, int):
                    body = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}}).encode()
                    self.send_response(reply)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                truncate = reply.startswith(TRUNCATE)
                reply = reply.removeprefix(TRUNCATE)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if truncate:  # half the reply, then the connection drops without [DONE]
                    reply = reply[: len(reply) // 2]
                for i in range(0, len(reply), 7):
                    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
                             "choices": [{"index": 0, "delta": {"content": reply[i:i + 7]}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                if truncate:
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    self.close_connection = True
                    return
                self.wfile.write(b"data: [DONE]\n\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
