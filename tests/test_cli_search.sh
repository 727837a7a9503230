#!/bin/sh
# dplace optimize --agent search as a user sees it: every output, the same
# seed and threads giving the same placement, checkpoint then --resume equal
# to the run in one go, --init-placement, --search-after a learned agent,
# and one-line errors (exit 2, nothing written) for bad input. Small graphs
# keep it to seconds.
# usage: test_cli_search.sh PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
D="$1"
. "$(dirname "$0")/cli_lib.sh"
G="--model synthetic-600 --devices k40x2"

# optimize --help names the search's options; --set help its settings
test_help() {
for flag in search --init-placement --search-after; do
  expect 0 "$flag" -- "$D" optimize --help
done
expect 0 "moves=32" -- "$D" optimize --agent search --set help
}

# a run with every output
# shellcheck disable=SC2086
test_outputs() {
expect 0 "best baseline" -- "$D" optimize $G --agent search --updates 6 --seed 3 -o "$T/best.json" --log "$T/log.csv" \
  --plot "$T/curve.svg" --trace "$T/trace.json" --checkpoint "$T/ck" --quiet
grep -q '^search  *[0-9.]* s' "$T/out" && ok || bad "no search row in the summary"
grep -q '^lower bound' "$T/out" && ok || bad "no lower bound in the summary"
grep -q '^start ' "$T/out" && ok || bad "the summary names no start"
grep -q '"format": "dplace-placement"' "$T/best.json" && ok || bad "-o is not a placement file"
rows=$(($(wc -l <"$T/log.csv") - 1))
[ "$rows" -ge 30 ] && [ "$rows" -le 192 ] && ok || bad "log should have one row per simulated move (6 x 32 at most), has $rows"
grep -q '<svg' "$T/curve.svg" && ok || bad "--plot wrote no SVG"
grep -q 'traceEvents' "$T/trace.json" && ok || bad "--trace wrote no trace"
[ -s "$T/ck" ] && ok || bad "no checkpoint"
best=$(sed -n 's/^search  *\([0-9.]*\) s.*/\1/p' "$T/out")
expect 0 "$best" -- "$D" simulate $G --placement "$T/best.json"
}

# --json: the best, the start, what found the best
# shellcheck disable=SC2086
test_json() {
expect 0 '"best_step_time_s"' -- "$D" optimize $G --agent search --updates 2 --json --baselines gpu,m-etf
grep -q '"search_start": "m-etf"\|"search_start": "gpu"' "$T/out" && ok || bad "--json names no start"
grep -q '"best_by": "\(start\|search\)"' "$T/out" && ok || bad "--json does not say what found the best"
}

# the same seed and threads, the same placement
# shellcheck disable=SC2086
test_deterministic() {
"$D" optimize $G --agent search --updates 8 --threads 2 --seed 4 -o "$T/a.json" --quiet >/dev/null 2>&1
"$D" optimize $G --agent search --updates 8 --threads 2 --seed 4 -o "$T/b.json" --quiet >/dev/null 2>&1
cmp -s "$T/a.json" "$T/b.json" && ok || bad "search, seed 4, 2 threads: the same seed and threads gave different placements"
}

# checkpoint + resume = the run in one go
# shellcheck disable=SC2086
test_resume() {
"$D" optimize $G --agent search --updates 10 --threads 2 --seed 5 --log "$T/a.csv" -o "$T/a.json" --quiet >/dev/null 2>&1
"$D" optimize $G --agent search --updates 4 --threads 2 --seed 5 --log "$T/b.csv" -o "$T/b.json" \
  --checkpoint "$T/b.ck" --checkpoint-every 3 --quiet >/dev/null 2>&1
expect 0 "" -- "$D" optimize $G --agent search --updates 10 --threads 2 --seed 5 --log "$T/b.csv" -o "$T/b.json" \
  --checkpoint "$T/b.ck" --resume "$T/b.ck" --quiet
cut -d, -f1-8 "$T/a.csv" >"$T/a.cut"; cut -d, -f1-8 "$T/b.csv" >"$T/b.cut"
cmp -s "$T/a.cut" "$T/b.cut" && ok || bad "search: resumed log differs from the uninterrupted one"
cmp -s "$T/a.json" "$T/b.json" && ok || bad "search: resumed best placement differs"
}

# a checkpoint of another seed or other search settings is refused, naming
# the difference; a file that is none is refused as such
# shellcheck disable=SC2086
test_resume_refused() {
"$D" optimize $G --agent search --updates 4 --threads 2 --seed 5 -o "$T/a.json" \
  --checkpoint "$T/b.ck" --checkpoint-every 3 --quiet >/dev/null 2>&1
expect 2 "seed" -- "$D" optimize $G --agent search --updates 12 --threads 2 --seed 6 --resume "$T/b.ck" --quiet
expect 2 "made with the search settings" -- "$D" optimize $G --agent search --updates 12 --threads 2 --seed 5 \
  --set t0=0.01 --resume "$T/b.ck" --quiet
expect 2 "not a dplace search checkpoint" -- "$D" optimize $G --agent search --resume "$T/a.json" --quiet
}

