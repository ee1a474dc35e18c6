"""Rendering: citations and links, escaping of hostile text, JSON shape of `ask --json`."""

from __future__ import annotations

from assistant.answer.answerer import INCOMPLETE
from assistant.answer.render import answer_to_dict, answer_to_text
from assistant.types import Answer, AnswerSentence, Citation, Paper, PaperHit
from ui.render import answer_markdown

PAPER = Paper("f.txt#1", "ICLR 2025 Papers", "XNet <b>bold</b>", ("Ada Lovelace",), "https://openreview.net/forum?id=x",
              "XNet is fast.", "f.txt", 1)
EVIL = Paper("f.txt#2", "V", "Evil ![img](http://evil.example/x.png)", (), "javascript:alert(1)", "t", "f.txt", 2)


def _answer(paper: Paper = PAPER, text: str = "XNet is fast.") -> Answer:
    hit = PaperHit(paper, 0.03, 0.7, (), (text,))
    sentence = AnswerSentence(text, (1,), 0.9, 0.9, by_model=True, check="self_check")
    return Answer("q?", (sentence,), (Citation(1, paper, (text,)),), (hit,),
                  "generated",
                  "smollm2",
                  timings_ms={"retrieve": 10.0, "total": 1234.0}, model_used=True)


def test_markdown_has_marker_link_authors_and_evidence() -> None:
    md = answer_markdown(_answer())
    assert "XNet is fast.<sup class='cite'><a href='#a-ref-1'>[1]</a></sup>" in md  # marker jumps to its card
    assert "<li value='1' class='card' id='a-ref-1'>" in md
    assert ('<a href="https://openreview.net/forum?id=x" target="_blank" rel="noopener noreferrer" '
            "class='title'>") in md
    assert "&lt;b&gt;bold&lt;/b&gt;" in md  # title HTML escaped
    assert "Ada Lovelace" in md and "<mark>XNet is fast.</mark>" in md
    assert md.count("XNet is fast.") == 2  # once in the answer, once (highlighted in the abstract) on the card
    # one short line in view; which checks passed is under the closed "Details" toggle (issue 59)
    assert "<p class='model'><small>answered by smollm2 in 1.2 s</small></p>" in md
    details = md.split("<details class='answer-details'><summary>Details</summary>", 1)[1]
    assert ("smollm2 (every sentence checked against its evidence: numbers and names found, and the "
            "model, asked again, said the abstract states each (probability of yes 0.90))") in details


def test_what_the_reader_sees_is_the_answer_the_rest_is_under_details() -> None:
    """A written answer's notice ("About X, not Y"), the search and the removed count go under "Details"; a notice
    that changes how the answer reads (quotes shown because nothing passed) stays in view."""
    written = replace(_answer(), notice="About “XNet”, not “YNet” from the last answer.", dropped=("Made up.",),
                      resolved_query="Compare it with YNet. (XNet)")
    md = answer_markdown(written)
    shown, details = md.split("<details class='answer-details'><summary>Details</summary>", 1)
    assert "About “XNet”" not in shown and "Searched for" not in shown and "removed" not in shown
    assert "About “XNet”" in details and "Searched for: Compare it with YNet. (XNet)" in details
    assert "1 sentence removed" in details
    quoted = replace(_answer(), mode="extractive", notice="No sentence of the model's answer could be checked.")
    assert "<p class='notice'><em>No sentence of the model" in answer_markdown(quoted).split("<details")[0]
    broke = replace(_answer(), notice="The language model failed: its answer broke off. " + INCOMPLETE)
    assert "language model failed" in answer_markdown(broke).split("<details")[0]


def test_hostile_text_is_inert() -> None:
    md = answer_markdown(_answer(EVIL, "See <script>alert(1)</script> ![x](http://evil.example/a.png)"))
    assert "<script>" not in md and "![" not in md
    assert "javascript:" not in md  # non-http links are not rendered as links
    assert 'href="http://evil' not in md and "<img" not in md


