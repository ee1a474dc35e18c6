"""Every fitted number of the answer pipeline, in one place, with what it was fitted on.

A leaf module (no imports from ``assistant``). The user-facing thresholds are :class:`~assistant.config.Settings`
fields (``retrieval.min_similarity``, ``verify.self_check_probability``, ``answer.topic_min_evidence``,
``retrieval.top_k``, ``retrieval.candidate_k``,
``answer.evidence_sentences``, ``answer.context_papers``); the weights below set the *scale* those thresholds are
compared against, so changing a weight means re-calibrating the threshold beside it (how: docs/evaluation.md,
"Tuning (calibration)"). "dev" = eval/dev.jsonl; "claims" = eval/claims-dev.jsonl; all on the 38 seed abstracts.

Most of these numbers are the defaults of fitted fields of the settings groups (``assistant/config.py``:
``RetrievalSettings.bm25_max_postings`` is ``BM25_MAX_POSTINGS``, ...), which is where the code reads them
(built once by the entry point, passed down from ``build_assistant``) and where a test changes one
(``settings.updated(retrieval={"aspect_weight": 0.0})``). The others (text, question-analysis and attribution
constants read by pure functions) are still read from here.
"""

from __future__ import annotations

# --- retrieval: paper score and evidence score (retrieval.py) -------------------------------------------
#: BM25 searches only the query's rarer words (catalog.Catalog.bm25): a word in more than BM25_MAX_DF_SHARE
#: of the papers (and in more than BM25_MIN_DF_CUTOFF papers, so small corpora such as the 38 seeds keep every
#: word) is left out, then at most BM25_MAX_TERMS of the rarest. Such words have BM25 idf < 3 and made SQLite
#: score ~70% of all windows for a 15-word question on the 12k-paper benchmark corpus (102 ms -> ~25 ms).
BM25_MAX_DF_SHARE = 0.05
BM25_MIN_DF_CUTOFF = 100
BM25_MAX_TERMS = 8
#: ... and only while the chosen words' document frequencies add up to at most this many papers, which bounds
#: the windows SQLite must score (no effect below 7,500 papers: 8 words x the cutoff). A question whose every
#: word is in more papers than this gets no BM25 list (its words have idf < 3.5; the dense ranking decides):
#: on the 100k-paper benchmark corpus such questions made SQLite score 50-100k windows (~250 ms).
BM25_MAX_POSTINGS = 3_000
#: Weight of a paper's second-best window in its aggregated fused score. Fitted on dev recall@5.
SECOND_WINDOW_WEIGHT = 0.5
#: The vector of the window centred on a sentence, derived from stored vectors (nothing re-embedded):
#: normalise(normalise(mean of the window's sentence vectors) + WINDOW_TITLE_WEIGHT x title vector).
#: Fitted so that its cosines with the dev questions match those of the embedded text "title. window"
#: that the index stored before (weight 1.0: mean abs. difference 0.035, correlation 0.95 over 46
#: questions x 38 papers; 0.0: 0.060 / 0.91), keeping ``min_similarity`` and the margins calibrated.
WINDOW_TITLE_WEIGHT = 1.0
#: The index stores one vector per sentence (each embedded once); whole windows with their title, which the
#: index embedded before, rank papers better for questions that describe a paper in other words. So the best
#: WINDOW_RANK_CANDIDATES papers of the fused ranking are ranked again by their best derived window cosine,
#: and that ranking is fused in as one more reciprocal-rank list with weight WINDOW_RANK_WEIGHT.
#: Fitted on dev (recall@1 and the paraphrase items).
WINDOW_RANK_CANDIDATES = 20
WINDOW_RANK_WEIGHT = 2.0
#: Paper-level vectors: the PAPER_VECTOR_K papers whose title vector is nearest the query, fused in as one
#: more reciprocal-rank list with weight PAPER_VECTOR_WEIGHT (0 = off). Issue 27 option; see docs/benchmarks.md.
PAPER_VECTOR_WEIGHT = 0.0
PAPER_VECTOR_K = 40
#: Paper-level BM25 over title + abstract (retrieve/paper_bm25.py; issue 44): its reciprocal-rank weight and list
#: size, fitted on the validation splits of eval/descriptions-1.jsonl and eval/needles.jsonl at 10k papers
#: (benchmarks/rankers_alone.py --weights; docs/results/issue44).
PAPER_BM25_WEIGHT = 8.0
PAPER_BM25_K = 40
#: A question that asks for one paper often describes it by several aspects in other words ("made-up
#: portraits ... pushed apart on a ball-shaped surface"); one query vector blurs them, so a paper that
#: matches one aspect strongly can beat the paper that matches all. For such questions (lookup and summary
#: intents) the same candidates are ranked by aspect coverage, the mean over the question's clauses
#: (text.clauses, at most ASPECT_MAX_CLAUSES, each embedded) of the paper's best sentence-or-window cosine,
#: fused in as one more reciprocal-rank list with weight ASPECT_WEIGHT. Fitted on dev (the paraphrase items
#: rank 2 -> 1) with the other intents left out: for lists and comparisons it lowered recall@3.
ASPECT_WEIGHT = 3.0
ASPECT_MAX_CLAUSES = 6
#: Evidence score of a sentence = SENTENCE_WEIGHT x cos(query, sentence) + (1 - SENTENCE_WEIGHT) x
#: cos(query, window centred on it) + EVIDENCE_LEXICAL_WEIGHT x share of query words in the sentence
#: (+ the prior/penalty below). Roughly 0.2-1.0; ``topic_min_evidence`` (0.44) is on this scale.
#: Fitted on dev lookup/fact items (evidence sentence holds the fact).
SENTENCE_WEIGHT = 0.5
EVIDENCE_LEXICAL_WEIGHT = 0.3
#: Prior for a sentence stating the paper's contribution ("we propose ..."): dev summary items.
EVIDENCE_CONTRIBUTION_PRIOR = 0.08
#: Penalty for code/URL boilerplate sentences: dev summary items (they were picked as evidence).
EVIDENCE_BOILERPLATE_PENALTY = 0.3
#: A query term is rare when at most this share of papers (and at least one) contain it; a rare term
#: matched in the top papers overrides abstention. Fitted on dev unanswerable vs. name-lookup items.
RARE_TERM_MAX_DF = 0.05