# SIGINT: exit 130 after the step in flight, the checkpoint and best placement written, resumable
# shellcheck disable=SC2086
test_sigint() {
"$D" optimize $G --agent search --updates 1000000 --threads 2 --checkpoint "$T/int.ck" -o "$T/int.json" --quiet \
  >/dev/null 2>"$T/int.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
[ $? = 130 ] && ok || bad "search, SIGINT: should exit 130"
grep -q "resume with --resume" "$T/int.err" && ok || bad "search, SIGINT: no message saying how to resume"
expect 0 "step time" -- "$D" simulate $G --placement "$T/int.json"
expect 0 "" -- "$D" optimize $G --agent search --updates 1 --threads 2 --checkpoint "$T/int.ck" --resume "$T/int.ck" --quiet
}

# a start from a file
# shellcheck disable=SC2086
test_init_placement() {
"$D" optimize $G --agent search --updates 6 -o "$T/first.json" --quiet >/dev/null 2>&1
expect 0 "start      --init-placement" -- "$D" optimize $G --agent search --updates 2 --init-placement "$T/first.json" --quiet
}

# a learned agent's best refined by the search (--search-after), its log beside --log
# shellcheck disable=SC2086
test_search_after() {
expect 0 "then searched" -- "$D" optimize $G --agent colocrl --set hidden=8 --set attn-dim=8 --set dev-emb=4 \
  --updates 2 --search-after 2s -o "$T/ref.json" --log "$T/ref.csv" --quiet
[ -s "$T/ref.search.csv" ] && ok || bad "colocrl --search-after 2s: no search log beside --log"
expect 0 "step time" -- "$D" simulate $G --placement "$T/ref.json"
}

# with a search after training, --json's best_* is the job's answer: the
# placement written with -o; the training's own best is train_best_*; the
# curve shows both phases and labels the job's best as the summary does
# shellcheck disable=SC2086
test_search_after_best() {
"$D" optimize --model rnnlm --devices k40x2 --agent post --set batch=4 --updates 2 --search-after 2s --baselines none \
  -o "$T/sa.json" --plot "$T/sa.svg" --json --quiet >"$T/sa.out" 2>"$T/sa.err" && ok || bad "post + search-after: $(cat "$T/sa.err")"
"$D" simulate --model rnnlm --devices k40x2 --placement "$T/sa.json" --json >"$T/sa.sim" 2>&1 || bad "simulate -o's placement"
/usr/bin/python3 - "$T/sa.out" "$T/sa.sim" "$T/sa.svg" <<'PY' && ok || bad "search-after: best_* is not the written placement's"
import json, sys
j, sim, svg = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
assert j["best_phase"] == "search-after", j["best_phase"]
assert abs(j["best_step_time_s"] - sim["step_time_s"]) <= 1e-9 * sim["step_time_s"], (j["best_step_time_s"], sim)
assert j["best_step_time_s"] <= j["train_best_step_time_s"], j
assert j["search_after_step_time_s"] == j["best_step_time_s"], j
label = f"{j['best_step_time_s']:.6f} s"
assert f"best {label}" in svg and f"best so far: {label}" in svg, label
assert "search after" in svg, "no marker where the search began"
PY
}

# bad input: one line, exit 2, nothing written
# shellcheck disable=SC2086
test_bad_input() {
printf '{"format": "dplace-placement", "version": 1, "devices": ["cpu:0"], "placement": [0, ' >"$T/broken.json"
expect 2 "broken.json" -- "$D" optimize $G --agent search --init-placement "$T/broken.json" -o "$T/no.json" --log "$T/no.csv"
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "a malformed --init-placement should give one line"
absent "$T/no.json"
absent "$T/no.csv"
printf '{"format": "dplace-placement", "version": 1, "devices": ["cpu:0", "gpu:0"], "placement": [1, 1, 1]}\n' >"$T/short.json"
expect 2 "short.json" -- "$D" optimize $G --agent search --init-placement "$T/short.json" -o "$T/no.json"
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "a placement of the wrong length should give one line"
absent "$T/no.json"
expect 2 "unknown setting" -- "$D" optimize $G --agent search --set nope=1
expect 2 "moves" -- "$D" optimize $G --agent search --set moves=0
expect 2 "a start placement is the search's" -- "$D" optimize $G --agent hp --init-placement "$T/short.json"
expect 2 "setting grouper is a learned agent's" -- "$D" optimize $G --agent search --grouper metis
expect 2 "setting zero-shot is the pretrained placer's" -- "$D" optimize $G --agent search --set zero-shot=4
expect 2 "the search takes no init, search-after or measure" -- "$D" optimize $G --agent search --search-after 10s
}

test_run test_help
test_run test_outputs
test_run test_json
test_run test_deterministic
test_run test_resume
test_run test_resume_refused
test_run test_sigint
test_run test_init_placement
test_run test_search_after
test_run test_search_after_best
test_run test_bad_input
finish test_cli_search