def test_json_shape() -> None:
    d = answer_to_dict(_answer())
    assert set(d) >= {"question", "answer", "abstained", "citations", "sources", "model", "timings_ms"}
    assert d["answer"] == "XNet is fast. [1]"
    assert d["citations"][0] == {"n": 1, "paper_id": "f.txt#1", "title": PAPER.title, "raw_title": PAPER.title,
                                 "url": PAPER.url, "authors": ["Ada Lovelace"], "evidence": ["XNet is fast."]}
    assert d["sources"][0]["paper_id"] == "f.txt#1"
    assert {"retrieve", "total"} <= set(d["timings_ms"])
    assert "[1] XNet" in answer_to_text(_answer())
    # issue 43.8: --json (and MCP, which returns this shape) give plain text, the raw form beside it
    marked = replace(_answer(), sentences=(AnswerSentence("We introduce $\\underline{Le}$arning, **11.25%** better.",
                                                          (1,), 0.9),))
    m = answer_to_dict(marked)
    assert m["sentences"][0]["text"] == "We introduce Learning, 11.25% better."
    assert m["answer"] == "We introduce Learning, 11.25% better. [1]"
    assert m["sentences"][0]["raw_text"] == "We introduce $\\underline{Le}$arning, **11.25%** better."


def test_a_topic_list_in_the_terminal_is_one_titled_paper_per_line() -> None:
    other = Paper("f.txt#3", "V", "YNet for graphs", (), "", "YNet works on graphs.", "f.txt", 3)
    hits = (PaperHit(PAPER, 0.03, 0.7, (), ("XNet is fast.",)),
            PaperHit(other, 0.02, 0.6, (), ("YNet works on graphs.",)))
    answer = Answer("Which papers are fast?", (AnswerSentence("XNet is fast.", (1,), 0.9),
                                               AnswerSentence("YNet works on graphs.", (2,), 0.6)),
                    (Citation(1, PAPER, ("XNet is fast.",)), Citation(2, other, ("YNet works on graphs.",))), hits,
                    "extractive",
                    "m", intent="topic")
    text = answer_to_text(answer)
    assert text.startswith("[1] XNet <b>bold</b>\n    XNet is fast. [1]\n[2] YNet for graphs\n    YNet works on "
                           "graphs. [2]\n")


# --- conversation rendering: meta line, comparison table, cards, references panel -------------------
import ast  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

from assistant.types import Comparison, ComparisonRow  # noqa: E402
from ui.render import comparison_html, highlight, paper_card, references_panel  # noqa: E402

OTHER = Paper("g.txt#3", "ICLR 2025 Papers", "YNet & <i>friends</i>", ("Bo", "Cy"), "https://arxiv.org/abs/1",
              "YNet is small. YNet <script>x</script> wins.",
              "g.txt", 3)


def _compare() -> Answer:
    cells_x = (AnswerSentence("XNet is fast.", (1,), 0.8), None)
    cells_y = (AnswerSentence("YNet <script>x</script> wins.", (2,), 0.7), AnswerSentence("YNet is small.", (2,), 0.6))
    comp = Comparison(("approach", "key result"), (ComparisonRow(1, cells_x), ComparisonRow(2, cells_y)))
    return Answer("Compare it with YNet.", (AnswerSentence("XNet is fast.", (1,), 0.9),),
                  (Citation(1, PAPER, ("XNet is fast.",)), Citation(2, OTHER, ())), (), "generated", "smollm2",
                  intent="compare", resolved_query="Compare it with YNet. (XNet)", comparison=comp)


def test_meta_line_shows_searched_for_only_when_it_differs_and_no_intent_jargon() -> None:
    from ui.render import SEARCHED_FOR_CHARS

    plain = answer_markdown(_answer())
    assert "intent" not in plain and "Searched for" not in plain
    same = answer_markdown(replace(_answer(), resolved_query="q?"))
    assert "Searched for" not in same
    md = answer_markdown(_compare())
    assert "intent" not in md and "Searched for: Compare it with YNet. (XNet)" in md
    paste = "My notes on graph transformers,   pasted from a draft: " + "attention over features " * 30 + "?"
    cleaned = " ".join(paste.split()).rstrip("?")
    assert "Searched for" not in answer_markdown(replace(_answer(), question=paste, resolved_query=cleaned))
    long = answer_markdown(replace(_compare(), resolved_query="Compare it with YNet (XNet) " + "ablation " * 40))
    shown = long.split("Searched for: ", 1)[1].split("</small>", 1)[0]
    assert shown.endswith("…") and len(shown) <= SEARCHED_FOR_CHARS + 1  # issue 43.7: never a whole paste again


