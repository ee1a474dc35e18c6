"""Intent detection (lookup / summary / compare / topic) and the two intents answered by code alone:
the comparison table and the topic listing. Every cell and line is an abstract sentence, cited."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from assistant.lang.discourse import readable_start
from assistant.lang.text import content_tokens, is_boilerplate, states_contribution
from assistant.tuning import COMPARISON_RELEVANCE_WEIGHT, CUE_MAX, CUE_WEIGHT, TOPIC_EVIDENCE_MARGIN
from assistant.types import AnswerSentence, Comparison, ComparisonRow, Intent, PaperHit

Embedder = Callable[[list[str]], list[list[float]]]

_COMPARE = re.compile(
    r"\b(compare|comparison|differ|differs|difference|differences|"
    r"which of (?:them|these|those|the two|the three|both)|contrast|both|in each|"
    r"(?:two|three|both|these|those) (?:papers|abstracts|works|methods|approaches))\b",
    re.I,
)
#: "compared to/with", "versus", "vs" ask for a comparison of papers only when a paper follows ("compared with
#: LeReT", "vs it", "versus the KV-cache paper"), not a concept ("how large is it compared to traditional
#: codecs?", "how much did it cut the distance vs prior work?").
_COMPARED_TO_PAPER = re.compile(
    r"(?:\bcompared (?:to|with)|\bversus|\bvs\.?)\s+(?:(?:(?:the|this|that|its|their)\s+)?(?:[A-Z][\w-]*|it\b|"
    r"them\b|(?:[\w-]+\s+){0,4}(?:paper|abstract)s?\b)|(?:the|this|that)\s+(?!(?:prior|previous|existing|"
    r"related|earlier|other)\b)(?:[\w-]+\s+){1,4}(?:work|study)\b)"
)
_TOPIC = re.compile(
    r"\b(which|what|any|list|all|find|show)\b.{0,30}\b(papers|abstracts|works|studies|articles)\b|"
    r"\blist (?:all|every)\b|\bare there (?:any )?papers\b",
    re.I,
)
_SUMMARY = re.compile(
    r"\b(summari[sz]e|summary|overview|tl;?dr|tell me about|describe|explain the paper|"
    r"what is (?:the|this) paper about|what does (?:the|this) paper do)\b",
    re.I,
)
_TOPIC_FRAME = re.compile(
    r"^\s*(?:which|what|are there any|any|list|find|show me)\s+(?:of the\s+)?"
    r"(?:papers|abstracts|works|studies|articles)\s*(?:that|which|are|do|does)?\s*|"
    r"\b(?:list (?:all|every)(?: of)? (?:them|papers|the papers)?|all of them)\b[.?!]*",
    re.I,
)

#: Comparison columns and the description each cell sentence is matched against (embedding cosine),
#: plus cue words that mark such sentences in abstracts.
COLUMNS: tuple[tuple[str, str, frozenset[str]], ...] = (
    (
        "problem",
        "the problem, challenge or limitation of existing methods that this work addresses",
        frozenset(
            {"challenge", "challenges", "limitation", "limitations", "however", "struggle", "problem", "fail", "lack"}
        ),
    ),
    (
        "approach",
        "we propose a new method, framework or model that works by",
        frozenset({"propose", "introduce", "present", "framework", "novel", "approach", "design"}),
    ),
    (
        "data / setting",
        "experiments on datasets, benchmarks, tasks and settings",
        frozenset({"dataset", "datasets", "benchmark", "benchmarks", "experiments", "tasks", "evaluate", "evaluated"}),
    ),
    (
        "key result",
        "results show it outperforms baselines, achieving better accuracy and efficiency",
        frozenset(
            {
                "outperforms",
                "outperform",
                "achieves",
                "achieve",
                "improves",
                "state-of-the-art",
                "surpassing",
                "results",
            }
        ),
    ),
)


#: "Which of them needs less data?", "Which one of the two is faster?": a choice between papers.
_CHOICE = re.compile(
    r"\bwhich (?:one )?of (?:them|these|those|the two|the three|both)\b|"
    r"\bwhich (?:one|paper) (?:of the (?:two|three) )?"
    r"(?:needs|uses|requires|is|has|does|reaches|achieves|gets|scales)\b.*\b(?:less|more|fewer|better|worse|faster|slower|"
    r"larger|smaller|lower|higher|cheaper)\b",
    re.I,
)


def detect_intent(question: str) -> Intent:
    """The intent of a question from its wording (choice > compare > summary > topic > lookup)."""
    if _CHOICE.search(question) and "?" in question and not _SUMMARY.search(question):
        return "choice"
    if _COMPARE.search(question) or _COMPARED_TO_PAPER.search(question):
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


#: What role an abstract sentence plays, read from its wording and its place relative to the contribution
#: sentence ("we propose ..."). Rules written on the "fit" split of eval/cell-roles.jsonl; accuracy on
#: both splits: benchmarks/cell_placement.py, docs/design.md.
_ROLE_RESULT = re.compile(
    r"\b(?:out-?perform\w*|surpass\w*|demonstrat\w*|shows? that|showed|we (?:empirically |rigorously )?"
    r"(?:show|prove)\w*|prove[sd]?|achiev\w*|results?|reveal\w*|find that|findings|sustain\w*|comparable|"
    r"superior|improves?|gains?|effectiveness|generaliz\w+ to unseen|enables?)\b",
    re.I,
)
_ROLE_DATA = re.compile(
    r"\b(?:datasets?|benchmarks?|experiments? on|evaluat\w+ on|to evaluate|sampled|collected|annotated|"
    r"corpus|real-world|prompts paired)\b",
    re.I,
)
_ROLE_PROBLEM = re.compile(
    r"\b(?:however|challeng\w*|limitation\w*|struggl\w*|bottleneck|drawback\w*|fail\w*|lack\w*|"
    r"remains?|difficult\w*|gap|costly|suffer\w*|problem\w*|issues?|trade-off|compromis\w*|"
    r"complexity|ambiguity|delay\w*)\b",
    re.I,
)
_ROLE_CONTRIBUTION = re.compile(
    r"\bthis paper\b|\bin this (?:paper|work),? we\b|\bwe (?:introduce|propose|present)\b", re.I
)
_ROLE_OTHER = re.compile(r"\bwe hope\b|\bcode\b.*\b(?:available|accessible)|accessible at|https?://", re.I)
#: Column name -> the role a sentence must play to be put there.
COLUMN_ROLES = {"problem": "problem", "approach": "approach", "data / setting": "data", "key result": "result"}
#: Shown in a comparison cell no sentence of the abstract fits.
NOT_STATED = "not stated in the abstract"


def sentence_roles(sentences: Sequence[str]) -> list[str]:
    """The role each sentence of one abstract plays: ``problem``, ``approach``, ``data``, ``result`` or
    ``other`` (background, code links, hopes).

    Rules: the contribution sentence (first "we propose/introduce", "this paper") and what follows it
    describe the approach, unless they report results (outperform, show that, achieve ...) or data
    (datasets, benchmarks); before it, sentences naming a difficulty are the problem, the rest background.
    """
    contribution = next(
        (i for i, s in enumerate(sentences) if states_contribution(s) or _ROLE_CONTRIBUTION.search(s)), len(sentences)
    )
    roles = []
    for i, s in enumerate(sentences):
        if _ROLE_OTHER.search(s) or is_boilerplate(s):
            roles.append("other")
        elif i == contribution and not _ROLE_DATA.search(s):
            roles.append("approach")
        elif i >= contribution and _ROLE_RESULT.search(s) and not states_contribution(s):
            data = _ROLE_DATA.search(s) and not re.search(r"out-?perform|surpass|superior", s, re.I)
            roles.append("data" if data else "result")
        elif i > contribution and _ROLE_DATA.search(s):
            roles.append("data")
        elif states_contribution(s) or i > contribution:
            roles.append("approach")
        else:
            roles.append("problem" if _ROLE_PROBLEM.search(s) else "other")
    return roles


def comparison_table(hits: Sequence[PaperHit], embed: Embedder, question: str) -> Comparison:
    """Rows = papers (label ``n`` = position in ``hits`` + 1), columns = :data:`COLUMNS`.

    A sentence goes only under the column whose role it plays (:func:`sentence_roles`); among those, the
    cell is the one that best fits the column (cosine to the column description + cue words + relevance
    to the question). No sentence with that role: the cell is None ("not stated in the abstract").
    """
    col_vecs = embed([desc for _, desc, _ in COLUMNS])
    rows = []
    for n, hit in enumerate(hits, start=1):
        vecs = embed(list(hit.sentences))
        roles = sentence_roles(hit.sentences)
        cells: list[AnswerSentence | None] = []
        for (name, _, cues), cvec in zip(COLUMNS, col_vecs):
            best, best_i = float("-inf"), -1
            for i, (sent, svec) in enumerate(zip(hit.sentences, vecs)):
                if roles[i] != COLUMN_ROLES[name]:
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
            start = readable_start(hit.sentences, best_i)  # "The latter …" is shown with what it refers to
            text = " ".join(hit.sentences[start : best_i + 1])
            cells.append(AnswerSentence(text, (n,), round(max(best, 0.0), 3)))
        rows.append(ComparisonRow(n, tuple(cells)))
    return Comparison(tuple(c for c, _, _ in COLUMNS), tuple(rows))


def topic_members(
    hits: Sequence[PaperHit], min_evidence: float, margin: float = TOPIC_EVIDENCE_MARGIN
) -> list[PaperHit]:
    """Papers whose best evidence sentence scores at least ``min_evidence`` and at most ``margin`` below the
    best paper's (the top paper always): a paper that shares only a broad word with the topic scores well
    below the papers that are about it."""
    if not hits:
        return []
    best = [max((e.score for e in h.evidence), default=float("-inf")) for h in hits]
    floor = max(min_evidence, best[0] - margin)
    return [hits[0]] + [h for h, b in zip(hits[1:], best[1:]) if b >= floor]