# --- abstention (answer.py; threshold: Settings.retrieval.min_similarity) ----------------------------------------
#: The abstention test looks at the best dense similarity among this many top-ranked papers (dev).
ABSTAIN_TOP_PAPERS = 3

# --- answer sizes per intent (strategies.py) ------------------------------------------------------------
#: Evidence sentences of the top paper in an extractive lookup answer (dev facts hit vs. precision).
EXTRACTIVE_SENTENCES = 2
#: Evidence sentences per paper for summaries (problem, method, result + one; dev summary facts).
SUMMARY_SENTENCES = 4
#: Candidate papers scanned for a topic listing. 15 was set on dev topic recall at 38 papers; over a whole
#: conference a topic has dozens of papers (issue 27), so the listing scans 60, fetched from 120 windows per
#: retriever (TOPIC_CANDIDATE_WINDOWS) instead of ``Settings.retrieval.candidate_k``.
TOPIC_CANDIDATES = 60
TOPIC_CANDIDATE_WINDOWS = 120
#: A topic's candidates are fetched again, twice as many each time up to this many, while members reach the last
#: tenth of the window (TOPIC_WINDOW_TAIL): a list whose members run to the end of what was scanned is cut, not
#: complete (issue 45: "the count is true"). Set before measuring, not fitted.
TOPIC_CANDIDATES_MAX = 240
TOPIC_WINDOW_TAIL = 0.1
#: A search narrowed to at most this many papers (one author's, a small venue) ranks each of them instead of
#: searching; larger narrowed sets (a venue of thousands) are searched and filtered (retrieval.retrieve's ``allowed``).
NARROWED_SCORE_ALL = 300
#: A listed paper is shown by its contribution sentence ("we propose X ...", which names what it does) when
#: that scores within this of its best evidence sentence, else by the best one.
TOPIC_CONTRIBUTION_MARGIN = 0.15
#: Papers in a comparison unless the question names a number ("the three papers").
COMPARE_PAPERS = 2
#: Papers ranked when looking for the ones a comparison question speaks of by a shared word (strategies.py
#: ``shared_topic_papers``): dev compare items name pairs found within the top 10.
COMPARE_CANDIDATES = 10
#: A "which paper" answer built from the abstract says "The paper is X" when the question names X or X's
#: best window similarity is at least this, else "The closest match in the abstracts is X". Below it, answerable
#: paraphrases (0.33-0.52 on dev + fresh) and off-corpus questions (0.34, 0.60) cannot be told apart by
#: similarity, so the answer does not claim more than it knows; the quotes that follow let the reader judge.
CONFIDENT_MATCH_SIMILARITY = 0.45
#: Evidence sentences per paper in an answer prompt (lookups and comparisons).
PROMPT_EVIDENCE_SENTENCES = 4

# --- comparison table cells (intents.py) ----------------------------------------------------------------
#: Cell score = the role classifier's P(column's role) + COMPARISON_RELEVANCE_WEIGHT x the sentence's evidence
#: score for the question (kept from the rule-era score, where it was set by hand on the dev compare items).
COMPARISON_RELEVANCE_WEIGHT = 0.5

