#!/bin/sh
# dplace baseline and dplace group as a user sees them: the table, JSON,
# placement and group files (written atomically, usable by simulate), exit
# codes and one-line errors.
# usage: test_cli_place.sh PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
D="$1"
. "$(dirname "$0")/cli_lib.sh"

# --help names baseline and group, and their --help every option and method
test_help() {
expect 0 "baseline" -- "$D" --help
expect 0 "group" -- "$D" --help
for flag in --graph --model --devices --methods --json --out-dir --seed --memory-fraction --group --groups --sct-threshold --forward-only m-etf m-topo m-sct mincut; do
  expect 0 "$flag" -- "$D" baseline --help
done
for flag in --graph --model --method --groups --devices --json --seed -o colocation fluid; do
  expect 0 "$flag" -- "$D" group --help
done
}

# baseline: every method has a row; the expert says why it cannot apply
test_baseline_rows() {
expect 0 "step time" -- "$D" baseline --model synthetic-2000 --devices k40x2
for m in cpu gpu expert scotch mincut metis m-topo m-etf m-sct; do
  grep -q "^$m " "$T/out" || bad "baseline table lacks a row for $m"
done
grep -q "^expert *cannot apply: " "$T/out" && ok || bad "synthetic-2000 on k40x2: the expert row does not say why it cannot apply"
for m in accel-balanced accel-sequential; do
  grep -q "^$m *cannot apply: .*needs module scopes" "$T/out" && ok || bad "synthetic-2000: the $m row does not say it needs modules"
done
}

# baseline on each preset family of today's machines: every method has a
# row and every placement is valid (rnnlm at batch 16 has an expert)
test_baseline_presets() {
for p in v100-nvlinkx8 v100-pciex8 a100-sxmx8 a100-pciex8 h100-sxmx8 h100-pciex8 h200x8 l4x8 rtx4090x4; do
  expect 0 "step time" -- "$D" baseline --model rnnlm --batch 16 --devices "$p"
  for m in cpu gpu expert scotch mincut metis m-topo m-etf m-sct; do
    grep -q "^$m " "$T/out" || bad "baseline rnnlm on $p: no row for $m"
  done
  grep -v "^accel-" "$T/out" | grep -q "cannot apply\|OOM \|INVALID" && bad "baseline rnnlm on $p: a method failed" || ok
done
}

# baseline --json: the fields of every method asked for, and only those
test_baseline_json() {
expect 0 '"method": "m-etf"' -- "$D" baseline --model synthetic-2000 --devices k40x2 --json --methods gpu,m-etf
for key in '"step_time_s"' '"valid"' '"oom_device"' '"transfer_bytes"' '"place_seconds"' '"peak_bytes"'; do
  grep -q -- "$key" "$T/out" || bad "baseline --json lacks $key"
done
grep -q '"method": "cpu"' "$T/out" && bad "--methods gpu,m-etf: cpu placed too" || ok
}

# the grouping step: TensorFlow's groups (none) by default for every placer
test_grouping_default() {
expect 0 "m-etf    none" -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-topo,m-etf,m-sct,metis
for m in m-topo m-sct metis; do
  grep -q "^$m *none" "$T/out" && ok || bad "$m does not run on TensorFlow's groups by default"
done
grep -q "^[a-z-]* *colocation " "$T/out" && bad "a placer runs on co-placed units by default" || ok
}

# --group overrides the grouping (colocation: Baechi's co-placement; metis)
test_group_option() {
expect 0 "m-etf    colocation" -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-etf,metis --group colocation
grep -q "^metis    colocation" "$T/out" && ok || bad "--group colocation not applied to metis"
expect 0 "m-sct    colocation" -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-sct --group colocation
expect 0 "m-topo   metis" -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-topo --group metis --groups 16
}

# --json says which units a placer ran on
test_grouping_json() {
expect 0 '"units": "none"' -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-etf --json
expect 0 '"units": "colocation"' -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-etf --json --group colocation
# --json names the rule set of a list placer's placement kept, none for the others
expect 0 '"rules": "\(paper\|dataflow\)"' -- "$D" baseline --model synthetic-500 --devices k40x2 --methods m-etf --json
expect 0 '"rules": null' -- "$D" baseline --model synthetic-500 --devices k40x2 --methods metis --json
}

# an unknown --group method and a bad --sct-threshold are refused
test_grouping_option_errors() {
expect 2 "--group: unknown method" -- "$D" baseline --model synthetic-500 --devices k40x2 --group kmeans
expect 2 "--sct-threshold" -- "$D" baseline --model synthetic-500 --devices k40x2 --sct-threshold 0
}

# the forward-only placement on a training graph: both settings run
test_forward_only() {
expect 0 "m-sct    none" -- "$D" baseline --model rnnlm --devices k40x2 --methods m-etf,m-sct --forward-only yes
expect 0 "m-etf    none" -- "$D" baseline --model rnnlm --devices k40x2 --methods m-etf --forward-only no
}

# --forward-only takes yes or no
test_forward_only_refused() {
expect 2 "--forward-only must be yes or no" -- "$D" baseline --model synthetic-500 --devices k40x2 --forward-only maybe
}

# --out-dir: one placement file per applied method, accepted by simulate
test_out_dir() {
expect 0 "placements written" -- "$D" baseline --model synthetic-2000 --devices k40x2 --out-dir "$T/pl"
for m in cpu gpu scotch mincut metis m-topo m-etf; do
  [ -s "$T/pl/$m.json" ] && ok || bad "--out-dir: no placement file for $m"
done
[ -e "$T/pl/expert.json" ] && bad "--out-dir: a placement file for expert, which did not apply" || ok
ls "$T/pl" | grep -q '\.tmp' && bad "--out-dir: temporary file left behind" || ok
expect 0 "valid" -- "$D" simulate --model synthetic-2000 --devices k40x2 --placement "$T/pl/m-etf.json"
}

