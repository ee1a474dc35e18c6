"""One ASGI app with everything other programs call: the OpenAI-compatible ``/v1`` routes and the MCP server
over streamable HTTP at ``/mcp``. ``assistant serve`` runs it alone (no browser needed); the chat UI mounts
its Gradio app on the same app (``ui/app.py``), so one process and one port serve all three.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from assistant.api.openai_compat import DEFAULT_CONCURRENCY, ChatCompletionsAPI, bearer_ok, unauthorized

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import ASGIApp, Receive, Scope, Send

    from assistant.config import Settings
    from assistant.service import Assistant

logger = logging.getLogger(__name__)

#: Where the MCP server answers over streamable HTTP.
MCP_PATH = "/mcp"
#: Seconds requests in flight get to finish once the server is asked to stop.
SHUTDOWN_GRACE_S = 5
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
__all__ = ["MCP_PATH", "api_key_for", "build_api_app", "is_loopback", "run_app"]


def api_key_for(settings: Settings, ui_auth: str | None = None) -> str | None:
    """The bearer key API requests need: ``ASSISTANT_API_KEY`` if set, else the UI login ``user:password``
    (``ui_auth``) if the UI requires one, else None (no key)."""
    if settings.api.key is not None and settings.api.key.get_secret_value():
        return settings.api.key.get_secret_value()
    return ui_auth or None


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach."""
    return host in _LOOPBACK or host.startswith("127.")


class _BearerGuard:
    """ASGI wrapper: HTTP requests without the bearer key get 401 in OpenAI's error shape."""

    def __init__(self, app: ASGIApp, key: str | None) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.key:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not bearer_ok(headers.get("authorization"), self.key):
                from starlette.responses import JSONResponse

                error = unauthorized()
                response = JSONResponse(error.body(), status_code=401, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_api_app(
    assistant: Assistant,
    *,
    api_key: str | None = None,
    host: str = "127.0.0.1",
    concurrency: int = DEFAULT_CONCURRENCY,
) -> FastAPI:
    """A FastAPI app serving ``GET /v1/models``, ``POST /v1/chat/completions`` and MCP at :data:`MCP_PATH`.

    Args:
        assistant: the shared answering service.
        api_key: bearer key every ``/v1`` and ``/mcp`` request must send (None: none).
        host: the address the app will listen on; on loopback the MCP endpoint refuses requests whose
            ``Host``/``Origin`` is not loopback (DNS-rebinding protection of the ``mcp`` SDK).
        concurrency: answers computed at once over ``/v1``.

    Other apps may be mounted on the result after these routes (the chat UI mounts Gradio at ``/``).
    """
    from fastapi import FastAPI
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from starlette.routing import Route

    from assistant.api.mcp_server import build_mcp_server

    mcp = build_mcp_server(assistant)
    mcp.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, host=host)  # makes its session manager
    session_manager = mcp.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with session_manager.run():
            yield

    app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    for route in ChatCompletionsAPI(assistant, api_key, concurrency).routes():
        app.router.routes.append(route)
    endpoint = _BearerGuard(StreamableHTTPASGIApp(session_manager), api_key)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    return app


def run_app(app: Any, host: str, port: int) -> None:
    """Serve ``app`` with uvicorn on ``host:port`` until Ctrl-C or SIGTERM, then shut down and return: requests
    in flight get :data:`SHUTDOWN_GRACE_S` seconds to finish (open event streams, such as a browser tab's, are
    then closed)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    uvicorn.Server(config).run()
