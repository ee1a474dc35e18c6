"""Paper assistant core: cited answers about research-paper abstracts (no UI code here).

Public API: :class:`Settings` / :func:`load_settings`, :func:`build_assistant` -> :class:`Assistant`
(``ask``, ``stream``, ``new_session``), the :class:`Answer` and :class:`Citation` types, and
:func:`ingest`. Importing this package has no side effects, and is cheap: the names are imported on
first use (PEP 562), so the command line's early checks do not wait for the openai client or
llama-index to load.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assistant.config import Settings, load_settings
    from assistant.ingest.pipeline import ingest
    from assistant.service import Assistant, build_assistant
    from assistant.types import Answer, Citation

_WHERE = {
    "Settings": "assistant.config",
    "load_settings": "assistant.config",
    "ingest": "assistant.ingest.pipeline",
    "Assistant": "assistant.service",
    "build_assistant": "assistant.service",
    "Answer": "assistant.types",
    "Citation": "assistant.types",
}

__all__ = ["Answer", "Assistant", "Citation", "Settings", "build_assistant", "ingest", "load_settings"]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first access (``from assistant import build_assistant``)."""
    if name in _WHERE:
        value = getattr(import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'assistant' has no attribute {name!r}")
