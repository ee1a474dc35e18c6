"""Paper fields read the same way from every input format (seed metadata, JSONL/CSV exports): authors,
links and stand-in titles. A leaf module: no imports from the rest of ``assistant``."""

from __future__ import annotations

import re

_AUTHOR_SEPARATORS = re.compile(r";| and |,")


def parse_authors(value: object) -> tuple[str, ...]:
    """Author names from a list of strings, or from one string separated by ``;``, `` and `` or ``,``
    (``"A. Smith; B. Jones and C. Wu"`` -> three names). Anything else: no authors."""
    if isinstance(value, list):
        return tuple(a.strip() for a in value if isinstance(a, str) and a.strip())
    if isinstance(value, str) and value.strip():
        return tuple(p.strip() for p in _AUTHOR_SEPARATORS.split(value) if p.strip())
    return ()


def safe_url(url: str) -> str:
    """``url`` when it is an http(s) link, else "" (no ``javascript:`` or ``file:`` links reach the UI)."""
    return url if url.startswith(("https://", "http://")) else ""


def derive_title(text: str, max_words: int = 12) -> str:
    """A stand-in title from the abstract's first sentence, cut to ``max_words`` words (" …" added)."""
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    words = first.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
