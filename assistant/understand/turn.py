"""The per-turn memo of model outputs: what one chat turn computes about its query and its evidence (query
vectors by text, each abstract's sentence roles, answer-sentence scores) is computed once and shared by every
stage of that turn. One object per turn, created with the turn's :class:`~assistant.understand.parse.Question`
and dropped with it; never a module global (the models' weights are cached per process, their outputs are not)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class TurnCache:
    """``kind`` + key -> a value computed once for this turn (:meth:`get`). Not thread-safe: one turn runs in
    one thread."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, Hashable], Any] = {}

    def get(self, kind: str, key: Hashable, compute: Callable[[], T]) -> T:
        """The value of ``kind`` for ``key`` (e.g. ``"query"`` and a text), computed by ``compute()`` the first
        time it is asked for in this turn."""
        slot = (kind, key)
        if slot not in self._memo:
            self._memo[slot] = compute()
        return self._memo[slot]

    def get_many(self, kind: str, keys: Sequence[Hashable], compute: Callable[[list[Any]], list[T]]) -> list[T]:
        """The values of ``kind`` for ``keys``, in order; the keys not yet computed in this turn are computed by one
        call, ``compute(missing keys)`` (their values in the same order), e.g. several texts embedded in one run."""
        missing = [k for k in dict.fromkeys(keys) if (kind, k) not in self._memo]
        if missing:
            for k, v in zip(missing, compute(missing), strict=True):
                self._memo[(kind, k)] = v
        return [self._memo[(kind, k)] for k in keys]
