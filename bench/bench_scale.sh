#!/usr/bin/env bash
# How dplace optimize --mpi scales on this machine (docs/results/bench_scale.md):
#   1. sync mode with a measuring command that sleeps SLEEP seconds per placement
#      (a stand-in for a training step on real GPUs; sleeping costs no CPU):
#      placements per second with 1, 2, 4 and 8 worker ranks (mpirun -n W+1),
#      and each rate over the 1-worker rate;
#   2. async mode with the simulator: updates per second with 1 and 2
#      controller ranks (mpirun -n K+1, no workers: each controller simulates
#      its own samples), beside one process without MPI.
# The rates are the run's own (its training seconds, from --json: MPI's start
# and the baselines left out).
# Ranks are not bound to cores (--bind-to none): on a shared machine a rank
# bound to a busy core cannot move to an idle one.
# usage: bench/bench_scale.sh [DPLACE [SLEEP [SAMPLES [UPDATES_ASYNC [PARTS]]]]]
#        (defaults build/dplace 1 16 20 sync,async; run from the top folder)
set -euo pipefail
D=${1:-build/dplace}
SLEEP=${2:-1}
SAMPLES=${3:-16}
UPD=${4:-20}
PARTS=${5:-sync,async}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }

G="--model synthetic-600 --devices k40x2"
SMALL="--set hidden=16 --set attn-dim=16 --set dev-emb=8 --set grouper-hidden=16 --set type-dim=4 --groups 8"
if [[ $PARTS == *sync* && $PARTS != async ]]; then
echo "sync, --measure 'sleep $SLEEP; echo step_time_s 0.5', $SAMPLES samples per update, 2 updates, no cache"
printf '%-8s %10s %10s %12s %8s\n' workers placements train_s placements/s speedup
base=""
for w in 1 2 4 8; do
  $MPIRUN -n $((w + 1)) "$D" optimize $G $SMALL --set batch="$SAMPLES" --updates 2 --no-cache --baselines none \
    --measure "sleep $SLEEP; echo step_time_s 0.5" --mpi sync --json --quiet >"$tmp/s$w.json"
  n=$(field "$tmp/s$w.json" samples)
  t=$(field "$tmp/s$w.json" train_s)
  rate=$(python3 -c "print(f'{$n / $t:.3f}')")
  [ -n "$base" ] || base=$rate
  printf '%-8s %10s %10.2f %12s %7.2fx\n' "$w" "$n" "$t" "$rate" "$(python3 -c "print($rate / $base)")"
done
fi

if [[ $PARTS == *async* ]]; then
echo
echo "async, the simulator, agent hp (synthetic-600 on k40x2), $UPD updates, 1 thread per rank"
printf '%-22s %8s %10s %10s %8s\n' run updates train_s updates/s speedup
A="$G --updates $UPD --threads 1 --baselines none --json --quiet"
# shellcheck disable=SC2086
"$D" optimize $A >"$tmp/one.json"
u=$(field "$tmp/one.json" updates); t=$(field "$tmp/one.json" train_s)
one=$(python3 -c "print(f'{$u / $t:.3f}')")
printf '%-22s %8s %10.2f %10s %7.2fx\n' "one process" "$u" "$t" "$one" 1
for k in 1 2; do
  # shellcheck disable=SC2086
  $MPIRUN -n $((k + 1)) "$D" optimize $A --mpi async --controllers $k >"$tmp/a$k.json"
  u=$(field "$tmp/a$k.json" updates); t=$(field "$tmp/a$k.json" train_s)
  rate=$(python3 -c "print(f'{$u / $t:.3f}')")
  printf '%-22s %8s %10.2f %10s %7.2fx\n' "async, $k controller(s)" "$u" "$t" "$rate" "$(python3 -c "print($rate / $one)")"
done
fi