def test_comparison_table_rows_columns_links_and_markers_above_the_paragraph() -> None:
    md = answer_markdown(_compare())
    table = comparison_html(_compare())
    assert table and md.index("<table class='compare'>") < md.index("<p class='answer'>")
    assert "<th>approach</th><th>key result</th>" in table
    assert table.count("<tr data-n=") == 2
    assert ("<tr data-n='1'><th scope='row'><a href='#a-ref-1' class='ref-n'>[1]</a> "
            "<a href=\"https://openreview.net/forum?id=x\"") in table
    assert ("[2]</a> <a href=\"https://arxiv.org/abs/1\" target=\"_blank\" rel=\"noopener noreferrer\" "
            "class='title'>YNet &amp; &lt;i&gt;friends&lt;/i&gt;</a>") in table
    # each cell carries its column's name, shown only when a phone lays the table out as cards
    assert ("<td><span class='col-label'>approach: </span><span class='quote' title='Quoted from [2].'><q>YNet "
            "&lt;script&gt;x&lt;/script&gt; wins.</q><sup class='cite'><a href='#a-ref-2'>[2]</a></sup></span>"
            "</td>") in table
    # a missing cell
    assert ("<td class='not-stated'><span class='col-label'>key result: </span>"
            "<em>not stated in the abstract</em></td>") in table
    # scrolls in its bubble
    assert table.startswith("<div class='table-scroll'><table") and table.endswith("</table></div>")
    assert "<script>" not in md
    assert comparison_html(_answer()) == ""
    assert "\n\n" not in table  # one HTML block for the Markdown renderer


def test_card_has_link_authors_and_abstract_with_marked_evidence() -> None:
    card = paper_card(Citation(2, OTHER, ("YNet is small.",)))
    assert "<span class='ref-n'>[2]</span>" in card
    assert 'target="_blank" rel="noopener noreferrer"' in card
    assert "<small class='authors'>Bo, Cy</small>" in card
    assert "<details><summary>Abstract (1 supporting sentence highlighted)</summary>" in card
    assert "<blockquote>" not in card  # the evidence is shown once: in place, in the abstract
    assert "<mark>YNet is small.</mark> YNet &lt;script&gt;x&lt;/script&gt; wins." in card
    assert "<script>" not in card


def test_compare_cards_highlight_the_cells_of_their_row() -> None:
    md = answer_markdown(_compare())
    assert "<mark>YNet is small.</mark> <mark>YNet &lt;script&gt;x&lt;/script&gt; wins.</mark>" in md
    assert "class='refs'" in md and md.count("class='card'") == 2


def test_highlight_escapes_everything_and_merges_overlaps() -> None:
    assert highlight("a <b> c", ["<b>"]) == "a <mark>&lt;b&gt;</mark> c"
    assert highlight("abcdef", ["abc", "cde"]) == "<mark>abcde</mark>f"
    assert highlight("abc", ["zzz", ""]) == "abc"
    assert highlight("x [y](javascript:z)", []) == "x &#91;y&#93;(javascript:z)"


def test_references_panel_lists_every_cited_paper_with_its_label() -> None:
    assert "No papers cited yet" in references_panel([])
    html_ = references_panel([(1, PAPER), (2, OTHER), (3, EVIL)])
    assert html_.count("<li ") == 3
    assert "<span class='ref-n'>[2]</span> <a href=\"https://arxiv.org/abs/1\"" in html_
    assert "javascript:" not in html_ and "<img" not in html_ and "&lt;b&gt;bold" in html_


