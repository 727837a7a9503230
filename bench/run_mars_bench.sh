#!/bin/sh
# Runs the PyTorch reference Mars PPO round (../shared/anchors/torch_mars_policy.py)
# and bench_mars with the same arguments, thread count and environment, one
# after the other, and prints both medians and the ratio.
#
# usage: bench/run_mars_bench.sh [BENCH_MARS_BINARY] [OPS SEG HIDDEN GCN_HIDDEN DEVICES SAMPLES EPOCHS MINIBATCHES ITERS THREADS]
#   defaults: 256 128 512 256 5 20 3 4 1 2 (the anchor's; about 160 s for PyTorch on
#   the 2-core machine); BENCH_MARS_BINARY defaults to build/bench/bench_mars.
# Both programs inherit the same environment, so OpenBLAS settings such as
# OPENBLAS_CORETYPE apply to both (PyTorch links the same OpenBLAS).
# DPLACE_MARS_PAPER=0 skips bench_mars's paper-size extrapolation.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
anchor="$repo/../shared/anchors/torch_mars_policy.py"
bin=""
case "${1:-}" in
  ''|*[!0-9]*) if [ -n "${1:-}" ]; then bin=$1; shift; fi ;;
esac
[ -n "$bin" ] || bin="$repo/build/bench/bench_mars"
[ -x "$bin" ] || { echo "run_mars_bench: $bin not built (pass its path)" >&2; exit 2; }
[ -f "$anchor" ] || { echo "run_mars_bench: missing $anchor" >&2; exit 2; }
OPS=${1:-256}; SEG=${2:-128}; HIDDEN=${3:-512}; GCN=${4:-256}; DEVICES=${5:-5}; SAMPLES=${6:-20}
EPOCHS=${7:-3}; MB=${8:-4}; ITERS=${9:-1}; THREADS=${10:-2}
args="$OPS $SEG $HIDDEN $GCN $DEVICES $SAMPLES $EPOCHS $MB $ITERS $THREADS"
echo "sizes: ops=$OPS seg=$SEG hidden=$HIDDEN gcn_hidden=$GCN devices=$DEVICES samples=$SAMPLES epochs=$EPOCHS minibatches=$MB iters=$ITERS threads=$THREADS"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-<unset>}; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
torch_out=$(/usr/bin/python3 "$anchor" $args)
echo "$torch_out"
echo "load between: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
dp_out=$("$bin" $args)
echo "$dp_out"
t=$(echo "$torch_out" | sed -n 's/.*median_s=\([0-9.]*\).*/\1/p')
d=$(echo "$dp_out" | sed -n 's/.*median_s=\([0-9.]*\).*/\1/p' | head -n 1)
awk -v t="$t" -v d="$d" 'BEGIN { printf "torch median %.3f s, dplace median %.3f s, ratio torch/dplace = %.1fx\n", t, d, t / d }'
