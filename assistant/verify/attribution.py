"""Answer sentences -> supporting evidence sentences -> citations (design.md, step 6; issue 22).

A sentence of the model's answer is shown only if the abstracts support it. Three steps:

1. **Align.** Every abstract sentence of the numbered sources is scored: alignment = ``COSINE_WEIGHT`` x
   embedding cosine + ``LEXICAL_WEIGHT`` x share of the sentence's content words found in it. The best
   :data:`~assistant.tuning.VERIFY_SINGLES` sentences and the best *pair* (two facts of one abstract, or - when
   the sentence speaks of two works ("both", "the former", "while") - one fact from each of two papers, then
   both cited) are the candidate evidence. Alignment only picks evidence; it decides nothing, except that
   candidates under ``min_alignment`` are not considered.
2. **Hard constraints** (exact, never about meaning; :func:`hard_mismatches`, :func:`unmatched_facts`): every
   number and name-like token (``DUALFormer``, ``GPT-4o``) must occur in the cited paper, a number with the
   word it measures must match the evidence (``12 hours`` vs ``24 hours``), a person the sentence credits
   must be an author of the cited paper, and a named organisation, place or dataset (a capitalised word
   inside the sentence: "Stanford University", "Sydney") must occur in the cited paper. The citation is the
   supporting paper's number, whatever ``[n]`` the model wrote.
3. **Support model** (:mod:`assistant.verify.support_model`): a cross-encoder trained on external labelled
   claims and synthetic pairs made from real abstracts reads the sentence with each candidate's evidence
   and gives ``P(supported)``. Paraphrase, negation, who-beats-whom, cause and effect, scope words and
   invented additions are its decision, not a word list's. The best candidate is kept when its probability
   reaches the threshold (chosen on validation data, ``assistant/verify/model/MODEL_CARD.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.text import content_tokens
from assistant.llm.prompts import is_refusal, strip_citations
from assistant.retrieve.references import author_phrase
from assistant.tuning import (
    COSINE_WEIGHT,
    LEXICAL_WEIGHT,
    MIN_NEW_WORDS,
    MIN_WORDS,
    PAIR_CANDIDATES,
    PAIR_MIN_GAIN,
    PAIR_MIN_UNIQUE,
    PAIR_PER_PAPER,
    TITLE_ECHO_EXTRA_WORDS,
    VERIFY_MIN_ALIGNMENT,
    VERIFY_SINGLES,
)
from assistant.types import AnswerSentence, PaperHit
from assistant.understand.question import analyze
from assistant.verify.rules import (
    _REFERS_TO_TWO,
    TITLE_FRAME_WORDS,
    Embedder,
    _check_numbers,
    _Text,
    mismatches,
    name_occurs,
    names_in,
    unmatched_facts,
    words,
)

__all__ = [
    "Alignment",
    "Attributor",
    "Embedder",
    "hard_mismatches",
    "mismatches",
    "name_occurs",
    "names_in",
    "proper_nouns",
    "unmatched_facts",
    "words",
]

if TYPE_CHECKING:
    from assistant.understand.parse import Question
    from assistant.verify.judge import LLMJudge
    from assistant.verify.support_model import SupportModel


#: A capitalised word inside a sentence (not its first word, nor the first after ``. : ; ( " “``): a
#: proper noun - an organisation, place, dataset or person ("Stanford University", "Sydney", "ImageNet").
_PROPER = re.compile(r"(?<=[A-Za-z0-9,\-] )([A-Z][a-z]+(?:['’]s)?)\b")
#: Capitalised words that are not names (function words after a colon or in a title).
_NOT_PROPER = frozenset(
    {"The", "This", "These", "That", "Their", "Its", "It", "A", "An", "In", "On", "And", "Both", "I"}
)


def proper_nouns(sentence: str) -> list[str]:
    """Capitalised words inside ``sentence`` (see :data:`_PROPER`), in order: candidate organisation, place,
    dataset or person names; the first word of the sentence or of a clause after ``: ; (`` is skipped."""
    out = []
    for m in _PROPER.finditer(sentence):
        word = re.sub(r"['’]s$", "", m.group(1))
        before = sentence[: m.start()].rstrip()
        if word in _NOT_PROPER or (before and before[-1] in ".:;(\"“"):
            continue
        out.append(word)
    return out


def hard_mismatches(sentence: str, aligned: Sequence[str], paper_text: str, people: Iterable[str] = ()) -> list[str]:
    """Exact constraints of ``sentence`` against its ``aligned`` evidence sentence(s) and the cited paper(s)'
    ``paper_text`` (title + abstract); empty when all hold.

    * a number absent from the aligned evidence, or measuring another thing there (``number``);
    * a number or name-like token absent from the paper (:func:`unmatched_facts`);
    * a proper noun (:func:`proper_nouns`: "Stanford University", "Sydney") absent from the paper, except the
      words of ``people`` (credited authors, checked against the author list by :class:`Attributor`).
    """
    own = {w for p in people for w in p.lower().split()}
    reasons = [f"'{f}' is not in the paper" for f in unmatched_facts(sentence, paper_text)]
    reasons += [
        f"'{w}' is not in the paper"
        for w in proper_nouns(sentence)
        if w.lower() not in own and not name_occurs(w, paper_text)
    ]
    number = _check_numbers(_Text.of(sentence), _Text.of(" ".join(aligned)))
    if number:
        reasons.append(number)
    return reasons


@dataclass(frozen=True, slots=True)
class _Candidate:
    n: int
    text: str
    tokens: frozenset[str]


@dataclass(frozen=True, slots=True)
class Alignment:
    """An answer sentence's best evidence: ``citations`` (source numbers, one or two), the evidence
    ``sentences`` (one per citation for a two-paper alignment; one or two for one paper), the support
    probability ``score`` in [0, 1] (0.0 when nothing was eligible), the ``reasons`` it is not supported (a
    failed hard constraint, or the probability under the threshold; empty when supported) and the
    ``alignment`` score (cosine + overlap) that picked the evidence."""

    citations: tuple[int, ...]
    sentences: tuple[str, ...]
    score: float
    reasons: tuple[str, ...] = ()
    alignment: float = 0.0

    @property
    def supported(self) -> bool:
        """True when there is evidence and no check failed."""
        return bool(self.citations) and not self.reasons


class Attributor:
    """Checks answer sentences against the evidence of the numbered sources.

    Args:
        sources: papers in citation order (source ``n`` is ``sources[n-1]``); every sentence of each
            abstract is candidate evidence, and a sentence that only names a paper's title is supported.
        embed: batch text -> unit vectors (the retrieval embedding model), used to align.
        threshold: minimum alignment in [0, 1] to keep a sentence in the ``rules`` verifier
            (``Settings.support_threshold``).
        question: the user's question (a text, or the turn's reading: ``understand.parse.Question``, then it is
            not read again); a sentence adding fewer than :data:`MIN_NEW_WORDS` content words to it only echoes
            the question and is dropped.
        verifier: ``rules`` (the default: alignment >= ``threshold``, then the hard constraints and the hand-written
            meaning checks of :mod:`assistant.verify.rules`) or ``model`` (the hard constraints, then the support
            model decides: P(supported) >= ``min_probability``); ``Settings.verifier``.
        min_probability: the support model's threshold (``Settings.support_probability``).
        model: the support model (default: the shipped one, :func:`assistant.verify.support_model.load_support_model`).
            The ``rules`` verifier also asks it, once per kept sentence, for the probability it reports.
        min_alignment: evidence aligned below this (cosine + overlap scale) is not considered (the ``small``
            profile asks near-restatements: ``tuning.SMALL_MODEL_MIN_SUPPORT``).
        judge: a capable model asked about each sentence the local verifier keeps (``ASSISTANT_LLM_JUDGE``,
            :mod:`assistant.verify.judge`): its "not supported" drops the sentence, no verdict leaves it kept.

    Raises:
        ConfigError: the support model cannot be loaded.
    """

    def __init__(
        self,
        sources: Sequence[PaperHit],
        embed: Embedder,
        threshold: float,
        question: str | Question = "",
        *,
        model: SupportModel | None = None,
        min_alignment: float = VERIFY_MIN_ALIGNMENT,
        judge: LLMJudge | None = None,
        verifier: str = "rules",
        min_probability: float = 0.2,
    ) -> None:
        if verifier not in ("rules", "model"):
            raise ValueError(f"verifier must be 'rules' or 'model', got {verifier!r}")
        self._given_model = model  # loaded at the first sentence that needs it (start-up stays model-free)
        self._verifier = verifier
        self._min_probability = min_probability
        self._judge = judge
        self._sources = list(sources)
        self._embed = embed
        self._threshold = threshold
        self._min_alignment = min_alignment
        text = question if isinstance(question, str) else question.text
        self._question_tokens = content_tokens(text)
        # a sentence that only restates a title answers "which paper ...?" and nothing else
        facts = analyze(text) if isinstance(question, str) else question.facts
        self._title_answers = not text or facts.which_paper
        texts = [(n, s) for n, h in enumerate(self._sources, start=1) for s in h.sentences]
        vectors = embed([s for _, s in texts]) if texts else []
        self._candidates = [_Candidate(n, s, frozenset(content_tokens(s))) for n, s in texts]
        self._matrix = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        self._paper_text = {n: f"{h.paper.title} {h.paper.text}" for n, h in enumerate(self._sources, start=1)}
        self._titles = {n: (h.paper.title, content_tokens(h.paper.title)) for n, h in enumerate(self._sources, start=1)}
        self._authors = {
            n: {" ".join(a.lower().split()) for a in h.paper.authors} for n, h in enumerate(self._sources, start=1)
        }
        self._all_authors = set().union(*self._authors.values()) if self._authors else set()

    @property
    def _model(self) -> SupportModel:
        if self._given_model is None:
            from assistant.verify.support_model import load_support_model

            self._given_model = load_support_model()
        return self._given_model

    def _people(self, sentence: str) -> set[str]:
        """Authors a sentence attributes something to: any source author's full name in it, and the name in
        "the paper by <Name>" (which must then be an author of the cited paper, or nothing supports it)."""
        low = " ".join(sentence.lower().split())
        people = {a for a in self._all_authors if len(a.split()) > 1 and a in low}
        by = author_phrase(sentence)
        if by and not any(by.lower() in a or a in by.lower() for a in people):
            people.add(" ".join(by.lower().split()))
        return people

    def _wrote(self, person: str, n: int) -> bool:
        """True when ``person`` (a full name, or a last name alone) is an author of source ``n``."""
        return person in self._authors[n] or (
            " " not in person and any(a.split()[-1] == person for a in self._authors[n])
        )

    def _candidate_sets(self, sentence: str, tokens: set[str]) -> tuple[list[tuple[float, tuple[int, ...]]], set[int]]:
        """Evidence candidates ``(alignment, candidate indices)``, best first, and the eligible source numbers."""
        vec = np.asarray(self._embed([sentence])[0], dtype=np.float32)
        cosines = np.clip(self._matrix @ vec, 0.0, None)
        lexical = [len(tokens & c.tokens) / len(tokens) if tokens else 0.0 for c in self._candidates]
        scores = COSINE_WEIGHT * cosines + LEXICAL_WEIGHT * np.asarray(lexical, dtype=np.float32)
        people = self._people(sentence)
        own = {w for p in people for w in p.split()}  # credited people are checked against the authors instead
        names = [w for w in proper_nouns(sentence) if w.lower() not in own]
        eligible = {
            n
            for n, text in self._paper_text.items()
            if not unmatched_facts(sentence, text)
            and all(self._wrote(p, n) for p in people)
            and all(name_occurs(w, text) for w in names)
        }
        order = [int(i) for i in np.argsort(-scores)]
        singles = [(float(scores[i]), (i,)) for i in order if self._candidates[i].n in eligible][:VERIFY_SINGLES]
        best_pair: tuple[float, tuple[int, ...]] = (0.0, ())
        per_paper: dict[int, list[int]] = {}
        for i in order:
            per_paper.setdefault(self._candidates[i].n, []).append(i)
        pool = list(
            dict.fromkeys([*order[:PAIR_CANDIDATES], *(i for ids in per_paper.values() for i in ids[:PAIR_PER_PAPER])])
        )
        two_works = bool(_REFERS_TO_TWO.search(sentence))
        for a_pos, a in enumerate(pool):
            for b in pool[a_pos + 1 :]:
                ca, cb = self._candidates[a], self._candidates[b]
                if ca.n != cb.n:
                    if not two_works or unmatched_facts(sentence, f"{self._paper_text[ca.n]} {self._paper_text[cb.n]}"):
                        continue
                elif ca.n not in eligible:
                    continue
                if min(len((tokens & ca.tokens) - cb.tokens), len((tokens & cb.tokens) - ca.tokens)) < PAIR_MIN_UNIQUE:
                    continue
                lex = len(tokens & (ca.tokens | cb.tokens)) / len(tokens)
                # cosine to the centroid of the two unit vectors: (cos_a + cos_b) / |v_a + v_b|
                centroid = float(cosines[a] + cosines[b]) / float(
                    np.sqrt(2.0 + 2.0 * float(self._matrix[a] @ self._matrix[b]))
                )
                score = COSINE_WEIGHT * min(centroid, 1.0) + LEXICAL_WEIGHT * lex
                if score > best_pair[0]:
                    best_pair = (score, tuple(sorted((a, b))))
        sets: list[tuple[float, tuple[int, ...]]] = list(singles)
        if best_pair[1] and (not singles or best_pair[0] >= singles[0][0] + PAIR_MIN_GAIN):
            sets.append(best_pair)
        sets = [c for c in sets if c[0] >= self._min_alignment]
        return sorted(sets, key=lambda c: -c[0]), eligible

    def align(self, sentence: str) -> Alignment:
        """Align ``sentence`` (markers removed) to its candidate evidence, apply the hard constraints and ask
        the support model; the best-supported candidate wins.

        Returns:
            an :class:`Alignment`; ``citations`` is empty when no candidate evidence exists among the papers
            holding all its numbers, names and credited people, and ``reasons`` says why it is not supported.
        """
        if len(sentence.split()) < MIN_WORDS or not self._candidates:
            return Alignment((), (), 0.0)
        tokens = content_tokens(sentence)
        for n, (title, title_tokens) in self._titles.items():
            # "The paper is <title>." : (nearly) every content word is from the title or TITLE_FRAME_WORDS
            extra = tokens - title_tokens - TITLE_FRAME_WORDS
            if title_tokens and len(title_tokens & tokens) >= 2 and len(extra) <= TITLE_ECHO_EXTRA_WORDS:
                if self._title_answers and not extra:
                    return Alignment((n,), (title,), 1.0, alignment=1.0)
                if not self._title_answers:
                    return Alignment((), (), 0.0, ("restates a title",))
        sets, _eligible = self._candidate_sets(sentence, tokens)
        people = self._people(sentence)
        if not sets:
            return Alignment((), (), 0.0, ("no evidence in a paper holding its numbers, names and people",))
        if self._verifier == "rules":
            return self._align_rules(sentence, sets, people)
        checked = []
        for align_score, picked in sets:
            cands = [self._candidates[i] for i in picked]
            citations = tuple(sorted({c.n for c in cands}))
            texts = tuple(c.text for c in cands)
            hard_reasons = hard_mismatches(sentence, texts, " ".join(self._paper_text[n] for n in citations), people)
            checked.append((citations, texts, align_score, tuple(hard_reasons)))
        passing = [c for c in checked if not c[3]]
        if not passing:
            citations, texts, align_score, hard = checked[0]
            return Alignment(citations, texts, 0.0, hard, align_score)
        probs = self._model.probabilities([(sentence, texts) for _, texts, _, _ in passing])
        k = int(np.argmax(probs))
        citations, texts, align_score, _ = passing[k]
        p = float(probs[k])
        if p < self._min_probability:
            reason = f"support probability {p:.2f} < {self._min_probability:.2f}"
            return Alignment(citations, texts, p, (reason,), align_score)
        if self._judge is not None:
            verdict = self._judge.judge(sentence, texts)
            if verdict is not None and not verdict.supported:
                return Alignment(
                    citations, texts, p, (f"the judge model: {verdict.reason or 'not supported'}",), align_score
                )
        return Alignment(citations, texts, p, (), align_score)

    def _align_rules(self, sentence: str, sets: list[tuple[float, tuple[int, ...]]], people: set[str]) -> Alignment:
        """The ``rules`` verifier: the best-aligned candidate must reach the threshold (and ``min_alignment``),
        then pass the hard constraints and :func:`assistant.verify.rules.mismatches`; the support model only
        reports its probability for a kept sentence (``Alignment.score``)."""
        align_score, picked = sets[0]
        cands = [self._candidates[i] for i in picked]
        citations = tuple(sorted({c.n for c in cands}))
        texts = tuple(c.text for c in cands)
        if align_score < max(self._threshold, self._min_alignment):
            return Alignment((), texts, 0.0, (f"alignment {align_score:.2f} under the threshold",), align_score)
        papers = [self._paper_text[n] for n in citations]
        reasons = hard_mismatches(sentence, texts, " ".join(papers), people)
        reasons += [r for r in mismatches(sentence, texts, papers) if r not in reasons]
        if reasons:
            return Alignment(citations, texts, 0.0, tuple(reasons), align_score)
        p = float(self._model.probabilities([(sentence, texts)])[0])
        if self._judge is not None:
            verdict = self._judge.judge(sentence, texts)
            if verdict is not None and not verdict.supported:
                reason = f"the judge model: {verdict.reason or 'not supported'}"
                return Alignment(citations, texts, p, (reason,), align_score)
        return Alignment(citations, texts, p, (), align_score)

    def support(self, sentence: str) -> tuple[int | None, float, str]:
        """Best-supported source for ``sentence`` (markers already removed).

        Returns:
            ``(n or None, probability in [0, 1], evidence)``: ``n`` is the first cited source, None when the
            sentence is not supported (see :meth:`align`); the evidence sentences are joined by ``" ... "``.
        """
        a = self.align(sentence)
        return (a.citations[0] if a.supported else None), a.score, " ... ".join(a.sentences)

    def check(self, raw_sentence: str) -> tuple[Alignment, tuple[AnswerSentence, str] | None]:
        """The full verdict on a raw answer sentence: its :class:`Alignment` (probability, evidence, reasons;
        an empty alignment for a refusal, an echo of the question or an empty sentence) and what
        :meth:`attribute` returns for it."""
        clean, _model_cited = strip_citations(raw_sentence)
        if not clean or is_refusal(clean):
            return Alignment((), (), 0.0, ("empty or a refusal",)), None
        if self._question_tokens and len(content_tokens(clean) - self._question_tokens) < MIN_NEW_WORDS:
            # restates the question, or is a bare "The answer is 2864." that cannot be checked in context
            return Alignment((), (), 0.0, ("restates the question",)), None
        a = self.align(clean)
        if not a.supported:
            return a, None
        return a, (
            AnswerSentence(
                text=clean,
                citations=a.citations,
                support=round(a.score if self._verifier == "model" else a.alignment, 3),
                probability=round(a.score, 3),
            ),
            " ... ".join(a.sentences),
        )

    def attribute(self, raw_sentence: str) -> tuple[AnswerSentence, str] | None:
        """The sentence citing its supporting source(s) plus the evidence, or None to drop it.

        The ``[n]`` the model wrote is ignored: the citation comes from the support check only. A
        sentence aligned to two papers cites both (``citations == (n, m)``); its evidence is the two
        sentences joined by ``" ... "``. ``AnswerSentence.probability`` is the support model's probability;
        ``AnswerSentence.support`` is what the verifier compared with its threshold (alignment for ``rules``, the
        probability for ``model``).
        """
        return self.check(raw_sentence)[1]
