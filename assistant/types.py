"""Frozen dataclasses passed between pipeline stages (no llama-index or pydantic types here)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from assistant.lang.citations import format_citations


@dataclass(frozen=True, slots=True)
class Paper:
    """One abstract with its metadata.

    Attributes:
        id: for a seed file ``"<seed file name>#<position>"``, position 1-based after the header line,
            e.g. ``"000_43469673d6f8aaa0.txt#1"`` (format from eval/README.md); for a JSONL/CSV export row
            an id that does not depend on the file name: the row's own id (``"bat-001"``), else
            ``"openreview:…"``, ``"arxiv:…"``, ``"doi:…"`` or ``"abstract:<hash>"`` (assistant/ingest/identity.py).
        venue: the collection name from the file's header line, e.g. ``"ICLR 2025 Papers"``.
        title: from papers.jsonl, else derived from the abstract's first sentence.
        authors: author names, possibly empty.
        url: best link to open the paper (papers.jsonl ``url``), possibly empty.
        text: the abstract, whitespace-normalised.
        source_file: the name of the file the paper was last read from; position: 1-based position of the
            abstract in a seed file, or the row's line in an export.
        withheld: the parts of the record that address the assistant, verbatim (abstract sentences as
            ``lang.text.split_sentences`` cuts them, the title, author entries), found at ingest by
            ``ingest.steering.withheld_parts``; they are never answer sentences, quotes, comparison cells, model
            evidence or highlights (issue 37). ``()``: checked, nothing withheld; ``None``: not checked (a record
            written before the check existed; the catalog checks it when it reads it).
    """

    id: str
    venue: str
    title: str
    authors: tuple[str, ...]
    url: str
    text: str
    source_file: str
    position: int
    title_derived: bool = False
    withheld: tuple[str, ...] | None = None

    @property
    def title_withheld(self) -> bool:
        """True when the record's title itself addresses the assistant (see :attr:`withheld`)."""
        return bool(self.withheld) and (self.title == WITHHELD_TITLE or self.title in (self.withheld or ()))

    def for_answers(self) -> Paper:
        """This paper as answers may use it: without the parts listed in :attr:`withheld` (abstract sentences
        dropped from ``text``, flagged author entries dropped, a flagged title replaced by :data:`WITHHELD_TITLE`).
        ``withheld`` is kept, so a reference card can still show those parts, marked. The paper itself when
        nothing is withheld."""
        if not self.withheld:
            return self
        from assistant.lang.text import split_sentences

        flagged = set(self.withheld)
        return replace(
            self,
            title=WITHHELD_TITLE if self.title in flagged else self.title,
            authors=tuple(a for a in self.authors if a not in flagged),
            text=_without_sentences(self.text, split_sentences(self.text), flagged),
        )


def _without_sentences(text: str, sentences: list[str], flagged: set[str]) -> str:
    """``text`` without the ``flagged`` ones of its ``sentences``; the rest is kept verbatim, the whitespace
    between kept sentences too (a sentence split at the "!" of a Markdown image must not come back as "! [").
    A flagged sentence goes with the whitespace before it. If the sentences are not substrings of ``text`` in
    order, the kept ones are joined with a space."""
    out: list[str] = []
    at = 0
    for sentence in sentences:
        start = text.find(sentence, at)
        if start < 0:
            return " ".join(s for s in sentences if s not in flagged)
        if sentence not in flagged:
            out.append(text[at:start] + sentence)
        at = start + len(sentence)
    out.append(text[at:])
    return "".join(out).strip()


#: What a title that addresses the assistant is replaced by wherever answers, prompts or references use it.
WITHHELD_TITLE = "(title withheld: it addresses the assistant)"


