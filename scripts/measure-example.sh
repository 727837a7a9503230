#!/bin/sh
# An example measuring command for `dplace optimize --measure CMD`
# (protocol: docs/measure.md). Adapt it to real hardware by replacing the
# part marked below with a run of your training step on the placement.
#
# As a stand-in for hardware it simulates the placement with the papers'
# protocol (`dplace simulate --noise 0.05 --steps 10 --warmup 5`: the median
# of 5 noisy steps after 5 warm-up steps) and prints the result:
#     step_time_s SECONDS      the placement ran
#     oom REASON               it ran out of device memory
# and exits 0; a placement the simulator rejects for another reason (a broken
# device constraint or colocation) is a failure: the reason on stderr, exit 1.
#
# usage: measure-example.sh [--graph FILE | --model NAME] [--devices SPEC] [--seed N] [PLACEMENT]
#   e.g. dplace optimize ... --measure 'scripts/measure-example.sh --model nmt4 --devices k40x4 "$1"'
#
# Each setting may come from the environment instead of an argument:
#   DPLACE_PLACEMENT     the placement file (dplace sets it for the command)
#   DPLACE_GRAPH         a dplace-graph v1 file, or
#   DPLACE_MODEL         a built-in graph (dplace zoo list)
#   DPLACE_DEVICES       a device preset (k40x4, ...) or a dplace-devices v1 file
#   DPLACE_MEASURE_SEED  the simulator's noise seed (default 1)
#   DPLACE_BIN           the dplace binary (default: dplace on PATH, else build/dplace
#                        beside this script)
# Needs python3 to read `dplace simulate --json`.
set -u

me=measure-example.sh
die() {
  echo "$me: $*" >&2
  exit 2
}
usage() {
  sed -n 's/^# \{0,1\}//; 2,/^set -u/p' "$0" | sed '$d'
}

graph=${DPLACE_GRAPH:-}
model=${DPLACE_MODEL:-}
devices=${DPLACE_DEVICES:-}
placement=${DPLACE_PLACEMENT:-}
seed=${DPLACE_MEASURE_SEED:-1}
while [ $# -gt 0 ]; do
  case $1 in
    --graph | --model | --devices | --seed)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --graph) graph=$2 model= ;;
        --model) model=$2 graph= ;;
        --devices) devices=$2 ;;
        --seed) seed=$2 ;;
      esac
      shift 2
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*) die "unknown option $1 (try --help)" ;;
    *)
      placement=$1
      shift
      ;;
  esac
done
[ -n "$placement" ] || die "no placement file (an argument, or DPLACE_PLACEMENT)"
[ -n "$devices" ] || die "no devices (--devices SPEC, or DPLACE_DEVICES)"
if [ -n "$graph" ]; then
  set -- --graph "$graph"
elif [ -n "$model" ]; then
  set -- --model "$model"
else
  die "no graph (--graph FILE or --model NAME, or DPLACE_GRAPH / DPLACE_MODEL)"
fi

bin=${DPLACE_BIN:-}
if [ -z "$bin" ]; then
  bin=$(command -v dplace 2>/dev/null) || bin=$(dirname "$0")/../build/dplace
fi
[ -x "$bin" ] || die "no dplace binary at $bin (set DPLACE_BIN)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to read dplace simulate --json"

# ---- replace from here with a run on real hardware --------------------------
# The simulator's own errors (bad placement file, unknown device) go to
# stderr and its non-zero status is passed on: dplace logs a failed sample.
json=$("$bin" simulate "$@" --devices "$devices" --placement "$placement" --json \
  --noise 0.05 --steps 10 --warmup 5 --seed "$seed") || exit $?
# ---- to here ------------------------------------------------------------------

printf '%s\n' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
verdict = r.get("verdict")
reason = " ".join(str(r.get("reason", "")).split())
if verdict == "valid":
    print("step_time_s %.9g" % r["step_time_s"])
elif verdict == "oom":
    print(("oom " + reason).strip())
else:
    sys.stderr.write("placement rejected (%s): %s\n" % (verdict, reason))
    sys.exit(1)
'
