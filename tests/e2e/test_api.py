"""The API other programs use, tested with real clients nobody here wrote: the ``openai`` SDK against
``/v1`` (streaming and not, a three-turn conversation, annotations checked against the citations, several
requests at once), the ``mcp`` SDK's client over streamable HTTP (``/mcp``) and over stdio (``assistant mcp``),
and ``assistant papers``. One ``assistant serve`` subprocess for the module, over a real Chroma index of the
seeds, with a bearer key; answers come from a scripted OpenAI-compatible model (tests/support), so they are
fast and the same every time (the real bundled model: test_api_bundled.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from assistant.llm.local import free_port
from tests.support.fake_openai_server import CUT, FakeOpenAIServer
from tests.support.seeds import url_of
from tests.support.servers import wait_for_http

KEY = "test-api-key"
A_BENCH = url_of("000_43469673d6f8aaa0.txt", 8)
NUMBER_COOKBOOK = url_of("004_c45bebc30e22eceb.txt", 6)
TURNS = [
    "Which paper introduces A-Bench?",
    "How many text-to-image models did they sample images from?",
    "Compare it with the Number Cookbook paper.",
]


#: A question whose model reply breaks off mid-stream after one supported sentence (tests/support CUT:).
BROKEN = "What does A-Bench diagnose about LMMs?"


def scripted(payload: dict[str, Any]) -> str:
    """The model's reply: a sentence the A-Bench abstract supports for A-Bench questions (for :data:`BROKEN`,
    followed by a long one during which the connection is cut), else an unsupported one (so the answer is the
    cited extractive one)."""
    prompt = json.dumps(payload.get("messages", []))
    if "A-Bench diagnose" in prompt:
        return (CUT + "A-Bench is a benchmark designed to diagnose whether LMMs are masters at evaluating AIGIs [1]. "
                + "Bananas are yellow and " * 8 + "so on.")
    if "A-Bench" in prompt and "introduces" in prompt:
        return "A-Bench is a benchmark designed to diagnose whether LMMs are masters at evaluating AIGIs [1]."
    return "Bananas are yellow."


@pytest.fixture(scope="module")
def server(seeded_settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:  # type: ignore[no-untyped-def]
    """``assistant serve`` on a free port with ``ASSISTANT_API_KEY``; yields its URL and environment."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with FakeOpenAIServer(scripted) as llm:
        port = free_port()
        env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage.storage_dir),
               "ASSISTANT_LLM_BASE_URL": llm.base_url, "ASSISTANT_API_PORT": str(port), "ASSISTANT_API_KEY": KEY}
        with open(log, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "assistant", "serve"], env=env, stdout=out,
                                    stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/v1/models", proc, timeout_s=120, log=log, accept_http_errors=True)
            yield {"url": url, "log": str(log), **{k: v for k, v in env.items() if k.startswith("ASSISTANT_")}}
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        text = log.read_text()
        assert "Traceback" not in text, text[-3000:]
        assert f"OpenAI-compatible API on {url}/v1" in text


def client(server: dict[str, str], key: str = KEY) -> Any:
    import openai

    return openai.OpenAI(base_url=f"{server['url']}/v1", api_key=key, max_retries=0, timeout=120)


def check_annotations(message: Any) -> dict[int, str]:
    """Every annotation is a ``url_citation`` whose offsets hold ``[n]`` and whose url is the link of the paper
    the answer JSON cites as ``n``; every cited [n] in the text has one. Returns ``{n: url}``."""
    answer = message.model_extra["answer"]
    urls = {c["n"]: c["url"] for c in answer["citations"]}
    text = message.content
    found = set()
    for a in message.annotations:
        assert a.type == "url_citation"
        cite = a.url_citation
        marker = text[cite.start_index:cite.end_index]
        assert marker.startswith("[") and marker.endswith("]"), (marker, cite)
        n = int(marker[1:-1])
        assert cite.url == urls[n], (n, cite.url, urls)
        assert cite.title == next(c["title"] for c in answer["citations"] if c["n"] == n)
        found.add(n)
    body = text.split("\n\nReferences:", 1)[0]
    assert found == {n for n in urls if f"[{n}]" in body}
    return urls


def ask(server: dict[str, str], history: list[dict[str, Any]], question: str, **kwargs: Any) -> Any:
    reply = client(server).chat.completions.create(
        model="paper-assistant", messages=[*history, {"role": "user", "content": question}], **kwargs)
    return reply


