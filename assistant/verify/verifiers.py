"""The verifier: what decides whether an answer sentence is supported by its candidate evidence.

:class:`~assistant.verify.attribution.Attributor` aligns a sentence to its candidate evidence (best first) and
hands them to the :class:`Verifier`, which returns the :class:`Alignment`. One ships, :class:`SelfCheckVerifier`
(issue 40): the exact constraints (:mod:`assistant.verify.constraints`), then the answering model itself reads
the cited abstract and says whether every fact of the sentence is stated there. It replaced the hand-written
meaning rules, the trained MiniLM support model and the capable-model judge, which lost to it on the validation
claims (docs/results/issue40).

:func:`build_verifier` is the one place it is built; the :class:`Verifier` protocol is the seam a test's stand-in
fits.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from assistant.types import SentenceCheck
from assistant.verify.constraints import hard_mismatches

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from assistant.llm.client import ChatBackend

__all__ = [
    "Alignment",
    "Evidence",
    "SelfCheckVerifier",
    "Verdict",
    "Verifier",
    "VerifierSettings",
    "build_verifier",
]

#: What the verifier says of a sentence against its evidence: ``supported`` or ``not_stated`` (the self-check's
#: answer); ``constraint`` when an exact check (a number, a name) failed first; ``""`` when there was nothing to
#: decide (no evidence, under the alignment floor, a title).
Verdict = Literal["supported", "not_stated", "constraint", ""]


@dataclass(frozen=True, slots=True)
class Alignment:
    """An answer sentence's best evidence: ``citations`` (source numbers, one or two), the evidence
    ``sentences`` (one per citation for a two-paper alignment; one or two for one paper), the support
    probability ``score`` in [0, 1] (the self-check's ``P(yes)``; 0.0 when it was not asked), the ``reasons`` it
    is not supported (a failed exact constraint, or the self-check's answer; empty when supported), the
    ``alignment`` score (cosine + overlap) that picked the evidence, and the ``verdict`` (:data:`Verdict`)."""

    citations: tuple[int, ...]
    sentences: tuple[str, ...]
    score: float
    reasons: tuple[str, ...] = ()
    alignment: float = 0.0
    verdict: Verdict = ""

    @property
    def supported(self) -> bool:
        """True when there is evidence and no check failed."""
        return bool(self.citations) and not self.reasons


@dataclass(frozen=True, slots=True)
class Evidence:
    """One candidate evidence set for a sentence: the ``citations`` (source numbers, sorted), the evidence
    ``sentences`` (one or two abstract sentences), the cited papers' ``papers`` texts (title + abstract, one per
    citation, in citation order), the ``alignment`` score (cosine + overlap) that made it a candidate, and the
    cited papers' ``sources`` as ``(title, abstract)`` pairs (what the self-check reads)."""

    citations: tuple[int, ...]
    sentences: tuple[str, ...]
    papers: tuple[str, ...]
    alignment: float
    sources: tuple[tuple[str, str], ...] = ()


class Verifier(Protocol):
    """Decides whether a sentence is supported by one of its candidate evidence sets."""

    #: what a kept sentence's reader is told passed (:data:`assistant.types.SentenceCheck`)
    check: SentenceCheck

    def decide(self, sentence: str, candidates: Sequence[Evidence], people: set[str]) -> Alignment:
        """The verdict on ``sentence`` (markers removed) given its ``candidates`` (non-empty, best aligned first)
        and the ``people`` it credits (lower-cased full names; their words are not proper nouns to find)."""
        ...


class SelfCheckVerifier:
    """The ``self_check`` verifier: the hard constraints pick the candidates (an exact number, name or credited
    person missing from a paper rules it out); then the answering model itself reads the abstract(s) of the
    best-aligned passing candidate and is asked whether every fact of the sentence is stated there
    (:func:`assistant.llm.prompts.self_check_messages`). The sentence is kept, citing those papers, when
    ``P(yes) >= min_probability``; otherwise its verdict is ``not_stated``.

    Sentences about the same paper share the prompt up to the sentence, so a server that keeps its last prompt
    (llama.cpp) reads the abstract once for them (about 4 s, then about 0.8 s a sentence, on 2 cores with the
    bundled 1.5B model; docs/results/issue40).

    Args:
        backend: the answering model (``ChatBackend.yes_probability``).
        min_probability: the threshold (``Settings.verify.self_check_probability``, chosen on validation claims).

    Raises (from :meth:`decide`):
        LLMUnavailableError: the model could not be asked; the sentence is then not shown as checked.
    """

    check: SentenceCheck = "self_check"

    def __init__(self, backend: ChatBackend, min_probability: float) -> None:
        self.backend = backend
        self.min_probability = min_probability

    def decide(self, sentence: str, candidates: Sequence[Evidence], people: set[str]) -> Alignment:
        from assistant.llm.prompts import read_check_messages, self_check_messages

        checked = [(c, tuple(hard_mismatches(sentence, c.sentences, " ".join(c.papers), people))) for c in candidates]
        passing = [c for c, hard in checked if not hard]
        if not passing:
            first, hard = checked[0]
            return Alignment(first.citations, first.sentences, 0.0, hard, first.alignment, "constraint")
        best = passing[0]
        # one paper: asked of its reading (the prefix every question about it shares); two papers: both abstracts
        if len(best.sources) == 1:
            messages = read_check_messages(best.sources[0], sentence)
        else:
            messages = self_check_messages(best.sources, sentence)
        p = self.backend.yes_probability(messages)
        if p >= self.min_probability:
            return Alignment(best.citations, best.sentences, p, (), best.alignment, "supported")
        where = ", ".join(f"[{n}]" for n in best.citations)
        reason = f"the model's self-check: not stated in {where} (P(yes) {p:.2f} < {self.min_probability:.2f})"
        return Alignment(best.citations, best.sentences, p, (reason,), best.alignment, "not_stated")


class VerifierSettings(Protocol):
    """The settings the verifier is built from (:class:`assistant.config.Settings` has them)."""

    @property
    def self_check_probability(self) -> float: ...


def build_verifier(settings: VerifierSettings, backend: ChatBackend) -> Verifier:
    """The verifier (build it once per answer and pass it to every ``Attributor``).

    Args:
        settings: ``self_check_probability`` (``Settings.verify``).
        backend: the answering model, which also checks (:meth:`ChatBackend.yes_probability`).
    """
    return SelfCheckVerifier(backend, settings.self_check_probability)


def _asked(backend: ChatBackend, messages: list[dict[str, str]], what: str) -> float | None:
    """``backend.yes_probability(messages)``, or None (logged, naming ``what`` was asked) when the model cannot be
    asked: the one place a yes/no decision of the model meets a failed connection."""
    from assistant.llm.client import connection_errors

    try:
        return backend.yes_probability(messages)
    except connection_errors() as e:
        logger.warning("the model could not tell %s (%s)", what, getattr(e, "reason", e))
        return None


def named_probability(backend: ChatBackend, source: tuple[str, str], name: str) -> float | None:
    """P(the paper ``source`` = ``(title, abstract)`` is the one called ``name``, or the one that introduces it): the
    answering model is asked :data:`assistant.llm.prompts.READ_NAMED` of the paper's reading. Measured on pairs made
    from the corpus: benchmarks/named_check.py, docs/results/issue41. None when the model cannot be asked (callers
    then decide nothing)."""
    from assistant.llm.prompts import READ_NAMED, reading_messages, sanitize_source_text

    ask = READ_NAMED.format(name=sanitize_source_text(name))
    return _asked(backend, reading_messages(source, ask), f"whether {source[0]!r} is {name!r}")


def stated_probability(backend: ChatBackend, sources: Sequence[tuple[str, str]], question: str) -> float | None:
    """P(the abstracts state the answer to ``question``): the answering model reads the ``(title, abstract)`` pairs
    of the paper(s) the question is about and is asked :data:`assistant.llm.prompts.READ_STATED` of the paper's reading
    (several papers: :data:`assistant.llm.prompts.STATED_QUESTION` after them all); ``P(yes)`` in
    [0, 1] from its log-probabilities. The prefix is the self-check's, so a server that keeps prompt state reads only
    the question. Measured against the trained model it replaced: benchmarks/stated_check.py, docs/results/issue41.
    None when the model cannot be asked (callers treat it as "cannot tell", never "not stated")."""
    from assistant.llm.prompts import READ_STATED, reading_messages, stated_check_messages

    if len(sources) == 1:  # one paper: asked of its reading
        messages = reading_messages(sources[0], READ_STATED.format(question=" ".join(question.split())))
    else:
        messages = stated_check_messages(sources, question)
    return _asked(backend, messages, f"whether the abstracts state {question!r}")
