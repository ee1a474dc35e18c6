"""Follow-up resolution: which papers a question points back to, and what to search for (:class:`Resolver`).

The candidates are the papers the conversation showed (state.py), the papers the question names or describes
(references.py) and positions as the user saw them (state.shown_order). The words that point back ("it",
"the second one", "both", "[2]") are closed-class and exact, like the ``[n]`` labels (nothing fitted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assistant.answer.route import Referents, wording_intent
from assistant.lang.numbers import ORDINALS
from assistant.lang.references import (
    ASKS_FOR_PAPER,
    BACK_REF,
    CONVERSATION_ORDINAL,
    DESCRIBED_SET,
    ELLIPTIC_OPENINGS,
    FORMER_LATTER,
    LABEL_REF,
    MORE,
    ORDINAL_REF,
    OTHER,
    PLURAL_REF,
    SET_REF,
    SINGULAR_REF,
)
from assistant.lang.text import content_tokens, fold
from assistant.retrieve.references import find_references
from assistant.tuning import (
    CLARIFY_MAX_CONTENT_WORDS,
    ELLIPTIC_MAX_WORDS,
)

if TYPE_CHECKING:
    from assistant.config import Settings
    from assistant.conversation.state import ConversationState
    from assistant.retrieve.retrieval import PaperRetriever
    from assistant.types import Paper
    from assistant.understand.parse import Question


def inherits_query(question: str) -> bool:
    """True when ``question`` is elliptic: at most ``ELLIPTIC_MAX_WORDS`` words, or "and ...", "what about ...",
    "how about ...". With nothing in focus (and not a topic list) it searches the previous turn's query too; no
    other question reads that query."""
    return len(question.split()) <= ELLIPTIC_MAX_WORDS or question.lower().startswith(ELLIPTIC_OPENINGS)


def asks_more(question: str) -> bool:
    """True for "show more", "more", "next page" ...: the next page of the last listing (exact words)."""
    return bool(MORE.match(question))


_CLARIFY = (
    "Which paper do you mean? Nothing earlier in this conversation is cited for it to refer to. "
    "Name the paper by its title, its method or an author, or ask about a topic."
)


def _distinguishes(paper: Paper, question: str) -> bool:
    """True when ``question`` (folded) says which of several same-title papers it means by this one's venue and year
    ("ICLR 2024", the venue's first two words) or an author's last name, as whole words."""
    words = " " + " ".join("".join(c if c.isalnum() else " " for c in fold(question)).split()) + " "
    venue = " ".join(fold(paper.venue).split()[:2])
    lasts = [fold(a).split()[-1] for a in paper.authors if a.split()]
    return bool(venue and f" {venue} " in words) or any(f" {last} " in words for last in lasts)


def same_title_twins(named: list[str], question: str, paper_of: Callable[[str], Paper | None]) -> list[str] | str:
    """``named`` (papers a question names) with papers that share one title (case and accents folded) kept apart:
    when the question says which one it means (:func:`_distinguishes`), only that one stays; else a question to ask
    back (a ``str``) that names each, by venue and first author. Two papers with one title are never one answer."""
    by_title: dict[str, list[str]] = {}
    for pid in named:
        paper = paper_of(pid)
        by_title.setdefault(" ".join(fold(paper.title).split()) if paper else pid, []).append(pid)
    kept: list[str] = []
    for group in by_title.values():
        if len(group) == 1:
            kept += group
            continue
        papers = [p for p in (paper_of(pid) for pid in group) if p is not None]
        chosen = [p.id for p in papers if _distinguishes(p, question)]
        if len(chosen) == 1:
            kept += chosen
            continue
        each = "; ".join(
            f"one in {p.venue or 'an unnamed venue'}"
            + (f" by {p.authors[0]}" + (" et al." if len(p.authors) > 1 else "") if p.authors else "")
            for p in papers
        )
        return (
            f"{len(papers)} indexed papers have the title “{papers[0].title}”: {each}. Which one do you mean? "
            "Ask again with its venue and year or an author's name."
        )
    return kept


_ONE_TO_COMPARE = (
    "This conversation has shown one paper so far, “{title}”, so there is nothing to compare it with yet. "
    "Which paper should it be compared with? Name it by its title, its method or an author."
)


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a question is run: ``query`` to search, ``focus_ids`` papers it points back to (may be empty);
    ``clarify``: a question to ask back instead of answering (nothing to refer to); ``switched_from``: the
    latest answer's first paper when the turn is about other papers (the answer names both);
    ``referents``: what the question refers to, for the router (answer/route.py ``decide_intent``: a question
    that names two or more papers and would otherwise be a one-paper lookup compares them); None with
    ``clarify``."""

    query: str
    focus_ids: tuple[str, ...]
    clarify: str = ""
    switched_from: str = ""
    referents: Referents | None = None


class Resolver:
    """Resolves the follow-ups of one conversation.

    Args:
        state: the conversation (its turns, labels and papers).
        retriever: the paper retriever (names, descriptions, profile similarity).
        settings: ``min_similarity``.
    """

    def __init__(self, state: ConversationState, retriever: PaperRetriever, settings: Settings) -> None:
        self._state = state
        self._retriever = retriever
        self._settings = settings

    def resolve(self, question: Question, forced: str | None = None) -> Resolution:
        """Which papers ``question`` (the turn's reading) is about, and what to search for; ``forced``: the
        intent the user chose (no intent is implied then).

        The candidates are the papers in focus (those the latest answer showed, and before them the ones
        shown earlier, most recent first), the papers the question names (references.py: an author, a title
        name, title words, "the paper about X") or describes (how well it matches each paper's title and
        abstract as a whole, retrieval.describes), and positions as the user saw them (:func:`shown_order`:
        table rows, list items). Exact references decide first: ``[2]`` / "paper 2", "the second one" (of
        the latest answer that showed that many), "the former/latter", "the other one" (the paper shown most
        recently that is not in focus now); then named papers ("compare it with X": the paper in focus and
        X). Otherwise the papers are ranked (:meth:`_ranked`): "which of them" / "both" take every paper in
        focus; a question that describes another paper well enough moves to it (``switched_from`` says so);
        else the paper in focus the question matches best. Short or "and ..." questions with nothing in focus
        inherit the previous query. A back-reference with nothing to refer to ("What did they evaluate it
        on?" as a first question), and "compare them" when the conversation has shown one paper, get ``clarify``:
        a question back, no answer.
        """
        q = question
        question_text = q.text
        shown = self._state.shown()
        current = list(shown[0]) if shown else []
        refs = find_references(q, self._retriever, self._settings.retrieval.min_similarity)
        twins = same_title_twins(list(refs.named), question_text, self._state.paper)
        if isinstance(twins, str):  # two papers share the title it names: ask which one
            return Resolution(question_text, (), twins)
        named = twins
        picked_twin = len(named) < len(refs.named)  # the question said which of two same-title papers it means
        explicit = bool(named or refs.unresolved or refs.unknown_author)  # the question says which paper it means
        by_name = self._named_by_name(q)
        # "What do the ControlAR and LucidPPN papers propose?": both, side by side (route.wording_intent)
        detected = wording_intent(q, forced, len(by_name))
        # "Tell me about HyperFace and A-Bench": two papers named each by a name of its own are both the answer's
        several_named = len(named) >= 2 and (
            detected in ("compare", "choice") or (len(by_name) >= 2 and detected != "topic")
        )
        if named and not current and not several_named and not picked_twin:
            named = []  # a first question: the search ranks named papers first (metadata fusion), nothing more
        plural = bool(PLURAL_REF.search(question_text))
        refers = plural or bool(SINGULAR_REF.search(question_text))
        focus = self._positions(question_text, shown)
        beyond = self._beyond_lists(question_text, shown) if not focus and not named else ""
        if beyond:  # "and the second one?" after a one-paper list: there is none; say so and ask
            return Resolution(question_text, (), beyond)
        switched_from = ""
        if not focus and named:
            if detected == "compare" and current and refers and len(named) == 1 and named[0] not in current:
                focus = (current if plural and len(current) >= 2 else current[:1]) + named  # "compare it with X"
            else:
                focus = named
        elif not focus and current and not explicit:
            focus, switched_from = self._ranked(q, detected, current, plural, refers)
        focus = list(dict.fromkeys(focus))
        if focus and current and not set(focus) & set(current):
            switched_from = switched_from or current[0]  # the turn moved to other papers: the answer says so
        if not focus and not current and not explicit and self._refers_back(q):
            return Resolution(question_text, (), _CLARIFY)
        recent = self._state.recent()
        if detected in ("compare", "choice") and plural and len(focus) < 2 and not named and len(recent) == 1:
            # "compare them" when the conversation has shown one paper: nothing to compare it with, so ask
            return Resolution(question_text, (), _ONE_TO_COMPARE.format(title=self._state.title(recent[0])))
        # the intent these papers imply ("what architectures does it compare transformers against?" asks about
        # one paper; "of those two, which one links its code?" asks several) is the router's: route.decide_intent
        moved = bool(focus and current and not set(focus) & set(current))
        referents = Referents(len(by_name), len(focus), len(named), explicit, moved)
        query = question_text
        turns = self._state.turns
        if focus:
            query = f"{question_text} ({'; '.join(self._state.title(p) for p in focus)})"
        elif (
            turns
            and detected != "topic"  # "papers on video?" names its own topic: a new search, not the last one's
            and inherits_query(question_text)
        ):
            query = f"{question_text} ({turns[-1].resolved_query})"
        return Resolution(query, tuple(focus), switched_from=switched_from, referents=referents)

    def _beyond_lists(self, question: str, shown: list[tuple[str, ...]]) -> str:
        """A question back when ``question`` points at a position ("the third one") that no answer of the
        conversation showed (every list was shorter) and beyond the papers it cited; else ``""``."""
        asked = [ORDINALS[m.group(1).lower()] for m in ORDINAL_REF.finditer(question)]
        if not asked or not shown:
            return ""
        longest = max(shown, key=len)
        if min(asked) <= max(len(longest), len(self._state.labels)):  # a list, or the papers cited in order
            return ""
        titles = "; ".join(f"“{self._state.title(pid)}”" for pid in longest)
        count = f"{len(longest)} paper{'s' if len(longest) != 1 else ''}"
        return (
            f"No answer in this conversation listed that many papers: the longest listed {count} ({titles}). "
            "Which paper do you mean? Name it by its title, its method or an author."
        )

    def _positions(self, question: str, shown: list[tuple[str, ...]]) -> list[str]:
        """Papers ``question`` points at exactly: ``[2]`` / "paper 2" (the conversation's labels), "the second
        one" (the second paper of the latest answer that showed at least two, in the order shown; "the first one"
        with no such answer: the second paper the conversation cited, or the latest answer's first paper when it
        cited one), "the
        former/latter", "the other one" (the most recently shown paper not shown by the latest answer)."""
        focus: list[str] = []
        for m in LABEL_REF.finditer(question):
            pid = self._state.by_label(int(m.group(1) or m.group(2)))
            if pid:
                focus.append(pid)
        cited = tuple(p.id for _, p in self._state.cited_papers())
        asked = self._state.asked()
        by_conversation = CONVERSATION_ORDINAL.search(question) is not None
        for m in ORDINAL_REF.finditer(question):
            i = ORDINALS[m.group(1).lower()] - 1
            # "back to the first one", "the very first paper", "the second one I asked about": of the papers in the
            # order the conversation asked about them. Else of the latest answer that showed several papers, as
            # shown (a table's rows, a list's items); with none, of the papers in the order the conversation first
            # cited them ("compare the first and the third" after three one-paper turns); with one cited, of the
            # latest answer ("what did the first one find?" after a one-paper topic list)
            listed = (
                tuple(asked)
                if by_conversation and len(asked) > i
                else next((s for s in shown if len(s) >= max(2, i + 1)), ())
                or (cited if len(cited) >= 2 else ())
                or next((s for s in shown if len(s) >= i + 1), ())
            )
            if i < len(listed):
                focus.append(listed[i])
        for m in FORMER_LATTER.finditer(question):
            pair = next((s for s in shown if len(s) >= 2), ())
            if pair:
                focus.append(pair[0] if m.group(1).lower() == "former" else pair[-1])
        if OTHER.search(question) and shown:
            rest = [pid for pid in self._state.recent() if pid not in shown[0]]
            if rest:
                focus.append(rest[0])
        return focus

    def _ranked(
        self, question: Question, detected: str, current: list[str], plural: bool, refers: bool
    ) -> tuple[list[str], str]:
        """The papers a question without an exact reference is about, ranked by score, and the paper in focus
        it moved away from ("" when none).

        1. "Which of them ...", "both", "they" with several papers in focus, or "compare them": all of them (the
           latest answer's papers when it showed several, else the most recent ``papers_wanted`` or 2 papers
           shown: "of those two", "compare them" after two one-paper turns). Else a question that asks to find
           a paper ("Which paper is about speech coding and which company made it?", "is there a paper on …?",
           references.ASKS_FOR_PAPER) with no plural: a new search (its "it" is the paper it asks for).
        2. A question (or one of its sentences: "There's also a paper on how sensitive transformers are to
           random token perturbations. Does it say anything about grokking?") that describes a paper not in
           focus (profile cosine s1 with (s1 - s_focus) + (s1 - s2) >= ``conversation.described_margin``, s2 the
           runner-up's, :meth:`description_strength`): that paper when the question refers back ("there's
           also a robot grasping one ..., how long does it take to train?"), else a new search.
        3. A topic list without a back-reference, or a question that neither refers back nor matches the paper
           in focus (its cosine below ``min_similarity`` or ``conversation.focus_preference_margin`` under the
           best): a new search.
        4. Else the paper in focus the question describes best, when it leads the first one shown by
           ``conversation.focus_preference_margin``; else the first one shown.
        """
        recent = self._state.recent()
        # "of those two", "both": the question says how many papers it means
        said = question.facts.papers_wanted or (2 if SET_REF.search(question.text) else None)
        # the latest answer's papers as shown, else the last ones shown in the order the conversation asked about
        # them ("which of these two …?" after two one-paper turns: the earlier one first, as the user met them);
        # "those two diffusion papers": the papers of the conversation the description fits best
        asked = {pid: i for i, pid in enumerate(self._state.asked())}
        n = said or 2
        in_asked_order = lambda ids: sorted(ids, key=lambda pid: asked.get(pid, len(asked)))  # noqa: E731
        described_set = DESCRIBED_SET.search(question.text)
        if described_set and len(recent) > n:
            group = in_asked_order(self._fitting(described_set.group(1), recent, n, question))
        elif len(current) >= 2:
            group = current
        else:
            group = in_asked_order(recent[:n])
        wants_set = len(current) >= 2 or (said or 0) >= 2 or detected == "compare"  # "compare them" after 2 turns
        if len(group) >= 2 and (detected == "choice" or (plural and wants_set)):
            return group, ""
        if not plural and ASKS_FOR_PAPER.search(question.text):
            return [], ""  # "Which paper is about speech coding and which company made it?": a new search
        described, strength = "", float("-inf")
        sims: dict[str, float] = {}
        parts = list(question.sentences)
        texts = [question.text, *parts] if len(parts) > 1 else [question.text]
        for part in texts:  # a description may be one sentence
            part_sims = self._retriever.describes(self._retriever.query(part, question.cache), recent)
            best, part_strength = self.description_strength(part_sims, current)
            sims = sims or part_sims  # the whole question's
            if part_strength > strength:
                described, strength = best, part_strength
        if described and strength >= self._settings.conversation.described_margin:
            return ([described], current[0]) if refers else ([], "")
        s_focus = max((sims.get(pid, 0.0) for pid in current), default=0.0)
        top = max((s for pid, s in sims.items() if pid not in current), default=0.0)
        if detected == "topic" and not refers:
            return [], ""
        min_similarity = self._settings.retrieval.min_similarity
        prefer = self._settings.conversation.focus_preference_margin
        if not refers and (s_focus < min_similarity or s_focus < top - prefer):
            return [], ""
        first = current[0]
        best_own = max(current, key=lambda pid: sims.get(pid, 0.0))
        pick = best_own if sims.get(best_own, 0.0) >= sims.get(first, 0.0) + prefer else first
        return [pick], ""

    def _fitting(self, description: str, papers: list[str], n: int, question: Question) -> list[str]:
        """The ``n`` of ``papers`` that ``description`` ("molecule", "grokking-related") fits best: those whose title
        or abstract has the most of its words (a plural ``s`` ignored), then by how well it describes each paper as a
        whole (:meth:`PaperRetriever.describes`)."""
        words = [w for w in description.lower().replace("-", " ").split() if content_tokens(w)]
        having = [
            set().union(*(self._retriever.papers_with(v) for v in {w, f"{w}s", w.removesuffix("s")})) for w in words
        ]
        fit = self._retriever.describes(self._retriever.query(description, question.cache), papers)
        return sorted(papers, key=lambda pid: (-sum(pid in h for h in having), -fit.get(pid, -1.0)))[:n]

    def description_strength(self, sims: Mapping[str, float], current: list[str]) -> tuple[str, float]:
        """The paper not in ``current`` that ``sims`` (profile cosines) rank first, and how clearly the text
        describes it: (s1 - s_focus) + (s1 - s2), s_focus the best cosine of a paper in ``current`` and s2 the
        runner-up's; ("", -inf) when no other paper was scored or s1 is below ``min_similarity``."""
        others = sorted(((s, pid) for pid, s in sims.items() if pid not in current), reverse=True)
        if not others or others[0][0] < self._settings.retrieval.min_similarity:
            return "", float("-inf")
        s_focus = max((sims.get(pid, 0.0) for pid in current), default=0.0)
        s1, best = others[0]
        s2 = others[1][0] if len(others) > 1 else s_focus
        return best, (s1 - s_focus) + (s1 - s2)

    def _named_by_name(self, question: Question) -> set[str]:
        """Papers the question names each by a name of its own (``ControlAR``, ``LucidPPN``): a name that only
        one indexed paper has (a word shared by titles, like ``Multi-Objective``, names none)."""
        found = set()
        for entity in question.facts.entities:
            ids = self._retriever.metadata.by_name(entity)
            if len(ids) == 1:
                found.add(ids[0])
        return found

    @staticmethod
    def _refers_back(question: Question) -> bool:
        """True when ``question`` points back to a paper ("it", "they", "the paper", "the second one")
        and says almost nothing else that could identify one (at most ``CLARIFY_MAX_CONTENT_WORDS`` content
        words, no name): a first question like that cannot be answered, only asked back."""
        text = question.text
        if not (BACK_REF.search(text) or ORDINAL_REF.search(text) or FORMER_LATTER.search(text)):
            return False
        if question.facts.entities or question.intent == "topic":  # "which papers ...? List all of them."
            return False
        return len(content_tokens(BACK_REF.sub(" ", text))) <= CLARIFY_MAX_CONTENT_WORDS