def test_hostile_compare_and_meta_text_is_inert() -> None:
    evil = replace(_compare(), resolved_query="<img src=x onerror=alert(1)>", intent="compare")
    md = answer_markdown(evil)
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md


def test_ui_pure_modules_do_not_import_gradio() -> None:
    for name in ("render.py", "text.py", "export.py", "downloads.py"):
        tree = ast.parse((Path(__file__).resolve().parents[2] / "ui" / name).read_text())
        mods = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        mods += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not any(m.split(".")[0] == "gradio" for m in mods), name


# --- one rendering path for corpus text (ui.text) ---------------------------------------------------
from assistant.types import PaperHit as _Hit  # noqa: E402
from ui.render import found_html, is_search_link, paper_link  # noqa: E402
from ui.text import html_text, markdown_text, plain_text, split_math  # noqa: E402


def test_apostrophes_and_markup_are_escaped_exactly_once() -> None:
    assert html_text("don't") == "don&#39;t" and "&amp;#" not in html_text("Ryan D'Orazio & co #1")
    assert html_text("EM-LLM's <b>") == "EM-LLM&#39;s &lt;b&gt;"
    assert html_text("a_b *c* [d](e) `f` | g ~ h \\ i") == \
        "a&#95;b c &#91;d&#93;(e) &#96;f&#96; &#124; g &#126; h &#92; i"


def test_math_is_found_by_pandoc_rules_and_dollar_amounts_stay_text() -> None:
    assert [(s.text, s.math) for s in split_math("$\\underline{Le}$arning")] == [("\\underline{Le}", True),
                                                                                 ("arning", False)]
    assert [s.math for s in split_math("costs $5 and $10 per run")] == [False]
    assert [s.math for s in split_math("from $5 to $ 10")] == [False]
    assert [s.math for s in split_math("a \\$5 and \\$6 b")] == [False]  # escaped dollars
    assert [(s.text, s.display) for s in split_math("x $$E=mc^2$$ y") if s.math] == [("E=mc^2", True)]
    assert [s.text for s in split_math("\\(a<b\\) and \\[c\\]") if s.math] == ["a<b", "c"]


def test_math_goes_to_katex_with_its_own_delimiters_and_text_dollars_never_do() -> None:
    out = html_text("Costs $5 and $10; the $\\ell_1$ norm, $a<b$ and $11.25%$%.")
    assert out == "Costs &#36;5 and &#36;10; the \\(\\ell_1\\) norm, \\(a&lt;b\\) and \\(11.25\\)%."  # a TeX comment
    styled = html_text("$\\underline{Le}$arning by $\\textit{trying}$ with $\\texttt{gpt2}$s, $\\mathcal{D}$")
    assert styled == "<u>Le</u>arning by <i>trying</i> with <code>gpt2</code>s, \\(\\mathcal{D}\\)"  # issue 43.8
    assert html_text("Large Language Models~(LLMs), et al.~[2] but (~60 Hz) and 11x~43x") == (
        "Large Language Models (LLMs), et al. &#91;2&#93; but (&#126;60 Hz) and 11x&#126;43x")
    assert "$" not in out  # nothing on the page that a $-delimiter could pick up
    assert html_text("$\\alpha$", katex=False) == "&#36;&#92;alpha&#36;"  # panels without KaTeX: the source
    assert plain_text("**A-Bench** uses \\emph{x}, 10\\% and $\\alpha$") == "A-Bench uses x, 10% and α"
    # the terminal's plain text (issue 25): markup removed, formulas typed out when they can be
    assert plain_text("up to 377\\%, we introduce $\\underline{Le}$arning") == "up to 377%, we introduce Learning"
    assert plain_text("**S**elective **A**ttention **D**rift **R**estriction(**SADR**)") == \
        "Selective Attention Drift Restriction(SADR)"
    assert plain_text("$\\pm 3$ min, $O(n^{2})$, $\\frac{1}{2}$, $11.25%$%, $5 and $10") == \
        "± 3 min, O(n^2), 1/2, 11.25%, $5 and $10"
    assert plain_text("an unknown $\\foo{x}$ stays") == "an unknown $\\foo{x}$ stays"  # its source, not a guess
    assert html_text("**S**elective **A**ttention") == "Selective Attention"  # the chat drops the same markup


