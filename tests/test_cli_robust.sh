#!/bin/sh
# Malformed and extreme inputs as a user meets them: subnormal device speeds, METIS on a
# skewed machine, multi-file outputs all or nothing, control characters and
# huge names in messages, a killed run's temporary file.
# usage: test_cli_robust.sh PATH_TO_DPLACE [CASE]   (run from tests/; DPLACE_SHARED
# names the shared folder holding datasets/msr-dnn-partitioning)
set -u
D="$1"
S="${DPLACE_SHARED:-../../shared}/datasets/msr-dnn-partitioning"
. "$(dirname "$0")/cli_lib.sh"

dev() { # dev FILE GPU_FLOPS LINK_BW: one CPU and two GPUs
  printf '{"format":"dplace-devices","version":1,"devices":[
 {"name":"cpu:0","kind":"cpu","peak_flops":1e12,"memory_bandwidth":6e10,"memory_bytes":100000000000},
 {"name":"gpu:0","kind":"gpu","peak_flops":%s,"memory_bandwidth":2.8e11,"memory_bytes":100000000000},
 {"name":"gpu:1","kind":"gpu","peak_flops":4e12,"memory_bandwidth":2.8e11,"memory_bytes":100000000000}],
 "links":[{"from":"cpu:0","to":"gpu:0","bandwidth":%s},{"from":"cpu:0","to":"gpu:1","bandwidth":1.5e10}]}\n' "$2" "$3" >"$1"
}

# fault 2: tiny positive speeds are refused (they made step times infinite)
test_subnormal_speeds() {
dev "$T/sub.json" 1e-320 1.5e10
expect 2 'peak_flops must be in 1..1e20' -- "$D" simulate --graph data/tiny.json --devices "$T/sub.json" --placement gpu
dev "$T/subl.json" 4e12 1e-320
expect 2 'bandwidth must be in 1..1e20' -- "$D" simulate --graph data/tiny.json --devices "$T/subl.json" --placement gpu
expect 2 'sub.json' -- "$D" simulate --graph data/tiny.json --devices "$T/sub.json" --placement gpu --trace "$T/tl.json"
absent "$T/tl.json"
}

# the slowest legal GPU (1 FLOP/s, 1 B/s links): finite numbers, JSON that parses, a trace that parses
test_slowest_legal_gpu() {
dev "$T/slow.json" 1 1
expect 0 '"step_time_s"' -- "$D" simulate --model synthetic-200 --devices "$T/slow.json" --placement gpu:0 --json --trace "$T/tl.json"
grep -qiE 'inf|nan' "$T/out" && bad "the slowest legal GPU: non-finite number in --json output" || ok
python3 -m json.tool "$T/out" >/dev/null && ok || bad "the slowest legal GPU: --json output is not JSON"
python3 -m json.tool "$T/tl.json" >/dev/null && ok || bad "the slowest legal GPU: trace is not JSON"
}

# fault 3: METIS on a machine with one GPU far slower than the other: stdout is the JSON alone
test_metis_skewed() {
dev "$T/skew.json" 1 1.5e10
expect 0 '"metis"' -- "$D" baseline --model synthetic-200 --devices "$T/skew.json" --methods metis --json
grep -q 'Input Error' "$T/out" && bad "metis on skew.json: METIS printed to stdout" || ok
python3 -m json.tool "$T/out" >/dev/null && ok || bad "metis on skew.json: baseline --json output is not JSON"
}

# fault 4: outputs are all or nothing
test_import_all_or_nothing() {
G="$S/throughput-inputs/LayerGraphs/bert24_inference.json"
expect 2 'missing-dir/d.json: cannot write' -- "$D" import --from msr "$G" -o "$T/g.json" --devices-out "$T/missing-dir/d.json"
absent "$T/g.json"
expect 0 'wrote' -- "$D" import --from msr "$G" -o "$T/g.json" --devices-out "$T/d.json"
[ -s "$T/g.json" ] && [ -s "$T/d.json" ] && ok || bad "import of bert24_inference: not both files written"
}

# fault 4: baseline --out-dir writes every placement or none
test_baseline_all_or_nothing() {
mkdir -p "$T/pl/metis.json" # a directory where one placement should go
expect 2 'metis.json: cannot write' -- "$D" baseline --model synthetic-200 --devices k40x2 --methods gpu,cpu,metis --out-dir "$T/pl"
absent "$T/pl/gpu.json"
absent "$T/pl/cpu.json"
expect 0 '' -- "$D" baseline --model synthetic-200 --devices k40x2 --methods gpu,cpu --out-dir "$T/pl2"
[ -s "$T/pl2/gpu.json" ] && [ -s "$T/pl2/cpu.json" ] && ok || bad "baseline --out-dir wrote not every placement"
ls "$T" "$T/pl" "$T/pl2" | grep -q '\.tmp\.' && bad "baseline --out-dir: temporary file left behind" || ok
}

# fault 5: control characters are escaped, in one line
test_control_characters() {
printf '{"format":"dplace-graph","version":1,"ops":[\033[31m]}\n' >"$T/esc.json"
expect 2 "esc.json:1:" -- "$D" simulate --graph "$T/esc.json" --devices k40x2 --placement gpu
grep -q "$(printf '\033')" "$T/err" && bad "esc.json: raw ESC in the message" || ok
grep -q 'x1b' "$T/err" && ok || bad "esc.json: ESC not shown as \\x1b"
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "esc.json: the error is not one line"
}

# fault 5: huge names are cut in the message
test_huge_names() {
python3 -c "
import sys
n = 'n' * 50000000
sys.stdout.write('{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"' + n + '\",\"ops\":[{\"name\":\"' + n + '\",\"type\":\"Const\"}]}')
" >"$T/big.json"
expect 2 "longer than 4096 bytes" -- "$D" simulate --graph "$T/big.json" --devices k40x2 --placement gpu
[ "$(wc -c <"$T/err")" -lt 1100 ] && ok || bad "message of $(wc -c <"$T/err") bytes for a huge name"
}

# fault 6: a killed run's temporary file is removed by the next write of that output
test_killed_temporary() {
sh -c 'exit 0' & dead=$!; wait $dead
echo partial >"$T/tl2.json.tmp.$dead"
expect 0 "timeline" -- "$D" simulate --graph data/tiny.json --devices k40x2 --placement gpu --trace "$T/tl2.json"
absent "$T/tl2.json.tmp.$dead"
[ -s "$T/tl2.json" ] && ok || bad "--trace over a killed run's temporary file: trace not written"
}

test_run test_subnormal_speeds
test_run test_slowest_legal_gpu
test_run test_metis_skewed
test_run_datasets test_import_all_or_nothing msr-dnn-partitioning
test_run test_baseline_all_or_nothing
test_run test_control_characters
test_run test_huge_names
test_run test_killed_temporary
finish test_cli_robust
