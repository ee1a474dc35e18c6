"""The verifier seam: what decides whether an answer sentence is supported by its candidate evidence.

:class:`~assistant.verify.attribution.Attributor` aligns a sentence to its candidate evidence (best first) and
hands them to a :class:`Verifier`, which returns the :class:`Alignment`. Three ship:

* :class:`RulesVerifier` (``ASSISTANT_VERIFIER=rules``, the default): the best-aligned candidate must reach the
  alignment threshold, then pass the hard constraints (:mod:`assistant.verify.constraints`) and the
  hand-written meaning checks (:func:`assistant.verify.rules.mismatches`); the support model only reports its
  probability for a kept sentence.
* :class:`ModelVerifier` (``ASSISTANT_VERIFIER=model``): the hard constraints, then the trained entailment model
  (:mod:`assistant.verify.support_model`, issue 40: supported / contradicted / not stated) picks the most probable
  candidate and decides. Not the default: on every blind claim set it is behind the rules (MODEL_CARD.md).
* :class:`JudgedVerifier`: wraps either and asks a capable model (:class:`assistant.verify.judge.LLMJudge`,
  ``ASSISTANT_LLM_JUDGE``) about each sentence the inner verifier keeps; it can only drop sentences.

:func:`build_verifier` is the one place a verifier is built from the settings; a new verifier is one more
class with :meth:`Verifier.decide`, one more branch there and its name in
:data:`assistant.setting_groups.VerifierName` (``ASSISTANT_VERIFIER`` accepts exactly those names;
``tests/integration/test_eval_claims.py`` runs every one of them on the held-out claims).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, get_args

import numpy as np

from assistant.setting_groups import VerifierName
from assistant.verify.constraints import hard_mismatches
from assistant.verify.rules import mismatches

if TYPE_CHECKING:
    from assistant.llm.client import ChatBackend
    from assistant.verify.judge import LLMJudge
    from assistant.verify.support_model import SupportModel

__all__ = [
    "Alignment",
    "Evidence",
    "JudgedVerifier",
    "ModelVerifier",
    "RulesVerifier",
    "Verdict",
    "Verifier",
    "VerifierSettings",
    "build_verifier",
]

#: The verifiers :func:`build_verifier` knows (``Settings.verify.verifier``): the names of
#: :data:`assistant.setting_groups.VerifierName`, the one list.
VERIFIER_NAMES: tuple[str, ...] = get_args(VerifierName)


#: What a verifier says of a sentence against its evidence: the entailment model's ``supported`` /
#: ``contradicted`` / ``not_stated`` (``model`` verifier); ``rules`` when the rules verifier's meaning checks
#: decided (kept or not: see ``reasons``); ``constraint`` when an exact check (a number, a name) failed first;
#: ``""`` when there was nothing to decide (no evidence, under the alignment threshold, a title).
Verdict = Literal["supported", "contradicted", "not_stated", "constraint", "rules", ""]


@dataclass(frozen=True, slots=True)
class Alignment:
    """An answer sentence's best evidence: ``citations`` (source numbers, one or two), the evidence
    ``sentences`` (one per citation for a two-paper alignment; one or two for one paper), the support
    probability ``score`` in [0, 1] (0.0 when nothing was eligible), the ``reasons`` it is not supported (a
    failed exact constraint, or the model's verdict; empty when supported), the ``alignment`` score (cosine +
    overlap) that picked the evidence, and the ``verdict`` (:data:`Verdict`) with the model's
    ``probabilities`` of (supported, contradicted, not stated) when it read the sentence."""

    citations: tuple[int, ...]
    sentences: tuple[str, ...]
    score: float
    reasons: tuple[str, ...] = ()
    alignment: float = 0.0
    verdict: Verdict = ""
    probabilities: tuple[float, float, float] | None = None

    @property
    def supported(self) -> bool:
        """True when there is evidence and no check failed."""
        return bool(self.citations) and not self.reasons


@dataclass(frozen=True, slots=True)
class Evidence:
    """One candidate evidence set for a sentence: the ``citations`` (source numbers, sorted), the evidence
    ``sentences`` (one or two abstract sentences), the cited papers' ``papers`` texts (title + abstract, one per
    citation, in citation order) and the ``alignment`` score (cosine + overlap) that made it a candidate."""

    citations: tuple[int, ...]
    sentences: tuple[str, ...]
    papers: tuple[str, ...]
    alignment: float


class Verifier(Protocol):
    """Decides whether a sentence is supported by one of its candidate evidence sets."""

    def decide(self, sentence: str, candidates: Sequence[Evidence], people: set[str]) -> Alignment:
        """The verdict on ``sentence`` (markers removed) given its ``candidates`` (non-empty, best aligned first)
        and the ``people`` it credits (lower-cased full names; their words are not proper nouns to find)."""
        ...

    def shown_support(self, alignment: Alignment) -> float:
        """The figure this verifier compared with its threshold for a kept sentence (``AnswerSentence.support``;
        the UI and ``--json`` show it as the sentence's support). A verifier without a probability returns the
        score it decided on (``RulesVerifier``: the alignment) and may leave ``Alignment.score`` at 0.0."""
        ...


class _SupportModelUser:
    """Holds the support model, loaded at the first sentence that needs it (start-up stays model-free)."""

    def __init__(self, model: SupportModel | None) -> None:
        self._given_model = model

    @property
    def _model(self) -> SupportModel:
        if self._given_model is None:
            from assistant.verify.support_model import load_support_model

            self._given_model = load_support_model()
        return self._given_model


class RulesVerifier(_SupportModelUser):
    """The ``rules`` verifier: the best-aligned candidate must reach ``threshold``, then pass the hard constraints
    and :func:`assistant.verify.rules.mismatches`; the support model only reports its probability for a kept
    sentence (``Alignment.score``).

    Args:
        threshold: minimum alignment in [0, 1] (``Settings.verify.support_threshold``).
        model: the support model (default: the shipped one, loaded at first use).
    """

    def __init__(self, threshold: float, model: SupportModel | None = None) -> None:
        super().__init__(model)
        self.threshold = threshold

    def decide(self, sentence: str, candidates: Sequence[Evidence], people: set[str]) -> Alignment:
        best = candidates[0]
        citations, texts, align_score = best.citations, best.sentences, best.alignment
        if align_score < self.threshold:
            return Alignment((), texts, 0.0, (f"alignment {align_score:.2f} under the threshold",), align_score, "")
        hard = hard_mismatches(sentence, texts, " ".join(best.papers), people)
        if hard:
            return Alignment(citations, texts, 0.0, tuple(hard), align_score, "constraint")
        reasons = mismatches(sentence, texts, best.papers)
        if reasons:
            return Alignment(citations, texts, 0.0, tuple(reasons), align_score, "rules")
        probs = self._model.verdict_probabilities([(sentence, texts)])[0]
        return Alignment(citations, texts, probs[0], (), align_score, "rules", probs)

    def shown_support(self, alignment: Alignment) -> float:
        return alignment.alignment


class ModelVerifier(_SupportModelUser):
    """The ``model`` verifier: every candidate passing the hard constraints is read by the support model; the most
    probable one is kept when ``P(supported) >= min_probability``.

    Args:
        min_probability: the support model's threshold (``Settings.verify.support_probability``).
        model: the support model (default: the shipped one, loaded at first use).
    """

    def __init__(self, min_probability: float, model: SupportModel | None = None) -> None:
        super().__init__(model)
        self.min_probability = min_probability

    def decide(self, sentence: str, candidates: Sequence[Evidence], people: set[str]) -> Alignment:
        checked = [(c, tuple(hard_mismatches(sentence, c.sentences, " ".join(c.papers), people))) for c in candidates]
        passing = [c for c, hard in checked if not hard]
        if not passing:
            first, hard = checked[0]
            return Alignment(first.citations, first.sentences, 0.0, hard, first.alignment, "constraint")
        triples = self._model.verdict_probabilities([(sentence, c.sentences) for c in passing])
        k = int(np.argmax([t[0] for t in triples]))
        best, probs = passing[k], triples[k]
        p = probs[0]
        if p >= self.min_probability:
            return Alignment(best.citations, best.sentences, p, (), best.alignment, "supported", probs)
        verdict: Verdict = "contradicted" if probs[1] >= probs[2] else "not_stated"
        said = "contradicted by" if verdict == "contradicted" else "not stated in"
        reason = f"{said} the evidence (support probability {p:.2f} < {self.min_probability:.2f})"
        return Alignment(best.citations, best.sentences, p, (reason,), best.alignment, verdict, probs)

    def shown_support(self, alignment: Alignment) -> float:
        return alignment.score


class JudgedVerifier:
    """``inner``, then a capable model's second opinion on each sentence ``inner`` keeps: the judge's "not
    supported" drops it (the reason says so), no verdict leaves ``inner``'s decision (:mod:`assistant.verify.judge`).
    """

    def __init__(self, inner: Verifier, judge: LLMJudge) -> None:
        self.inner = inner
        self.judge = judge

    def decide(self, sentence: str, candidates: Sequence[Evidence], people: set[str]) -> Alignment:
        a = self.inner.decide(sentence, candidates, people)
        if not a.supported:
            return a
        verdict = self.judge.judge(sentence, a.sentences)
        if verdict is not None and not verdict.supported:
            reason = f"the judge model: {verdict.reason or 'not supported'}"
            return Alignment(a.citations, a.sentences, a.score, (reason,), a.alignment)
        return a

    def shown_support(self, alignment: Alignment) -> float:
        return self.inner.shown_support(alignment)


class VerifierSettings(Protocol):
    """The settings a verifier is built from (:class:`assistant.config.Settings` has them)."""

    @property
    def verifier(self) -> str: ...

    @property
    def support_threshold(self) -> float: ...

    @property
    def support_probability(self) -> float: ...

    @property
    def llm_judge(self) -> bool: ...


def build_verifier(
    settings: VerifierSettings,
    *,
    backend: ChatBackend | None = None,
    small_model: bool = False,
    model: SupportModel | None = None,
) -> Verifier:
    """The verifier the settings choose (build it once per answer and pass it to every ``Attributor``).

    Args:
        settings: ``verifier`` (``rules`` or ``model``), ``support_threshold``, ``support_probability`` and
            ``llm_judge``.
        backend: the answer's chat backend; with ``llm_judge`` and a capable model (not ``small_model``) it also
            judges every kept sentence (:class:`JudgedVerifier`). None: no judge.
        small_model: the bundled small model answers (the ``small`` profile): never a judge.
        model: the support model (default: the shipped one, loaded at first use).

    Raises:
        ValueError: an unknown ``settings.verifier``.
    """
    base: Verifier
    if settings.verifier == "rules":
        base = RulesVerifier(settings.support_threshold, model)
    elif settings.verifier == "model":
        base = ModelVerifier(settings.support_probability, model)
    else:
        raise ValueError(f"verifier must be one of {', '.join(map(repr, VERIFIER_NAMES))}, got {settings.verifier!r}")
    if backend is not None and settings.llm_judge and not small_model:
        from assistant.verify.judge import LLMJudge

        return JudgedVerifier(base, LLMJudge(backend))
    return base