@dataclass(frozen=True, slots=True)
class Window:
    """A sentence window: the indexed chunk (node). ``id = f"{paper_id}:{index:04d}"``.

    ``sentences`` are the window's sentences; ``center`` is the index (in the paper) of its first
    sentence; ``content_hash`` is sha1 of the text + paper metadata, used for idempotent upserts.
    """

    id: str
    paper_id: str
    index: int
    text: str
    first_sentence: int
    last_sentence: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """One sentence of a paper's abstract chosen as evidence; ``score`` in [0, 1], higher is better."""

    paper_id: str
    sentence_index: int
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class PaperHit:
    """A retrieved paper: fused rank score, its best dense cosine similarity in [-1, 1], its best
    evidence sentences, all its sentences, and each sentence's evidence score for the query."""

    paper: Paper
    score: float
    dense_similarity: float
    evidence: tuple[Evidence, ...]
    sentences: tuple[str, ...]
    sentence_scores: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Citation:
    """A reference shown under an answer: ``n`` is its [n] label."""

    n: int
    paper: Paper
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """A shown sentence with the labels ``[n]`` that support it and its support score in [0, 1].

    ``probability`` is the entailment model's P(supported) for a sentence the model wrote and the verifier kept
    (assistant/verify/attribution.py); None for a sentence quoted from an abstract by code (it is the evidence)
    and for one that only names a cited paper's title (an exact match).
    ``by_model``: the language model wrote it (and the verifier kept it); False for a sentence quoted from an
    abstract or written from the paper records by code.
    ``check``: what vouches for it, as shown to the reader (:data:`SentenceCheck`).

    Raises:
        ValueError: ``by_model`` without a passing check, or a quote (``by_model`` False) with one: what the reader
            is told was checked is what was checked.
    """

    text: str
    citations: tuple[int, ...]
    support: float
    probability: float | None = None
    by_model: bool = False
    check: SentenceCheck = "quote"

    def __post_init__(self) -> None:
        if self.by_model == (self.check in ("quote", "record")):
            raise ValueError(
                "a sentence the model wrote needs the check that passed (rules, entailment, self_check or title), "
                f"and a quote or record sentence none: by_model={self.by_model}, check={self.check!r}"
            )


#: What vouches for a shown sentence: ``self_check`` (the model wrote it; its numbers and names are in the cited
#: paper, and asked whether every fact of it is stated in the cited abstract, the model said yes with
#: ``probability``: the verifier); ``title`` (the model wrote it and it only names a cited paper's title, matched
#: exactly); ``quote`` (code quoted it from the cited abstract: nothing to check); ``record`` (code wrote it from
#: the cited paper's record, its title, authors, venue or link: not a quote, nothing to check). ``rules`` and
#: ``entailment`` are read from sessions saved before issue 40 (the hand-written rules and the trained entailment
#: model, both replaced by the self-check); nothing writes them now.
SentenceCheck = Literal["rules", "entailment", "self_check", "title", "quote", "record"]


