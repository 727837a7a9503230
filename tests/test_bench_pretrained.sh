#!/bin/sh
# bench_pretrained rl, the pretrained policy's policy-gradient training over
# many pairs, as bench/pretrain.py runs it: a run stopped and run again goes
# on from the policy it wrote (its log continuing, the policy loadable), and
# a list it cannot read is refused in one line, as data's and eval's inputs
# are; bench/pretrain.py relabel
# makes a policy of another feature set loadable and refuses a file that is
# not a policy; bench/pretrain.py curve reads a run's logs. Two small pairs
# keep it to seconds.
# usage: test_bench_pretrained.sh PATH_TO_BENCH_PRETRAINED PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
B="$1"
D="$2"
shift
. "$(dirname "$0")/cli_lib.sh"
P="../policies/pretrained.dpp"

# 3 updates, then on to 5: one log row per update, 0 to 4 in order; the
# greedy placements logged at the saves; the policy written loads
test_rl_resumes() {
printf '# two pairs\nsynthetic-600 k40x2\nsynthetic-600 p100x2\n' >"$T/pairs.txt"
expect 0 "" -- "$B" rl "$T/pairs.txt" "$P" "$T/p.dpp" 3 4 1e-4 1 0.5 2
expect 0 "" -- "$B" rl "$T/pairs.txt" "$P" "$T/p.dpp" 5 4 1e-4 1 0.5 2
[ "$(tail -n +2 "$T/p.dpp.csv" | cut -d, -f1 | tr '\n' ' ')" = "0 1 2 3 4 " ] && ok ||
  bad "update rows $(tail -n +2 "$T/p.dpp.csv" | cut -d, -f1 | tr '\n' ' '), expected 0 to 4"
[ "$(cut -d, -f1 "$T/p.dpp.greedy.csv" | uniq | tr '\n' ' ')" = "0 2 3 4 5 " ] && ok ||
  bad "greedy rows at $(cut -d, -f1 "$T/p.dpp.greedy.csv" | uniq | tr '\n' ' '), expected 0 2 3 4 5"
[ "$(grep -c 'synthetic-600@k40x2' "$T/p.dpp.greedy.csv")" = 5 ] && ok || bad "a pair missing from the greedy log"
expect 0 "best" -- "$D" optimize --model synthetic-600 --devices k40x2 --agent pretrained --init "$T/p.dpp" \
  --updates 0 --baselines none --set zero-shot=0
}

# a run stopped and started again ends where one that never stopped ends:
# the same policy bytes and log rows (Adam's moments come back from the
# state file), also when it stopped after logging updates it had not saved
# (the rows after the last save dropped, those updates run again); a state
# file that is not one is refused in one line
test_rl_resume_exact() {
printf '# two pairs\nsynthetic-600 k40x2\nsynthetic-600 p100x2\n' >"$T/pairs.txt"
expect 0 "" -- "$B" rl "$T/pairs.txt" "$P" "$T/a.dpp" 5 4 1e-4 1 0.5 2
expect 0 "" -- "$B" rl "$T/pairs.txt" "$P" "$T/b.dpp" 2 4 1e-4 1 0.5 2
echo "2,synthetic-600@k40x2,0.1,1.000,0.1,1.0,0.0" >>"$T/b.dpp.csv"
echo "3,synthetic-600@k40x2,0.1" >>"$T/b.dpp.greedy.csv"
expect 0 "" -- "$B" rl "$T/pairs.txt" "$P" "$T/b.dpp" 5 4 1e-4 1 0.5 2
cmp -s "$T/a.dpp" "$T/b.dpp" && ok || bad "the resumed run's policy differs from the uninterrupted run's"
cmp -s "$T/a.dpp.state" "$T/b.dpp.state" && ok || bad "the resumed run's state differs"
[ "$(cut -d, -f1-4 "$T/a.dpp.csv")" = "$(cut -d, -f1-4 "$T/b.dpp.csv")" ] && ok || bad "update logs differ"
cmp -s "$T/a.dpp.greedy.csv" "$T/b.dpp.greedy.csv" && ok || bad "greedy logs differ"
printf 'not a state\n' >"$T/b.dpp.state"
expect 2 "b.dpp.state: not a policy training state" -- "$B" rl "$T/pairs.txt" "$P" "$T/b.dpp" 6 4 1e-4 1 0.5 2
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "a bad state: $(wc -l <"$T/err") lines, expected one"
}

