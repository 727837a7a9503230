#!/bin/sh
# CLI behaviour as a user sees it: exit codes, one-line errors naming the
# file and item, no partial output files, --json fields, --help for every flag.
# usage: test_cli.sh PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
D="$1"
. "$(dirname "$0")/cli_lib.sh"

# --help names the commands, and simulate --help every option
test_help() {
expect 0 "simulate" -- "$D" --help
expect 0 "--placement" -- "$D" simulate --help
for flag in --graph --model --devices --placement --json --trace --steps --warmup --noise --seed; do
  expect 0 "$flag" -- "$D" simulate --help
done
}

# an unknown command or option, or a missing --devices: exit 2, saying so
test_usage_errors() {
expect 2 "unknown command" -- "$D" frobnicate
expect 2 "unknown option" -- "$D" simulate --bogus
expect 2 "--devices SPEC is required" -- "$D" simulate --graph data/tiny.json --placement gpu
}

# a good run, human and JSON
test_good_run() {
expect 0 "step time" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu:1
expect 0 '"step_time_s"' -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --json
for key in '"valid": true' '"reason"' '"busy_s"' '"peak_bytes"' '"memory_bytes"' '"name": "gpu:0"'; do
  grep -q -- "$key" "$T/out" || bad "simulate --json of tiny.json on k40x2 lacks $key"
done
}

# --trace writes the timeline
test_trace() {
expect 0 "timeline" -- "$D" simulate --model synthetic-2000 --devices k40x4 --placement gpu:0 --trace "$T/tl.json"
[ -s "$T/tl.json" ] && grep -q traceEvents "$T/tl.json" && ok || bad "synthetic-2000 on k40x4 --trace: no traceEvents in $T/tl.json"
}

# no trace after an error
test_no_trace_after_error() {
expect 2 "" -- "$D" simulate --graph data/empty.json --devices k40x2 --placement gpu --trace "$T/none.json"
[ -e "$T/none.json" ] && bad "data/empty.json --trace: trace written after the error" || ok
}

# a trace into a missing folder: exit 2, no temporary file left
test_trace_unwritable() {
expect 2 "cannot write" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --trace "$T/no/dir/t.json"
ls "$T" | grep -q '\.tmp\.' && bad "--trace into a missing folder: temporary file left behind" || ok
}

# bad input: exit 2, one line naming the file and the problem
test_bad_input() {
expect 2 "data/empty.json: file is empty" -- "$D" simulate --graph data/empty.json --devices k40x2 --placement gpu
[ "$(wc -l < "$T/err")" = 1 ] && ok || bad "data/empty.json: the error is not one line"
expect 2 "data/truncated.json:3:" -- "$D" simulate --graph data/truncated.json --devices k40x2 --placement gpu
expect 2 "no-such.json: cannot open" -- "$D" simulate --graph no-such.json --devices k40x2 --placement gpu
expect 2 'unknown device set "k80x3"' -- "$D" simulate --graph data/tiny.json --devices k80x3 --placement gpu
expect 2 'placement "gpu:5"' -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu:5
expect 2 "unknown model" -- "$D" simulate --model nope --devices k40x2 --placement gpu
expect 2 "not both" -- "$D" simulate --model synthetic-500 --graph data/tiny.json --devices k40x2 --placement gpu
expect 2 "warmup: in 0..steps-1" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --steps 2 --warmup 2
}

# op types the cost model does not know: one line on stderr per graph, the JSON lists them; none for a known graph
test_unknown_op_types() {
printf '{"format":"dplace-graph","version":1,"ops":[{"name":"a","type":"Frobnicate","outputs":[{"bytes":8}]},
 {"name":"b","type":"Frobnicate","inputs":[0],"outputs":[{"bytes":8}]},{"name":"c","type":"convolution","inputs":[1]},
 {"name":"d","type":"Twiddle","cost":{"gpu":0.001}}]}' > "$T/unknown.json"
expect 0 'unknown.json: 1 op type the cost model does not know, 2 ops priced as element-wise: Frobnicate (2)' -- \
  "$D" simulate --graph "$T/unknown.json" --devices k40x2 --placement gpu
