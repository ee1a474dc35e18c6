"""UI security: optional login, no file served outside what the UI needs, loopback by default."""

from __future__ import annotations

import http.cookiejar
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.llm.local import free_port
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.servers import wait_for_http

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def secured_ui(seeded_settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The UI with ASSISTANT_UI_AUTH set, answering through a scripted LLM endpoint."""
    port = free_port()
    log = tmp_path_factory.mktemp("secure-ui") / "ui.log"
    with FakeOpenAIServer(["OK."] * 50) as llm:
        env = {
            **os.environ,
            "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage.storage_dir),
            "ASSISTANT_UI_PORT": str(port),
            "ASSISTANT_UI_AUTH": "alice:s3cret-pw",
            "ASSISTANT_LLM_BASE_URL": llm.base_url,
        }
        with open(log, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "ui", "--no-ingest"], env=env,
                                    stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(url + "/", proc, timeout_s=120, log=log,
                          accept_http_errors=True)  # an auth error is an answer
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        assert "s3cret-pw" not in log.read_text()  # the password is never logged


def _status(url: str, opener: urllib.request.OpenerDirector | None = None) -> tuple[int, str]:
    try:
        with (opener or urllib.request.build_opener()).open(url, timeout=10) as r:
            return r.status, r.read(20000).decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read(20000).decode(errors="replace")


def test_login_is_required_and_works(secured_ui: str) -> None:
    code, _ = _status(secured_ui + "/config")
    assert code in (401, 403)
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    bad = urllib.parse.urlencode({"username": "alice", "password": "wrong"}).encode()
    with pytest.raises(urllib.error.HTTPError):
        opener.open(secured_ui + "/login", data=bad, timeout=10)
    good = urllib.parse.urlencode({"username": "alice", "password": "s3cret-pw"}).encode()
    with opener.open(secured_ui + "/login", data=good, timeout=10) as r:
        assert r.status == 200
    code, body = _status(secured_ui + "/config", opener)
    assert code == 200 and "components" in body


def test_the_api_in_the_ui_process_needs_the_ui_login_as_its_key(secured_ui: str) -> None:
    import httpx
    import openai

    for path in ("/v1/models", "/mcp"):
        refused = httpx.post(secured_ui + path, json={}, timeout=10) if path == "/mcp" else httpx.get(secured_ui + path)
        assert refused.status_code == 401, path
        assert refused.json()["error"]["code"] == "invalid_api_key"
    wrong = openai.OpenAI(base_url=secured_ui + "/v1", api_key="alice:wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()
    right = openai.OpenAI(base_url=secured_ui + "/v1", api_key="alice:s3cret-pw", max_retries=0)
    assert [m.id for m in right.models.list()] == ["paper-assistant"]


@pytest.mark.parametrize(
    "path",
    ["/file=/etc/passwd", "/gradio_api/file=/etc/passwd", "/gradio_api/file=../../../../etc/passwd",
     "/gradio_api/file=%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/static/../../../../etc/passwd",
     "/assets/..%2f..%2f..%2f..%2fetc%2fpasswd", "/gradio_api/file=" + str(Path(__file__).resolve())],
)
def test_path_traversal_is_refused(secured_ui: str, path: str) -> None:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    good = urllib.parse.urlencode({"username": "alice", "password": "s3cret-pw"}).encode()
    opener.open(secured_ui + "/login", data=good, timeout=10).close()
    code, body = _status(secured_ui + path, opener)
    assert "root:" not in body and "def test_path_traversal_is_refused" not in body
    assert code in (400, 403, 404) or (code == 200 and "<html" in body.lower())  # SPA fallback page, not the file


def test_loopback_by_default_and_bad_auth_setting_rejected() -> None:
    from assistant.errors import ConfigError
    from ui.settings import UISettings, load_ui_settings

    assert UISettings().host == "127.0.0.1"
    with pytest.raises(ConfigError, match="ASSISTANT_UI_AUTH"):
        load_ui_settings(auth="no-colon")
