"""Words and sentences in other scripts (issue 20): accented names are one token, folded the way the catalog's
FTS5 ``unicode61`` tokenizer folds them; full-width 。！？ end sentences."""

from __future__ import annotations

from assistant.ingest.chunking import make_windows
from assistant.lang.text import content_tokens, fold, split_sentences
from assistant.types import Paper

CHINESE = (
    "我们提出了一种新的图神经网络训练方法，可以显著降低显存占用。该方法将大图划分为多个子图，并在子图之间共享节点表示。"
    "在三个公开基准上，训练速度提高了三倍！这是否适用于更大的图？实验表明，精度几乎没有下降。"
)


def test_accented_names_are_one_token_and_fold_like_fts5() -> None:
    assert content_tokens("ÅngströmNet refines structures") == {"angstromnet", "refines", "structures"}
    assert content_tokens("ANGSTRÖMNET") == content_tokens("ångströmnet") == {"angstromnet"}
    assert content_tokens("naïve Café-Net on ＧＰＵ") == {"naive", "cafe-net", "gpu"}  # full-width folded too
    assert fold("データ") == "データ"  # the marks of Japanese letters are kept (only Latin accents go)
    assert content_tokens("GPT-4o reached 2,864 points") == {"gpt-4o", "reached", "2864", "points"}  # unchanged


def test_cjk_sentence_ends_split_sentences() -> None:
    sentences = split_sentences(CHINESE)
    assert sentences == [
        "我们提出了一种新的图神经网络训练方法，可以显著降低显存占用。",
        "该方法将大图划分为多个子图，并在子图之间共享节点表示。",
        "在三个公开基准上，训练速度提高了三倍！",
        "这是否适用于更大的图？",
        "实验表明，精度几乎没有下降。",
    ]
    assert split_sentences("他说：“好。”然后离开了这里。") == ["他说：“好。”", "然后离开了这里。"]
    assert split_sentences("We propose a new model. It beats prior work by 5% on three benchmarks.") == [
        "We propose a new model.",
        "It beats prior work by 5% on three benchmarks.",
    ]  # English unchanged


def test_a_chinese_abstract_becomes_bounded_windows() -> None:
    text = CHINESE * 20  # a long abstract: was one window of the whole text
    paper = Paper("zh-1", "", "图神经网络", (), "", text, "x.jsonl", 1)
    windows = make_windows(paper, split_sentences(text), 3)
    assert len(windows) == 100
    assert max(len(w.text) for w in windows) < 120


def test_contraction_parts_are_never_named_and_order_is_kept() -> None:
    from assistant.lang.text import content_tokens_in_order, content_words_in_order

    assert content_words_in_order("the adam one's experiments; it doesn't converge") == ["adam", "experiments",
                                                                                         "converge"]
    assert content_tokens_in_order("Zeta beta alpha beta") == ["zeta", "beta", "alpha"]
