"""The API other programs use, tested with real clients nobody here wrote: the ``openai`` SDK against
``/v1`` (streaming and not, a three-turn conversation, annotations checked against the citations, several
requests at once, usage, errors and validation, clients that hang up), the ``llm`` CLI, the ``mcp`` SDK's
client over streamable HTTP (``/mcp``) and over stdio (``assistant mcp``), and ``assistant papers``. One
``assistant serve`` subprocess for the module, over a real Chroma index of the seeds, with a bearer key;
answers come from a scripted OpenAI-compatible model (tests/support), so they are fast and the same every time
(the real bundled model: test_api_bundled.py)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from assistant.llm.local import free_port
from tests.support.fake_openai_server import CUT, PACED, FakeOpenAIServer, prompt_tokens
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
#: A question the model answers slowly: a supported sentence, then one sentence every PACE_S seconds (PACED:).
SLOW = "What is A-Bench made of, sentence by sentence?"
SLOW_SENTENCES = 6


def scripted(payload: dict[str, Any]) -> str:
    """The model's reply: a sentence the A-Bench abstract supports for A-Bench questions (for :data:`BROKEN`,
    followed by a long one during which the connection is cut), else an unsupported one (so the answer is the
    cited extractive one)."""
    prompt = json.dumps(payload.get("messages", []))
    if "sentence by sentence" in prompt:
        return (PACED + "A-Bench is a benchmark designed to diagnose whether LMMs are masters at evaluating AIGIs [1]. "
                + "Bananas are yellow. " * (SLOW_SENTENCES - 1)).strip()
    if "A-Bench diagnose" in prompt:
        return (CUT + "A-Bench is a benchmark designed to diagnose whether LMMs are masters at evaluating AIGIs [1]. "
                + "Bananas are yellow and " * 8 + "so on.")
    if "A-Bench" in prompt and "introduces" in prompt:
        return "A-Bench is a benchmark designed to diagnose whether LMMs are masters at evaluating AIGIs [1]."
    return "Bananas are yellow."


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAIServer]:
    """The scripted model :func:`server` answers with (its requests and hang-ups can be watched)."""
    with FakeOpenAIServer(scripted) as llm:
        yield llm


@pytest.fixture(scope="module")
def server(seeded_settings, model: FakeOpenAIServer,  # type: ignore[no-untyped-def]
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``assistant serve`` on a free port with ``ASSISTANT_API_KEY``; yields its URL and environment."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    port = free_port()
    env = {**os.environ, "ASSISTANT_STORAGE_DIR": str(seeded_settings.storage.storage_dir),
           "ASSISTANT_LLM_BASE_URL": model.base_url, "ASSISTANT_API_PORT": str(port), "ASSISTANT_API_KEY": KEY}
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


#: An over-long question (2,040 characters; the limit is 2,000).
LONG = "What does A-Bench evaluate? " * 73
#: Seconds within which a client's hang-up must close the model request (issue 43.5).
HANG_UP_S = 1.0


def test_an_over_long_question_is_a_400_that_says_what_to_do(server: dict[str, str]) -> None:
    import openai

    retrying = openai.OpenAI(base_url=f"{server['url']}/v1", api_key=KEY, max_retries=2, timeout=60)
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as long:
            retrying.chat.completions.create(model="paper-assistant", stream=stream,
                                             messages=[{"role": "user", "content": LONG}])
        assert long.value.status_code == 400
        assert long.value.body["code"] == "question_too_long"  # type: ignore[index]
        assert long.value.body["param"] == "messages[0].content"  # type: ignore[index]
        assert "at most 2,000" in long.value.message and "Ask about one thing" in long.value.message


BAD_FIELDS: list[tuple[dict[str, Any], str]] = [
    ({"max_tokens": "lots"}, "max_tokens"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"temperature": 7}, "temperature"),
    ({"temperature": "hot"}, "temperature"),
    ({"top_p": -1}, "top_p"),
    ({"stream": "yes"}, "stream"),
    ({"n": 0}, "n"),
    ({"stop": 5}, "stop"),
    ({"seed": 1.5}, "seed"),
    ({"stream_options": {"include_usage": "please"}}, "stream_options.include_usage"),
    ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
    ({"messages": []}, "messages"),
]


def test_parameters_are_validated_and_valid_ones_are_accepted(server: dict[str, str], conversation: list[Any]) -> None:
    import openai

    for body, param in BAD_FIELDS:
        with pytest.raises(openai.BadRequestError) as bad:
            client(server).chat.completions.create(model="paper-assistant", extra_body=body,
                                                   messages=[{"role": "user", "content": TURNS[0]}])
        error = bad.value.body
        assert error["param"] == param, (body, error)  # type: ignore[index]
        assert error["type"] == "invalid_request_error" and error["message"].startswith(f"{param}: "), error  # type: ignore[index]
    # every sampling and length option of the right type is accepted (and the answer is the verified one)
    reply = ask(server, [], TURNS[0], max_tokens=50, max_completion_tokens=50, temperature=0.2, top_p=1,
                presence_penalty=0, frequency_penalty=0.5, stop=["zzz"], seed=7, user="u", n=1)
    assert reply.choices[0].message.content == conversation[0].choices[0].message.content


def _made(model: FakeOpenAIServer) -> tuple[int, int, int]:
    return len(model.requests), len(model.self_checks), len(model.translations)


def _reported_prompt_tokens(model: FakeOpenAIServer, since: tuple[int, int, int]) -> int:
    """The prompt tokens the scripted model reported for the requests made since ``since`` (:func:`_made`)."""
    made = model.requests[since[0]:] + model.self_checks[since[1]:] + model.translations[since[2]:]
    assert model.requests[since[0]:], "the model was not asked"
    return sum(prompt_tokens(p) for p in made)


def test_usage_is_the_model_requests_tokens_streamed_or_not(server: dict[str, str], model: FakeOpenAIServer) -> None:
    messages = [{"role": "user", "content": TURNS[0]}]
    since = _made(model)
    usage = ask(server, [], TURNS[0]).usage
    # the tokens the model server reported for every request of the answer (the answer, its self-checks)
    assert usage.prompt_tokens == _reported_prompt_tokens(model, since)
    assert usage.completion_tokens > 0 and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    since = _made(model)
    chunks = list(client(server).chat.completions.create(model="paper-assistant", messages=messages, stream=True,
                                                         stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage == usage
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks[:-1])
    assert usage.prompt_tokens == _reported_prompt_tokens(model, since)
    plain = list(client(server).chat.completions.create(model="paper-assistant", messages=messages, stream=True))
    assert plain[-1].choices and plain[-1].choices[0].finish_reason == "stop"  # no usage chunk unless asked
    assert all(c.usage is None for c in plain)


def test_unknown_paths_and_methods_have_the_openai_shape(server: dict[str, str]) -> None:
    import httpx
    import openai

    auth = {"Authorization": f"Bearer {KEY}"}
    for method, path, status, allowed in [("GET", "/v1/nope", 404, ""), ("GET", "/v1", 404, ""),
                                          ("POST", "/v1/embeddings", 404, ""),
                                          ("GET", "/v1/chat/completions", 405, "POST"),
                                          ("DELETE", "/v1/models", 405, "GET")]:
        raw = httpx.request(method, f"{server['url']}{path}", headers=auth, timeout=30)
        assert raw.status_code == status, (method, path, raw.text)
        error = raw.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}, error
        assert error["code"] == ("unknown_url" if status == 404 else "method_not_allowed")
        assert path in error["message"]
        if allowed:
            assert allowed in raw.headers["allow"] and allowed in error["message"]
    assert httpx.get(f"{server['url']}/v1/nope", timeout=30).status_code == 401  # the key first, as everywhere
    with pytest.raises(openai.NotFoundError) as unknown:
        client(server).embeddings.create(model="paper-assistant", input="A-Bench")
    assert unknown.value.body["code"] == "unknown_url"  # type: ignore[index]


def _wait_for_slow_request(model: FakeOpenAIServer, since: int, timeout_s: float = 60) -> None:
    """Until the scripted model has received the :data:`SLOW` question's answer request."""
    deadline = time.monotonic() + timeout_s
    while not any("sentence by sentence" in json.dumps(p) for p in model.requests[since:]):
        assert time.monotonic() < deadline, "the model was never asked"
        time.sleep(0.05)
    time.sleep(0.3)  # well inside its reply (sentences PACE_S apart)