expect 0 '"type": "Frobnicate"' -- "$D" simulate --graph "$T/unknown.json" --devices k40x2 --placement gpu --json
expect 0 'does not know' -- "$D" baseline --graph "$T/unknown.json" --devices k40x2 --methods gpu
"$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --json >"$T/out" 2>"$T/err"
[ ! -s "$T/err" ] && grep -q '"unknown_op_types": \[\]' "$T/out" && ok || bad "tiny.json: unexpected unknown op types"
}

# a placement file simulates
test_placement_file() {
printf '{"format":"dplace-placement","version":1,"devices":["cpu:0","gpu:0"],"placement":[0,1,1,1,1]}' > "$T/p.json"
expect 0 "valid" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement "$T/p.json"
}

# a placement file against a constraint: the verdict, naming it
test_placement_file_against_constraint() {
printf '{"format":"dplace-placement","version":1,"devices":["cpu:0","gpu:0"],"placement":[1,1,1,1,1]}' > "$T/p.json"
expect 0 "must run on cpu but is placed on gpu:0" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement "$T/p.json"
}

# placement files of the wrong length or with an unknown device: exit 2
test_bad_placement_files() {
printf '{"format":"dplace-placement","version":1,"devices":["cpu:0"],"placement":[0,0]}' > "$T/p.json"
expect 2 "placement has 2 entries but graph \"tiny\" has 5 ops" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement "$T/p.json"
printf '{"format":"dplace-placement","version":1,"devices":["gpu:9"],"placement":[0,0,0,0,0]}' > "$T/p.json"
expect 2 'devices\[0\] "gpu:9" is not in device set' -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement "$T/p.json"
}

# devices: the presets listed, one shown
test_devices() {
expect 0 "p100x4" -- "$D" devices
expect 0 "K40" -- "$D" devices k40x4
for p in v100-nvlinkx8 v100-pciex8 a100-sxmx8 a100-pciex8 h100-sxmx8 h100-pciex8 h200x4 h200x8 l4x8 rtx4090x4; do
  expect 0 "$p" -- "$D" devices
done
for f in v100-nvlinkxN a100-sxmxN h100-pciexN h200xN l4xN rtx4090xN; do
  expect 0 "$f" -- "$D" devices --help
  expect 0 "$f" -- "$D" --help
  expect 0 "$f" -- "$D" baseline --help
done
expect 0 "gpu:0 -> gpu:3 .*50.00" -- "$D" devices v100-nvlinkx8
expect 0 "H100-SXM5" -- "$D" devices h100-sxmx2
}

# devices: a preset exported, read back and simulated on
test_devices_export() {
expect 0 "wrote" -- "$D" devices p100x4 -o "$T/p100.json"
expect 0 "P100" -- "$D" devices "$T/p100.json"
expect 0 "valid" -- "$D" simulate --graph data/tiny.json --devices "$T/p100.json" --placement gpu:3
}

# devices -o writes version 2 with each device's generation; the file
# simulates to the preset's step time exactly
test_devices_export_v2() {
expect 0 "wrote" -- "$D" devices k40x2 -o "$T/k40.json"
grep -q '"version": 2' "$T/k40.json" && ok || bad "devices -o: not version 2"
grep -q '"generation": "kepler"' "$T/k40.json" && ok || bad "devices -o: no generation"
"$D" simulate --model synthetic-500 --devices k40x2 --placement gpu:1 --json 2>/dev/null | grep step_time_s >"$T/a"
"$D" simulate --model synthetic-500 --devices "$T/k40.json" --placement gpu:1 --json 2>/dev/null | grep step_time_s >"$T/b"
[ -s "$T/a" ] && cmp -s "$T/a" "$T/b" && ok || bad "devices -o: the file simulates to another step time"
}

# devices shows the host's costs in an eager step: the defaults, and a
# file's own
test_devices_host_costs() {
expect 0 "host cpu:0 issues an op in 15.0 us and turns from GPU work to a CPU op in 1300.0 us" -- "$D" devices h200x1
expect 0 "wrote" -- "$D" devices h200x1 -o "$T/host.json"
python3 -c "
import json; d = json.load(open('$T/host.json')); d['devices'][0].update(dispatch_s=2e-05, switch_s=0.0005)
json.dump(d, open('$T/host.json', 'w'))"
expect 0 "issues an op in 20.0 us and turns from GPU work to a CPU op in 500.0 us" -- "$D" devices "$T/host.json"
}

