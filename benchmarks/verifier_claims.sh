#!/usr/bin/env bash
# benchmarks/verifier_claims.sh OUTDIR [THRESHOLD [test]]: the citation verifier (issue 40) on every claims set, through
# `assistant eval-claims` (the answerer's own Attributor and its self-check by the answering model).
#
#   validation (the threshold may be chosen here): claims-dev, claims-corpus val, claims-seeds-2 val,
#     claims-corpus-2 val
#   test (frozen, never tuned on): claims-seeds-test, claims-corpus test, claims-seeds-2 test, claims-corpus-2 test
#   external: Check-COVID dev (its train split is training data)
#
# THRESHOLD sets ASSISTANT_SELF_CHECK_PROBABILITY (default: the settings' own). Run with 0 on the validation sets,
# then `scripts/verifier_threshold.py OUTDIR/*val*.json` chooses the threshold. Builds three indexes under
# OUTDIR (seeds; the frozen claim corpora; the Check-COVID abstracts) the first time. Prints one line per set.
set -uo pipefail
OUT=$1; T=${2:-}; ONLY=${3:-}   # ONLY=test: the test sets alone (the threshold already chosen)
REPO=$(cd "$(dirname "$0")/.." && pwd); cd "$REPO"
mkdir -p "$OUT"
# CLAIMS_CMD: another build of the command, e.g. a frozen copy while the tree changes:
#   CLAIMS_CMD="env PYTHONSAFEPATH=1 PYTHONPATH=build/snap .venv/bin/python -m assistant" (without PYTHONSAFEPATH,
#   `python -m` puts this directory first on sys.path and imports the live tree)
A=${CLAIMS_CMD:-.venv/bin/assistant}
[ -n "$T" ] && export ASSISTANT_SELF_CHECK_PROBABILITY=$T
if [ ! -d "$OUT/idx-seeds" ]; then
  $A --storage-dir "$OUT/idx-seeds" ingest --no-progress seeds > "$OUT/ingest-seeds.log" 2>&1
  $A --storage-dir "$OUT/idx-corpus" ingest --no-progress eval/claims-corpus-papers.jsonl \
    eval/claims-corpus-2-papers.jsonl > "$OUT/ingest-corpus.log" 2>&1
  .venv/bin/python scripts/external_claims.py "$OUT/ext" > /dev/null
  $A --storage-dir "$OUT/idx-checkcovid" ingest --no-progress "$OUT/ext/checkcovid-papers.jsonl" \
    > "$OUT/ingest-checkcovid.log" 2>&1
fi
run() {  # name index claims [split]
  local name=$1 idx=$2 claims=$3 split=${4:-}
  [ -n "${SETS:-}" ] && [[ " $SETS " != *" $name "* ]] && return 0   # SETS="seeds2-test corpus-test": those alone
  $A --storage-dir "$OUT/$idx" eval-claims --no-progress --claims "$claims" ${split:+--split $split} \
    --json "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  .venv/bin/python - "$OUT/$name.json" "$name" <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))["overall"]; lat = json.load(open(sys.argv[1]))["latency_ms"]["attribute"]
f = lambda v: "-" if v is None else f"{v:.3f}"
print(f"{sys.argv[2]:24s} n={o['n']:4d} kept={f(o['supported_kept'])} dropped={f(o['unsupported_dropped'])} "
      f"bal={f(o['balanced_accuracy'])} wrong={o['wrong_paper_citations']} p50={lat['p50']:.1f}ms")
EOF
}
if [ "$ONLY" != test ]; then
  run claims-dev-val idx-seeds eval/claims-dev.jsonl
  run corpus-val idx-corpus eval/claims-corpus.jsonl val
  run seeds2-val idx-seeds eval/claims-seeds-2.jsonl val
  run corpus2-val idx-corpus eval/claims-corpus-2.jsonl val
fi
[ -n "$T" ] && [ "$T" = "0" ] && exit 0   # threshold 0: validation only
run seeds-test idx-seeds eval/claims-seeds-test.jsonl
run corpus-test idx-corpus eval/claims-corpus.jsonl test
run seeds2-test idx-seeds eval/claims-seeds-2.jsonl test
run corpus2-test idx-corpus eval/claims-corpus-2.jsonl test
run checkcovid-dev idx-checkcovid "$OUT/ext/checkcovid-dev.jsonl"
echo "load $(cut -d' ' -f1-3 /proc/loadavg) commit $(git rev-parse --short HEAD)"