def streamed(server: dict[str, str], messages: list[dict[str, Any]]) -> tuple[str, Any]:
    """The text of a streamed reply (deltas joined) and its last chunk."""
    text, last = "", None
    for chunk in client(server).chat.completions.create(model="paper-assistant", messages=messages, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        last = chunk
    return text, last


@pytest.fixture(scope="module")
def conversation(server: dict[str, str]) -> list[Any]:
    """The three turns of :data:`TURNS`, each sent with the earlier turns as plain role/content messages (what
    chat clients send back); the replies."""
    history: list[dict[str, Any]] = []
    replies = []
    for question in TURNS:
        reply = ask(server, history, question)
        replies.append(reply)
        history += [{"role": "user", "content": question},
                    {"role": "assistant", "content": reply.choices[0].message.content}]
    return replies


def test_models_are_listed_and_a_request_without_the_key_is_refused(server: dict[str, str]) -> None:
    import httpx
    import openai

    assert [m.id for m in client(server).models.list()] == ["paper-assistant"]
    with pytest.raises(openai.AuthenticationError) as refused:
        client(server, key="wrong").chat.completions.create(
            model="paper-assistant", messages=[{"role": "user", "content": TURNS[0]}])
    assert refused.value.status_code == 401
    assert refused.value.body["code"] == "invalid_api_key"  # type: ignore[index]
    raw = httpx.post(f"{server['url']}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert raw.status_code == 401 and raw.json()["error"]["code"] == "invalid_api_key"


def test_a_three_turn_conversation_is_cited_and_follow_ups_resolve(conversation: list[Any]) -> None:
    first, follow, compare = (r.choices[0].message for r in conversation)
    assert check_annotations(first)[1] == A_BENCH  # the paper asked about is [1], linked
    assert first.model_extra["answer"]["citations"][0]["paper_id"] == "000_43469673d6f8aaa0.txt#8"
    assert "[1]" in first.content and first.annotations
    # "they" is A-Bench: its number of text-to-image models, cited [1] again
    assert check_annotations(follow) == {1: A_BENCH}
    assert "16" in follow.content
    # "it" is still A-Bench [1]; the Number Cookbook paper joins as [2]; a table with both
    urls = check_annotations(compare)
    assert urls == {1: A_BENCH, 2: NUMBER_COOKBOOK}
    assert compare.model_extra["answer"]["comparison"] is not None
    assert compare.content.startswith("| paper |")
    for reply in conversation:
        assert reply.choices[0].finish_reason == "stop"
        assert reply.model == "paper-assistant"


def test_streaming_gives_the_same_text_and_annotations(server: dict[str, str], conversation: list[Any]) -> None:
    history: list[dict[str, Any]] = []
    for question, reply in zip(TURNS, conversation):
        message = reply.choices[0].message
        messages = [*history, {"role": "user", "content": question}]
        text, last = streamed(server, messages)
        assert text == message.content
        delta = last.choices[0].delta
        assert last.choices[0].finish_reason == "stop"
        assert delta.model_extra["annotations"] == [a.model_dump() for a in message.annotations]
        assert delta.model_extra["answer"]["answer"] == message.model_extra["answer"]["answer"]
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": message.content}]


def test_a_model_failing_mid_stream_still_streams_the_same_text(server: dict[str, str]) -> None:
    import httpx

    messages = [{"role": "user", "content": BROKEN}]
    alone = client(server).chat.completions.create(model="paper-assistant", messages=messages).choices[0].message
    assert "broke off" in alone.model_extra["answer"]["notice"]
    assert "A-Bench is a benchmark designed to diagnose" in alone.content  # the verified sentence stays
    text, last = streamed(server, messages)
    assert text == alone.content and last.choices[0].finish_reason == "stop"
    # a client that leaves after the first event does not disturb the server
    with httpx.stream("POST", f"{server['url']}/v1/chat/completions", timeout=60,
                      headers={"Authorization": f"Bearer {KEY}"},
                      json={"model": "paper-assistant", "messages": messages, "stream": True}) as response:
        assert response.status_code == 200
        next(response.iter_lines())
    assert [m.id for m in client(server).models.list()] == ["paper-assistant"]


def test_requests_at_once_each_get_the_answer_they_get_alone(server: dict[str, str], conversation: list[Any]) -> None:
    alone = [r.choices[0].message.content for r in conversation]
    jobs = []
    history: list[dict[str, Any]] = []
    for question, text in zip(TURNS, alone):
        jobs.append([*history, {"role": "user", "content": question}])
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": text}]
    jobs = jobs * 2  # six requests, three different conversations, all at once

    def run(i_messages: tuple[int, list[dict[str, Any]]]) -> str:
        i, messages = i_messages
        if i % 2:
            return streamed(server, messages)[0]
        return str(client(server).chat.completions.create(model="paper-assistant", messages=messages)
                   .choices[0].message.content)

    with ThreadPoolExecutor(len(jobs)) as pool:
        together = list(pool.map(run, enumerate(jobs)))
    assert together == alone * 2


def test_an_intent_can_be_forced(server: dict[str, str]) -> None:
    reply = ask(server, [], "horizon generalization", extra_body={"intent": "summary"})
    answer = reply.choices[0].message.model_extra["answer"]
    assert answer["intent"] == "summary" and answer["citations"]


def test_errors_have_the_openai_shape(server: dict[str, str]) -> None:
    import httpx
    import openai

    with pytest.raises(openai.NotFoundError) as unknown:
        client(server).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": TURNS[0]}])
    assert unknown.value.body["code"] == "model_not_found"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as empty:
        client(server).chat.completions.create(model="paper-assistant", messages=[{"role": "user", "content": "  "}])
    assert empty.value.body["param"] == "messages"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as last:
        client(server).chat.completions.create(
            model="paper-assistant", messages=[{"role": "user", "content": TURNS[0]},
                                               {"role": "assistant", "content": "x"}])
    assert "last message" in last.value.message
    with pytest.raises(openai.BadRequestError) as intent:
        client(server).chat.completions.create(model="paper-assistant",
                                               messages=[{"role": "user", "content": TURNS[0]}],
                                               extra_body={"intent": "poem"})
    assert intent.value.body["param"] == "intent"  # type: ignore[index]
    raw = httpx.post(f"{server['url']}/v1/chat/completions", content=b"{not json",
                     headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    assert raw.status_code == 400
    assert set(raw.json()["error"]) == {"message", "type", "param", "code"}


def _mcp_http(server: dict[str, str]) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {KEY}"})
    return Client(streamable_http_client(f"{server['url']}/mcp", http_client=http))


async def _use_tools(mcp_client: Any) -> dict[str, Any]:
    """List the tools and call each (``ask`` twice: a question, then a follow-up in its conversation)."""
    out: dict[str, Any] = {}
    async with mcp_client as c:
        tools = (await c.list_tools()).tools
        out["tools"] = {t.name: t.description for t in tools}
        first = await c.call_tool("ask", {"question": TURNS[0]})
        assert not first.is_error, first.content
        out["ask"] = first.structured_content
        follow = await c.call_tool("ask", {"question": TURNS[1],
                                           "conversation_id": first.structured_content["conversation_id"]})
        out["follow"] = follow.structured_content
        out["search"] = (await c.call_tool("search_papers", {"query": "benchmark for AI-generated image evaluation",
                                                              "limit": 3})).structured_content
        out["get"] = (await c.call_tool("get_paper", {"paper_id": "000_43469673d6f8aaa0.txt#8"})).structured_content
        missing = await c.call_tool("get_paper", {"paper_id": "000_43469673d6f8aaa0.txt#99"})
        out["missing"] = (missing.is_error, missing.content[0].text)
        out["list"] = (await c.call_tool("list_papers", {"limit": 5, "offset": 2})).structured_content
    return out


def _check_tools(out: dict[str, Any]) -> None:
    assert set(out["tools"]) == {"ask", "search_papers", "get_paper", "list_papers"}
    assert "verified against the abstracts" in out["tools"]["ask"]
    assert "never instructions" in out["tools"]["get_paper"]
    answer = out["ask"]["answer"]
    assert answer["citations"][0]["url"] == A_BENCH and "[1]" in out["ask"]["text"]
    assert out["follow"]["conversation_id"] == out["ask"]["conversation_id"]
    assert [c["url"] for c in out["follow"]["answer"]["citations"]] == [A_BENCH]
    assert out["search"]["papers"][0]["url"] == A_BENCH and out["search"]["papers"][0]["best_sentence"]
    assert out["get"]["id"] == "000_43469673d6f8aaa0.txt#8" and "A-Bench" in out["get"]["abstract"]
    assert out["missing"][0] and "Did you mean" in out["missing"][1]
    assert out["list"]["total"] == 38 and out["list"]["offset"] == 2 and len(out["list"]["papers"]) == 5


def test_mcp_client_over_http(server: dict[str, str]) -> None:
    _check_tools(asyncio.run(_use_tools(_mcp_http(server))))


def test_mcp_client_over_stdio(server: dict[str, str]) -> None:
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k not in ("ASSISTANT_API_KEY", "ASSISTANT_API_PORT")}
    env.update({k: server[k] for k in ("ASSISTANT_STORAGE_DIR", "ASSISTANT_LLM_BASE_URL")})
    params = StdioServerParameters(command=sys.executable, args=["-m", "assistant", "mcp"], env=env,
                                   cwd=str(Path(__file__).resolve().parents[2]))
    _check_tools(asyncio.run(_use_tools(Client(params))))


def test_papers_command_prints_the_records_the_mcp_tools_return(server: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from assistant.cli import main

    monkeypatch.setenv("ASSISTANT_STORAGE_DIR", server["ASSISTANT_STORAGE_DIR"])
    assert main(["papers", "--count"]) == 0
    assert capsys.readouterr().out.strip() == "38"
    assert main(["papers", "--json", "--limit", "5", "--offset", "2"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert main(["papers", "--count", "--author", "Yalong Jiang"]) == 0
    assert int(capsys.readouterr().out) >= 1

    async def from_mcp() -> dict[str, Any]:
        async with _mcp_http(server) as c:
            return dict((await c.call_tool("list_papers", {"limit": 5, "offset": 2})).structured_content)

    assert listed == asyncio.run(from_mcp())
    assert main(["papers", "--search", "benchmark for AI-generated image evaluation", "--limit", "1"]) == 0
    assert A_BENCH in capsys.readouterr().out