# calibrate: the proposal of synthetic-300 on k40x2 "measured" by simulating
# each placement on tests/data/devices_v2.json (another machine) into
# $T/cal/measurements.csv
calibrate_measured() {
"$D" calibrate --model synthetic-300 --devices k40x2 --propose "$T/cal" >/dev/null 2>&1
{ echo "graph,placement_file,seconds"
  grep -v '^#' "$T/cal/measurements.csv" | tail -n +2 | while IFS=, read -r g f _; do
    s=$("$D" simulate --model "$g" --devices data/devices_v2.json --placement "$T/cal/$f" --json 2>/dev/null |
      sed -n 's/.*"step_time_s": *\([0-9.e+-]*\).*/\1/p')
    echo "$g,$f,$s"
  done; } >"$T/cal/filled.csv"
}

# calibrate --propose: placements and a template whose empty seconds the fit refuses
test_calibrate_propose() {
expect 0 "wrote .* placements" -- "$D" calibrate --model synthetic-300 --devices k40x2 --propose "$T/prop"
[ -f "$T/prop/synthetic-300-single-gpu_1.json" ] && ok || bad "calibrate --propose: no single-GPU placement"
grep -q '^synthetic-300,synthetic-300-split-cpu_0-gpu_0-50.json,$' "$T/prop/measurements.csv" && ok ||
  bad "calibrate --propose: the template lacks a split"
expect 2 "measurements.csv: line 4: seconds \"\" is not a number" -- \
  "$D" calibrate --model synthetic-300 --devices k40x2 --measurements "$T/prop/measurements.csv"
}

# calibrate --measurements: the fit, its report and the calibrated v2 file,
# which simulates a held-out kind of placement closer to the machine
test_calibrate_fit() {
calibrate_measured
expect 0 "held-out placements" -- "$D" calibrate --model synthetic-300 --devices k40x2 \
  --measurements "$T/cal/filled.csv" -o "$T/cal/mine.json"
grep -q "not determined" "$T/out" && ok || bad "calibrate: no list of undetermined parameters"
grep -q '"version": 2' "$T/cal/mine.json" && grep -q '"efficiency"' "$T/cal/mine.json" && ok ||
  bad "calibrate -o: not a v2 file with efficiencies"
expect 0 "valid" -- "$D" simulate --model synthetic-300 --devices "$T/cal/mine.json" --placement gpu:1
}

# calibrate --keep: a parameter named by its last word stays at its value
# in --devices on every device, is listed as kept, and the -o file holds it;
# a name that is no parameter is refused in one line
test_calibrate_keep() {
calibrate_measured
expect 0 "\"kept\": true" -- "$D" calibrate --model synthetic-300 --devices k40x2 \
  --measurements "$T/cal/filled.csv" --keep elementwise.memory --json -o "$T/cal/k.json"
python3 - "$T/out" "$T/cal/k.json" <<'PY' && ok || bad "calibrate --keep: a kept parameter moved"
import json, sys
r = json.load(open(sys.argv[1]))
kept = [p for p in r["parameters"] if p["kept"]]
assert kept and all(p["name"].endswith(" elementwise.memory") for p in kept), kept
assert all(p["calibrated"] == p["stock"] and not p["determined"] for p in kept), kept
stock = [p["stock"] for p in kept]
for d in json.load(open(sys.argv[2]))["devices"]:
    assert min(abs(d["efficiency"]["elementwise"]["memory"] - v) for v in stock) < 1e-12, d["name"]
PY
expect 2 'keep "nope.memory" names no parameter' -- "$D" calibrate --model synthetic-300 --devices k40x2 \
  --measurements "$T/cal/filled.csv" --keep nope.memory
}

