"""Export builders: the conversation as Markdown and the cited papers as BibTeX (pure functions)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant.types import (
    Answer,
    AnswerSentence,
    Citation,
    Comparison,
    ComparisonRow,
    Paper,
)
from ui.downloads import write_export
from ui.export import (
    bibtex,
    bibtex_key,
    conversation_markdown,
    latex_escape,
    paper_url,
    venue_booktitle,
    venue_year,
)

A = Paper("000.txt#8", "ICLR 2025 Papers", "A-Bench: Are LMMs Masters at Evaluating AI-generated Images?",
          ("Zicheng Zhang", "Haoning Wu"), "https://proceedings.iclr.cc/paper/a.html", "A-Bench is a benchmark.",
          "000.txt", 8)
B = Paper("004.txt#6", "ICLR 2025 Papers", "Number Cookbook: {Braces} & 100% of #1_x ~ ^ \\ $",
          ("Haotong Yang", "Muhan Zhang"), "https://arxiv.org/abs/2411.03766?a=1&b=%20", "Numbers.", "004.txt", 6)
C = Paper("004.txt#7", "Workshop", "Zhang's twin paper", ("Zoë Zhang",), "", "Twin.", "004.txt", 7)  # no url, no year
D = Paper("004.txt#9", "ICLR 2025 Papers", "A-Bench again", ("Zicheng Zhang",), "https://x.example/d", "D.", "004.txt",
          9)
E = Paper("004.txt#10", "ICLR 2025 Papers", "—", (), "https://x.example/e", "E.", "004.txt", 10)  # nothing for a key


@dataclass
class T:
    question: str
    resolved_query: str
    answer: Answer


def _turns() -> list[T]:
    a1 = Answer("Which paper introduces A-Bench?", (AnswerSentence("A-Bench is a benchmark.", (1,), 0.9),),
                (Citation(1, A, ("A-Bench is a benchmark.",)),), (), "generated", "smollm2", intent="lookup",
                resolved_query="Which paper introduces A-Bench?")
    comp = Comparison(("approach", "key result"), (ComparisonRow(1,
                                                                 (AnswerSentence("A-Bench | pipes.", (1,), 0.5), None)),
                                                    ComparisonRow(2, (AnswerSentence("Numbers.", (2,), 0.5), None))))
    a2 = Answer("Compare it with the Number Cookbook paper.", (AnswerSentence("Numbers.", (2,), 0.9),),
                (Citation(1, A, ()), Citation(2, B, ("Numbers.",))), (), "generated", "smollm2", intent="compare",
                resolved_query="Compare it with the Number Cookbook paper. (A-Bench)", comparison=comp)
    return [T(a1.question, a1.resolved_query, a1), T(a2.question, a2.resolved_query, a2)]


CITED = [(1, A), (2, B), (3, C)]


def test_markdown_has_questions_answers_with_labels_and_every_cited_paper_with_url() -> None:
    md = conversation_markdown(_turns(), CITED)
    assert "## 1. Which paper introduces A-Bench?" in md and "## 2. Compare it with the Number Cookbook paper." in md
    assert "A-Bench is a benchmark. [1]" in md and "Numbers. [2]" in md
    assert "*Searched for: Compare it with the Number Cookbook paper. (A-Bench)*" in md
    assert md.count("Searched for") == 1  # not when the query is the question
    assert "intent" not in md  # no pipeline jargon
    assert "| paper | approach | key result |" in md and r"A-Bench \| pipes. [1]" in md and "| — |" in md
    refs = md[md.index("## References"):]
    for n, paper in CITED:
        assert f"[{n}] " in refs and paper.id not in md  # no internal ids in an export
        if paper.url:
            assert paper.url in refs
    assert "(no link)" in refs
    assert r"\[Braces\]" not in refs  # titles' own brackets are kept apart from link syntax
    assert md.endswith("\n")


def test_markdown_neutralises_corpus_markdown_and_keeps_math() -> None:
    evil = Paper("x.txt#1", "V", "*Bold* [link](http://evil.example) <b>x</b> $\\ell_1$ for $5 and $10", ("Ann_Lee",),
                 "https://x.example/p", "t", "x.txt", 1)
    md = conversation_markdown([], [(1, evil)])
    # emphasis shown as its text
    assert r"Bold \[link\](http://evil.example) \<b\>x\</b\> $\ell_1$ for \$5 and \$10" in md
    assert r"Ann\_Lee" in md


def test_markdown_of_an_empty_conversation() -> None:
    md = conversation_markdown([], [])
    assert "## References" in md and "(none)" in md


def _entries(bib: str) -> list[str]:
    return [e for e in re.split(r"(?m)^(?=@)", bib) if e.startswith("@")]


def _balanced(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "{}" and i and text[i - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def test_bibtex_has_one_valid_entry_per_paper_with_unique_keys() -> None:
    bib = bibtex([*CITED, (4, D), (5, E)])
    entries = _entries(bib)
    assert len(entries) == 5
    keys = [re.match(r"@(\w+)\{([^,\s]+),", e).group(2) for e in entries]  # type: ignore[union-attr]
    assert len(set(keys)) == 5
    assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", k) for k in keys), keys
    assert keys[0] == "zhang2025abench" and keys[3] == "zhang2025abencha" and keys[4] == "paper5"
    for entry in entries:
        assert _balanced(entry), entry
        assert "note" not in entry and ".txt" not in entry  # no internal ids


def test_bibtex_fields_year_authors_url_and_type() -> None:
    a, b, c = _entries(bibtex(CITED))
    assert _fields(a) == {
        "title": "{A-Bench: Are LMMs Masters at Evaluating AI-generated Images?}",
        "author": "Zicheng Zhang and Haoning Wu",
        "booktitle": "International Conference on Learning Representations",
        "year": "2025",
        "url": "https://proceedings.iclr.cc/paper/a.html",
    }
    assert a.startswith("@inproceedings{zhang2025abench,")
    assert _fields(c) == {"title": "{Zhang's twin paper}", "author": "Zoë Zhang", "howpublished": "Workshop"}
    assert c.startswith("@misc{")
    assert "author = {Zoë Zhang}" in c and c.startswith("@misc{zhang")  # key is ASCII
    assert "url = {https://arxiv.org/abs/2411.03766?a=1&b=%20}" in b  # urls stay verbatim


def _fields(entry: str) -> dict[str, str]:
    """``name = {value}`` fields of one entry (one per line, as written by ``bibtex_entry``)."""
    return dict(re.findall(r"(?m)^  (\w+) = \{(.*)\},?$", entry))


@pytest.mark.parametrize(
    ("venue", "kind", "booktitle", "year"),
    [
        ("ICLR 2025 Papers", "inproceedings", "International Conference on Learning Representations", "2025"),
        ("ICLR 2024 Spotlight", "inproceedings", "International Conference on Learning Representations", "2024"),
        ("NeurIPS 2024", "inproceedings", "Advances in Neural Information Processing Systems", "2024"),
        ("ICML 2024 Oral", "inproceedings", "International Conference on Machine Learning", "2024"),
        ("CoLLAs 2024 Papers", "inproceedings", "CoLLAs", "2024"),
    ],
)
def test_bibtex_venue_is_the_full_conference_name_and_year(venue: str, kind: str, booktitle: str, year: str) -> None:
    paper = Paper("p#1", venue, "T", ("Ann Lee",), "https://openreview.net/forum?id=abc", "x", "p", 1)
    (entry,) = _entries(bibtex([(1, paper)]))
    assert entry.startswith(f"@{kind}{{lee{year}t,")
    assert _fields(entry) == {
        "title": "{T}",
        "author": "Ann Lee",
        "booktitle": booktitle,
        "year": year,
        "url": "https://openreview.net/forum?id=abc",
    }
    assert venue_booktitle(venue) == booktitle


def test_bibtex_never_links_a_search_page() -> None:
    search = "https://openreview.net/search?term=Horizon+Generalization&group=ICLR.cc%2F2025%2FConference"
    paper = Paper("001.txt#5", "ICLR 2025 Papers", "Horizon Generalization", ("Ann Lee",), search, "x", "001.txt", 5)
    (entry,) = _entries(bibtex([(1, paper)]))
    assert set(_fields(entry)) == {"title", "author", "booktitle", "year"}  # no url, no note
    assert "openreview" not in entry and "001" not in entry
    assert paper_url(paper) == "" and paper_url(A) == A.url
    md = conversation_markdown([], [(1, paper)])
    assert "search on OpenReview" in md and "001.txt" not in md


def test_markdown_keeps_a_topic_list_as_a_list_with_titles() -> None:
    sentences = (AnswerSentence("A-Bench is a benchmark.", (1,), 0.9), AnswerSentence("Numbers.", (2,), 0.8))
    answer = Answer("Which papers are about benchmarks?", sentences, (Citation(1, A, ()), Citation(2, D, ())), (),
                    "extractive", "smollm2", intent="topic", resolved_query="Which papers are about benchmarks?")
    md = conversation_markdown([T(answer.question, answer.resolved_query, answer)], [(1, A), (2, D)])
    body = md[md.index("## 1."):md.index("Cited:")]
    items = [line for line in body.splitlines() if line.startswith("- ")]
    assert items == [
        f"- [1] [{A.title}](<{A.url}>)  ",
        "- [2] [A-Bench again](<https://x.example/d>)  ",
    ]
    assert "  A-Bench is a benchmark. [1]" in body and "  Numbers. [2]" in body
    assert body.index("[1] [A-Bench") < body.index("A-Bench is a benchmark. [1]") < body.index("[2] [A-Bench again")


def test_bibtex_escapes_special_characters() -> None:
    b = _entries(bibtex([(2, B)]))[0]
    title = re.search(r"title = \{\{(.*)\}\},", b).group(1)  # type: ignore[union-attr]
    assert title == (r"Number Cookbook: \{Braces\} \& 100\% of \#1\_x \textasciitilde{} \textasciicircum{} "
                     r"\textbackslash{} \$")
    assert latex_escape("a\n b") == "a b"
    assert venue_year("NeurIPS 2024 Papers") == "2024" and venue_year("Workshop") == ""


def test_keys_are_unique_against_taken() -> None:
    taken: set[str] = set()
    assert [bibtex_key(A, 1, taken) for _ in range(3)] == ["zhang2025abench", "zhang2025abencha", "zhang2025abenchb"]


def test_write_export_returns_named_file_with_content(tmp_path: Path) -> None:
    p1 = write_export("conversation.md", "hello", tmp_path)
    p2 = write_export("conversation.md", "hello", tmp_path)
    p3 = write_export("conversation.md", "other", tmp_path)
    assert p1 == p2 != p3 and p1.name == "conversation.md" and p1.read_text() == "hello" and p3.read_text() == "other"
