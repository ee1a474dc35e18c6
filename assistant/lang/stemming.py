"""The one English stemmer: NLTK's Snowball (Porter 2), built once behind a lock.

NLTK is imported on the first call, not at import time (importing it takes seconds, and importing ``lang`` must
stay cheap and free of side effects: tests/unit/test_layering.py). Issue 35: a bare lazy ``import nltk`` inside
request threads raced ("partially initialized module 'nltk' has no attribute 'data'"), so every first use of NLTK
in this package (:func:`stem`, and the sentence tokenizer in :mod:`assistant.lang.text`) runs under
:data:`NLTK_LOCK`; after that the built stemmer is read without locking.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache

#: Held while anything in ``lang`` imports NLTK or builds an NLTK object for the first time.
NLTK_LOCK = threading.RLock()
_snowball: Callable[[str], str] | None = None


def _stemmer() -> Callable[[str], str]:
    global _snowball
    if _snowball is None:
        with NLTK_LOCK:
            if _snowball is None:
                from nltk.stem.snowball import SnowballStemmer

                _snowball = SnowballStemmer("english").stem
    return _snowball


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """``word``'s Snowball (English) stem, lower-cased ("generation", "Generating" -> ``generat``;
    "parameters" -> ``paramet``; "accuracy" -> ``accuraci``). Safe to call from many threads at once."""
    return _stemmer()(word)
