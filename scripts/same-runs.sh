#!/usr/bin/env bash
# Runs a fixed set of short, seeded `dplace optimize` runs with one dplace
# binary and keeps what must not change when code is reorganised: the
# per-sample and per-update logs without their wall-clock columns, the best
# placements, and the checkpoints without their header (magic, version,
# identity), clock fields and checksum. Two binaries that behave the same
# give two folders that `diff -r` finds equal.
#
# usage: scripts/same-runs.sh DPLACE_BINARY OUTDIR [THREADS...]
#   THREADS: the thread counts to run each agent with (default: 1 2)
#   ONLY=REGEX in the environment runs the runs whose names match it
#
# The runs: every preset and the search on rnnlm k40x2, 10 updates, seed 3
# (Mars's presets with the benchmarks' small networks; mars-seq2seq, whose
# attention spans every op, on synthetic-600); hp with a search
# after training (its log compared to the shorter run's length: the search
# runs for wall time), hp started from another run's networks, a run
# stopped at 5 updates and resumed to 10, a measured run (a fake measuring
# command whose time depends on the placement), and a distributed run over
# 3 ranks when mpirun is there.
set -uo pipefail
bin=$(realpath "$1")
out=$2
shift 2
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

C=(--devices k40x2 --seed 3 --baselines none --quiet)
G=(--model rnnlm "${C[@]}")
SMALL=(--set gcn-hidden=32 --set hidden=32 --set attn-dim=32 --set dev-emb=16 --set seg-keep=0 --set txl-heads=4
       --set txl-inner=128 --set warm-lr=0.01)

# keep NAME: normalises the run's files in $work/NAME.* into $out/NAME.*
keep() {
  local n=$1 f
  for f in "$work/$n".csv "$work/$n".updates.csv "$work/$n".refine.csv "$work/$n".search.csv; do
    [ -f "$f" ] || continue
    # the wall-clock column: wall_s, wherever it stands
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_s") w = i }
             { if (w) { $w = "" }; print }' OFS=, "$f" >"$out/$(basename "$f")"
  done
  [ -f "$work/$n.json" ] && cp "$work/$n.json" "$out/$n.placement.json"
  [ -f "$work/$n.ck" ] && python3 "$here/ck_body.py" "$work/$n.ck" >"$out/$n.ck.hex"
  return 0
}

# run NAME ARGS...: one run, its exit status and stdout's best line kept
run() {
  local n=$1
  shift
  [[ -z "${ONLY:-}" || $n =~ $ONLY ]] || return 0
  "$bin" optimize "$@" -o "$work/$n.json" --log "$work/$n.csv" --checkpoint "$work/$n.ck" \
    >"$work/$n.stdout" 2>"$work/$n.stderr"
  echo "exit $?" >"$out/$n.exit"
  keep "$n"
}

for t in "${threads[@]}"; do
  for a in hp colocrl eagle eagle-ppo-ce post dplace; do
    run "$a.t$t" "${G[@]}" --agent "$a" --updates 10 --threads "$t"
  done
  for a in mars mars-trfxl mars-dplace; do
    run "$a.t$t" "${G[@]}" --agent "$a" --updates 10 --threads "$t" "${SMALL[@]}" --set pretrain-iters=200
  done
  run "mars-seq2seq.t$t" --model synthetic-600 "${C[@]}" --agent mars-seq2seq --updates 10 --threads "$t" \
    "${SMALL[@]}" --set pretrain-iters=200
  run "mars-nopretrain.t$t" "${G[@]}" --agent mars-nopretrain --updates 10 --threads "$t" "${SMALL[@]}"
  run "search.t$t" "${G[@]}" --agent search --updates 10 --threads "$t"
done

# hp, then 20 s of search from its best: the training's files whole, the
# search's log as far as the shorter of two runs goes (compare-same-runs)
run hp-search "${G[@]}" --agent hp --updates 10 --threads 2 --refine 20s
rm -f "$out/hp-search.placement.json"

# wanted NAME: whether ONLY (if set) selects the run NAME
wanted() { [[ -z "${ONLY:-}" || $1 =~ $ONLY ]]; }

# hp from the networks of another hp run
wanted hp-init && "$bin" optimize "${G[@]}" --agent hp --updates 10 --threads 2 --checkpoint "$work/init-src.ck" >/dev/null 2>&1
run hp-init "${G[@]}" --agent hp --updates 10 --threads 2 --init "$work/init-src.ck"

# stopped at 5 updates, resumed to 10: the same files as the run of 10
wanted resumed && "$bin" optimize "${G[@]}" --agent hp --updates 5 --threads 2 -o "$work/resumed.json" --log "$work/resumed.csv" \
  --checkpoint "$work/resumed.ck" >/dev/null 2>&1
run resumed "${G[@]}" --agent hp --updates 10 --threads 2 --resume "$work/resumed.ck"

# a measured run: the fake measurer's time is a hash of the placement file
cat >"$work/measure.sh" <<'EOF'
#!/bin/sh
h=$(cksum <"$1" | cut -d' ' -f1)
echo "step_time_s 1.$((h % 1000))"
EOF
chmod +x "$work/measure.sh"
run measured "${G[@]}" --agent hp --updates 10 --threads 2 --measure "$work/measure.sh \"\$1\""

if command -v mpirun >/dev/null && wanted mpi; then
  mpirun --allow-run-as-root --oversubscribe -n 3 "$bin" optimize "${G[@]}" --agent hp --updates 10 \
    -o "$work/mpi.json" --log "$work/mpi.csv" --checkpoint "$work/mpi.ck" --mpi sync >/dev/null 2>&1
  echo "exit $?" >"$out/mpi.exit"
  keep mpi
fi
echo "same-runs: $(ls "$out" | wc -l) files in $out" >&2
