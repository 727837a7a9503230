#!/bin/sh
# `dplace import` as a user sees it: an MSR graph and an expert split imported
# and simulated, exit codes, one-line errors naming the file and item, and no
# output file after an error.
# usage: test_cli_import.sh PATH_TO_DPLACE [CASE]   (run from tests/; DPLACE_SHARED
# names the shared folder holding datasets/msr-dnn-partitioning)
set -u
D="$1"
S="${DPLACE_SHARED:-../../shared}/datasets/msr-dnn-partitioning"
. "$(dirname "$0")/cli_lib.sh"

G="$S/throughput-inputs/LayerGraphs/bert24_training.json"

# --help names import, and import --help every option
test_help() {
expect 0 "import" -- "$D" --help
for flag in --from -o --graph --devices-out --time-unit --bandwidth --edge-bytes --name; do
  expect 0 "$flag" -- "$D" import --help
done
}

# bert24_training imported to a graph and a devices file
import_bert24() {
expect 0 "64 nodes (32 backward, 0 CPU-only), 110 edges" -- "$D" import --from msr "$G" -o "$T/g.json" --devices-out "$T/d.json"
}

# graph + devices, then simulated on one GPU: the sum of the accelerator latencies (217.8 ms)
test_import_and_simulate() {
import_bert24
grep -q '"format": "dplace-graph"' "$T/g.json" && ok || bad "import of bert24_training: graph file missing"
grep -q '"format": "dplace-devices"' "$T/d.json" && ok || bad "import of bert24_training: devices file missing"
expect 0 "step time  0.2178" -- "$D" simulate --graph "$T/g.json" --devices "$T/d.json" --placement gpu
}

# the expert split (an inference split: backward nodes inferred) as a placement that simulates
test_import_expert_split() {
import_bert24
expect 0 "32 listed, 32 placed with their colorClass; 6 accelerators used" -- \
  "$D" import --from msr-placement "$S/human-experts/bert24_inference_expert.json" --graph "$G" -o "$T/p.json"
grep -q '"format": "dplace-placement"' "$T/p.json" && ok || bad "bert24_inference_expert as a placement: placement file missing"
expect 0 "valid" -- "$D" simulate --graph "$T/g.json" --devices "$T/d.json" --placement "$T/p.json"
}

# options: time unit, edge bytes from cost, bandwidth, name
test_import_options() {
expect 0 "times in us" -- "$D" import --from msr "$G" -o "$T/g2.json" --time-unit us --edge-bytes cost --bandwidth 1e9 --name b24
grep -q '"name": "b24"' "$T/g2.json" && ok || bad "import --name b24 not applied"
}

# usage errors: exit 2
test_usage_errors() {
expect 2 "--from FORMAT is required" -- "$D" import "$G" -o "$T/x.json"
expect 2 'unknown --from format "onnx"' -- "$D" import --from onnx "$G" -o "$T/x.json"
expect 2 "-o FILE is required" -- "$D" import --from msr "$G"
expect 2 "needs --graph" -- "$D" import --from msr-placement "$S/human-experts/bert24_inference_expert.json" -o "$T/x.json"
expect 2 "--time-unit must be ms, us or s" -- "$D" import --from msr "$G" -o "$T/x.json" --time-unit min
expect 2 "--edge-bytes must be size or cost" -- "$D" import --from msr "$G" -o "$T/x.json" --edge-bytes fast
expect 2 'unknown option "--bogus"' -- "$D" import --from msr "$G" -o "$T/x.json" --bogus
absent "$T/x.json"
}

# a bad graph: exit 2, one line naming the file and the item, nothing written
test_bad_graph() {
printf '{"maxSizePerFPGA": 1e9, "maxFPGAs": 1, "maxCPUs": 1, "nodes": [{"id": 1, "supportedOnFpga": 1, "cpuLatency": -2, "fpgaLatency": 1, "isBackwardNode": 0}], "edges": []}' > "$T/bad.json"
expect 2 "$T/bad.json: nodes\[0\] (id 1): field \"cpuLatency\" must be >= 0, got -2" -- \
  "$D" import --from msr "$T/bad.json" -o "$T/x.json" --devices-out "$T/xd.json"
[ "$(wc -l < "$T/err")" = 1 ] && ok || bad "bad.json (cpuLatency -2): the error is not one line"
absent "$T/x.json"; absent "$T/xd.json"
printf '{"maxSizePerFPGA": 1e9, "maxFPGAs": 1, "maxCPUs": 1, "nodes": [{"id": 1, "supportedOnFpga": 1, "cpuLatency": 2, "fpgaLatency": 1, "isBackwardNode": 0}], "edges": [{"sourceId": 1, "destId": 4, "cost": 1}]}' > "$T/bad.json"
expect 2 "edges\[0\]: destId 4 is not the id of any node" -- "$D" import --from msr "$T/bad.json" -o "$T/x.json"
absent "$T/x.json"
expect 2 "no-such.json: cannot open" -- "$D" import --from msr no-such.json -o "$T/x.json"
}

# a split's graph of another format, a split for another graph or a
# machine too small for it: exit 2 saying so, nothing written
test_bad_split() {
expect 2 "this is a \"dplace-graph\" file" -- "$D" import --from msr-placement "$S/human-experts/bert24_inference_expert.json" --graph data/tiny.json -o "$T/x.json"
# a split for another graph
expect 2 "the split does not belong to this graph" -- \
  "$D" import --from msr-placement "$S/human-experts/gnmt_training_expert.json" --graph "$G" -o "$T/x.json"
expect 2 "maxFPGAs 5: the split needs more accelerators" -- \
  "$D" import --from msr-placement "$S/human-experts/bert24_inference_expert.json" --graph "$S/latency-inputs/LayerGraphs/bert24_inference.json" -o "$T/x.json"
absent "$T/x.json"
}

# an output into a missing folder: exit 2, no temporary file left
test_unwritable_output() {
expect 2 "cannot write\|cannot open\|No such file" -- "$D" import --from msr "$G" -o "$T/no/dir/g.json"
ls "$T" | grep -q '\.tmp' && bad "import -o into a missing folder: temporary file left behind" || ok
}

test_run test_help
test_run_datasets test_import_and_simulate msr-dnn-partitioning
test_run_datasets test_import_expert_split msr-dnn-partitioning
test_run_datasets test_import_options msr-dnn-partitioning
test_run_datasets test_usage_errors msr-dnn-partitioning
test_run_datasets test_bad_graph msr-dnn-partitioning
test_run_datasets test_bad_split msr-dnn-partitioning
test_run_datasets test_unwritable_output msr-dnn-partitioning
finish test_cli_import
