#!/bin/sh
# dplace optimize as a user sees it: outputs (placement, log, plot, trace,
# checkpoint, JSON), checkpoint then --resume equal to the run that was not
# interrupted, SIGINT and SIGKILL leave a usable checkpoint and placement,
# --measure with commands that fail, hang or print garbage, and one-line
# errors for bad input. Small networks keep it fast.
# usage: test_cli_optimize.sh PATH_TO_DPLACE [CASE]   (run from tests/)
set -u
D="$1"
. "$(dirname "$0")/cli_lib.sh"
M="$(cd "$(dirname "$0")" && pwd)/data/measure"
SMALL="--set hidden=16 --set attn-dim=16 --set dev-emb=8 --set grouper-hidden=16 --set type-dim=4 --groups 8"
G="--model synthetic-600 --devices k40x2"

# optimize --help names every option and preset; --set help the settings
test_help() {
expect 0 "optimize" -- "$D" --help
for flag in --agent --grouper --placer --updates --placements --time --checkpoint --resume --init --measure --plot --log --trace \
  --mpi --controllers hp colocrl eagle eagle-ppo-ce post gcn ppo-ce --mean mars mars-nopretrain seq2seq-seg; do
  expect 0 "$flag" -- "$D" optimize --help
done
expect 0 "lr=0.001" -- "$D" optimize --set help
expect 0 "Adam learning rate" -- "$D" optimize --set help
}

# --set help: the settings by component group, the papers' values among
# them (Mars's gcn-layers), none experimental, none of the search's
test_set_help() {
expect 0 "elite walks:" -- "$D" optimize --set help
grep -q '^  gcn-layers=3 ' "$T/out" && ok || bad "--set help leaves out Mars's gcn-layers"
grep -q '^grouper:' "$T/out" && grep -q '^placer:' "$T/out" && ok || bad "--set help is not grouped by component"
grep -q 'elite-keep=' "$T/out" && bad "--set help lists the experimental elite-keep" || ok
grep -q 'moves=32' "$T/out" && bad "--set help of a learned agent lists the search's settings" || ok
}

# --set help=all adds the experimental settings, marked
test_set_help_all() {
expect 0 "elite walks:" -- "$D" optimize --set help
keys=$(grep -c '^  [a-z-]*=' "$T/out")
expect 0 "(experimental)" -- "$D" optimize --set help=all
all=$(grep -c '^  [a-z-]*=' "$T/out")
[ "$all" -gt "$keys" ] && grep -q 'elite-keep=no' "$T/out" && ok || bad "--set help=all does not list every setting"
}

# --set help shows the values set, wherever it stands among the --set's
test_set_help_shows_values_set() {
expect 0 "lr=0.5" -- "$D" optimize --set help=all --set lr=0.5
expect 0 "lr=0.5" -- "$D" optimize --set lr=0.5 --set help
}

# --set help of the search, of --search-after and of dplace: the search's settings
test_set_help_search() {
expect 0 "moves=32" -- "$D" optimize --agent search --set help
grep -q 'lr=' "$T/out" && bad "--set help of the search lists an agent's settings" || ok
expect 0 "moves=32" -- "$D" optimize --agent hp --search-after 30s --set help
expect 0 "search-after=180s" -- "$D" optimize --agent dplace --set help
}

# the old spellings of renamed options and settings still work, with one
# line saying the new name
# shellcheck disable=SC2086
test_renamed() {
expect 0 "is now --placements" -- "$D" optimize $G $SMALL --samples 4 --baselines none
expect 0 "is now --search-after" -- "$D" optimize $G $SMALL --updates 1 --refine 1s --baselines none
expect 0 "is now batch" -- "$D" optimize $G $SMALL --updates 1 --set samples=2 --baselines none
grep -q "2 samples per update" "$T/out" && ok || bad "--set samples=2 did not set batch"
expect 0 "" -- "$D" optimize --help
grep -q -- "--samples\|--refine" "$T/out" && bad "--help lists a renamed option" || ok
}

