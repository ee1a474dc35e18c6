"""Input files -> papers (seed files, JSONL/CSV exports, ids) -> sentence windows -> the index (pipeline)."""
