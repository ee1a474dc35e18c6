"""Intent detection (lookup / summary / compare / topic) and the two intents answered by code alone:
the comparison table and the topic listing. Every cell and line is an abstract sentence, cited."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from assistant.text import content_tokens
from assistant.types import AnswerSentence, Comparison, ComparisonRow, Intent, PaperHit
from assistant.tuning import COMPARISON_RELEVANCE_WEIGHT, CUE_MAX, CUE_WEIGHT

Embedder = Callable[[list[str]], list[list[float]]]

_COMPARE = re.compile(r"\b(compare|comparison|compared|differ|differs|difference|differences|versus|vs\.?|"
                      r"which of (?:them|these|those|the two|the three|both)|contrast|both|in each|"
                      r"(?:two|three|both|these|those) (?:papers|abstracts|works|methods|approaches))\b", re.I)
_TOPIC = re.compile(r"\b(which|what|any|list|all|find|show)\b.{0,30}\b(papers|abstracts|works|studies|articles)\b|"
                    r"\blist (?:all|every)\b|\bare there (?:any )?papers\b", re.I)
_SUMMARY = re.compile(r"\b(summari[sz]e|summary|overview|tl;?dr|tell me about|describe|explain the paper|"
                      r"what is (?:the|this) paper about|what does (?:the|this) paper do)\b", re.I)
_TOPIC_FRAME = re.compile(r"^\s*(?:which|what|are there any|any|list|find|show me)\s+(?:of the\s+)?"
                          r"(?:papers|abstracts|works|studies|articles)\s*(?:that|which|are|do|does)?\s*|"
                          r"\b(?:list (?:all|every)(?: of)? (?:them|papers|the papers)?|all of them)\b[.?!]*", re.I)

#: Comparison columns and the description each cell sentence is matched against (embedding cosine),
#: plus cue words that mark such sentences in abstracts.
COLUMNS: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("problem", "the problem, challenge or limitation of existing methods that this work addresses",
     frozenset({"challenge", "challenges", "limitation", "limitations", "however", "struggle", "problem", "fail", "lack"})),
    ("approach", "we propose a new method, framework or model that works by",
     frozenset({"propose", "introduce", "present", "framework", "novel", "approach", "design"})),
    ("data / setting", "experiments on datasets, benchmarks, tasks and settings",
     frozenset({"dataset", "datasets", "benchmark", "benchmarks", "experiments", "tasks", "evaluate", "evaluated"})),
    ("key result", "results show it outperforms baselines, achieving better accuracy and efficiency",
     frozenset({"outperforms", "outperform", "achieves", "achieve", "improves", "state-of-the-art", "surpassing", "results"})),
)


def detect_intent(question: str) -> Intent:
    """The intent of a question from its wording (compare > summary > topic > lookup)."""
    if _COMPARE.search(question):
        return "compare"
    if _SUMMARY.search(question):
        return "summary"
    if _TOPIC.search(question):
        return "topic"
    return "lookup"


def topic_query(question: str) -> str:
    """The topic of a listing question without its frame ("Which papers introduce a new benchmark? List
    all of them." -> "introduce a new benchmark?"); the question itself when nothing is left."""
    stripped = _TOPIC_FRAME.sub(" ", question)
    stripped = " ".join(stripped.split())
    return stripped if len(content_tokens(stripped)) >= 1 else question


def comparison_table(hits: Sequence[PaperHit], embed: Embedder, question: str) -> Comparison:
    """Rows = papers (label ``n`` = position in ``hits`` + 1), columns = :data:`COLUMNS`.

    Each cell is the sentence of that paper's abstract that best fits the column (cosine to the column
    description + cue words + relevance to the question); a sentence fills at most one cell per row.
    """
    col_vecs = embed([desc for _, desc, _ in COLUMNS])
    rows = []
    for n, hit in enumerate(hits, start=1):
        vecs = embed(list(hit.sentences))
        used: set[int] = set()
        cells: list[AnswerSentence | None] = []
        for (_, _, cues), cvec in zip(COLUMNS, col_vecs):
            best, best_i = 0.0, -1
            for i, (sent, svec) in enumerate(zip(hit.sentences, vecs)):
                if i in used:
                    continue
                toks = content_tokens(sent)
                score = sum(a * b for a, b in zip(svec, cvec)) + CUE_WEIGHT * min(CUE_MAX, len(toks & cues))
                if hit.sentence_scores:
                    score += COMPARISON_RELEVANCE_WEIGHT * hit.sentence_scores[i]
                if score > best:
                    best, best_i = score, i
            if best_i < 0:
                cells.append(None)
                continue
            used.add(best_i)
            cells.append(AnswerSentence(hit.sentences[best_i], (n,), round(best, 3)))
        rows.append(ComparisonRow(n, tuple(cells)))
    return Comparison(tuple(c for c, _, _ in COLUMNS), tuple(rows))


def topic_members(hits: Sequence[PaperHit], min_evidence: float) -> list[PaperHit]:
    """Papers whose best evidence sentence scores at least ``min_evidence`` (the top paper always)."""
    if not hits:
        return []
    return [hits[0]] + [h for h in hits[1:] if h.evidence and max(e.score for e in h.evidence) >= min_evidence]
