"""The assistant reads every indexed paper ahead when the index is small (service.Assistant.start_read_ahead), with
exactly the reading an answer about that paper starts with."""

from __future__ import annotations

from assistant.llm.prompts import READ_AHEAD, reading_messages
from assistant.service import build_assistant
from tests.unit.test_read_ahead import Backend


def test_every_seed_is_read_ahead_with_the_reading_answers_use(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    backend = Backend()
    with build_assistant(seeded_settings, embed_model=embed_model, backend=backend) as assistant:  # type: ignore[arg-type]
        assistant.start_read_ahead(backend)  # type: ignore[arg-type]
        assert assistant.read_ahead is not None and assistant.read_ahead.finished.wait(60)
        hits = assistant.retriever.retrieve("How does DUALFormer balance local and global expressivity?")
    assert assistant.read_ahead.done == assistant.paper_count == len(backend.asked) == 38
    assert backend.closed  # closing the assistant closed the read-ahead's backend: no server restarted for it
    hit = hits[0].paper
    assert reading_messages((hit.title, hit.text), READ_AHEAD) in backend.asked  # what the answer's reading reuses


def test_a_larger_index_than_the_setting_is_not_read_ahead(seeded_settings, embed_model) -> None:  # type: ignore[no-untyped-def]
    backend = Backend()
    settings = seeded_settings.updated(llm={"read_ahead_papers": 37})
    with build_assistant(settings, embed_model=embed_model, backend=backend) as assistant:  # type: ignore[arg-type]
        assistant.start_read_ahead(backend)  # type: ignore[arg-type]
    assert assistant.read_ahead is None and backend.asked == []
