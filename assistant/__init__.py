"""Paper assistant core: cited answers about research-paper abstracts (no UI code here).

Public API: :class:`Settings` / :func:`load_settings`, :func:`build_assistant` -> :class:`Assistant`
(``ask``, ``stream``, ``new_session``), the :class:`Answer` and :class:`Citation` types, and
:func:`ingest`. Importing this package has no side effects.
"""

from assistant.config import Settings, load_settings
from assistant.ingest import ingest
from assistant.service import Assistant, build_assistant
from assistant.types import Answer, Citation

__all__ = ["Answer", "Assistant", "Citation", "Settings", "build_assistant", "ingest", "load_settings"]
