"""Answer sentences -> supporting evidence sentences -> citations (design.md, step 6).

A sentence of the model's answer is shown only if some sentence of a retrieved abstract supports
it: support = ``COSINE_WEIGHT`` x embedding cosine + ``LEXICAL_WEIGHT`` x share of the sentence's
content words found in that evidence sentence, and every number and name-like token in the
sentence must occur in that paper's title or abstract. The citation goes to the best-supporting
paper, whatever ``[n]`` the model wrote; unsupported sentences are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assistant.prompts import REFUSAL_SENTENCE
from assistant.retrieval import content_tokens
from assistant.types import AnswerSentence, PaperHit

COSINE_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
MIN_WORDS = 3
MIN_NEW_WORDS = 2
#: Words allowed around a title in a sentence that only names a paper ("The paper is called X").
TITLE_FRAME_WORDS = frozenset({"called", "titled", "named", "introduces", "introduced", "presents", "presented", "by", "authors"})

_MARKERS = re.compile(r"\s*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")
_NUMBER = re.compile(r"(?<![A-Za-z0-9\-.])\d+(?:[.,]\d+)*")
_NAME = re.compile(r"\b(?:[A-Z][a-z]*[A-Z][A-Za-z0-9\-]*|[A-Z]{2,}[A-Za-z0-9\-]*|[A-Za-z]+-?\d[A-Za-z0-9\-]*)\b")

_PROMPT_ECHO = re.compile(r"</?\s*source\s*>|^\s*\[(?!\d)|\bSources:\s*|\bQuestion:\s*", re.I)

Embedder = Callable[[list[str]], list[list[float]]]


def strip_markers(sentence: str) -> tuple[str, tuple[int, ...]]:
    """Remove ``[n]``/``[n, m]`` markers; return the clean sentence and the numbers the model wrote."""
    cited = tuple(int(n) for m in _MARKERS.findall(sentence) for n in re.findall(r"\d+", m))
    clean = _MARKERS.sub("", sentence)
    clean = _PROMPT_ECHO.sub(" ", clean)  # the model echoing our prompt markup
    clean = " ".join(clean.split()).strip(" [")
    clean = re.sub(r"\s+([.,;:!?])", r"\1", clean)
    return clean, cited


def is_refusal(sentence: str) -> bool:
    """True for the prompt's refusal sentence (case and punctuation insensitive)."""
    norm = lambda s: re.sub(r"[^a-z ]", "", s.lower()).strip()  # noqa: E731
    return norm(REFUSAL_SENTENCE) in norm(sentence) or "do not answer this" in sentence.lower()


def _norm_num(n: str) -> str:
    return n.replace(",", "").rstrip(".")


def unmatched_facts(sentence: str, paper_text: str) -> list[str]:
    """Numbers and name-like tokens (``DUALFormer``, ``GPT-4o``, ``TD(0)``) in ``sentence`` absent from ``paper_text``."""
    text_nums = {_norm_num(n) for n in _NUMBER.findall(paper_text)}
    missing = [n for n in _NUMBER.findall(sentence) if _norm_num(n) not in text_nums]
    lower = paper_text.lower()
    missing += [t for t in _NAME.findall(sentence) if t.lower() not in lower]
    return missing


@dataclass(frozen=True, slots=True)
class _Candidate:
    n: int
    text: str
    vector: list[float]


class Attributor:
    """Checks answer sentences against the evidence of the numbered sources.

    Args:
        sources: papers in citation order (source ``n`` is ``sources[n-1]``); every sentence of each
            abstract is candidate evidence, and a sentence that only names a paper's title is supported.
        embed: batch text -> unit vectors (the retrieval embedding model).
        threshold: minimum support in [0, 1] to keep a sentence.
        question: the user's question; a sentence adding fewer than :data:`MIN_NEW_WORDS` content
            words to it only echoes the question and is dropped.
    """

    def __init__(self, sources: Sequence[PaperHit], embed: Embedder, threshold: float, question: str = "") -> None:
        self._sources = list(sources)
        self._embed = embed
        self._threshold = threshold
        self._question_tokens = content_tokens(question)
        texts = [(n, s) for n, h in enumerate(self._sources, start=1) for s in h.sentences]
        vectors = embed([s for _, s in texts]) if texts else []
        self._candidates = [_Candidate(n, s, v) for (n, s), v in zip(texts, vectors)]
        self._paper_text = {n: f"{h.paper.title} {h.paper.text}" for n, h in enumerate(self._sources, start=1)}
        self._titles = {n: (h.paper.title, content_tokens(h.paper.title)) for n, h in enumerate(self._sources, start=1)}

    def support(self, sentence: str) -> tuple[int | None, float, str]:
        """Best-supported source for ``sentence`` (markers already removed).

        Returns:
            ``(n or None, score in [0, 1], best evidence sentence)``; ``n`` is None below threshold or
            when a number/name in the sentence is not in that paper.
        """
        if len(sentence.split()) < MIN_WORDS or not self._candidates:
            return None, 0.0, ""
        tokens = content_tokens(sentence)
        for n, (title, title_tokens) in self._titles.items():
            # "The paper is <title>." : every content word is from the title or TITLE_FRAME_WORDS
            if title_tokens and len(title_tokens & tokens) >= 2 and len(tokens - title_tokens - TITLE_FRAME_WORDS) == 0:
                return n, 1.0, title
        vec = self._embed([sentence])[0]
        best: tuple[float, int, str] = (0.0, 0, "")
        for c in self._candidates:
            cos = sum(a * b for a, b in zip(vec, c.vector))
            lex = len(tokens & content_tokens(c.text)) / len(tokens) if tokens else 0.0
            score = COSINE_WEIGHT * max(cos, 0.0) + LEXICAL_WEIGHT * lex
            if score > best[0] and not unmatched_facts(sentence, self._paper_text[c.n]):
                best = (score, c.n, c.text)
        score, n, ev = best
        return (n if score >= self._threshold else None), score, ev

    def attribute(self, raw_sentence: str) -> tuple[AnswerSentence, str] | None:
        """The sentence citing its best-supporting source plus that evidence sentence, or None to drop it.

        The ``[n]`` the model wrote is ignored: the citation comes from the support check only.
        """
        clean, _model_cited = strip_markers(raw_sentence)
        if not clean or is_refusal(clean):
            return None
        if self._question_tokens and len(content_tokens(clean) - self._question_tokens) < MIN_NEW_WORDS:
            # restates the question, or is a bare "The answer is 2864." that cannot be checked in context
            return None
        n, score, evidence = self.support(clean)
        if n is None:
            return None
        return AnswerSentence(text=clean, citations=(n,), support=round(score, 3)), evidence
