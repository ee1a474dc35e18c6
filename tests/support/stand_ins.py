"""Stand-ins for the answering model where a test is about code around it, not about what the model decides."""

from __future__ import annotations

from collections.abc import Iterator, Sequence


class YesModel:
    """A model that says yes to every self-check (``P(yes) = p``) and never writes: what is left to decide is the
    code's (alignment, the exact constraints, citations). What the real model decides is measured on the frozen
    claim sets (tests/e2e/test_eval_claims.py)."""

    model = "yes-model"

    def __init__(self, p: float = 1.0) -> None:
        self.p = p
        self.asked: list[list[dict[str, str]]] = []

    def yes_probability(self, messages: Sequence[dict[str, str]]) -> float:
        self.asked.append(list(messages))
        return self.p

    def stream(self, messages: Sequence[dict[str, str]], max_tokens: int | None = None) -> Iterator[str]:
        raise AssertionError("this stand-in only checks")


def yes_verifier(p: float = 1.0):  # type: ignore[no-untyped-def]
    """The shipped verifier over a :class:`YesModel` (threshold: the setting's default)."""
    from assistant.config import Settings
    from assistant.verify.verifiers import build_verifier

    return build_verifier(Settings().verify, YesModel(p))
