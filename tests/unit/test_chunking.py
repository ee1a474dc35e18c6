"""Sentence splitting and windows: coverage, size under the embedder's limit, stable ids and hashes."""

from __future__ import annotations

from pathlib import Path

from assistant.ingest.chunking import make_windows, split_sentences
from assistant.ingest.corpus import read_papers

REPO_SEEDS = Path(__file__).resolve().parents[2] / "seeds"


def test_sentences_cover_text() -> None:
    text = "We propose XNet. It works, e.g. on graphs. Results improve by 3.5% on Y."
    sents = split_sentences(text)
    assert " ".join(sents).split() == text.split()
    assert sents[0] == "We propose XNet."
    assert any("e.g. on graphs" in s for s in sents)


def test_windows_cover_every_sentence_and_fit_the_embedder() -> None:
    from transformers import AutoTokenizer

    from assistant.index.embeddings import BUNDLED_MINILM, resolve_model_path

    tok = AutoTokenizer.from_pretrained(str(resolve_model_path(BUNDLED_MINILM)))
    papers = read_papers([REPO_SEEDS])
    too_long = 0
    for p in papers:
        sents = split_sentences(p.text)
        windows = make_windows(p, sents, 3)
        assert len(windows) == len(sents)
        assert [w.index for w in windows] == list(range(len(sents)))
        assert all(w.id == f"{p.id}:{w.index:04d}" for w in windows)
        too_long += sum(len(tok(w.text)["input_ids"]) > 256 for w in windows)
    assert too_long <= 3  # all-MiniLM-L6-v2 truncates at 256 word pieces


def test_window_hash_changes_with_metadata_only() -> None:
    from dataclasses import replace

    p = read_papers([REPO_SEEDS])[0]
    sents = split_sentences(p.text)
    a = make_windows(p, sents, 3)
    b = make_windows(replace(p, title="Another title"), sents, 3)
    assert a[0].id == b[0].id and a[0].content_hash != b[0].content_hash
    assert make_windows(p, sents, 3) == a  # deterministic