# a run with every output
# shellcheck disable=SC2086
test_outputs() {
expect 0 "best baseline" -- "$D" optimize $G $SMALL --updates 6 --seed 3 -o "$T/best.json" --log "$T/log.csv" \
  --plot "$T/curve.svg" --trace "$T/trace.json" --checkpoint "$T/ck" --quiet
grep -q 'policy: mean sampled step time .* over the first tenth of the updates' "$T/out" && ok || bad "hp, 6 updates: no learning summary"
grep -q '"format": "dplace-placement"' "$T/best.json" && ok || bad "-o is not a placement file"
[ "$(wc -l <"$T/log.csv")" = 25 ] && ok || bad "log should have a header and 24 rows, has $(wc -l <"$T/log.csv") lines"
head -1 "$T/log.csv" | grep -q '^update,sample,step_time_s,valid,reason,reward,baseline,best_s,wall_s$' && ok || bad "--log: header"
grep -q '<svg' "$T/curve.svg" && ok || bad "--plot wrote no SVG"
grep -q 'mean per update' "$T/curve.svg" && ok || bad "--plot draws no mean per update"
[ "$(wc -l <"$T/log.updates.csv")" = 7 ] && ok || bad "the updates log should have a header and 6 rows"
head -1 "$T/log.updates.csv" | grep -q '^update,samples,valid,mean_s,median_s,entropy_encoder,entropy_placer,adv_mean,adv_std,grad_norm_encoder,grad_norm_placer,kl,cache_hits,best_s,wall_s,elite_s,elite_sims,greedy_s$' && ok || bad "--log: the updates log's header"
grep -q 'traceEvents' "$T/trace.json" && ok || bad "--trace wrote no trace"
[ -s "$T/ck" ] && ok || bad "--checkpoint: no checkpoint"
expect 0 "step time" -- "$D" simulate $G --placement "$T/best.json"
}

# --json: the best, the single GPU's time, what found the best
# shellcheck disable=SC2086
test_json() {
expect 0 '"best_step_time_s"' -- "$D" optimize $G $SMALL --updates 2 --json --baselines gpu,m-etf
grep -q '"single_gpu_s"' "$T/out" && ok || bad "--json lacks single_gpu_s"
grep -q '"best_by": "\(sample\|walk\|greedy\)"' "$T/out" && ok || bad "--json does not say what found the best"
}

# the final policy's greedy placement: --updates 0 gives it alone (after
# any preparation), as the best
# shellcheck disable=SC2086
test_greedy() {
expect 0 "final policy, greedy" -- "$D" optimize $G $SMALL --updates 0 --set train=no -o "$T/g.json" --log "$T/g.csv"
grep -q "best: the final policy's greedy placement, after 0 updates (0 placements)" "$T/out" && ok || bad "the best is not the greedy placement"
grep -q '"format": "dplace-placement"' "$T/g.json" && ok || bad "--updates 0 wrote no placement"
[ "$(wc -l <"$T/g.csv")" = 1 ] && ok || bad "the log of --updates 0 should hold only its header"
}

# --json of the final greedy placement: the best with --updates 0, its time
# after the last update
# shellcheck disable=SC2086
test_greedy_json() {
expect 0 '"best_is_final_greedy": true' -- "$D" optimize $G $SMALL --updates 0 --json
grep -q '"best_by": "greedy"' "$T/out" && ok || bad "--updates 0: the best is not said to be the greedy placement's"
# shellcheck disable=SC2086
expect 0 '"final_greedy_s": [0-9]' -- "$D" optimize $G $SMALL --updates 2 --json
}

# --updates 0 with --placements, or with the search: refused
# shellcheck disable=SC2086
test_updates_zero_refused() {
expect 2 "one budget of updates and of placements" -- "$D" optimize $G $SMALL --updates 0 --placements 5
expect 2 "needs at least one update" -- "$D" optimize $G --agent search --updates 0
}