def _hang_up_delay(model: FakeOpenAIServer, hangups: int, finished: int, left: float) -> float:
    """Seconds from the client leaving (``left``) to the model server seeing its request closed."""
    deadline = time.monotonic() + 10
    while len(model.hangups) == hangups:
        assert len(model.finished_at) == finished, "the model request ran to its end after the client left"
        assert time.monotonic() < deadline, "the model request was never closed"
        time.sleep(0.02)
    return model.hangups[hangups] - left


def test_a_client_leaving_a_stream_closes_the_model_request(server: dict[str, str], model: FakeOpenAIServer) -> None:
    since, hangups, finished = len(model.requests), len(model.hangups), len(model.finished_at)
    stream = client(server).chat.completions.create(model="paper-assistant", stream=True,
                                                    messages=[{"role": "user", "content": SLOW}])
    next(iter(stream))  # the role
    _wait_for_slow_request(model, since)
    stream.close()
    left = time.monotonic()
    assert _hang_up_delay(model, hangups, finished, left) < HANG_UP_S
    assert ask(server, [], TURNS[0]).choices[0].message.content  # served on (its concurrency slot was given back)


def test_a_client_leaving_before_the_reply_closes_the_model_request(server: dict[str, str],
                                                                   model: FakeOpenAIServer) -> None:
    since, hangups, finished = len(model.requests), len(model.hangups), len(model.finished_at)
    body = json.dumps({"model": "paper-assistant", "messages": [{"role": "user", "content": SLOW}]}).encode()
    port = int(server["url"].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     + f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        _wait_for_slow_request(model, since)
    left = time.monotonic()
    assert _hang_up_delay(model, hangups, finished, left) < HANG_UP_S
    assert ask(server, [], TURNS[0]).choices[0].message.content


def test_streaming_sends_the_first_verified_sentence_at_once(server: dict[str, str], model: FakeOpenAIServer) -> None:
    deltas: list[tuple[float, str]] = []
    for chunk in client(server).chat.completions.create(model="paper-assistant", stream=True,
                                                        messages=[{"role": "user", "content": SLOW}]):
        if chunk.choices and chunk.choices[0].delta.content:
            deltas.append((time.monotonic(), chunk.choices[0].delta.content))
    text = "".join(d for _, d in deltas)
    # the cited sentence came while the model was still writing (its last sentences seconds later), not at the end
    early = "".join(d for t, d in deltas if t < model.finished_at[-1] - 1.0)
    assert early.startswith("A-Bench is a benchmark") and early.endswith("[1]"), (early, text)
    assert text.startswith(early) and "References:" in text[len(early):]


LLM_CLI = Path(sys.executable).parent / "llm"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "no-stream"])
def test_the_llm_cli_prints_a_cited_answer(server: dict[str, str], tmp_path: Path, stream: bool) -> None:
    """Simon Willison's ``llm`` (an OpenAI client nobody here wrote; ``--no-stream`` read ``usage`` and crashed
    without it), configured for ``/v1`` in a temporary ``LLM_USER_PATH``."""
    if not LLM_CLI.exists():
        pytest.skip("the `llm` CLI is not installed in this environment (it is in the test extras: "
                    "pip install -e '.[test]')")
    (tmp_path / "extra-openai-models.yaml").write_text(
        f"- model_id: paper-assistant\n  model_name: paper-assistant\n  api_base: {server['url']}/v1\n"
        "  api_key_name: paper-assistant\n")
    (tmp_path / "keys.json").write_text(json.dumps({"paper-assistant": KEY}))
    env = {**os.environ, "LLM_USER_PATH": str(tmp_path)}

    def llm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(LLM_CLI), *args], env=env, capture_output=True, text=True, timeout=120)

    done = llm("-m", "paper-assistant", *([] if stream else ["--no-stream"]), TURNS[0])
    assert done.returncode == 0, done.stderr
    assert "A-Bench is a benchmark" in done.stdout and "[1]" in done.stdout and A_BENCH in done.stdout
    logged = json.loads(llm("logs", "--json", "-n", "1").stdout)[0]
    assert logged["input_tokens"] > 0 and logged["output_tokens"] > 0  # the usage llm read and logged


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
