"""The grouped Settings (issue 31 item 5) read every variable the flat one did, to the same values.

tests/fixtures/settings-before-groups.json holds what the flat ``Settings`` of ad46f18 gave: its defaults, and its
values with every ``ASSISTANT_*`` variable set to a non-default value (``env``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from assistant import tuning
from assistant.config import FLAT, GROUPS, PROJECT_ROOT, Settings, env_names, load_settings
from assistant.errors import ConfigError

BEFORE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "settings-before-groups.json").read_text())


def _flat_values(settings: Settings) -> dict[str, object]:
    """``{flat name: value}`` as the fixture stores them (secrets revealed, paths as strings under <ROOT>)."""
    out: dict[str, object] = {}
    for name in BEFORE["defaults"]:
        if name in REMOVED_SINCE_GROUPS:
            continue
        group, field = FLAT.get(name, (None, name))
        value = getattr(getattr(settings, group) if group else settings, field)
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if isinstance(value, Path):
            value = str(value).replace(str(PROJECT_ROOT), "<ROOT>", 1)
        out[name] = value
    return out


def _kept(values: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in values.items() if k not in REMOVED_SINCE_GROUPS}


#: Defaults changed since, by flat name: the model name sent is the one bundled model's (issue 41).
CHANGED_SINCE_GROUPS = {"llm_model": ("smollm2", "qwen1.5b")}


def _now(values: dict[str, object]) -> dict[str, object]:
    """The flat defaults as they are now: removed settings gone, changed defaults changed."""
    kept = _kept(values)
    for name, (before, after) in CHANGED_SINCE_GROUPS.items():
        if kept.get(name) == before:
            kept[name] = after
    return kept


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    import os

    for name in [n for n in os.environ if n.upper().startswith("ASSISTANT_")]:
        monkeypatch.delenv(name)
    return monkeypatch


#: Variables added after the flat settings were dumped (issue 31): a new setting adds its name here.
ADDED_SINCE_GROUPS = {
    "ASSISTANT_LLM_BUNDLED",  # the bundled-model choice (issue 32)
    "ASSISTANT_SELF_CHECK_PROBABILITY",  # the one verifier's threshold (issue 40)
    "ASSISTANT_STATED_PROBABILITY",  # the stated check's threshold (issue 41)
    "ASSISTANT_LLM_PROMPT_CACHE_MB",  # the model server's RAM prompt cache: papers read once (issue 59)
    "ASSISTANT_LLM_PROMPT_STATE_DISK_MB",  # ... and on disk, across restarts (issue 59)
    "ASSISTANT_LLM_READ_AHEAD_PAPERS",  # papers read ahead in the background (issue 59)
}
#: Settings removed since, by flat name: the verifiers the self-check replaced and their thresholds (issue 40); the
#: answer profile, whose `small` choice only the 135M model used (issue 41); the margin within which a lookup read a
#: second paper (a lookup is written from one paper's reading, stop 64).
REMOVED_SINCE_GROUPS = {
    "verifier", "support_threshold", "support_probability", "llm_judge", "llm_profile", "context_similarity_margin",
}


def test_defaults_are_those_of_the_flat_settings(clean_env: pytest.MonkeyPatch) -> None:
    settings = Settings()
    assert _flat_values(settings) == _now(BEFORE["defaults"])
    assert settings.collection_name() == BEFORE["collection_name"]


def test_every_old_variable_sets_the_same_value(clean_env: pytest.MonkeyPatch) -> None:
    for name, value in BEFORE["env"].items():
        clean_env.setenv(name, value)
    assert _flat_values(Settings()) == _kept(BEFORE["from_env"])
    # no variable lost (ADDED_SINCE_GROUPS: the variables added after issue 31; a new setting goes there too)
    removed = {f"ASSISTANT_{n.upper()}" for n in REMOVED_SINCE_GROUPS}
    assert not set(BEFORE["env"]) - removed - env_names(Settings), "a variable of the flat settings was lost"
    added = env_names(Settings) - set(BEFORE["env"])
    assert added == ADDED_SINCE_GROUPS, "a new variable: add it to ADDED_SINCE_GROUPS"


def test_variable_names_are_case_insensitive_and_flags_override_them(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("assistant_top_k", "7")
    clean_env.setenv("ASSISTANT_LLM_MODEL", "from-env")
    settings = load_settings(top_k=3, llm_model=None)  # None: a flag not given
    assert settings.retrieval.top_k == 3 and settings.llm.model == "from-env"
    assert Settings().retrieval.top_k == 7


def test_an_invalid_value_names_its_variable(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("ASSISTANT_TOP_K", "0")
    with pytest.raises(ConfigError, match=r"top_k \(env ASSISTANT_TOP_K\)"):
        load_settings()
    with pytest.raises(ConfigError, match=r"llm_timeout_s \(env ASSISTANT_LLM_TIMEOUT_S\)"):
        load_settings(top_k=5, llm_timeout_s=0)
    with pytest.raises(ConfigError, match="topk"):
        load_settings(topk=5)


def test_fitted_values_are_group_fields_with_the_tuning_defaults(clean_env: pytest.MonkeyPatch) -> None:
    """A fitted value is a field (no variable) whose default is the tuning constant; a test changes it by an
    updated copy of the settings, not by patching a module global."""
    settings = Settings()
    assert settings.retrieval.bm25_max_postings == tuning.BM25_MAX_POSTINGS
    fitted = [f"{g}.{n}" for g, cls in GROUPS.items() for n in cls.model_fields if f"{g}.{n}" not in
              {".".join(v) for v in FLAT.values()}]
    assert "retrieval.bm25_max_postings" in fitted
    tight = settings.updated(retrieval={"bm25_max_postings": 1}, top_k=4)
    assert (tight.retrieval.bm25_max_postings, tight.retrieval.top_k) == (1, 4)
    assert settings.retrieval.bm25_max_postings == tuning.BM25_MAX_POSTINGS  # the original is unchanged
    with pytest.raises(ValidationError):
        settings.updated(top_k=0)
    with pytest.raises(TypeError):
        settings.updated(topk=4)


def test_an_llm_endpoint_that_is_not_an_http_url_is_refused_at_start_up(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"llm_base_url \(env ASSISTANT_LLM_BASE_URL\).*not an http\(s\) URL"):
        load_settings(llm_base_url="localhost:11434")  # no scheme: openai would fail only at the first question
    clean_env.setenv("ASSISTANT_LLM_BASE_URL", "ftp://user:secret@host/v1")
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert "secret" not in str(e.value)  # the value may hold credentials: not echoed
    clean_env.setenv("ASSISTANT_LLM_BASE_URL", "")
    assert load_settings().llm.base_url is None  # empty = unset: the bundled model
    assert load_settings(llm_base_url="https://api.example.org/v1").llm.base_url == "https://api.example.org/v1"
