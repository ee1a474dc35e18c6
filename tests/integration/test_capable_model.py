"""The capable-model path (issue 13.7): a scripted OpenAI-compatible server answers like a capable model —
several sentences mixing right claims and subtly wrong ones (taken from eval/claims-dev.jsonl: a negation,
an overclaim, a fact of another paper), with its own, sometimes wrong, ``[n]`` markers. Through
``ask --json``, a follow-up and a comparison: the supported sentences are shown with the right ``[n]``,
the rest are listed in ``dropped_sentences``, and the UI says how many were removed. The scripted model's
self-check says no to the wrong claims, as the verifier asks of the real one (whose answers on such claims are
measured in tests/e2e/test_eval_claims.py); a fact of another paper is also caught by the exact checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_openai_server import FakeOpenAIServer
from ui.render import answer_markdown

REPO = Path(__file__).resolve().parents[2]
EM_LLM = "004_c45bebc30e22eceb.txt#17"
LERET = "004_c45bebc30e22eceb.txt#11"

CLAIMS = {json.loads(line)["id"]: json.loads(line)
          for line in (REPO / "eval" / "claims-dev.jsonl").read_text().splitlines() if line.strip()}
TRUE_EM = CLAIMS["c027"]["claim"]     # supported synthesis about EM-LLM
NEG_EM = CLAIMS["c056"]["claim"]      # negation: "through fine-tuning" (the paper needs none)
OVER_EM = CLAIMS["c071"]["claim"]     # overclaim: "in every task evaluated"
TRUE_LERET = CLAIMS["c035"]["claim"]  # supported number claim about LeReT
WRONG_LERET = CLAIMS["c066"]["claim"]  # a fact of EM-LLM attributed to LeReT

FIRST = f"{TRUE_EM} [1] {NEG_EM} [1] {OVER_EM} [2]"
FOLLOW_UP = f"{NEG_EM} [1] {TRUE_EM} [3]"
#: A comparison's parts, each written from one paper's reading: LeReT's mixes its true number claim with EM-LLM's fact.
COMPARE_LERET = f"{TRUE_LERET} [1] {WRONG_LERET} [2]"
COMPARE_EM = f"{TRUE_EM} [1]"


def _reply(payload: dict[str, Any]) -> str:
    """The capable model's reply: by question, and for a comparison's part, by the paper read."""
    content = payload["messages"][-1]["content"]
    if "Compare it with LeReT" in content:
        return COMPARE_LERET if "Grounding by Trying" in content.split("\n", 1)[0] else COMPARE_EM
    return FOLLOW_UP if "Does it need fine-tuning?" in content else FIRST


def _self_check(payload: dict[str, Any]) -> float:
    """The scripted model's P(yes): low for the wrong claims about EM-LLM, high for everything else."""
    asked = payload["messages"][-1]["content"]
    return 0.1 if any(f"Sentence: {claim}" in asked for claim in (NEG_EM, OVER_EM, WRONG_LERET)) else 0.95


def _capable(scripted_assistant, server):  # type: ignore[no-untyped-def]
    return scripted_assistant(server, model="capable-scripted", max_output_tokens=400)


def test_conversation_with_a_capable_model_keeps_true_claims_with_right_citations(scripted_assistant) -> None:  # type: ignore[no-untyped-def]
    # a comparison asks once per paper, each part from that paper's reading (issue 59)
    with (FakeOpenAIServer(_reply, yes_probability=_self_check) as server,
          _capable(scripted_assistant, server) as assistant):
        session = assistant.new_session()
        first = session.ask("How does EM-LLM handle very long contexts?")
        shown = [s.text for s in first.sentences]
        assert TRUE_EM in shown and NEG_EM not in shown and OVER_EM not in shown
        assert set(first.dropped) >= {NEG_EM, OVER_EM}
        ids = {c.n: c.paper.id for c in first.citations}
        assert all(ids[n] == EM_LLM for s in first.sentences if s.text == TRUE_EM for n in s.citations)
        html = answer_markdown(first)
        assert "2 sentences removed: not supported by the abstracts" in html

        follow = session.ask("Does it need fine-tuning?")
        assert NEG_EM not in [s.text for s in follow.sentences] and NEG_EM in follow.dropped
        assert {c.paper.id for c in follow.citations} == {EM_LLM}

        comp = session.ask("Compare it with LeReT.")
        assert comp.comparison is not None
        ids = {c.n: c.paper.id for c in comp.citations}
        by_text = {s.text: [ids[n] for n in s.citations] for s in comp.sentences}
        assert by_text.get(TRUE_LERET) == [LERET]
        assert WRONG_LERET not in by_text and WRONG_LERET in comp.dropped
        if TRUE_EM in by_text:
            assert by_text[TRUE_EM] == [EM_LLM]
        prompt = server.requests[0]["messages"][1]["content"]  # one paper: its whole abstract, read once
        assert prompt.startswith("Abstract of ") and len(prompt) > 600
        parts = [r["messages"][1]["content"] for r in server.requests[2:]]
        assert len(parts) == 2 and all(p.count("Abstract of ") == 1 for p in parts)  # each part read one paper
