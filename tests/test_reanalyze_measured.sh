#!/bin/sh
# bench/reanalyze_measured.py, the kept measurements re-simulated: on the kept
# H200 folder (bench/measured/h200-8f480c0) it prints a row per measured
# placement and the summary, passes simulate arguments through, and refuses a
# missing or malformed folder in one line naming the file. Nothing is timed;
# 32 simulations of two small graphs per run keep it to seconds.
# usage: test_reanalyze_measured.sh PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
D="$1"
. "$(dirname "$0")/cli_lib.sh"
S="../bench/reanalyze_measured.py"
K="../bench/measured/h200-8f480c0"
ROW='^| \(resnet18_b32\|transformer_b32\) | [^|]* | [0-9.e-]* ([0-9.e-]*-[0-9.e-]*) | [0-9.e-]* | [+-][0-9.]* |$'

# the kept folder: 32 rows, every one simulated, and the summary; --json the same rows
test_kept_folder() {
expect 0 "^summary: 32 of 32 rows simulated; MAPE [0-9.]*%, Spearman [+-][0-9.]* over all" -- \
  /usr/bin/python3 "$S" "$K" --dplace "$D"
n=$(grep -c "$ROW" "$T/out")
[ "$n" = 32 ] && ok || bad "$n placement rows, expected 32"
grep -q '^| all | 32 | 32 | [0-9.]* | [+-][0-9.]* |$' "$T/out" && ok || bad "no summary row over all 32"
expect 0 "" -- /usr/bin/python3 "$S" "$K" --dplace "$D" --json
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert len(d["rows"]) == 32 and all(r["simulated_s"] > 0 for r in d["rows"])
assert [s["set"] for s in d["summary"]] == ["resnet18_b32", "transformer_b32", "all"]' "$T/out" && ok ||
  bad "--json: not 32 simulated rows and the three summary sets"
}

# simulate arguments pass through (DPLACE_BIN picks the binary); one dplace refuses is one line, exit 1
test_passthrough() {
expect 0 "simulate arguments: --steps 3 --warmup 1" -- env DPLACE_BIN="$D" /usr/bin/python3 "$S" "$K" \
  --sim-arg=--steps --sim-arg=3 --sim-args "--warmup 1"
expect 1 'unknown option "--no-such-flag"' -- /usr/bin/python3 "$S" "$K" --dplace "$D" -- --no-such-flag
expect 2 "given by this script" -- /usr/bin/python3 "$S" "$K" --dplace "$D" --sim-args "--devices k40x2"
}

# a missing folder, CSV, column or placement file: one line naming it, exit 2
test_bad_folder() {
expect 2 "$T/none: no such folder" -- /usr/bin/python3 "$S" "$T/none" --dplace "$D"
cp -r "$K" "$T/k"
rm "$T/k/measured.csv"
expect 2 "$T/k/measured.csv: cannot read" -- /usr/bin/python3 "$S" "$T/k" --dplace "$D"
printf 'model,placement,measured_s\nresnet18_b32,x,0.1\n' >"$T/k/measured.csv"
expect 2 "$T/k/measured.csv: line 1: the header lacks min_s, max_s, placement_file" -- \
  /usr/bin/python3 "$S" "$T/k" --dplace "$D"
sed 's/^resnet18_b32,random 14 (CPU share 0.5),0.1418,/resnet18_b32,random 14 (CPU share 0.5),-1,/' \
  "$K/measured.csv" >"$T/k/measured.csv"
expect 2 "$T/k/measured.csv: line 3: measured_s \"-1\"" -- /usr/bin/python3 "$S" "$T/k" --dplace "$D"
cp "$K/measured.csv" "$T/k/measured.csv"
rm "$T/k/resnet18_b32/p29.json"
expect 2 "line 3: no file $T/k/resnet18_b32/p29.json" -- /usr/bin/python3 "$S" "$T/k" --dplace "$D"
}

test_run test_kept_folder
test_run test_passthrough
test_run test_bad_folder
finish test_reanalyze_measured
