"""A scripted OpenAI-compatible embeddings server (stdlib HTTP, loopback) for tests and benchmarks.

``POST /v1/embeddings`` embeds ``input`` with the function it was given (for realistic tests the bundled
MiniLM, so vectors are real) and answers like the OpenAI API (``data[i].embedding``, ``index``, ``usage``;
``encoding_format`` ``float`` or ``base64``). Vectors are multiplied by ``scale`` (default 2.5), because not
every real server normalises. ``GET`` on any path answers 200 (health checks, ``/v1/models``).

``script`` scripts the requests in order, one entry per request, then every request is served normally:

* ``None``: serve normally;
* an int: fail with that HTTP status (OpenAI-style error body);
* a float: stall that many seconds, then serve normally (client timeouts);
* ``"CLOSE"``: close the connection without an answer (a crashed worker);
* ``"SHORT"``: one vector fewer than inputs; ``"DIM"``: vectors cut to half their length;
  ``"SHUFFLE"``: the vectors in reverse order, with their true ``index`` (servers may reorder).

Every request's JSON payload is recorded in ``requests``. ``python -m tests.support.fake_embeddings_server
--port P`` serves the bundled MiniLM until killed (benchmarks/scale_out.py).
"""

from __future__ import annotations

import base64
import json
import struct
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Embed = Callable[[list[str]], Sequence[Sequence[float]]]
ScriptEntry = None | int | float | str


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (timed out) and hung up is normal here: no traceback on the test's stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class FakeEmbeddingsServer:
    """Context manager; ``base_url`` is ``http://127.0.0.1:<port>/v1``.

    Args:
        embed: texts -> vectors (e.g. ``HuggingFaceEmbedding.get_text_embedding_batch``).
        script: per-request behaviour, see the module docstring.
        scale: factor applied to every vector (so clients must normalise).
        port: 0 for a free port.
    """

    def __init__(self, embed: Embed, script: Sequence[ScriptEntry] = (), *, scale: float = 2.5, port: int = 0) -> None:
        self.embed = embed
        self.script: list[ScriptEntry] = list(script)
        self.scale = scale
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as real servers do: else headers and body wait ~40 ms for an ACK

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, obj: object) -> None:
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "scripted-embeddings", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                with outer._lock:
                    outer.requests.append(payload)
                    entry = outer.script.pop(0) if outer.script else None
                if isinstance(entry, float):
                    time.sleep(entry)
                    entry = None
                if isinstance(entry, int):
                    self._json(entry, {"error": {"message": f"scripted failure {entry}", "type": "server_error"}})
                    return
                if entry == "CLOSE":
                    self.close_connection = True
                    try:
                        self.connection.shutdown(2)
                    except OSError:
                        pass
                    return
                texts = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
                vectors = [[float(x) * outer.scale for x in v] for v in outer.embed(list(texts))]
                if entry == "SHORT":
                    vectors = vectors[:-1]
                if entry == "DIM":
                    vectors = [v[: len(v) // 2] for v in vectors]
                items = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
                if entry == "SHUFFLE":
                    items.reverse()
                if payload.get("encoding_format") == "base64":
                    for it in items:
                        vec = it["embedding"]
                        it["embedding"] = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()  # type: ignore[arg-type, misc]
                tokens = sum(len(t.split()) for t in texts)
                self._json(200, {"object": "list", "data": items, "model": payload.get("model", ""),
                                 "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

        self._server = _QuietServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeEmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and close the socket (a later connection is refused)."""
        self._server.shutdown()
        self._server.server_close()

    def texts_embedded(self) -> list[str]:
        """Every input text received so far, in order (with repeats from retries)."""
        return [t for p in self.requests for t in (p["input"] if isinstance(p["input"], list) else [p["input"]])]


def main() -> None:
    """Serve the bundled MiniLM on ``--port`` (loopback) until killed."""
    import argparse

    from assistant.config import Settings
    from assistant.index.embeddings import build_embed_model
    from assistant.offline import enforce_offline

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--null", action="store_true", help="no model: fixed 384-d vectors (measures HTTP + JSON alone)")
    args = p.parse_args()
    enforce_offline()
    if args.null:
        unit = [1.0 / 384 ** 0.5 + i * 1e-6 for i in range(384)]

        def embed(texts: list[str]) -> list[list[float]]:
            return [unit for _ in texts]
    else:
        embed = build_embed_model(Settings()).get_text_embedding_batch
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
    server = FakeEmbeddingsServer(embed, scale=1.0, port=args.port)
    print(f"serving {server.base_url}", flush=True)
    server._server.serve_forever()


if __name__ == "__main__":
    main()
