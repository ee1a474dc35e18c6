"""An OpenAI-compatible server process that answers ``GET /v1/models`` and then dies by a signal on its
first completion request, as a llama.cpp build with instructions the CPU does not allow does (SIGILL).

Usage: ``python -m tests.support.crashing_llm_server PORT [SIGNAL_NAME]`` (default SIGILL).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def main() -> None:
    port = int(sys.argv[1])
    sig = signal.Signals[sys.argv[2] if len(sys.argv) > 2 else "SIGILL"]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": [{"id": "smollm2", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