def test_highlight_never_splits_a_formula() -> None:
    text = "We bound $\\ell_1$ error. Then done."
    out = highlight(text, ["bound $\\ell_1"])
    assert out == "We <mark>bound \\(\\ell_1\\)</mark> error. Then done."


def test_markdown_export_text_is_neutralised_but_keeps_math() -> None:
    assert markdown_text("*x* [a](b) $\\beta$ $5") == "x \\[a\\](b) $\\beta$ \\$5"
    assert markdown_text("1. not a list") == "1\\. not a list"


def test_search_links_say_so_and_topic_lists_one_line_per_paper() -> None:
    url = "https://openreview.net/search?term=Horizon+Generalization&group=ICLR.cc"
    assert is_search_link(url) and not is_search_link("https://openreview.net/forum?id=x")
    link = paper_link("Horizon", url)
    assert "(search on OpenReview)</a>" in link and "<span class='title'>Horizon</span>" in link
    a, b = replace(PAPER, id="p1"), replace(OTHER, id="p2")
    topic = Answer("Which papers are about nets?",
                   (AnswerSentence("XNet is fast.", (1,), 0.9), AnswerSentence("YNet is small.", (2,), 0.8)),
                   (Citation(1, a, ("XNet is fast.",)), Citation(2, b, ("YNet is small.",))), (), "extractive", "m",
                   intent="topic")
    md = answer_markdown(topic)
    items = md[md.index("<ol class='topic-list'>"):md.index("</ol>")].split("<li>")[1:]
    assert len(items) == 2
    assert items[0].startswith("<a href='#a-ref-1' class='ref-n'>[1]</a> <a href=\"https://openreview.net/forum?id=x\"")
    assert "<q>XNet is fast.</q><sup class='cite'>" in items[0] and "YNet is small." in items[1]
    assert "Papers found" in found_html((_Hit(a, 0.1, 0.5, (), ()),))


def test_a_topic_list_shows_its_count_and_how_to_see_more() -> None:
    from types import SimpleNamespace

    from assistant.types import Listing
    from ui.listing import SHOW_MORE_TEXT, has_more

    page = replace(_answer(), intent="topic", listing=Listing(total=37, offset=0, shown=10, limit=10))
    html_out = answer_markdown(page)
    assert "37 papers match; showing the 10 closest." in html_out and "27 more" in html_out and "Show more" in html_out
    last = replace(page, listing=Listing(total=12, offset=10, shown=2, limit=10))
    assert "showing 11–12" in answer_markdown(last) and "Show more" not in answer_markdown(last)
    assert "papers match" not in answer_markdown(_answer())  # only listings have a count
    session = SimpleNamespace(turns=[SimpleNamespace(answer=page)])
    assert has_more(session) and not has_more(SimpleNamespace(turns=[SimpleNamespace(answer=last)]))  # type: ignore[arg-type]
    assert not has_more(None) and not has_more(SimpleNamespace(turns=[]))  # type: ignore[arg-type]
    from assistant.lang.references import MORE as _MORE

    assert _MORE.match(SHOW_MORE_TEXT) and _MORE.match("next page") and not _MORE.match("tell me more about it")


def test_adjacent_emphasis_spans_are_each_the_shortest() -> None:
    """Found by the hand-written browser oracle (issue 26.3): a seed abstract bolds single letters inside
    words; each ``**X**`` is its own span, never one run from the first ``**`` to the last."""
    from ui.text import display_text

    assert display_text("method **S**elective **A**ttention **D**rift **R**estriction(**SADR**)") == (
        "method Selective Attention Drift Restriction(SADR)"
    )
    assert display_text("*a* and *b*") == "a and b"
    assert display_text("2*3*4 and x * y") == "2*3*4 and x * y"  # no emphasis: kept


