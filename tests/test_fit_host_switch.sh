#!/bin/sh
# bench/fit_host_switch.py, the host's switch cost fitted to kept real-GPU
# measurements: fitted on the first H200 run's kept medians and judged on
# the second run's check folder (both readers), it finds a switch cost
# that lowers the fitted rows' error and reports both folders with and
# without it; bad input is one line naming the item, exit 2. Nothing is
# timed.
# usage: test_fit_host_switch.sh PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
D="$1"
. "$(dirname "$0")/cli_lib.sh"
S="../bench/fit_host_switch.py"
DEV="../bench/devices/h200_vm16.json"
K1="../bench/measured/h200-8f480c0"
K2="../bench/measured/h200-2026-12-04"

# a fit and a judged folder: the fitted value between 0 and --hi, the fit's
# error lower with it, four rows (two folders, without and with it)
test_fit_and_judge() {
expect 0 "" -- /usr/bin/python3 "$S" --devices "$DEV" --fit "$K1" --judge "$K2" --tol 2e-4 --dplace "$D" --json
/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
assert 0 < r["switch_s"] < 0.005, r["switch_s"]
rows = {(f["role"], f["switch_s"] > 0): f for f in r["folders"]}
assert len(r["folders"]) == 4 and rows[("fit", False)]["rows"] == 32 and rows[("judge", False)]["rows"] == 128
assert rows[("fit", True)]["mape_pct"] < rows[("fit", False)]["mape_pct"], rows' "$T/out" && ok ||
  bad "--json: not a fit that lowers the fitted rows' error, with four folder rows"
}

# bad input: no folder, a devices file without a CPU, a bad range: one line, exit 2
test_bad_input() {
expect 2 "$T/none/measured.csv: cannot read" -- /usr/bin/python3 "$S" --devices "$DEV" --fit "$T/none" --dplace "$D"
printf '%s' '{"format":"dplace-devices","version":2,"name":"g","devices":[{"name":"gpu:0","kind":"gpu",
"peak_flops":1e12,"memory_bandwidth":1e11,"memory_bytes":1000000000}],"links":[]}' >"$T/gpu.json"
expect 2 "gpu.json: no CPU device" -- /usr/bin/python3 "$S" --devices "$T/gpu.json" --fit "$K1" --dplace "$D"
expect 2 "^fit_host_switch: --hi must be in (0, 1\] seconds" -- /usr/bin/python3 "$S" --devices "$DEV" --fit "$K1" \
  --hi 0 --dplace "$D"
}

test_run test_fit_and_judge
test_run test_bad_input
finish test_fit_host_switch
