"""Logging set-up; called only by entry points."""

from __future__ import annotations

import logging


def configure_logging(level: str = "INFO") -> None:
    """Log ``time level name: message`` to stderr; quiet chatty third-party loggers."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "chromadb", "sentence_transformers", "urllib3", "bm25s", "gradio", "openai", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
