"""The query object retrieval receives: a text and its embedding, computed once (per turn, through the turn's
:class:`~assistant.understand.turn.TurnCache`), wrapping llama-index's ``QueryBundle`` for its retrievers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_index.core.schema import QueryBundle

    from assistant.understand.turn import TurnCache


@dataclass(frozen=True, slots=True)
class Query:
    """``text`` to search for and its unit query vector ``embedding``; ``cache``: the turn's memo, so texts
    derived from this query (its clauses) are embedded once per turn too (None: no sharing)."""

    text: str
    embedding: list[float]
    cache: TurnCache | None = None

    @property
    def bundle(self) -> QueryBundle:
        """The llama-index ``QueryBundle`` (``query_str``, ``embedding``) of this query."""
        from llama_index.core.schema import QueryBundle

        return QueryBundle(query_str=self.text, embedding=self.embedding)
