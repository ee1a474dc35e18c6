"""AnswerBuilder: accumulates the shown sentences of one answer and numbers the papers they cite.

Used by the :class:`~assistant.answer.answerer.Answerer` and by every intent strategy (strategies.py): a strategy
adds sentences (model sentences after verification, or abstract sentences chosen by code), the builder
keeps each citation's supporting evidence and renumbers sources 1..m in order of first citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from assistant.lang.discourse import depends_on_previous, readable_start
from assistant.lang.words import ANSWER_WORD, NAME_CASED_PART
from assistant.types import (
    WITHHELD_TITLE,
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    Comparison,
    ComparisonRow,
    Evidence,
    Listing,
    Paper,
    PaperHit,
    relabel,
)


def is_name(word: str) -> bool:
    """True for a name as a paper spells it: a hyphen-separated part with two capitals or a capital after a
    lowercase letter (``DUALFormer``, ``LeReT``, ``SADR``, ``GPT-4o``), not a capitalised word
    (``Self-Attention``, ``Transformer``)."""
    return any(NAME_CASED_PART.search(part) for part in word.split("-"))


def paper_spelling(text: str, papers: Sequence[PaperHit]) -> str:
    """``text`` with each word that is a name in one of ``papers`` (title or abstract, :func:`is_name`) but
    written in other letter case ("DualFormer") spelled as the paper spells it ("DUALFormer")."""
    names: dict[str, str] = {}
    for hit in papers:
        for m in ANSWER_WORD.finditer(f"{hit.paper.title} {hit.paper.text}"):
            if is_name(m.group(0)):
                names.setdefault(m.group(0).lower(), m.group(0))
    if not names:
        return text
    return ANSWER_WORD.sub(lambda m: names.get(m.group(0).lower(), m.group(0)), text)


def unfuse_title(text: str, papers: Sequence[PaperHit]) -> str:
    """``text`` without a paper title glued to its start ("DUALFormer: Dual Graph Transformer To address
    these limitations, …" -> "To address these limitations, …"): a model copying a title and the next
    sentence with no verb between them. A title followed by a verb or punctuation is left as it is."""
    low = text.lower()
    for hit in papers:
        title = " ".join(hit.paper.title.split()).rstrip(".")
        if title and low.startswith(title.lower()):
            rest = text[len(title) :]
            if rest[:1] == " " and rest[1:2].isupper():
                return rest.strip()
    return text


def _pieces(evidence: str) -> list[str]:
    """The abstract sentences an evidence string holds (two papers' pieces are joined by " ... ")."""
    return [p for p in evidence.split(" ... ") if p] if " ... " in evidence else [evidence]


#: The comparison column of each paper's part: what its abstract states on the point the question asks, read from
#: that paper alone (:meth:`AnswerBuilder.add_part_column`).
PART_COLUMN = "on the question"


def with_evidence(hit: PaperHit, k: int) -> PaperHit:
    """``hit`` with its ``k`` best-scoring sentences as evidence (in abstract order)."""
    if not hit.sentence_scores:
        return hit
    order = sorted(range(len(hit.sentences)), key=lambda i: hit.sentence_scores[i], reverse=True)[:k]
    ev = tuple(Evidence(hit.paper.id, i, hit.sentences[i], hit.sentence_scores[i]) for i in sorted(order))
    return replace(hit, evidence=ev)


class AnswerBuilder:
    """The answer being built.

    Args:
        question: what the user asked.
        context: the papers sentences may cite: label ``n`` is ``context[n - 1]``.
        sources: papers shown as sources (cited or not).
        model: the model name recorded on the answer.
        intent, query: recorded on the answer.
    """

    def __init__(
        self,
        question: str,
        context: Sequence[PaperHit],
        sources: Sequence[PaperHit],
        model: str,
        intent: str,
        query: str,
    ) -> None:
        self.question, self.context, self.sources, self.model = question, list(context), tuple(sources), model
        self.intent, self.query = intent, query
        self.sentences: list[AnswerSentence] = []
        self.supports: list[str] = []  # per shown sentence: its evidence as given to add()
        self.evidence: dict[int, list[str]] = {}  # source n -> supporting sentences
        self.order: list[int] = []  # source n in order of first citation
        self.dropped: list[str] = []
        self.comparison: Comparison | None = None
        self.listing: Listing | None = None
        self.model_used = False

    def cite(self, n: int, evidence: str = "") -> None:
        """Cite source ``n`` (1-based into ``context``), optionally with one supporting sentence."""
        if n not in self.order:
            self.order.append(n)
        if evidence and evidence not in self.evidence.setdefault(n, []):
            self.evidence[n].append(evidence)

    def add(self, sentence: AnswerSentence, evidence: str) -> None:
        """Show ``sentence``; ``evidence`` is its supporting abstract sentence, or for a sentence about
        two papers the pieces joined by " ... " (each piece goes under the paper whose abstract has it).
        A sentence already shown is not added twice."""
        pieces = _pieces(evidence)
        if sentence.text not in pieces and " ".join(pieces) != sentence.text:  # written by the model, not quoted
            sentence = self._tidy(sentence, pieces[0])
        self._place(sentence, evidence)

    def _place(self, sentence: AnswerSentence, evidence: str) -> None:
        """Show ``sentence`` as it is (see :meth:`add`)."""
        if any(s.text == sentence.text for s in self.sentences):
            return
        pieces = _pieces(evidence)
        for n in sentence.citations:
            paper = self.context[n - 1].paper if 0 < n <= len(self.context) else None
            own = [p for p in pieces if paper is not None and (p in paper.text or p == paper.title)] or pieces
            for piece in own:
                self.cite(n, piece)
        self.sentences.append(sentence)
        self.supports.append(evidence)

    def evidence_of(self, text: str) -> str | None:
        """The evidence given with the shown sentence ``text`` (as :meth:`add` took it), or None when none is shown."""
        return next((ev for sent, ev in zip(self.sentences, self.supports, strict=True) if sent.text == text), None)

    def state(self, text: str, n: int = 1) -> None:
        """Show ``text``, a sentence written by code from source ``n``'s record (its title, authors, venue or
        link: ``Paper`` fields, not its abstract), cited ``n`` with support 1.0 and no abstract evidence."""
        self._place(AnswerSentence(text, (n,), 1.0, check="record"), "")

    def fresh(self) -> AnswerBuilder:
        """An empty builder for the same question, papers and comparison table."""
        other = AnswerBuilder(self.question, self.context, self.sources, self.model, self.intent, self.query)
        other.comparison = self.comparison
        other.listing = self.listing
        for n in self.order:
            other.cite(n)
        return other

    def _tidy(self, sentence: AnswerSentence, evidence: str) -> AnswerSentence:
        """A verified model sentence made to read on its own: no title glued to its start, names spelled
        as the paper spells them, and, when it leans on a sentence before it ("To address these
        limitations, …", lang.discourse), the abstract sentences before its evidence quoted first."""
        papers = [self.context[n - 1] for n in sentence.citations if 0 < n <= len(self.context)]
        text = paper_spelling(unfuse_title(sentence.text, papers), papers)
        if depends_on_previous(text) and sentence.citations:
            n = sentence.citations[0]
            hit = self.context[n - 1] if 0 < n <= len(self.context) else None
            i = hit.sentences.index(evidence) if hit is not None and evidence in hit.sentences else -1
            if hit is not None and i > 0:
                start = readable_start(hit.sentences, i - 1) if depends_on_previous(hit.sentences[i - 1]) else i - 1
                context = Evidence(hit.paper.id, i - 1, " ".join(hit.sentences[start:i]), sentence.support)
                unread = self._unread(n, list(hit.sentences[start:i]))
                if unread and not self._shown_before(n, context.text):
                    self.add(AnswerSentence(" ".join(unread), (n,), sentence.support), " ... ".join(unread))
        return replace(sentence, text=text)

    def _unread(self, n: int, passage: list[str]) -> list[str]:
        """``passage`` (consecutive abstract sentences of source ``n``) without its first sentences that a sentence
        already shown citing ``n`` contains: a sentence is never shown twice in one answer."""
        shown = [s.text for s in self.sentences if n in s.citations]
        k = 0
        while k < len(passage) and any(passage[k] in t for t in shown):
            k += 1
        return passage[k:]

    def _shown_before(self, n: int, text: str) -> bool:
        """True when the last sentence shown cites ``n`` and ends with ``text`` (so it is read just before)."""
        last = self.sentences[-1] if self.sentences else None
        return last is not None and n in last.citations and last.text.endswith(text)

    def quote(self, evidence: Evidence, n: int = 1) -> None:
        """Show an abstract sentence of source ``n`` as it is, cited ``n``, its evidence score as support.

        A sentence that leans on the one before it ("The latter …", "To address this, …", "It also …":
        :func:`assistant.lang.discourse.depends_on_previous`) is shown with the sentences before it that make
        it readable (:func:`~assistant.lang.discourse.readable_start`), as one passage, unless the sentence
        before it is the one just shown; those of them already shown in this answer are not shown again."""
        pieces = [evidence.text]
        hit = self.context[n - 1] if 0 < n <= len(self.context) else None
        i = evidence.sentence_index
        if hit is not None and 0 < i < len(hit.sentences) and hit.sentences[i] == evidence.text:
            start = readable_start(hit.sentences, i)
            if start < i and not self._shown_before(n, hit.sentences[i - 1]):
                pieces = self._unread(n, list(hit.sentences[start:i])) + pieces
        self.add(AnswerSentence(" ".join(pieces), (n,), round(evidence.score, 3)), " ... ".join(pieces))

    def add_part_column(self, papers: int) -> None:
        """Put each paper's part into the comparison table, as its first column (:data:`PART_COLUMN`; a table of that
        column alone when there was none): for paper ``n`` in ``1..papers``, the sentences shown so far that cite
        ``n`` alone, joined (those the model wrote, when any; else its quote), or None ("not stated") when none
        does. Call it once every paper's part is written and checked (issue 60: each paper's cell on the point asked,
        from its own reading)."""
        cells: list[AnswerSentence | None] = []
        for n in range(1, papers + 1):
            own = [s for s in self.sentences if s.citations == (n,)]
            own = [s for s in own if s.by_model] or own
            if not own:
                cells.append(None)
                continue
            probabilities = [s.probability for s in own if s.probability is not None]
            cells.append(
                replace(
                    own[0],
                    text=" ".join(s.text for s in own),
                    support=min(s.support for s in own),
                    probability=min(probabilities) if probabilities else None,
                )
            )
        base = self.comparison
        rows = base.rows if base is not None else tuple(ComparisonRow(n, ()) for n in range(1, papers + 1))
        for row in rows:  # every row's paper is a reference, as a table built by code cites it
            self.cite(row.n)
        self.comparison = Comparison(
            (PART_COLUMN, *(base.columns if base is not None else ())),
            tuple(ComparisonRow(r.n, (cells[r.n - 1] if r.n <= papers else None, *r.cells)) for r in rows),
        )

    def build(self, mode: AnswerMode, notice: str = "", timings: dict[str, float] | None = None) -> Answer:
        """The answer so far, with sources renumbered 1..m in order of first citation."""
        citations = tuple(Citation(n, self.context[n - 1].paper, tuple(self.evidence.get(n, ()))) for n in self.order)
        notice = withheld_notice(notice, [c.paper for c in citations])  # citations in final [1..m] order
        answer = Answer(
            self.question,
            tuple(self.sentences),
            citations,
            self.sources,
            mode,
            self.model,
            tuple(self.dropped),
            notice,
            dict(timings or {}),
            self.intent,
            self.query,
            self.comparison,
            self.model_used,
            self.listing,
        )
        return relabel(answer, {n: i for i, n in enumerate(self.order, start=1)})


def withheld_notice(notice: str, papers: Sequence[Paper]) -> str:
    """``notice`` followed, once, by a sentence saying that part of a cited paper's record was withheld and why
    (types.Paper.withheld), naming the papers by their source labels (``papers`` are the cited papers in label
    order: the first is [1]); ``notice`` itself when nothing cited withholds anything. The papers are not named
    by title: a paper without a title is named by its first sentence, which would read as the withheld text."""
    labels = [f"[{n}]" for n, p in enumerate(papers, start=1) if p.withheld]
    if not labels or WITHHELD_MARK in notice:
        return notice
    which = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
    whose = f"source {which}'s record" if len(labels) == 1 else f"the records of sources {which}"
    title = any(p.withheld and p.title == WITHHELD_TITLE for p in papers)
    what = " (its title among them)" if title and len(labels) == 1 else ""
    added = (
        f"Part of {whose}{what} {WITHHELD_MARK}: it is written as an instruction to the assistant, so it is never "
        "used to answer; the abstract card shows it, marked."
    )
    return f"{notice} {added}".strip()


#: The words that mark the notice of :func:`withheld_notice` (added once per answer).
WITHHELD_MARK = "was withheld from this answer"
