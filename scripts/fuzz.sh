#!/usr/bin/env bash
# Fuzzing dplace's readers with libFuzzer (docs/fuzzing.md).
# usage:
#   scripts/fuzz.sh build                 build the targets into build-fuzz-lf/ (clang)
#   scripts/fuzz.sh seeds                 regenerate fuzz/corpus/ (needs build/dplace)
#   scripts/fuzz.sh smoke [SECONDS]       every target for SECONDS (default 5) on the seeds: CI
#   scripts/fuzz.sh run TARGET [SECONDS] [JOBS]   a long campaign (default 3600 s, 1 job);
#                                         new inputs go to fuzz/work/TARGET (not committed),
#                                         crashes to fuzz/work/crashes/
# TARGET: graph devices placement msr msr_split nn_ckpt agent_ckpt measure
set -euo pipefail
cd "$(dirname "$0")/.."
B=${DPLACE_FUZZ_BUILD:-build-fuzz-lf}
TARGETS=(graph devices placement msr msr_split nn_ckpt agent_ckpt measure)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

build() {
  command -v clang >/dev/null || { echo "fuzz: clang is missing (apt-get install clang)" >&2; exit 1; }
  CC=clang cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPLACE_FUZZ=ON >/dev/null
  cmake --build "$B" -j2 --target fuzz_targets >&2
}

# one libFuzzer run: target, seconds, the folder new inputs go to, extra
# flags; the committed seeds are read only. Prints executions and coverage.
run_one() {
  local t=$1 secs=$2 out=$3; shift 3
  local log; log=$(mktemp)
  local dirs=("$out" "fuzz/corpus/$t")
  mkdir -p fuzz/work/crashes "$out"
  case $t in # checkpoints follow the code's layout: a fresh seed beside the committed one
    nn_ckpt | agent_ckpt)
      DPLACE_FUZZ_SEED_OUT="$out/fresh-seed" "$B/fuzz/fuzz_$t" -runs=0 "fuzz/corpus/$t" >/dev/null 2>&1 || true ;;
  esac
  if ! "$B/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -dict=fuzz/json.dict -artifact_prefix=fuzz/work/crashes/"$t"- -print_final_stats=1 "$@" "${dirs[@]}" >"$log" 2>&1; then
    tail -40 "$log" >&2
    rm -f "$log"
    echo "fuzz: $t FAILED" >&2
    return 1
  fi
  local execs cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  echo "fuzz $t: ${execs:-?} executions in ${secs} s, coverage ${cov:-?} edges, ${ft:-?} features"
  rm -f "$log"
}

case "${1:-}" in
  build) build ;;
  seeds)
    D=${DPLACE:-build/dplace}
    for t in "${TARGETS[@]}"; do mkdir -p "fuzz/corpus/$t"; done
    cp tests/data/tiny.json fuzz/corpus/graph/tiny.json
    for m in synthetic-200; do # the zoo's papers' models are megabytes: over -max_len
      "$D" zoo build "$m" --batch 1 -o "fuzz/corpus/graph/$m.json" >/dev/null
    done
    for p in k40x1 k40x4 p100x2 p100x8; do "$D" devices "$p" -o "fuzz/corpus/devices/$p.json" >/dev/null; done
    cp tests/data/devices_v1.json fuzz/corpus/devices/v1-file.json # the format's versions: 1, and 2 with a model
    cp tests/data/devices_v2.json fuzz/corpus/devices/v2-calibrated.json
    T=$(mktemp -d)
    "$D" baseline --graph tests/data/tiny.json --devices k40x2 --methods cpu,gpu,m-etf --out-dir "$T" >/dev/null
    cp "$T"/*.json fuzz/corpus/placement/
    rm -rf "$T"
    cp fuzz/data/msr_small.json fuzz/corpus/msr/
    printf '{"cpus":[{"load":0.0,"nodes":[1]}],"fpgas":[{"load":-1,"nodes":[2,3,4,5]},{"load":-1,"nodes":[]}]}\n' \
      >fuzz/corpus/msr_split/split.json
    printf '{"cpus":[{"nodes":[1]}],"fpgas":[{"nodes":[2,5]},{"nodes":[3,4]}]}\n' >fuzz/corpus/msr_split/split2.json
    DPLACE_FUZZ_SEED_OUT=fuzz/corpus/nn_ckpt/seed.ckpt "$B/fuzz/fuzz_nn_ckpt" -runs=0 fuzz/corpus/nn_ckpt >/dev/null 2>&1
    DPLACE_FUZZ_SEED_OUT=fuzz/corpus/agent_ckpt/seed.ck "$B/fuzz/fuzz_agent_ckpt" -runs=0 fuzz/corpus/agent_ckpt >/dev/null 2>&1
    printf 'step_time_s 0.125\n' >fuzz/corpus/measure/ok.txt
    printf 'warming up\nstep_time_s 1.5e-3\n' >fuzz/corpus/measure/ok2.txt
    printf 'oom gpu:1 needs 12 GiB\n' >fuzz/corpus/measure/oom.txt
    printf 'step_time_s -1\n' >fuzz/corpus/measure/neg.txt
    du -sh fuzz/corpus
    ;;
  smoke)
    secs=${2:-5}
    [ -x "$B/fuzz/fuzz_graph" ] || build
    W=$(mktemp -d)
    for t in "${TARGETS[@]}"; do run_one "$t" "$secs" "$W/$t" || { rm -rf "$W"; exit 1; }; done
    rm -rf "$W"
    ;;
  run)
    t=${2:?target}; secs=${3:-3600}; jobs=${4:-1}
    [ -x "$B/fuzz/fuzz_$t" ] || build
    if [ "$jobs" -gt 1 ]; then
      run_one "$t" "$secs" "fuzz/work/$t" -fork="$jobs"
    else
      run_one "$t" "$secs" "fuzz/work/$t"
    fi
    ;;
  *) sed -n 2,11p "$0" >&2; exit 2 ;;
esac