# same seed, same files
test_same_seed() {
expect 0 "" -- "$D" baseline --model synthetic-2000 --devices k40x2 --methods scotch,metis --seed 3 --out-dir "$T/a"
expect 0 "" -- "$D" baseline --model synthetic-2000 --devices k40x2 --methods scotch,metis --seed 3 --out-dir "$T/b"
cmp -s "$T/a/scotch.json" "$T/b/scotch.json" && ok || bad "scotch --seed 3: same seed, different placements"
cmp -s "$T/a/metis.json" "$T/b/metis.json" && ok || bad "metis --seed 3: same seed, different placements"
}

# a set without GPUs: the GPU methods say why
test_no_gpus() {
printf '{"format":"dplace-devices","version":1,"devices":[{"name":"cpu:0","kind":"cpu","peak_flops":1e12,"memory_bandwidth":1e11,"memory_bytes":1e12}]}' > "$T/cpu.json"
expect 0 "cannot apply: device set" -- "$D" baseline --model synthetic-500 --devices "$T/cpu.json" --methods gpu,mincut,metis,cpu
}

# baseline usage errors
test_baseline_usage() {
expect 2 "unknown method \"nope\"" -- "$D" baseline --model synthetic-500 --devices k40x2 --methods gpu,nope
expect 2 "--devices SPEC is required" -- "$D" baseline --model synthetic-500
expect 2 "--memory-fraction" -- "$D" baseline --model synthetic-500 --devices k40x2 --memory-fraction 1.5
expect 2 "unknown option" -- "$D" baseline --bogus
expect 2 "unknown model" -- "$D" baseline --model nope --devices k40x2
expect 2 "cannot create the directory" -- "$D" baseline --model synthetic-500 --devices k40x2 --out-dir "$T/no/such/dir"
}

# group: the figures of every method
test_group() {
for m in metis scotch fluid random; do
  expect 0 "groups     8;" -- "$D" group --model synthetic-2000 --method $m --groups 8
done
expect 0 "groups" -- "$D" group --model synthetic-2000 --method colocation
}

# group --json: the figures' fields
test_group_json() {
expect 0 '"cut_bytes"' -- "$D" group --model synthetic-2000 --method fluid --groups 4 --json --seed 2
for key in '"groups": 4' '"ops_per_group"' '"imbalance"' '"compute_total_s"'; do
  grep -q -- "$key" "$T/out" || bad "group --json lacks $key"
done
}

# METIS printf()s "***Cannot bisect a graph with 0 vertices!" on stdout when
# asked for many parts of a small graph: --json output must stay JSON
test_group_json_stays_json() {
"$D" group --model inception_v3 --method metis --groups 1000 --json >"$T/out" 2>"$T/err" && ok || bad "inception_v3: metis 1000 groups failed"
python3 -m json.tool "$T/out" >/dev/null && ok || bad "inception_v3, metis 1000 groups: group --json with METIS's complaints is not JSON"
grep -q "Cannot bisect" "$T/out" && bad "inception_v3, metis 1000 groups: METIS's complaints on stdout" || ok
}

# group -o writes the groups file
test_group_file() {
expect 0 "written" -- "$D" group --model synthetic-2000 --method metis --groups 8 -o "$T/g.json"
grep -q '"format": "dplace-groups"' "$T/g.json" && grep -q '"n_groups": 8' "$T/g.json" && ok || bad "group -o: metis 8 groups file"
}

# group usage errors: exit 2, naming the option
test_group_usage() {
expect 2 "--groups N is required" -- "$D" group --model synthetic-500 --method metis
expect 2 "unknown method" -- "$D" group --model synthetic-500 --method kmeans --groups 2
expect 2 "--method NAME is required" -- "$D" group --model synthetic-500 --groups 2
expect 2 "--groups must be" -- "$D" group --model synthetic-500 --method random --groups 0
expect 2 "cannot write" -- "$D" group --model synthetic-500 --method random --groups 2 -o "$T/no/dir/g.json"
}

# --batch is shared by every command that builds a zoo model
test_batch() {
expect 0 "rnnlm" -- "$D" baseline --model rnnlm --batch 16 --devices k40x2 --methods gpu,expert
expect 2 "--batch applies to --model only" -- "$D" baseline --graph data/tiny.json --batch 4 --devices k40x2
expect 2 "--batch must be in 1..65536" -- "$D" group --model rnnlm --batch 0 --method random --groups 4
expect 0 "groups" -- "$D" group --model rnnlm --batch 16 --method random --groups 4
}

test_run test_help
test_run test_baseline_rows
test_run test_baseline_json
test_run test_baseline_presets
test_run test_grouping_default
test_run test_group_option
test_run test_grouping_json
test_run test_grouping_option_errors
test_run test_forward_only
test_run test_forward_only_refused
test_run test_out_dir
test_run test_same_seed
test_run test_no_gpus
test_run test_baseline_usage
test_run test_group
test_run test_group_json
test_run test_group_json_stays_json
# m-etf and m-sct when no device has room for what is left under the
# memory caps (inception_v3 at batch 1 on two P100s cut to 0.6 of its
# one-GPU peak): the table, never an abort
test_list_placers_no_room() {
expect 0 "m-etf" -- "$D" baseline --model inception_v3 --batch 1 --devices data/p100x2_tight.json
grep -q "^m-sct" "$T/out" && ok || bad "m-sct missing from the table"
}

test_run test_group_file
test_run test_group_usage
test_run test_batch
test_run test_list_placers_no_room
finish test_cli_place