# calibrate --json: one JSON object with the errors, every parameter with
# its bounds and every measurement with its simulated times, and the -o file
test_calibrate_json() {
calibrate_measured
"$D" calibrate --model synthetic-300 --devices k40x2 --measurements "$T/cal/filled.csv" --json \
  -o "$T/cal/j.json" >"$T/cal/report.json" 2>"$T/err" && ok || bad "calibrate --json: exit $?"
python3 - "$T/cal/report.json" "$T/cal/filled.csv" "$T/cal/j.json" <<'PY' && ok || bad "calibrate --json: $(cat "$T/err")"
import json, sys
r = json.load(open(sys.argv[1]))
rows = [l for l in open(sys.argv[2]) if l.strip() and not l.startswith(("#", "graph,"))]
assert r["measurements"] == len(rows) == len(r["samples"]) == r["fitted"] + r["held_out"], r
assert r["held_out"] == sum(s["held_out"] for s in r["samples"]) > 0
assert r["written"] == sys.argv[3] and r["fit_mape"] < r["fit_mape_stock"]
fit = [p for p in r["parameters"] if p["determined"]]
assert fit and len(fit) < len(r["parameters"])
assert all(p["low"] <= p["calibrated"] <= p["high"] for p in fit)
assert all(p["calibrated"] == p["stock"] and not p["at_bound"] for p in r["parameters"] if not p["determined"])
assert all(s["measured_s"] > 0 and s["stock_s"] > 0 and s["calibrated_s"] > 0 for s in r["samples"])
PY
expect 2 "--json needs measurements" -- "$D" calibrate --model synthetic-300 --devices k40x2 --propose "$T/p2" --json
}

# calibrate: bad measurements are refused with exit 2 and one line naming
# the file and the row; nothing is written
test_calibrate_bad_input() {
calibrate_measured
F="$T/cal/filled.csv"
sed '3s/,[^,]*$/,-0.5/' "$F" >"$T/cal/neg.csv"
expect 2 "neg.csv: line 3: seconds must be > 0" -- "$D" calibrate --model synthetic-300 --devices k40x2 \
  --measurements "$T/cal/neg.csv" -o "$T/cal/x.json"
sed '3s/,[^,]*,/,nowhere.json,/' "$F" >"$T/cal/missing.csv"
expect 2 "missing.csv: line 3: .*nowhere.json: cannot open" -- "$D" calibrate --model synthetic-300 \
  --devices k40x2 --measurements "$T/cal/missing.csv" -o "$T/cal/x.json"
"$D" baseline --model synthetic-500 --devices k40x2 --methods gpu --out-dir "$T/cal/other" >/dev/null 2>&1
sed "3s|,[^,]*,|,other/gpu.json,|" "$F" >"$T/cal/length.csv"
expect 2 "length.csv: line 3: .*has .* ops" -- "$D" calibrate --model synthetic-300 --devices k40x2 \
  --measurements "$T/cal/length.csv" -o "$T/cal/x.json"
sed '3s/^[^,]*,/nmt9,/' "$F" >"$T/cal/graph.csv"
expect 2 "graph.csv: line 3: graph \"nmt9\" is none of those given" -- "$D" calibrate --model synthetic-300 \
  --devices k40x2 --measurements "$T/cal/graph.csv" -o "$T/cal/x.json"
head -5 "$F" >"$T/cal/few.csv"
expect 2 "measurements in the fit, fewer than the" -- "$D" calibrate --model synthetic-300 --devices k40x2 \
  --measurements "$T/cal/few.csv" -o "$T/cal/x.json"
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "calibrate: more than one line for too few measurements"
absent "$T/cal/x.json"
expect 2 "give one of --measurements CSV, --measure CMD or --propose DIR" -- "$D" calibrate --model synthetic-300 \
  --devices k40x2
}

# calibrate --measure: the proposed placements measured by a command (the
# example command simulating another machine with noise), kept with their
# times by --propose
test_calibrate_measure() {
expect 0 "held-out placements" -- "$D" calibrate --model synthetic-300 --devices k40x2 --holdout 0.2 \
  --measure "DPLACE_BIN=$D ../scripts/measure-example.sh --devices data/devices_v2.json \"\$1\"" --propose "$T/mm"
grep -q '^synthetic-300,synthetic-300-single-gpu_0.json,[0-9]' "$T/mm/measurements.csv" && ok ||
  bad "calibrate --measure --propose: no measured time kept"
}

# devices: an unknown set is refused by name
test_devices_unknown() {
expect 2 'unknown device set "k40x99"' -- "$D" devices k40x99
}