def test_a_sentence_says_which_check_vouches_for_it() -> None:
    from assistant.types import AnswerSentence
    from ui.render import _sentence

    checked = _sentence(AnswerSentence("XNet is fast.", (1,), 0.91, probability=0.91, by_model=True,
                                       check="self_check"), "a")
    assert "class='checked'" in checked and "XNet is fast." in checked
    assert "asked whether [1] states every fact of it, the model said yes (probability 0.91)" in checked
    old = _sentence(AnswerSentence("XNet is fast.", (1,), 0.91, probability=0.91, by_model=True,
                                   check="entailment"), "a")  # a session saved before issue 40
    assert "the entailment check read it against [1]: supported, support probability 0.91" in old
    ruled = _sentence(AnswerSentence("XNet is fast.", (1,), 0.8, probability=0.62, by_model=True, check="rules"), "a")
    assert "class='checked'" in ruled and "aligned to [1] and passed the exact and meaning rules" in ruled
    title = _sentence(AnswerSentence("The paper is XNet.", (1,), 1.0, by_model=True, check="title"), "a")
    assert "class='checked'" in title and "names the title of [1] exactly" in title and "probability" not in title
    quoted = _sentence(AnswerSentence("XNet is fast.", (1,), 0.6), "a")  # quoted by code: its own evidence
    assert "class='quote'" in quoted and "checked" not in quoted and "Quoted from [1]." in quoted


def test_a_sentence_written_from_the_record_is_not_styled_as_a_quote() -> None:
    """A newcomer saw "The paper is “…”." in quotation marks, hovering "Quoted from [1]": code wrote it from the
    record, so it is plain text that says where it comes from."""
    s = AnswerSentence("The paper is “XNet & co”.", (1,), 1.0, check="record")
    html_out = answer_markdown(replace(_answer(), sentences=(s,)))
    assert "<q>" not in html_out.split("class='refs'")[0] and "class='record'" in html_out
    assert "Written from the record of [1]" in html_out and "Quoted from" not in html_out.split("class='refs'")[0]


def test_a_papers_part_shown_in_its_cell_is_not_repeated_as_text() -> None:
    # issue 60: each paper's part is its cell in the "on the question" column; the answer text keeps only the rest (a
    # choice's verdict), in the chat, the terminal and Copy alike
    from assistant.answer.builder import PART_COLUMN
    from assistant.answer.render import answer_to_text
    from ui.clipboard import answer_copy_text

    context = AnswerSentence("XNet targets slow graphs.", (1,), 0.7)  # the abstract's sentence the part leans on
    x_part = AnswerSentence("It is fast.", (1,), 0.9, by_model=True, check="self_check", probability=0.9)
    y_part = AnswerSentence("YNet is small.", (2,), 0.9, by_model=True, check="self_check", probability=0.9)
    verdict = AnswerSentence("XNet is the faster one.", (1,), 0.95, by_model=True, check="self_check",
                             probability=0.95)
    cells = (ComparisonRow(1, (replace(x_part, text="It is fast."),)), ComparisonRow(2, (y_part,)))
    answer = Answer("Which is faster?", (context, x_part, y_part, verdict),
                    (Citation(1, PAPER, ()), Citation(2, OTHER, ())), (), "generated", "m", intent="choice",
                    comparison=Comparison((PART_COLUMN,), cells))
    md = answer_markdown(answer)
    body = md.split("<p class='answer'>", 1)[1].split("</p>", 1)[0]
    assert "XNet is the faster one." in body and "YNet is small." not in body and "It is fast." not in body
    assert "XNet targets slow graphs." in body  # the abstract's context of a part: not in the cell, so still shown
    assert md.split("refs-head", 1)[0].count("YNet is small.") == 1  # in its cell only (the card shows the abstract)
    for text in (answer_to_text(answer), answer_copy_text(answer)):
        assert text.count("YNet is small.") == 1 and text.count("It is fast.") == 1
        assert "XNet is the faster one." in text
    # without the part column (a lookup; a comparison still being written), every sentence is the text
    plain = replace(answer, comparison=None)
    assert all(s.text in answer_to_text(plain) for s in plain.sentences)
