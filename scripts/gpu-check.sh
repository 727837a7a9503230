#!/bin/sh
# The real-GPU check of the simulator (docs/measure.md, "A real-GPU check"),
# as the commands a person with a GPU machine runs:
#
#   here:         scripts/gpu-check.sh prepare DIR [bench/gpu_check.py prepare options]
#   copy DIR to the GPU machine (it holds everything the measurement needs), then there:
#                 sh DIR/gpu-check.sh smoke DIR      # about a minute: checks that it runs, estimates the full run
#                 sh DIR/gpu-check.sh full DIR       # the measurement, stopped at the manifest's time budget
#   copy DIR/measured.csv and DIR/measured.csv.info back into DIR here, then:
#                 scripts/gpu-check.sh analyze DIR [bench/gpu_check.py analyze options]
#
# smoke and full run only DIR/scripts/dplace-measure-torch, with $PYTHON
# (default python3: any Python 3.11 or 3.12 with torch; torchvision is not
# needed for the default models). Extra arguments go to the measurer: a
# machine without GPUs adds --map-all cpu.
#
# Sizing: the full run takes about placements x rounds x (steps x step time
# + about a second of placing); prepare prints that sum from the simulated
# step times, the smoke run prints it again from measured ones, and the
# measurer stops cleanly at the manifest's time budget (480 s by default).
# Make it smaller with prepare's --placements, --repeat, --steps or smaller
# models (--model NAME:BATCH:SHAPE).
set -eu

usage() {
    echo "usage: $0 prepare|smoke|full|analyze DIR [options]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
stage=$1
dir=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}

case $stage in
prepare)
    exec /usr/bin/python3 "$here/../bench/gpu_check.py" prepare --out "$dir" "$@" ;;
smoke)
    exec "$py" "$dir/scripts/dplace-measure-torch" --manifest "$dir/manifest.json" --csv "$dir/smoke.csv" \
        --smoke "$@" ;;
full)
    exec "$py" "$dir/scripts/dplace-measure-torch" --manifest "$dir/manifest.json" --csv "$dir/measured.csv" "$@" ;;
analyze)
    exec /usr/bin/python3 "$here/../bench/gpu_check.py" analyze "$dir" "$@" ;;
*)
    usage ;;
esac
