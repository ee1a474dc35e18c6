#!/usr/bin/env bash
# Regenerate every published figure (docs/measurements.md "Summary", docs/evaluation.md, docs/ablation.md, docs/benchmarks.md,
# docs/measurements.md) in one command, each stamped with the commit and the machine's load (issue 26.5).
#
#   benchmarks/run_all.sh [--quick | --quality | --all] [UI-URL]
#
#   --quality  quality figures only: retrieval and answer eval on dev + the frozen held-out sets
#              (eval/test.jsonl, eval/test-multilingual.jsonl), claims eval, cell roles, ablations (~15 min on 2 quiet cores)
#   --quick    (default) --quality plus the cheap speed figures: answer latency (42 dev questions), ingest
#              throughput, embedding runtime, bundled-model speed, scale at 38 and 1k papers (~30 min)
#   --all      --quick plus scale at 12k and 100k papers, the 12k real-embedding ingest killed and resumed,
#              scale-out pieces, an index of the whole corpus and venue narrowing on it (several hours: the 100k
#              build alone took ~50 min)
#   UI-URL     also run the load test against a running UI (e.g. http://127.0.0.1:7860/)
#
# Output: $BENCH_OUT (default benchmarks/results/<UTC time>-<commit>/): one log per figure and stamp.txt, which
# records the commit (and whether the tree was dirty), the machine, and the load average before and after each
# step. A figure measured while the load average exceeded the core count is not a quiet-machine figure: say so
# when quoting it. Every question set used here is in eval/ (frozen sets: eval/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=quick
case "${1:-}" in --quick|--quality|--all) MODE=${1#--}; shift ;; esac
URL=${1:-}
PY=${PY:-.venv/bin/python}
COMMIT=$(git rev-parse --short HEAD)
DIRTY=$(git status --porcelain --untracked-files=no | grep -q . && echo " (dirty tree: uncommitted changes)" || true)
OUT=${BENCH_OUT:-benchmarks/results/$(date -u +%Y%m%dT%H%M%SZ)-$COMMIT}
WORK=${BENCH_DIR:-/tmp/assistant-bench-$COMMIT}
mkdir -p "$OUT" "$WORK"
export ASSISTANT_STORAGE_DIR="$WORK/index"   # a fresh index of seeds/ for every figure below
STAMP="$OUT/stamp.txt"
{
  echo "commit: $(git rev-parse HEAD)$DIRTY"
  echo "mode: $MODE   started: $(date -u +%FT%TZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), $($PY -V 2>&1)"
  echo "load average at start (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  printf '%-34s %8s  %-16s %-16s %s\n' step seconds "load before" "load after" log
} > "$STAMP"

step() {  # step NAME CMD...: run CMD, its output to $OUT/NAME.log, one stamped line in stamp.txt
  local name=$1; shift
  local before after t0 rc=0
  before=$(cut -d' ' -f1-3 /proc/loadavg); t0=$(date +%s)
  echo "== $name: $*"
  "$@" > "$OUT/$name.log" 2>&1 || rc=$?
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  printf '%-34s %8s  %-16s %-16s %s%s\n' "$name" "$(( $(date +%s) - t0 ))" "$before" "$after" "$name.log" \
    "$([ $rc -ne 0 ] && echo "  FAILED (exit $rc)")" >> "$STAMP"
  tail -n 25 "$OUT/$name.log"
}

A=.venv/bin/assistant
step ingest-seeds $A ingest --json --no-progress seeds
# quality: dev (development data) beside the frozen held-out sets
for set in dev test test-multilingual; do
  step "retrieval-$set" $A eval --questions "eval/$set.jsonl" --retrieval-only --no-progress --json "$OUT/retrieval-$set.json"
done
for set in dev test test-multilingual; do
  step "answers-$set" $A eval --questions "eval/$set.jsonl" --no-progress --json "$OUT/answers-$set.json"
done
step claims-dev $A eval-claims --claims eval/claims-dev.jsonl --no-progress --json "$OUT/claims-dev.json"
step cell-roles $PY benchmarks/cell_placement.py
# topic lists (issue 45): the frozen eval/topics-1.jsonl over the seeds and over its fixed 1k corpus slice
step topics-seeds $PY benchmarks/topic_lists.py --scope seeds --storage-dir "$WORK/index" --json "$OUT/topics-seeds.json"
step slice-1k $PY benchmarks/corpus_slice.py "$WORK/slice-1k.jsonl"
step slice-1k-index $A ingest --no-progress --storage-dir "$WORK/slice-1k-index" "$WORK/slice-1k.jsonl"
step topics-slice $PY benchmarks/topic_lists.py --scope slice-1k --storage-dir "$WORK/slice-1k-index" \
  --json "$OUT/topics-slice.json"
step ablation-dev $PY benchmarks/ablation.py --questions eval/dev.jsonl
step ablation-test $PY benchmarks/ablation.py --questions eval/test.jsonl

if [ "$MODE" != quality ]; then
  step answer-latency $PY benchmarks/answer_latency.py --questions eval/dev.jsonl --limit 42
  step ingest-throughput $PY benchmarks/ingest_throughput.py
  step embedding-runtime $PY benchmarks/embedding_runtime.py
  step llm-speed $PY benchmarks/llm_speed.py
  step scale-small $PY benchmarks/scale.py --sizes 38,1000 --keep "$WORK/scale"
fi
if [ "$MODE" = all ]; then
  step scale-large $PY benchmarks/scale.py --sizes 12000,100000 --keep "$WORK/scale"
  step real-ingest-12k $PY benchmarks/scale.py real-ingest --papers 12000 --dir "$WORK/real-ingest"
  step scale-out $PY benchmarks/scale_out.py
  # the whole corpus (issue 44): a lookup narrowed by its venue words, on the frozen descriptions-1
  step corpus-index $A ingest --no-progress --storage-dir "$WORK/corpus-index" seeds ../shared/corpus/*.jsonl
  step venue-narrowing $PY benchmarks/venue_narrowing.py --storage-dir "$WORK/corpus-index" \
    --json "$OUT/venue-narrowing.jsonl"
fi
if [ -n "$URL" ]; then
  step load-test $PY benchmarks/load_test.py --url "$URL" --conversations 8 --seconds 120
fi
echo "finished: $(date -u +%FT%TZ); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$STAMP"
echo; cat "$STAMP"
