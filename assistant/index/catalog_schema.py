"""The catalog's SQLite schema: its version, the tables and the columns a copy carries (``catalog.py``)."""

from __future__ import annotations

CATALOG_SCHEMA = 4  # 2: Unicode-aware terms ("ÅngströmNet" -> "angstromnet", was "ngstr"); 3: papers.withheld;
# 4: author keys without accents ("Thomas Müller" and "Thomas Muller" are one key)
#: Window and contribution rows get rowid ``paper_rowid * ROWS_PER_PAPER + sentence``, so a paper's rows are
#: one rowid range (deleted without a scan). Abstracts have far fewer sentences (the seeds: at most 21).
ROWS_PER_PAPER = 1000
#: Paper ids per Chroma read while syncing.
SYNC_BATCH = 500

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS papers(
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, venue TEXT, title TEXT, authors TEXT, url TEXT,
    text TEXT, source_file TEXT, position INTEGER, title_derived INTEGER, sentences TEXT, hash TEXT,
    withheld TEXT);
CREATE INDEX IF NOT EXISTS papers_venue ON papers(venue);
CREATE VIRTUAL TABLE IF NOT EXISTS windows USING fts5(
    body, wid UNINDEXED, paper_id UNINDEXED, sentence UNINDEXED, content_hash UNINDEXED, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS terms(term TEXT NOT NULL, paper INTEGER NOT NULL, PRIMARY KEY(term, paper)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS authors(name TEXT NOT NULL, last TEXT NOT NULL, paper INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS authors_name ON authors(name);
CREATE INDEX IF NOT EXISTS authors_last ON authors(last);
CREATE INDEX IF NOT EXISTS authors_paper ON authors(paper);
CREATE TABLE IF NOT EXISTS title_grams(gram TEXT NOT NULL, paper INTEGER NOT NULL, PRIMARY KEY(gram, paper))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS title_grams_paper ON title_grams(paper);
CREATE INDEX IF NOT EXISTS terms_paper ON terms(paper);
CREATE VIRTUAL TABLE IF NOT EXISTS titles USING fts5(title, tokenize='porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS contributions USING fts5(sentence, tokenize='porter unicode61');
"""
#: Every table of a catalog, and the columns ``Catalog.replace_with`` copies (FTS5 tables by rowid).
TABLES = ("papers", "windows", "terms", "authors", "title_grams", "titles", "contributions", "meta")
COPY = {
    "papers": (
        "rowid, id, venue, title, authors, url, text, source_file, position, title_derived, sentences, hash, withheld"
    ),
    "windows": "rowid, body, wid, paper_id, sentence, content_hash",
    "terms": "term, paper",
    "authors": "name, last, paper",
    "title_grams": "gram, paper",
    "titles": "rowid, title",
    "contributions": "rowid, sentence",
    "meta": "key, value",
}