# the same seed, the same run; checkpoint + resume = the run in one go
# shellcheck disable=SC2086
test_resume() {
"$D" optimize $G $SMALL --agent colocrl --updates 8 --seed 5 --log "$T/a.csv" -o "$T/a.json" --quiet >/dev/null 2>&1
# shellcheck disable=SC2086
"$D" optimize $G $SMALL --agent colocrl --updates 3 --seed 5 --log "$T/b.csv" -o "$T/b.json" --checkpoint "$T/b.ck" \
  --checkpoint-every 2 --quiet >/dev/null 2>&1
# shellcheck disable=SC2086
expect 0 "" -- "$D" optimize $G $SMALL --agent colocrl --updates 8 --seed 5 --log "$T/b.csv" -o "$T/b.json" \
  --checkpoint "$T/b.ck" --resume "$T/b.ck" --quiet
cut -d, -f1-8 "$T/a.csv" >"$T/a.cut"; cut -d, -f1-8 "$T/b.csv" >"$T/b.cut"
cmp -s "$T/a.cut" "$T/b.cut" && ok || bad "colocrl: resumed log differs from the uninterrupted one"
cmp -s "$T/a.json" "$T/b.json" && ok || bad "colocrl: resumed best placement differs"
cut -d, -f1-14 "$T/a.updates.csv" >"$T/a.ucut"; cut -d, -f1-14 "$T/b.updates.csv" >"$T/b.ucut"
cmp -s "$T/a.ucut" "$T/b.ucut" && ok || bad "colocrl: resumed updates log differs from the uninterrupted one"
}

# a checkpoint of another run is refused, naming the difference; a file
# that is none is refused as such
# shellcheck disable=SC2086
test_resume_refused() {
"$D" optimize $G $SMALL --agent colocrl --updates 3 --seed 5 -o "$T/a.json" --checkpoint "$T/b.ck" \
  --checkpoint-every 2 --quiet >/dev/null 2>&1
# shellcheck disable=SC2086
expect 2 "seed=" -- "$D" optimize $G $SMALL --agent colocrl --updates 9 --seed 6 --resume "$T/b.ck" --quiet
# shellcheck disable=SC2086
expect 2 "not a dplace agent checkpoint" -- "$D" optimize $G $SMALL --resume "$T/a.json" --quiet
}

# checkpoints of the versions before this one (tests/data: written by the
# version-5 agent and version-2 search)
H="$(cd "$(dirname "$0")" && pwd)/data"
OLD="--set hidden=8 --set attn-dim=8 --set dev-emb=4 --set grouper-hidden=8 --set type-dim=4 --groups 8"

# --resume refuses the old agent's checkpoint with its version, writing nothing
# shellcheck disable=SC2086
test_old_agent_checkpoint_refused() {
expect 2 "agent checkpoint version 5; this dplace reads 7" -- "$D" optimize $G $OLD --agent hp --updates 3 \
  --resume "$H/agent_v5.ck" -o "$T/old.json" --quiet
absent "$T/old.json"
}

# --init still takes the old agent's networks (its tensors by name)
# shellcheck disable=SC2086
test_old_agent_checkpoint_init() {
expect 0 "networks from --init" -- "$D" optimize $G $OLD --agent hp --updates 1 --baselines none --init "$H/agent_v5.ck"
}

# --resume refuses the old search's checkpoint with its version
test_old_search_checkpoint_refused() {
expect 2 "search checkpoint version 2; this dplace reads 4" -- "$D" optimize --model synthetic-400 --devices k40x2 \
  --agent search --updates 3 --resume "$H/search_v2.ck" --quiet
}

# the PPO presets too (the elites and cross-entropy updates are in the checkpoint),
# with every output
test_resume_ppo() {
for agent in eagle-ppo-ce post; do
  # shellcheck disable=SC2086
  "$D" optimize $G $SMALL --agent $agent --set ce-every=20 --updates 7 --seed 5 --log "$T/pa.csv" -o "$T/pa.json" \
    --plot "$T/pa.svg" --quiet >/dev/null 2>&1
  # shellcheck disable=SC2086
  "$D" optimize $G $SMALL --agent $agent --set ce-every=20 --updates 3 --seed 5 --log "$T/pb.csv" -o "$T/pb.json" \
    --checkpoint "$T/pb.ck" --quiet >/dev/null 2>&1
  # shellcheck disable=SC2086
  expect 0 "" -- "$D" optimize $G $SMALL --agent $agent --set ce-every=20 --updates 7 --seed 5 --log "$T/pb.csv" \
    -o "$T/pb.json" --checkpoint "$T/pb.ck" --resume "$T/pb.ck" --quiet
  cut -d, -f1-8 "$T/pa.csv" >"$T/pa.cut"; cut -d, -f1-8 "$T/pb.csv" >"$T/pb.cut"
  [ "$(wc -l <"$T/pa.cut")" = 71 ] && ok || bad "$agent: log should have 70 rows"
  cmp -s "$T/pa.cut" "$T/pb.cut" && ok || bad "$agent: resumed log differs from the uninterrupted one"
  cmp -s "$T/pa.json" "$T/pb.json" && ok || bad "$agent: resumed best placement differs"
  grep -q '<svg' "$T/pa.svg" && ok || bad "$agent: --plot wrote no SVG"
done
}