# --- extractive answers (extractive.py): bonuses added to a sentence's evidence score --------------------
#: Fitted on the dev lookup/fact/adversarial items (docs/evaluation.md, "Extractive answers").
#: A sentence that states the number the question asks for (a number next to the measured noun).
QUANTITY_BONUS = 0.35
#: Any number in a quantity question when the measured noun is unknown ("how long ...").
NUMBER_BONUS = 0.15
#: A sentence that mentions a name from the question, per name, for at most ENTITY_BONUS_MAX_NAMES names.
ENTITY_BONUS = 0.12
ENTITY_BONUS_MAX_NAMES = 2
#: A sentence that negates something the question asserts (a false premise): a negation plus a shared word.
NEGATION_BONUS = 0.3
#: For "what does X stand for": the sentence that spells out X ("X (Learning to ...)" or "(X)").
EXPANSION_BONUS = 0.4
#: The contribution sentence ("we propose ...") in "which paper" questions.
CONTRIBUTION_BONUS = 0.3
#: For "what is X" / "what does X do": the sentence that introduces X ("we introduce X, a ...", "... (X)",
#: "dubbed X"), which says what X is; without it the answer quoted X's results or components.
DEFINITION_BONUS = 0.3
#: How many of the top-ranked papers ``refocus`` looks through for the paper a question names.
REFOCUS_DEPTH = 3

# --- attribution (attribution.py; the verifier's threshold: Settings.verify.self_check_probability) -------------
#: The stated check (verify/verifiers.py ``stated_probability``): when the exact tests of verify/answerable.py find
#: no sentence that answers a detail, it is declared "not stated" only when the answering model, reading the
#: abstract, also gives P(the abstract states the answer) below this. Chosen on the validation split of
#: scripts/training-data/stated.jsonl (200 questions), over the grid 0.1 ... 0.9, as the threshold that catches the
#: most unanswerable questions while keeping at least 0.97 of the answerable ones (the issue's false "not stated"
#: <= 0.03): 0.975 / 0.395 there; on the held-out papers 0.964 / 0.357 (the trained "stated" model it replaced, as
#: the same second opinion: 0.911 / 0.381; benchmarks/stated_check.py, docs/results/issue41).
STATED_PROBABILITY = 0.7
#: The named check (verify/verifiers.py ``named_probability``; answer/strategy.py ``unindexed_name``): the paper found
#: is taken for the one the question names only when the model's P(yes) is at least this: the best balanced accuracy
#: on the validation pairs of benchmarks/named_check.py (80 pairs made from the real corpus: a paper and its own name;
#: the same paper and another paper's name its abstract mentions): 0.975 there; on the test pairs own name kept 1.000,
#: other name caught 0.925 (docs/results/issue41).
NAMED_PROBABILITY = 0.7
#: Alignment = COSINE_WEIGHT x embedding cosine + LEXICAL_WEIGHT x share of content words found: picks the
#: evidence (and so the paper) the self-check reads (it decides nothing itself). Fitted on claims-dev before
#: issue 22.
COSINE_WEIGHT = 0.5
LEXICAL_WEIGHT = 0.5
#: Sentences shorter than this (words) are never supported.
MIN_WORDS = 3
#: A pair of evidence sentences replaces the best single one when its support is at least this much
#: higher (claims "synthesis" / "multi_paper" kinds) ...
PAIR_MIN_GAIN = 0.05
#: ... and each of the two sentences alone covers at least this many of the answer sentence's content words.
PAIR_MIN_UNIQUE = 2
#: Best-scoring evidence sentences considered when looking for a pair ...
PAIR_CANDIDATES = 8
#: ... plus this many best sentences of every paper.
PAIR_PER_PAPER = 2
#: A sentence with at most this many content words outside a source's title (and the frame words "called",
#: "titled" ...) restates that title: it answers "which paper ...?" (with no extra word) and nothing else.
TITLE_ECHO_EXTRA_WORDS = 1

#: Single evidence sentences (best aligned first) kept as candidates for one answer sentence, besides the best
#: pair; the self-check reads the abstract of the best one that passes the exact constraints.
VERIFY_SINGLES = 2
#: Evidence aligned below this (same scale as above) is not a candidate: nothing about the same thing. Set low,
#: under every supported claim's alignment in eval/claims-dev.jsonl and the claims-corpus validation split; it
#: only saves self-checks of off-topic sentences.
VERIFY_MIN_ALIGNMENT = 0.3

