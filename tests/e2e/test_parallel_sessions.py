"""Four conversations at once against the real UI (subprocess, see conftest.py) through its API
(``gradio_client``, endpoint ``/respond``): each asks about a different paper, then a follow-up with a
pronoun; every answer must concern that conversation's own paper (sessions never mix). No connection
leaves the machine while the clients run."""

from __future__ import annotations

import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.support.seeds import url_of

pytestmark = pytest.mark.browser  # same real UI subprocess as the browser tests

#: Each conversation waits at most this long for one answer (4 share the 2-CPU model server).
ANSWER_TIMEOUT_S = 180
_LOOPBACK = ("127.", "::1", "localhost")


@dataclass(frozen=True)
class Conversation:
    question: str
    follow_up: str
    url: str
    title_word: str


CONVERSATIONS = [
    Conversation("Which paper introduces A-Bench?", "How many text-to-image models did they sample images from?",
                 url_of("000_43469673d6f8aaa0.txt", 8), "A-Bench"),
    Conversation("Which paper studies the numerical understanding and processing ability (NUPA) of language models?",
                 "How many numerical tasks does it cover?", url_of("004_c45bebc30e22eceb.txt", 6), "Number Cookbook"),
    Conversation("Which abstract introduces a State Machine Module (SMM)?", "What problem is it meant to help with?",
                 url_of("000_43469673d6f8aaa0.txt", 2), "Local Patterns"),
    Conversation("Which paper generates CAD code with vision-language models?",
                 "What benchmark do the authors release?",
                 url_of("004_c45bebc30e22eceb.txt", 14), "CAD"),
]


def _text(message: dict) -> str:  # type: ignore[type-arg]
    """A chat message's text (the API gives ``content`` as a list of parts)."""
    content = message["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _ref_urls(answer_html: str) -> list[str]:
    refs = answer_html.split("<ol class='refs'>", 1)
    return re.findall(r'href="([^"]+)"', refs[1]) if len(refs) == 2 else []


@pytest.fixture
def no_outbound(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse and record any non-loopback connection or DNS lookup made in this process."""
    attempts: list[str] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: object) -> None:
        if isinstance(address, tuple) and not str(address[0]).startswith(_LOOPBACK):
            attempts.append(f"connect {address!r}")
            raise OSError(f"outbound connection to {address!r} refused by the test")
        return connect(self, address)  # type: ignore[arg-type]

    def guarded_getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host is not None and not str(host).startswith(_LOOPBACK):
            attempts.append(f"getaddrinfo {host!r}")
            raise socket.gaierror(f"DNS lookup of {host!r} refused by the test")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return attempts


@pytest.mark.slow  # a minute or more: ./scripts/test.sh --all (CI)
def test_four_parallel_conversations_never_mix(ui_url: str, no_outbound: list[str]) -> None:
    from gradio_client import Client

    clients = [Client(ui_url, verbose=False, analytics_enabled=False, download_files=False) for _ in CONVERSATIONS]
    assert "/respond" in clients[0].view_api(print_info=False, return_format="dict")["named_endpoints"]
    barrier = threading.Barrier(len(CONVERSATIONS))

    def converse(client: Client, conv: Conversation) -> tuple[list[dict], float]:  # type: ignore[type-arg]
        history: list[dict] = []  # type: ignore[type-arg]
        t0 = time.monotonic()
        for question in (conv.question, conv.follow_up):
            barrier.wait(timeout=ANSWER_TIMEOUT_S)  # every conversation asks at the same moment
            job = client.submit(question, "auto", history, api_name="/respond")
            _, history = job.result(timeout=ANSWER_TIMEOUT_S)
        return history, time.monotonic() - t0

    try:
        with ThreadPoolExecutor(len(CONVERSATIONS)) as pool:
            results = list(pool.map(converse, clients, CONVERSATIONS))
    finally:
        for client in clients:
            client.close()

    for conv, (history, seconds) in zip(CONVERSATIONS, results):
        # the session's own history: its two questions, in order, nothing from the other chats
        assert [m["role"] for m in history] == ["user", "assistant"] * 2
        assert [_text(m) for m in history[::2]] == [conv.question, conv.follow_up]
        first, follow = _text(history[1]), _text(history[3])
        assert "answered by" in first and "answered by" in follow, (conv.question, first[:300], follow[:300])
        # the first answer cites this chat's paper first (other papers may follow: the model's choice) ...
        assert _ref_urls(first)[:1] == [conv.url], (conv.question, _ref_urls(first))
        # ... and the pronoun in the follow-up resolves to it, in this session
        assert _ref_urls(follow) == [conv.url], (conv.follow_up, _ref_urls(follow))
        searched = follow.split("Searched for:", 1)[-1].split("</small>", 1)[0]
        assert conv.title_word in searched, (conv.follow_up, searched)
        assert not any(c.title_word in searched for c in CONVERSATIONS if c is not conv), searched
        print(f"{conv.title_word}: 2 answers in {seconds:.1f} s")
    assert no_outbound == []
