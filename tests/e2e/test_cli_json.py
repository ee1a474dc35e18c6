"""``assistant ask --json`` as a subprocess (a cold CLI start) against a scripted capable model: the
supported sentences are in ``answer``, the subtly wrong ones in ``dropped_sentences`` (the in-process
path is tests/integration/test_capable_model.py, which this reuses the replies and self-check answers of)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.integration.test_capable_model import EM_LLM, FIRST, NEG_EM, OVER_EM, REPO, TRUE_EM, _self_check
from tests.support.fake_openai_server import FakeOpenAIServer


def test_ask_json_with_a_capable_model(seeded_settings) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAIServer([FIRST], yes_probability=_self_check) as server:  # its self-check says no to the wrong
        env = dict(os.environ, ASSISTANT_STORAGE_DIR=str(seeded_settings.storage.storage_dir),
                   ASSISTANT_LLM_BASE_URL=server.base_url,
                   ASSISTANT_LLM_MODEL="capable-scripted", ASSISTANT_LOG_LEVEL="WARNING")
        proc = subprocess.run([sys.executable, "-m", "assistant", "ask", "--json",
                               "How does EM-LLM handle very long contexts?"],
                              env=env, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert TRUE_EM in out["answer"] and NEG_EM not in out["answer"] and OVER_EM not in out["answer"]
    assert NEG_EM in out["dropped_sentences"] and OVER_EM in out["dropped_sentences"]
    assert out["model_used"] is True and out["mode"] == "generated"
    assert [c["paper_id"] for c in out["citations"]] == [EM_LLM]
