#!/bin/sh
# Runs the PyTorch reference policy update (../shared/anchors/torch_hp_policy.py)
# and bench_policy with the same sizes and thread count, one after the other,
# and prints both medians and the ratio.
#
# usage: bench/run_policy_bench.sh [BENCH_POLICY_BINARY] [OPS GROUPS HIDDEN DEVICES K ITERS THREADS]
#   BENCH_POLICY_BINARY defaults to build-nn/bench/bench_policy, then build/bench/bench_policy.
# Both programs inherit the same environment; OpenBLAS settings such as
# OPENBLAS_CORETYPE therefore apply to both (PyTorch links the same OpenBLAS).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
anchor="$repo/../shared/anchors/torch_hp_policy.py"
bin=""
case "${1:-}" in
  ''|*[!0-9]*) if [ -n "${1:-}" ]; then bin=$1; shift; fi ;;
esac
if [ -z "$bin" ]; then
  for b in "$repo/build-nn/bench/bench_policy" "$repo/build/bench/bench_policy"; do
    if [ -x "$b" ]; then bin=$b; break; fi
  done
fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "run_policy_bench: bench_policy not built (pass its path)" >&2; exit 2; }
[ -f "$anchor" ] || { echo "run_policy_bench: missing $anchor" >&2; exit 2; }
OPS=${1:-24713}; GROUPS=${2:-256}; HIDDEN=${3:-256}; DEVICES=${4:-5}; K=${5:-4}; ITERS=${6:-5}; THREADS=${7:-2}
args="$OPS $GROUPS $HIDDEN $DEVICES $K $ITERS $THREADS"
echo "sizes: ops=$OPS groups=$GROUPS hidden=$HIDDEN devices=$DEVICES k=$K iters=$ITERS threads=$THREADS"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-<unset>}"
# shellcheck disable=SC2086
torch_out=$(/usr/bin/python3 "$anchor" $args)
echo "$torch_out"
# shellcheck disable=SC2086
dp_out=$("$bin" $args)
echo "$dp_out"
t=$(echo "$torch_out" | sed -n 's/.*median_s=\([0-9.]*\).*/\1/p')
d=$(echo "$dp_out" | sed -n 's/.*median_s=\([0-9.]*\).*/\1/p' | head -n 1)
awk -v t="$t" -v d="$d" 'BEGIN { printf "torch median %.4f s, dplace median %.4f s, ratio torch/dplace = %.2fx\n", t, d, t / d }'