#: ``generated``: at least one model sentence passed verification; ``extractive``: abstract sentences chosen
#: by code; ``abstained``: no indexed paper matches; ``not_stated``: the paper the question is about was
#: found, but its abstract does not state the requested detail; ``clarify``: the question refers to a paper
#: the conversation does not have ("it", "the paper" in a first question): the notice asks which one.
AnswerMode = Literal["generated", "extractive", "abstained", "not_stated", "clarify"]
#: ``metadata``: the paper records asked for (authors, venue, year, link) or an author's papers.
Intent = Literal["lookup", "summary", "compare", "topic", "choice", "metadata"]
INTENTS: tuple[Intent, ...] = ("lookup", "summary", "compare", "topic", "choice", "metadata")


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One paper's row of a comparison table: ``n`` is its citation label; one cell per column,
    each an abstract sentence (cited ``n``), the paper's checked part of the answer (the "on the question" column),
    or None when nothing fits that column."""

    n: int
    cells: tuple[AnswerSentence | None, ...]


@dataclass(frozen=True, slots=True)
class Page:
    """Which part of a long listing to show: ``limit`` items after skipping ``offset`` (both >= 0)."""

    offset: int = 0
    limit: int = 10


@dataclass(frozen=True, slots=True)
class Listing:
    """A topic answer's place in its whole list: ``total`` papers match (after the filters), the answer
    shows ``shown`` of them starting after ``offset`` (best first); ``venue`` and ``author`` are the
    narrowing the question asked for ("ICLR 2024 papers on ...", "orals only", "by <author>"), "" if none;
    ``links_code``: the list is of the papers whose abstract links their code ("papers that release code")."""

    total: int
    offset: int
    shown: int
    limit: int
    venue: str = ""
    author: str = ""
    links_code: bool = False

    @property
    def has_more(self) -> bool:
        """True when papers beyond this page match."""
        return self.offset + self.shown < self.total


@dataclass(frozen=True, slots=True)
class Comparison:
    """A papers x aspects table; every cell comes from the row paper's abstract: quoted, or written from it by the
    model and checked against it."""

    columns: tuple[str, ...]
    rows: tuple[ComparisonRow, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """The final, verified answer.

    ``sentences`` are what the user sees, each cited; ``citations`` the numbered references;
    ``sources`` every retrieved paper (cited or not); ``dropped`` model sentences removed for lack of
    support; ``timings_ms`` has ``retrieve``, ``first_token``, ``generate``, ``total`` (milliseconds);
    ``intent`` the detected or forced intent; ``resolved_query`` what was searched (follow-ups resolved);
    ``comparison`` the table for compare answers; ``model_used`` whether a language model was asked
    (False for answers decided by retrieval and code alone).
    """

    question: str
    sentences: tuple[AnswerSentence, ...]
    citations: tuple[Citation, ...]
    sources: tuple[PaperHit, ...]
    mode: AnswerMode
    model: str
    dropped: tuple[str, ...] = ()
    notice: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    intent: str = "lookup"  # an intent name: the built-in ones (Intent) or one a registry adds
    resolved_query: str = ""
    comparison: Comparison | None = None
    model_used: bool = False
    listing: Listing | None = None

    @property
    def abstained(self) -> bool:
        """True when the abstracts do not answer the question: no paper matches (``abstained``) or the
        paper does not state the detail asked for (``not_stated``), or it is unclear which paper is meant
        (``clarify``). Such answers cite nothing."""
        return self.mode in ("abstained", "not_stated", "clarify")

    @property
    def text(self) -> str:
        """The answer as plain text with ``[n]`` markers after each sentence."""
        if self.abstained:
            return self.notice
        parts = []
        for s in self.sentences:
            parts.append(f"{s.text} {format_citations(s.citations)}".strip())
        return " ".join(parts)


def relabel(answer: Answer, mapping: dict[int, int]) -> Answer:
    """The same answer with citation labels renamed by ``mapping`` (local ``n`` -> conversation ``n``)."""
    from dataclasses import replace

    def sent(s: AnswerSentence) -> AnswerSentence:
        return replace(s, citations=tuple(mapping[n] for n in s.citations))

    comparison = None
    if answer.comparison is not None:
        comparison = replace(
            answer.comparison,
            rows=tuple(
                ComparisonRow(mapping[r.n], tuple(sent(c) if c else None for c in r.cells))
                for r in answer.comparison.rows
            ),
        )
    return replace(
        answer,
        sentences=tuple(sent(s) for s in answer.sentences),
        citations=tuple(sorted((replace(c, n=mapping[c.n]) for c in answer.citations), key=lambda c: c.n)),
        comparison=comparison,
    )


@dataclass(frozen=True, slots=True)
class IngestReport:
    """Outcome of one ingest run: counts (``skipped``: windows unchanged, so not re-embedded), seconds taken,
    ids of the papers this run (re)indexed whose text looks like an attempt to steer the assistant (indexed
    as data anyway; see ingest.steering), and ``skipped_rows``: input rows not indexed, as
    ``"file:line: reason"``.

    ``embedded_tokens``: word pieces sent to the encoder in this run (each changed sentence once);
    ``corpus_tokens``: word pieces of every ingested title + abstract, once (both counted by the embedding
    model's tokenizer, without special tokens; their ratio is the embedding work per corpus token).
    ``papers_added/updated/removed``: papers (not windows) added, changed, and removed from re-read files."""

    papers: int
    windows: int
    added: int
    updated: int
    removed: int
    skipped: int
    collection: str
    seconds: float
    flagged: tuple[str, ...] = ()
    skipped_rows: tuple[str, ...] = ()
    embedded_tokens: int = 0
    corpus_tokens: int = 0
    papers_added: int = 0
    papers_updated: int = 0
    papers_removed: int = 0
