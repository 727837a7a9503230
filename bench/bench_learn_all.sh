#!/usr/bin/env bash
# The full bench_learn table (every cell's training run and its control as
# separate single-thread processes, P at a time), then one markdown table
# merged from the rows. On 2 cores this takes many hours (hp nmt8 alone
# about two at one thread); its tables: docs/results/bench_learn.md.
# usage: bench/bench_learn_all.sh [P [OUTDIR [BENCH]]]   (defaults: nproc, bench_learn_out, build/bench/bench_learn)
#   extra bench_learn options (e.g. --set KEY=VALUE) go in $BENCH_LEARN_ARGS
set -euo pipefail
P=${1:-$(nproc)}
OUT=${2:-bench_learn_out}
BENCH=${3:-build/bench/bench_learn}
[ -x "$BENCH" ] || { echo "bench_learn_all: $BENCH not built (./scripts/setup.sh)" >&2; exit 1; }
mkdir -p "$OUT"
# preset:model:devices, the slowest first
cells="hp:nmt8:k40x8 hp:nmt4:k40x4 mars:gnmt4:p100x4 hp:resnet152:k40x2 hp:inception_v3:k40x2 hp:nmt2:k40x2
hp:rnnlm:k40x2 eagle-ppo-ce:gnmt4:p100x4 eagle-ppo-ce:inception_v3:p100x4 eagle-ppo-ce:bert_base:p100x4
eagle:gnmt4:p100x4 eagle:inception_v3:p100x4 eagle:bert_base:p100x4 mars:inception_v3:p100x4
mars:bert_base:p100x4 colocrl:nmt2:k40x2 colocrl:nmt2:k40x4 colocrl:inception_v3:k40x2
colocrl:inception_v3:k40x4 colocrl:rnnlm:k40x2 colocrl:rnnlm:k40x4 post:inception_v3:p100x4
post:gnmt4:p100x4 post:bert_base:p100x4"
jobs=()
for c in $cells; do jobs+=("$c:train" "$c:ctl"); done
export OUT BENCH BENCH_LEARN_ARGS="${BENCH_LEARN_ARGS:-}" OPENBLAS_NUM_THREADS=1
printf '%s\n' "${jobs[@]}" | xargs -P "$P" -I{} bash -c '
IFS=: read -r p m d k <<< "{}"; f="$OUT/$p-$m-$d-$k"; fl=--no-control; [ "$k" = ctl ] && fl=--control-only
"$BENCH" --preset "$p" --model "$m" --devices "$d" --threads 1 $fl $BENCH_LEARN_ARGS --md "$f.md" 2> "$f.err" ||
  echo "bench_learn_all: $p $m $d $k failed (see $f.err)" >&2
echo "bench_learn_all: $p $m $d $k done" >&2'
# merge: each training row with its control's best in the control column
{
  head -n 4 "$(ls "$OUT"/*-train.md | head -n 1)"
  for c in $cells; do
    IFS=: read -r p m d <<< "$c"
    row=$(grep '^| ' "$OUT/$p-$m-$d-train.md" 2>/dev/null | tail -n 1 || true)
    ctl=$(grep '^| ' "$OUT/$p-$m-$d-ctl.md" 2>/dev/null | tail -n 1 | awk -F'|' '{gsub(/ /, "", $7); print $7}' || true)
    if [ -n "$row" ]; then echo "$row" | awk -F'|' -v c=" $ctl " 'BEGIN{OFS="|"} {$7=c; print}'; fi
  done
} > "$OUT/table.md"
cat "$OUT/table.md"