#: A sentence that does not name what a question asks about ("what *simulator*", a detail word) still answers
#: it when COSINE_WEIGHT x cosine(question, sentence) reaches this (a paraphrase; verify/answerable.py). Chosen on
#: eval/dev.jsonl and the ``val`` splits of eval/kept-seeds.jsonl and eval/conversations.jsonl: above every
#: unanswerable follow-up there (at most 0.27, "which LMM scored best on it?"), under "what objective do they
#: minimize?" (0.32, answered by "The proposed formulation consists of ..."); docs/evaluation.md.
ANSWERABLE_MIN_ALIGNMENT = 0.29
#: A "which paper" answer is caveated as a near miss when its paper lacks at most this many of the question's
#: detail words and contains more than it lacks (strategies._near_miss_notice: "videos" vs A-Bench's images).
NEAR_MISS_MAX_MISSING = 2

# --- question analysis and conversation (question.py, session.py) ---------------------------------------
#: A number "measures" a noun when at most this many words separate them ("2,864 AIGIs from 16
#: text-to-image models", "a success rate of 88.8%"). Dev fact items.
QUANTITY_WINDOW_WORDS = 5
#: Follow-ups this short (in words), or starting "and ...", inherit the previous query. Dev followup items.
ELLIPTIC_MAX_WORDS = 4
#: A first question that refers back ("it", "they", "the paper") and has at most this many other content
#: words names no paper ("What benchmarks did they evaluate it on?"): it is asked back. Dev first-turn
#: questions with cataphoric pronouns ("... and what is its proposed fix called?") all have more.
CLARIFY_MAX_CONTENT_WORDS = 3

# --- which paper a follow-up is about (session.py: resolution as a ranking) ------------------------------
#: A paper's profile vector (retrieval.describes) = normalised mean of its sentence vectors + this x its title
#: vector: the title weighs about as much as half the abstract.
PROFILE_TITLE_WEIGHT = 0.5
#: Papers of a search for the question scored by profile besides those in focus (retrieval.describes).
DESCRIBED_CANDIDATES = 20
#: A follow-up describes another paper than the one in focus when its best profile cosine s1 (among papers not
#: in focus) beats both the focus paper's s_f and the runner-up's s_2 by this much in all: (s1 - s_f) +
#: (s1 - s_2). A description matches one paper's profile; a question about a detail ("how many baselines
#: did they compare against?") matches many about equally. Chosen on dev.jsonl follow-ups and the val split of
#: conversations.jsonl: questions that stay on their paper score <= 0.40 ("What does its objective consist
#: of?" 0.40, "how many baselines ..." 0.34, "What benchmark did it release ..." 0.26), those that describe
#: another paper >= 0.46 ("ok what about video - anything on detecting weird events" 0.46, "there's also a
#: robot grasping one that uses RL" 0.49, "an antibody design one" 0.80).
#: benchmarks/resolution_margin.py: the 24 one-paper dev questions asked with their own paper in focus never
#: move; asked with another paper in focus, 74% move to their paper and none to a wrong one.
DESCRIBED_MARGIN = 0.43
#: Among the papers in focus, a singular follow-up ("what does it use colour for?" after a comparison) goes to
#: the one its profile cosine prefers by at least this much; else to the first one shown.
FOCUS_PREFERENCE_MARGIN = 0.1

# --- text and input checks (text.py, corpus.py) ---------------------------------------------------------
#: Punkt fragments shorter than this (characters) are glued to the sentence before them ("Fig. 2.").
MIN_SENTENCE_CHARS = 12
#: Characters of papers.jsonl ``first_words`` compared with the abstract's start to catch misaligned rows.
METADATA_MATCH_PREFIX_CHARS = 40

# --- naming papers in a question (references.py, retrieval.py) ------------------------------------------
#: A name-like token ("DUALFormer") names one paper only if at most this many titles contain it.
NAME_MAX_PAPERS = 2
#: Consecutive title words that must appear in a question to count as naming that title.
TITLE_FRAGMENT_WORDS = 4
#: A description ("the paper about X") resolves to the best paper of a search for X only when its dense
#: similarity is at least this (and at least Settings.retrieval.min_similarity). Set on the issue-12 conversations.
DESCRIPTION_MIN_SIMILARITY = 0.35
#: Weight of the metadata match list (authors, title names and fragments) in the fused paper score: one
#: metadata match at rank 1 adds METADATA_WEIGHT / (60 + 1), above a paper ranked first by both text
#: retrievers (~0.05); a named paper is therefore first. RRF k = 60 (Cormack et al. 2009).
METADATA_WEIGHT = 4.0
#: The reciprocal-rank-fusion constant (llama-index's QueryFusionRetriever uses the same k = 60).
RRF_K = 60