# a refused combination names the setting
# shellcheck disable=SC2086
test_refused_combination() {
expect 2 "link" -- "$D" optimize $G --agent eagle --grouper metis --updates 1
}

# SIGINT: stops after the update in flight, checkpoint written, exit 130
# shellcheck disable=SC2086
test_sigint() {
"$D" optimize $G $SMALL --updates 100000 --checkpoint "$T/int.ck" -o "$T/int.json" --quiet >/dev/null 2>"$T/int.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
[ $? = 130 ] && ok || bad "hp, SIGINT: should exit 130"
grep -q "resume with --resume" "$T/int.err" && ok || bad "hp, SIGINT: no message saying how to resume"
# shellcheck disable=SC2086
expect 0 "" -- "$D" optimize $G $SMALL --updates 1 --checkpoint "$T/int.ck" --resume "$T/int.ck" --quiet
}

# SIGKILL: the last checkpoint and best placement stay whole
# shellcheck disable=SC2086
test_sigkill() {
"$D" optimize $G $SMALL --updates 100000 --checkpoint "$T/kill.ck" --checkpoint-every 1 -o "$T/kill.json" --quiet \
  >/dev/null 2>&1 &
pid=$!
sleep 2
kill -KILL $pid
wait $pid 2>/dev/null
expect 0 "step time" -- "$D" simulate $G --placement "$T/kill.json"
# shellcheck disable=SC2086
expect 0 "" -- "$D" optimize $G $SMALL --updates 1 --checkpoint "$T/kill.ck" --resume "$T/kill.ck" --quiet
}

# --measure: the command's time in the log
# shellcheck disable=SC2086
test_measure() {
expect 0 "learned" -- "$D" optimize $G $SMALL --updates 2 --measure "$M/good.sh \"\$1\"" --log "$T/m.csv" --baselines none
grep -q ',0.125,1,' "$T/m.csv" && ok || bad "good.sh: measured time not in the log"
}

# --measure with failing, hanging and garbage commands: failed samples are
# logged with their reason, the run goes on
# shellcheck disable=SC2086
test_measure_failures() {
for cmd in fail.sh garbage.sh hang.sh; do
  # shellcheck disable=SC2086
  expect 0 "no valid placement" -- "$D" optimize $G $SMALL --updates 1 --measure "$M/$cmd" --measure-timeout 0.5 \
    --log "$T/m.csv" --baselines none
  grep -q 'measure failed' "$T/m.csv" && ok || bad "$cmd: failure reason not logged"
done
}

# Mars (encoder=gcn): pre-training then training with a checkpoint; its
# networks start a run on another graph (--init); a file of other networks
# or --init with --resume is refused. One test: --init and the refusals
# read the checkpoint of the pre-training run, the most expensive run of
# this file, which tests of their own would repeat.
MARS="--agent mars --set gcn-hidden=8 --set hidden=8 --set attn-dim=8 --set dev-emb=4 --set seg-len=64 --set pretrain-iters=4"
# shellcheck disable=SC2086
test_mars() {
expect 0 "pre-trained 4 Deep Graph Infomax iterations" -- "$D" optimize $G $MARS --updates 1 --checkpoint "$T/mars.ck" \
  --baselines none
# shellcheck disable=SC2086
expect 0 "encoder gcn, placer seq2seq-seg" -- "$D" optimize --model synthetic-300 --devices k40x2 $MARS --updates 1 \
  --init "$T/mars.ck" --baselines none
grep -q "pre-trained" "$T/out" && bad "mars --init on synthetic-300: pre-trained again" || ok
# shellcheck disable=SC2086
expect 2 "tensor placer.enc has" -- "$D" optimize $G $MARS --set hidden=12 --updates 1 --init "$T/mars.ck"
# shellcheck disable=SC2086
expect 2 "give one of them" -- "$D" optimize $G $MARS --updates 1 --init "$T/mars.ck" --resume "$T/mars.ck"
}