# noise protocol is deterministic for a seed
test_noise_seed() {
"$D" simulate --model synthetic-1000 --devices k40x2 --placement gpu --noise 0.2 --steps 7 --warmup 2 --seed 5 --json > "$T/a" 2>&1
"$D" simulate --model synthetic-1000 --devices k40x2 --placement gpu --noise 0.2 --steps 7 --warmup 2 --seed 5 --json > "$T/b" 2>&1
grep step_time_s "$T/a" > "$T/a1"; grep step_time_s "$T/b" > "$T/b1"
cmp -s "$T/a1" "$T/b1" && ok || bad "synthetic-1000 --noise 0.2 --seed 5: the same seed gave different step times"
}

# the model zoo lists its models
test_zoo_list() {
expect 0 "nmt4" -- "$D" zoo list
for m in inception_v3 resnet152 rnnlm nmt2 nmt8 gnmt4 bert_base; do
  grep -q "^$m " "$T/out" || bad "zoo list lacks $m"
done
}

# a zoo model built to a file simulates with its expert placement
test_zoo_build() {
expect 0 "" -- "$D" zoo build rnnlm --batch 16 -o "$T/rnnlm.json"
expect 0 "rnnlm" -- "$D" simulate --graph "$T/rnnlm.json" --devices k40x2 --placement expert
}

# zoo build refuses an unknown model (writing nothing), no -o, --batch 0
test_zoo_build_errors() {
expect 2 'unknown model "nmt3"' -- "$D" zoo build nmt3 -o "$T/nmt3.json"
[ -e "$T/nmt3.json" ] && bad "zoo build nmt3 wrote a file for the unknown model"
expect 2 "build needs -o FILE" -- "$D" zoo build nmt2
expect 2 "--batch" -- "$D" zoo build nmt2 --batch 0 -o "$T/x.json"
}

# the papers' verdicts: nmt2 on one GPU is out of memory, its expert
# placement valid; BERT has no expert placement
test_zoo_verdicts() {
expect 0 "OOM" -- "$D" simulate --model nmt2 --devices k40x2 --placement gpu
expect 0 "valid" -- "$D" simulate --model nmt2 --devices k40x2 --placement expert
expect 2 "no human-expert placement" -- "$D" simulate --model bert_base --devices p100x4 --placement expert
}

# --batch applies to --model only
test_batch_needs_model() {
expect 2 "--batch applies to --model only" -- "$D" simulate --graph data/tiny.json --batch 4 --devices k40x2 --placement gpu
}

# option tables (src/cli/cli_opt.c): NAME=VALUE
test_option_equals_value() {
expect 0 "valid" -- "$D" simulate --graph=data/tiny.json --devices=k40x2 --placement=gpu:1 --seed=3
}

# option tables: messages naming the option and the value
test_option_errors() {
expect 2 '--seed must be >= 0, not "x"' -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --seed x
expect 2 "--trace needs a value (FILE)" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --trace
expect 2 "--json takes no value" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --json=yes
expect 2 'unexpected argument "extra"' -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu extra
expect 2 'unknown option "--bogus"' -- "$D" devices --bogus
}

# option tables: "--" ends the options
test_double_dash() {
expect 0 "K40" -- "$D" devices -- k40x4
}

# option tables: every command has -h, --help, its option lines within 79 columns
test_command_help() {
for c in simulate devices zoo baseline group import; do
  "$D" $c --help >"$T/help" 2>&1 && grep -q -- "-h, --help" "$T/help" && ok || bad "$c --help"
  awk '/^  -/ { opts = 1 } opts && length > 79 { exit 1 }' "$T/help" && ok || bad "$c --help has option lines over 79 columns"
done
}

test_run test_help
test_run test_usage_errors
test_run test_good_run
test_run test_trace
test_run test_no_trace_after_error
test_run test_trace_unwritable
test_run test_bad_input
test_run test_unknown_op_types
test_run test_placement_file
test_run test_placement_file_against_constraint
test_run test_bad_placement_files
test_run test_devices
test_run test_devices_export
test_run test_devices_export_v2
test_run test_devices_host_costs
test_run test_devices_unknown
test_run test_calibrate_propose
test_run test_calibrate_fit
test_run test_calibrate_json
test_run test_calibrate_keep
test_run test_calibrate_bad_input
test_run test_calibrate_measure
test_run test_noise_seed
test_run test_zoo_list
test_run test_zoo_build
test_run test_zoo_build_errors
test_run test_zoo_verdicts
test_run test_batch_needs_model
test_run test_option_equals_value
test_run test_option_errors
test_run test_double_dash
test_run test_command_help
finish test_cli
