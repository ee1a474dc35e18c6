"""The API of the chat UI's own process, answering with the real bundled model: the ``openai`` SDK against
``<ui>/v1`` (a cited answer whose annotations point at the right paper's link; streaming gives the same
text) and the ``mcp`` client against ``<ui>/mcp``, next to the Gradio page (the session's ``ui_url``
subprocess, see conftest.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.e2e.test_api import check_annotations
from tests.support.seeds import url_of

pytestmark = pytest.mark.llm

A_BENCH = url_of("000_43469673d6f8aaa0.txt", 8)
QUESTION = "Which paper proposes A-Bench?"
#: A question the bundled model answers.
NUMBER_QUESTION = "How many text-to-image models were the A-Bench images sampled from?"


def test_the_ui_process_answers_openai_clients_with_the_bundled_model(ui_url: str) -> None:
    import openai

    client = openai.OpenAI(base_url=f"{ui_url}v1", api_key="not-needed", max_retries=0, timeout=300)
    messages: list[Any] = [{"role": "user", "content": NUMBER_QUESTION}]
    reply = client.chat.completions.create(model="paper-assistant", messages=messages)
    message = reply.choices[0].message
    answer = message.model_extra["answer"]  # type: ignore[index]
    assert answer["model_used"] is True  # the bundled model was asked (its sentences verified or not)
    assert check_annotations(message)[1] == A_BENCH
    text = ""
    for chunk in client.chat.completions.create(model="paper-assistant", messages=messages, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
    assert text == message.content


def test_the_ui_process_serves_mcp(ui_url: str) -> None:
    from mcp import Client

    async def run() -> tuple[set[str], dict[str, Any]]:
        async with Client(f"{ui_url}mcp") as c:
            names = {t.name for t in (await c.list_tools()).tools}
            result = await c.call_tool("ask", {"question": QUESTION})
            assert not result.is_error, result.content
            return names, dict(result.structured_content)

    names, asked = asyncio.run(run())
    assert names == {"ask", "search_papers", "get_paper", "list_papers"}
    assert asked["answer"]["citations"][0]["url"] == A_BENCH and "[1]" in asked["text"]