# a list that cannot be read, or that holds an unknown graph: one line, exit 2
test_rl_bad_list() {
expect 2 "nope.txt: cannot read" -- "$B" rl "$T/nope.txt" "$P" "$T/q.dpp" 2
printf 'no-such-model k40x2\n' >"$T/bad.txt"
expect 2 "no-such-model" -- "$B" rl "$T/bad.txt" "$P" "$T/q.dpp" 2
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "an unknown graph in the list: $(wc -l <"$T/err") lines, expected one"
absent "$T/q.dpp"
}

# relabel: a policy whose feature set field says 3 is refused by dplace,
# loads once relabelled (the same weights, the note given); a file that is
# not a policy, or none: one line, exit 2, nothing written
test_relabel() {
R="/usr/bin/python3 ../bench/pretrain.py relabel"
/usr/bin/python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[12]=3; open(sys.argv[2],'wb').write(b)" \
  "$P" "$T/old.dpp"
expect 2 "feature set 3" -- "$D" optimize --model synthetic-600 --devices k40x2 --agent pretrained --init "$T/old.dpp" \
  --updates 0 --baselines none
expect 0 "" -- $R "$T/old.dpp" "$T/new.dpp" --note "relabelled"
cmp -s "$T/new.dpp" "$P" && bad "the note was not written" || ok
expect 0 "best" -- "$D" optimize --model synthetic-600 --devices k40x2 --agent pretrained --init "$T/new.dpp" \
  --updates 0 --baselines none --set zero-shot=0
printf 'not a policy\n' >"$T/text.dpp"
expect 2 "text.dpp: not a dplace policy" -- $R "$T/text.dpp" "$T/x.dpp"
expect 2 "nope.dpp: cannot read it" -- $R "$T/nope.dpp" "$T/x.dpp"
absent "$T/x.dpp"
}

# curve: a run's diagnostics a tenth of its updates a row, its greedy log
# (written without a header) a measurement a row; a file that is not a
# curve, or none: one line, exit 2
test_curve() {
printf '# two pairs\nsynthetic-600 k40x2\nsynthetic-600 p100x2\n' >"$T/pairs.txt"
expect 0 "" -- "$B" rl "$T/pairs.txt" "$P" "$T/p.dpp" 4 4 1e-4 1 0.5 2
C="/usr/bin/python3 ../bench/pretrain.py curve"
expect 0 "| 0-0 |" -- $C "$T/p.dpp.csv"
expect 0 "| 4 | " -- $C "$T/p.dpp.csv"
[ "$($C "$T/p.dpp.csv" | grep -c '^| [0-9]')" = 7 ] && ok || bad "expected 4 update rows and 3 greedy rows"
expect 2 "p.dpp.greedy.csv: row 2: not an rl curve" -- $C "$T/p.dpp.greedy.csv"
expect 2 "nope.csv: cannot read it" -- $C "$T/nope.csv"
}

# data and eval refuse what they cannot read in one line, exit 2: a graph,
# a device set, a placement, a policy
test_bad_input() {
expect 2 "no-such-model" -- "$B" eval no-such-model k40x2
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "eval of an unknown graph: $(wc -l <"$T/err") lines, expected one"
expect 2 "nope-devs" -- "$B" eval rnnlm nope-devs
expect 2 "nope.dpp: cannot open" -- "$B" eval rnnlm k40x2 "$T/nope.dpp"
expect 2 "nope.json: cannot open" -- "$B" data rnnlm k40x2 "$T/nope.json" "$T/d.bin"
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "data without its placement: $(wc -l <"$T/err") lines, expected one"
absent "$T/d.bin"
expect 2 "no-such-model" -- "$B" data no-such-model k40x2 "$T/nope.json" "$T/d.bin"
}

test_run test_rl_resumes
test_run test_rl_resume_exact
test_run test_rl_bad_list
test_run test_bad_input
test_run test_relabel
test_run test_curve
finish test_bench_pretrained
