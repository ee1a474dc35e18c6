"""The citation grammar: ``[n]`` markers as answers show them and as models write them. A leaf module,
so data types (``assistant.types``) and prompt building (``assistant.llm.prompts``, which also strips what a
model echoes of our prompt markup) share it without importing each other."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: One citation group as a model writes it: ``[1]``, ``[1, 2]``, ``[1; 2]``, any spacing; group 1 = the numbers.
CITATION_MARKER = re.compile(r"\[(\s*\d+(?:\s*[,;]\s*\d+)*\s*)\]")
#: One label as shown to users and typed back by them ("as [2] says"); group 1 = the number.
CITATION_LABEL = re.compile(r"\[(\d+)\]")


def format_citations(labels: Iterable[int]) -> str:
    """The markers written after a sentence: ``(1, 3)`` -> ``"[1][3]"``."""
    return "".join(f"[{n}]" for n in labels)