# Mars's settings that cannot work are refused, naming why
test_mars_settings_refused() {
expect 2 "multiple of txl-heads" -- "$D" optimize $G --agent mars-trfxl --set txl-heads=3
expect 2 "attention" -- "$D" optimize --model synthetic-12000 --devices k40x2 --agent mars-seq2seq --set gcn-hidden=8 \
  --set hidden=8 --set attn-dim=8 --set dev-emb=4 --baselines none
}

# bad input: one line, exit 2, nothing written
# shellcheck disable=SC2086
test_bad_input() {
expect 2 'agent "nope": no such agent' -- "$D" optimize $G --agent nope -o "$T/no.json"
absent "$T/no.json"
expect 2 "grouper" -- "$D" optimize $G --grouper bogus
expect 2 "lr" -- "$D" optimize $G --set lr=-1
expect 2 "unknown setting" -- "$D" optimize $G --set nope=1
expect 2 "--time" -- "$D" optimize $G --time soon
expect 2 "--devices" -- "$D" optimize --model synthetic-600
expect 2 "one budget of updates and of placements" -- "$D" optimize $G --updates 3 --placements 4
expect 2 "noise: a log-normal sigma in 0..5, not 7" -- "$D" optimize $G --noise 7
expect 2 "threads: in 1..256, not 0" -- "$D" optimize $G --threads 0
expect 2 "at most 4096" -- "$D" optimize --model synthetic-6000 --devices k40x2 --grouper none -o "$T/no.json"
absent "$T/no.json"
}

# --agent pretrained: zero-shot with no baselines writes a valid placement,
# its settings in --set help, a corrupt or other policy file refused in one
# line naming it, nothing written then
test_pretrained() {
expect 0 "agent      pretrained" -- "$D" optimize --model rnnlm --devices k40x4 --agent pretrained --updates 0 \
  --baselines none -o "$T/pt.json"
expect 0 "valid" -- "$D" simulate --model rnnlm --devices k40x4 --placement "$T/pt.json"
expect 0 "zero-shot=4096" -- "$D" optimize --agent pretrained --set help
grep -q '^  lr=' "$T/out" && bad "--set help of the pretrained placer lists a learned agent's settings" || ok
printf 'DPPOLICY' > "$T/bad.dpp"
expect 2 "bad.dpp: not a dplace policy" -- "$D" optimize --model rnnlm --devices k40x4 --agent pretrained \
  --updates 0 --init "$T/bad.dpp" -o "$T/no.json"
[ "$(wc -l < "$T/err")" = 1 ] && ok || bad "a bad policy file: more than one line on stderr"
absent "$T/no.json"
expect 2 "learned agent's" -- "$D" optimize --model rnnlm --devices k40x4 --agent pretrained --set lr=0.1
expect 2 "no checkpoint" -- "$D" optimize --model rnnlm --devices k40x4 --agent pretrained --checkpoint "$T/c.ckpt"
}

test_run test_help
test_run test_set_help
test_run test_set_help_all
test_run test_set_help_shows_values_set
test_run test_set_help_search
test_run test_renamed
test_run test_outputs
test_run test_json
test_run test_greedy
test_run test_greedy_json
test_run test_updates_zero_refused
test_run test_resume
test_run test_resume_refused
test_run test_resume_ppo
test_run test_refused_combination
test_run test_old_agent_checkpoint_refused
test_run test_old_agent_checkpoint_init
test_run test_old_search_checkpoint_refused
test_run test_sigint
test_run test_sigkill
test_run test_measure
test_run test_measure_failures
test_run test_mars
test_run test_mars_settings_refused
test_run test_bad_input
test_run test_pretrained
finish test_cli_optimize
