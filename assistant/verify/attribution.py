"""Answer sentences -> supporting evidence sentences -> citations (design.md, step 6; issue 22).

A sentence of the model's answer is shown only if the abstracts support it. Three steps:

1. **Align.** Every abstract sentence of the numbered sources is scored: alignment = ``COSINE_WEIGHT`` x
   embedding cosine + ``LEXICAL_WEIGHT`` x share of the sentence's content words found in it. The best
   :data:`~assistant.tuning.VERIFY_SINGLES` sentences and the best *pair* (two facts of one abstract, or - when
   the sentence speaks of two works ("both", "the former", "while") - one fact from each of two papers, then
   both cited) are the candidate evidence. Alignment only picks evidence; it decides nothing, except that
   candidates under ``min_alignment`` are not considered.
2. **Exact constraints** (never about meaning; :func:`hard_mismatches`, :func:`unmatched_facts`): every
   number and name-like token (``DUALFormer``, ``GPT-4o``) must occur in the cited paper, a number with the
   word it measures must match the evidence (``12 hours`` vs ``24 hours``), a person the sentence credits
   must be an author of the cited paper, and a named organisation, place or dataset (a capitalised word
   inside the sentence: "Stanford University", "Sydney") must occur in the cited paper. The citation is the
   supporting paper's number, whatever ``[n]`` the model wrote.
3. **The verifier decides** (:mod:`assistant.verify.verifiers`, built once per answer by ``build_verifier``): the
   answering model reads the best-aligned candidate's abstract and says whether every fact of the sentence is
   stated there (its ``P(yes)`` against a threshold chosen on validation claims). Paraphrase, negation,
   who-beats-whom, cause and effect, scope words and invented additions are its decision, not a word list's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.claims import TITLE_FRAME_WORDS
from assistant.lang.text import content_tokens
from assistant.llm.prompts import strip_citations
from assistant.retrieve.references import author_phrase
from assistant.tuning import (
    COSINE_WEIGHT,
    LEXICAL_WEIGHT,
    MIN_WORDS,
    PAIR_CANDIDATES,
    PAIR_MIN_GAIN,
    PAIR_MIN_UNIQUE,
    PAIR_PER_PAPER,
    TITLE_ECHO_EXTRA_WORDS,
    VERIFY_MIN_ALIGNMENT,
    VERIFY_SINGLES,
)
from assistant.types import AnswerSentence, PaperHit, SentenceCheck
from assistant.understand.question import analyze
from assistant.verify.constraints import (
    Embedder,
    hard_mismatches,
    name_occurs,
    names_in,
    proper_nouns,
    refers_to_two,
    unmatched_facts,
    words,
)
from assistant.verify.verifiers import Alignment, Evidence, Verifier

__all__ = [
    "Alignment",
    "Attributor",
    "Embedder",
    "Verifier",
    "hard_mismatches",
    "name_occurs",
    "names_in",
    "proper_nouns",
    "unmatched_facts",
    "words",
]

if TYPE_CHECKING:
    from assistant.understand.parse import Question


@dataclass(frozen=True, slots=True)
class _Candidate:
    n: int
    text: str
    tokens: frozenset[str]


class Attributor:
    """Checks answer sentences against the evidence of the numbered sources.

    Args:
        sources: papers in citation order (source ``n`` is ``sources[n-1]``); every sentence of each
            abstract is candidate evidence, and a sentence that only names a paper's title is supported.
        embed: batch text -> unit vectors (the retrieval embedding model), used to align.
        verifier: decides among a sentence's candidate evidence (:mod:`assistant.verify.verifiers`; built once
            per answer by :func:`assistant.verify.verifiers.build_verifier`).
        question: the user's question (a text, or the turn's reading: ``understand.parse.Question``, then it is
            not read again): it says whether a sentence that only restates a title answers it ("which paper …?").
            A sentence that restates the question is checked like any other (the echo rule that dropped it went
            at stop 73: on the blind-labelled model sentences it dropped 14 supported sentences for 4 unsupported
            ones, which the other checks drop too; docs/results/issue59).
        min_alignment: evidence aligned below this (cosine + overlap scale) is not considered
            (``verify.verify_min_alignment``).

    Raises:
        LLMUnavailableError: (from :meth:`align`, :meth:`check`, :meth:`attribute`) the model could not be asked
            to check a sentence.
    """

    def __init__(
        self,
        sources: Sequence[PaperHit],
        embed: Embedder,
        verifier: Verifier,
        question: str | Question = "",
        *,
        min_alignment: float = VERIFY_MIN_ALIGNMENT,
    ) -> None:
        self._verifier = verifier
        self._sources = list(sources)
        self._embed = embed
        self._min_alignment = min_alignment
        text = question if isinstance(question, str) else question.text
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

    def _candidate_sets(
        self, sentence: str, tokens: set[str], paper: int | None = None
    ) -> tuple[list[tuple[float, tuple[int, ...]]], set[int]]:
        """Evidence candidates ``(alignment, candidate indices)``, best first, and the eligible source numbers
        (only source ``paper`` when given)."""
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
            and paper in (None, n)
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
        two_works = refers_to_two(sentence)
        for a_pos, a in enumerate(pool):
            for b in pool[a_pos + 1 :]:
                ca, cb = self._candidates[a], self._candidates[b]
                if ca.n != cb.n:
                    both = f"{self._paper_text[ca.n]} {self._paper_text[cb.n]}"
                    if paper is not None or not two_works or unmatched_facts(sentence, both):
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

    def align(self, sentence: str, paper: int | None = None) -> Alignment:
        """Align ``sentence`` (markers removed) to its candidate evidence and let the verifier decide (the hard
        constraints, then the model's self-check; :mod:`assistant.verify.verifiers`). ``paper``: the sentence was
        written from source ``paper``'s reading alone (a comparison's part), so only that source's abstract can
        support it (None: any source's).

        Returns:
            an :class:`Alignment`; ``citations`` is empty when no candidate evidence exists among the papers
            holding all its numbers, names and credited people, and ``reasons`` says why it is not supported.
        """
        if len(sentence.split()) < MIN_WORDS or not self._candidates:
            return Alignment((), (), 0.0)
        tokens = content_tokens(sentence)
        for n, (title, title_tokens) in self._titles.items():
            if paper not in (None, n):
                continue
            # "The paper is <title>." : (nearly) every content word is from the title or TITLE_FRAME_WORDS
            extra = tokens - title_tokens - TITLE_FRAME_WORDS
            if title_tokens and len(title_tokens & tokens) >= 2 and len(extra) <= TITLE_ECHO_EXTRA_WORDS:
                if self._title_answers and not extra and title_tokens <= tokens:  # the whole title, exactly
                    return Alignment((n,), (title,), 1.0, alignment=1.0)
                if not self._title_answers:
                    return Alignment((), (), 0.0, ("restates a title",))
        sets, _eligible = self._candidate_sets(sentence, tokens, paper)
        people = self._people(sentence)
        if not sets:
            return Alignment((), (), 0.0, ("no evidence in a paper holding its numbers, names and people",))
        candidates = []
        for align_score, picked in sets:
            cands = [self._candidates[i] for i in picked]
            citations = tuple(sorted({c.n for c in cands}))
            papers = tuple(self._paper_text[n] for n in citations)
            sources = tuple((self._sources[n - 1].paper.title, self._sources[n - 1].paper.text) for n in citations)
            candidates.append(Evidence(citations, tuple(c.text for c in cands), papers, align_score, sources))
        return self._verifier.decide(sentence, candidates, people)

    def check(self, raw_sentence: str, paper: int | None = None) -> tuple[Alignment, tuple[AnswerSentence, str] | None]:
        """The full verdict on a raw answer sentence: its :class:`Alignment` (probability, evidence, reasons;
        an empty alignment for an empty sentence) and what
        :meth:`attribute` returns for it (``paper``: as :meth:`align`)."""
        clean, _model_cited = strip_citations(raw_sentence)
        if not clean:
            return Alignment((), (), 0.0, ("empty",)), None
        a = self.align(clean, paper)
        if not a.supported:
            return a, None
        # which check passed, as the reader is told: the self-check, or an exact title match
        # ("The paper is <title>.", decided by align() before any verifier)
        check: SentenceCheck = "title" if a.verdict == "" else self._verifier.check
        return a, (
            AnswerSentence(
                text=clean,
                citations=a.citations,
                support=round(a.score, 3),
                probability=round(a.score, 3) if check != "title" else None,
                by_model=True,
                check=check,
            ),
            " ... ".join(a.sentences),
        )

    def attribute(self, raw_sentence: str, paper: int | None = None) -> tuple[AnswerSentence, str] | None:
        """The sentence citing its supporting source(s) plus the evidence, or None to drop it.

        The ``[n]`` the model wrote is ignored: the citation comes from the support check only. A
        sentence aligned to two papers cites both (``citations == (n, m)``); its evidence is the two
        sentences joined by ``" ... "``. ``AnswerSentence.probability`` and ``AnswerSentence.support``
        are the self-check's ``P(yes)``, which the verifier compared with its threshold. ``paper``: the sentence
        was written from that source's reading alone, and only it can support it (:meth:`align`).
        """
        return self.check(raw_sentence, paper)[1]
