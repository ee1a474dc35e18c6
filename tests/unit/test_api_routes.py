"""The ``/v1`` routes' answers that need no index (issue 43.5), in process with Starlette's test client: every
error in OpenAI's shape (a field of the wrong type, an over-long question, an unknown path or method, a bug of
ours), while an app mounted after the routes (the chat UI at ``/``) keeps its own answers elsewhere."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from assistant.api.openai_compat import ChatCompletionsAPI, error_param
from assistant.config import Settings

QUESTION = [{"role": "user", "content": "Which paper introduces A-Bench?"}]


def _boom() -> Any:
    raise RuntimeError("a bug")


@pytest.fixture
def http() -> Any:
    """A FastAPI app like ``build_api_app``'s with a stand-in UI mounted at ``/`` (as Gradio is), and its client;
    the assistant's session fails like a bug would."""
    from fastapi import FastAPI
    from starlette.responses import PlainTextResponse
    from starlette.testclient import TestClient

    assistant: Any = SimpleNamespace(settings=Settings(), new_session=_boom)
    app = FastAPI()
    app.router.routes.extend(ChatCompletionsAPI(assistant).routes())
    app.mount("/", PlainTextResponse("the UI's own page", status_code=404))
    return TestClient(app, raise_server_exceptions=False)


def _error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def test_unknown_paths_and_methods_under_v1_only(http: Any) -> None:
    assert _error(http.get("/v1/nope"), 404)["code"] == "unknown_url"
    assert _error(http.post("/v1"), 404)["code"] == "unknown_url"
    wrong = http.get("/v1/chat/completions")
    assert _error(wrong, 405)["code"] == "method_not_allowed" and wrong.headers["allow"] == "POST"
    assert "GET" in http.delete("/v1/models/paper-assistant").headers["allow"]
    for other in ("/", "/gradio_api/nope", "/v1x", "/mcp2"):
        assert http.get(other).text == "the UI's own page", other


@pytest.mark.parametrize(("body", "param"), [
    ({"max_tokens": "lots"}, "max_tokens"),
    ({"temperature": 2.5}, "temperature"),
    ({"stop": ["a", 3]}, "stop[1]"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}, "messages[0].content[0].text"),
    ({"model": None}, "model"),
])
def test_a_field_of_the_wrong_type_or_range_is_a_400_naming_it(http: Any, body: dict[str, Any], param: str) -> None:
    error = _error(http.post("/v1/chat/completions", json={"model": "paper-assistant", "messages": QUESTION, **body}),
                   400)
    assert error["param"] == param and error["type"] == "invalid_request_error", error
    assert error["message"].startswith(f"{param}: "), error


def test_an_over_long_question_is_a_400_and_a_bug_a_500_not_retried(http: Any) -> None:
    long = [{"role": "user", "content": "x " * 1100}]
    error = _error(http.post("/v1/chat/completions", json={"model": "paper-assistant", "messages": long}), 400)
    assert error["code"] == "question_too_long" and error["param"] == "messages[0].content"
    assert "at most 2,000" in error["message"]
    bug = http.post("/v1/chat/completions", json={"model": "paper-assistant", "messages": QUESTION})
    assert _error(bug, 500)["type"] == "server_error" and "RuntimeError" in bug.json()["error"]["message"]
    assert bug.headers["x-should-retry"] == "false"  # the openai SDK would redo the whole answer twice


def test_error_param_names_the_request_field() -> None:
    assert error_param(("messages", 2, "role")) == "messages[2].role"
    assert error_param(("stop", "str")) == "stop"
    assert error_param(("stream_options", "include_usage")) == "stream_options.include_usage"
