#!/usr/bin/env bash
# benchmarks/behaviour_snapshot.sh REPO OUTDIR: `assistant eval --json` on every question set of eval/ and
# `assistant eval-claims --json` on every claims set, for a before/after check of a refactor with
# benchmarks/behaviour_diff.py BEFORE_DIR AFTER_DIR (issue 31; run both with PYTHONHASHSEED=0: some notices list
# words in set order). About 10 minutes on 2 cores with the bundled 135M model.
set -uo pipefail
REPO=$1; OUT=$2; mkdir -p "$OUT"
cd "$REPO"
export PYTHONPATH=$REPO ASSISTANT_LLM_BUNDLED=${ASSISTANT_LLM_BUNDLED:-qwen1.5b}
export ASSISTANT_STORAGE_DIR=$OUT/index
A=".venv/bin/python -m assistant"
$A ingest --no-progress seeds > "$OUT/ingest.log" 2>&1
for s in dev test test-multilingual fresh kept-seeds questions-2 questions-3 conversations conversations-2 conversations-3 battery-questions; do
  /usr/bin/time -f "%e s" $A eval --questions eval/$s.jsonl --no-progress --json "$OUT/ans-$s.json" > "$OUT/ans-$s.log" 2>&1
  echo "$s $(tail -1 $OUT/ans-$s.log) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
for c in claims-dev claims-seeds-test claims-corpus; do
  $A eval-claims --claims eval/$c.jsonl --no-progress --json "$OUT/$c.json" > "$OUT/$c.log" 2>&1
  echo "$c rc=$?"
done
