/* dplace optimize: trains a learned placer (an agent preset with optional
 * component overrides) on one graph and device set through the run driver
 * (include/dplace/run.h), which writes the best placement found, the
 * per-sample log, the training curve and checkpoints; this command parses
 * the options, shows progress and prints the summary beside the baselines. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/agent.h"
#include "dplace/dist.h"
#include "dplace/nn.h"
#include "dplace/place.h"
#include "dplace/placement.h"
#include "dplace/reference.h"
#include "dplace/plot.h"
#include "dplace/run.h"
#include "dplace/search.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

static volatile sig_atomic_t g_stop;

/* Everything the command line says. */
typedef struct opt_args {
    const char *devices, *agent_name, *out, *log_path, *plot_path, *trace_path, *ck_path, *resume_path;
    const char *measure, *baselines, *init_path, *init_placement, *mpi;
    long updates, samples, seed, threads, ck_every, controllers;
    double time_budget, measure_timeout, refine;
    int search;              /* --agent search                              */
    dp_settings set;         /* the preset and --set's: the agent's, the search's */
    cli_protocol proto;
    int json, quiet, no_cache;
    cli_graph_source src;
    cli_list sets; /* --set KEY=VALUE (key NULL) and the component flags, in order */
} opt_args;

static const char SYNOPSIS[] =
    "dplace optimize (--graph FILE | --model NAME [--batch N]) --devices SPEC [--agent PRESET]\n"
    "                       [--grouper G] [--placer P] [--algo A] [--groups N] [--set KEY=VALUE]...\n"
    "                       [--updates N | --samples N | --time DURATION] [--seed N] [--threads N]\n"
    "                       [-o FILE] [--log FILE.csv] [--plot FILE.svg] [--trace FILE] [--json]\n"
    "                       [--checkpoint FILE [--checkpoint-every N]] [--resume FILE] [--init FILE]\n"
    "                       [--noise SIGMA] [--steps N] [--warmup N] [--mean] [--no-cache]\n"
    "                       [--measure CMD [--measure-timeout SECONDS]] [--baselines LIST|none]\n"
    "                       [--init-placement FILE] [--refine DURATION]\n"
    "mpirun -n N dplace optimize ... --mpi sync|async [--controllers K]";

static const char DESCRIPTION[] =
    "Learns a placement with reinforcement learning: the agent samples placements,\n"
    "each is evaluated (simulated, or measured by --measure), and the step times\n"
    "train it. Prints progress on stderr and, at the end, the best placement's step\n"
    "time beside single GPU, the expert and the best baseline placer, and whether\n"
    "the policy improved.\n"
    "\n"
    "agents (docs/agents.md lists every hyperparameter and its source):\n"
    "  hp        Hierarchical Planner (seed 001): learned feed-forward grouper (256 groups),\n"
    "            seq2seq placer with attention after the decoder, REINFORCE; its elites\n"
    "            refined by the simulator, slower moves grown along the data flow (dplace's;\n"
    "            --set elite-moves=0: the seed's) (default)\n"
    "  colocrl   ColocRL (seed 004): colocation + per-cell/branch groups, seq2seq placer,\n"
    "            REINFORCE with a simple moving-average baseline and a failing signal;\n"
    "            its elites refined by the simulator (dplace's; --set elite-moves=0: the seed's)\n"
    "  eagle     EAGLE (seed 003): learned grouper linked to the placer by an extra RNN,\n"
    "            seq2seq placer (512 units) with attention before the decoder, PPO\n"
    "  eagle-ppo-ce  EAGLE trained by PPO with cross-entropy over elite placements, the\n"
    "            elites refined by the simulator (dplace's; --set elite-moves=0: the seed's)\n"
    "  post      Post (as seed 003 describes it): METIS groups, one device distribution\n"
    "            per group, PPO and cross-entropy over elites mixed with the uniform, the\n"
    "            elites refined by the simulator (dplace's; --set elite-moves=0: Post)\n"
    "  mars      Mars (seed 002): every op placed; GCN encoder (3 x 256) pre-trained by Deep\n"
    "            Graph Infomax (1,000 iterations), segment-level seq2seq placer (segments of\n"
    "            128 ops, 512 units), PPO (20 samples, 4 minibatches, 3 epochs)\n"
    "  mars-nopretrain  Mars without the pre-training (its Table 2)\n"
    "  mars-seq2seq     Mars with one plain seq2seq over the whole op sequence (Table 1;\n"
    "                   small graphs only: its attention spans every op)\n"
    "  mars-trfxl       Mars with the Transformer-XL placer (Table 1)\n"
    "  mars-dplace      Mars with dplace's sequence prior: ops in depth-first order, the\n"
    "                   previous op's device favoured (op-order=dfs, stick=5; docs/agents.md)\n"
    "  dplace    dplace's own learned placer: Post's policy whose elites are refined by the\n"
    "            simulator every update (elite-moves=100, elite-walks=2, elite-critical=0.9:\n"
    "            dplace's expert iteration, docs/agents.md)\n"
    "  search    dplace's own placer (docs/search.md): simulator-guided Metropolis search over\n"
    "            moves of ops, chains, colocation groups and layer scopes, from the best of the\n"
    "            expert, single GPU, every baseline and --init-placement; an update is one round\n"
    "            of moves per thread (--set moves=32, t0=0.001, decay=0.97, t-min=0.01, restart=60,\n"
    "            sync=10, critical=0.4, swap=0.25); --refine D runs it after any other agent\n";

static const char EPILOGUE[] = "exit status: 0 done, 1 internal failure, 2 bad input or usage, 130 interrupted\n"
                               "(the checkpoint and the best placement so far are written first)\n";

/* Parses argv into o: -1 to go on, else the exit status (help, usage errors). */
static int parse_args(int argc, char **argv, opt_args *o) {
    memset(o, 0, sizeof *o);
    o->agent_name = "hp";
    o->updates = o->samples = -1, o->seed = 1, o->threads = 1, o->ck_every = 50, o->controllers = 1;
    o->time_budget = -1, o->measure_timeout = 600, o->refine = -1;
    o->proto = (cli_protocol){0.0, 1, 0, 0};
    const cli_option options[] = {
        CLI_GRAPH_OPTIONS(&o->src),
        {"--devices", NULL, "SPEC", CLI_STRING, .str = &o->devices, /* required unless --set help */
         .help = "a preset (k40x1..8, p100x1..8) or a dplace-devices v1 JSON file (required)"},
        {"--agent", NULL, "PRESET", CLI_STRING, .str = &o->agent_name, .help = "the agent (above; default hp)"},
        CLI_HEADING("components (override the preset's):"),
        {"--grouper", NULL, "G", CLI_LIST, .list = &o->sets, .key = "grouper",
         .help = "learned, colocation, metis, scotch, fluid, random, scope, none, runs (the warm-start "
                 "placement cut into runs)"},
        {"--placer", NULL, "P", CLI_LIST, .list = &o->sets, .key = "placer",
         .help = "seq2seq-after, seq2seq-before, gcn, table, seq2seq-seg, trfxl"},
        {"--algo", NULL, "A", CLI_LIST, .list = &o->sets, .key = "algo", .help = "reinforce, ppo, ppo-ce"},
        {"--groups", NULL, "N", CLI_LIST, .list = &o->sets, .key = "groups",
         .help = "groups of the learned and partitioning groupers"},
        {"--set", NULL, "KEY=V", CLI_LIST, .list = &o->sets,
         .help = "any setting (lr, samples, hidden, tanh-c, temperature, noise-amp, noise-updates, valid-only-after, "
                 "baseline-decay, baseline-window, fail-reward, link, ppo-epochs, ppo-clip, ce-every, ce-elites, "
                 "post-mix, train, ...; --set help lists them with the preset's values)"},
        CLI_HEADING("budget (default --updates 1000, the papers'):"),
        {"--updates", NULL, "N", CLI_LONG, .num = &o->updates, .min = 0, .max = 100000000L, .range = ">= 0",
         .help = "policy updates (0: the preparation, then the policy's greedy placement alone)"},
        {"--samples", NULL, "N", CLI_LONG, .num = &o->samples, .min = 1, .max = 1000000000L, .range = ">= 1",
         .help = "placements evaluated"},
        {"--time", NULL, "D", CLI_DURATION, .real = &o->time_budget,
         .help = "wall time: 90s, 10m, 2h (stops after the update in flight)"},
        CLI_HEADING("outputs:"),
        {"--out", "-o", "FILE", CLI_STRING, .str = &o->out,
         .help = "the best placement (dplace-placement v1), rewritten atomically whenever it improves"},
        {"--log", NULL, "FILE.csv", CLI_STRING, .str = &o->log_path,
         .help = "one row per sampled placement, and FILE.updates.csv one row per update: mean and median step "
                 "time, valid share, entropies, advantages, gradient norms, the policy's KL over the update"},
        {"--plot", NULL, "FILE.svg", CLI_STRING, .str = &o->plot_path,
         .help = "training curve: samples, best so far, mean per update, single GPU, expert and best baseline"},
        {"--trace", NULL, "FILE", CLI_STRING, .str = &o->trace_path,
         .help = "timeline of the best placement (Chrome trace)"},
        {"--json", NULL, NULL, CLI_FLAG, .flag = &o->json, .help = "print a JSON summary instead of the table"},
        {"--checkpoint", NULL, "FILE", CLI_STRING, .str = &o->ck_path,
         .help = "training state, atomically, every --checkpoint-every updates (default 50) or 10 minutes, at the "
                 "end and on SIGINT/SIGTERM (an update in flight is abandoned: Mars's stop between minibatches, "
                 "measurements are killed)"},
        {"--checkpoint-every", NULL, "N", CLI_LONG, .num = &o->ck_every, .min = 1, .max = 100000000L, .range = ">= 1",
         .help = "updates between checkpoints"},
        {"--resume", NULL, "FILE", CLI_STRING, .str = &o->resume_path,
         .help = "continue from a checkpoint (same graph, devices, agent, seed; --updates and --samples count from "
                 "the first run, --time from this one)"},
        {"--init-placement", NULL, "FILE", CLI_STRING, .str = &o->init_placement,
         .help = "search: a start placement (dplace-placement v1, e.g. another run's -o) beside the baselines'"},
        {"--refine", NULL, "D", CLI_DURATION, .real = &o->refine,
         .help = "after a learned agent's run, search from its best placement for this long (90s, 2m)"},
        {"--init", NULL, "FILE", CLI_STRING, .str = &o->init_path,
         .help = "start from the networks of another run's checkpoint (any graph: Mars's transfer; same agent "
                 "settings and device count), without its counters, optimiser state or pre-training"},
        CLI_HEADING("evaluation:"),
        {"--threads", NULL, "N", CLI_LONG, .num = &o->threads, .min = 1, .max = 256, .range = "in 1..256",
         .help = "threads for the policy's products and the evaluations (default 1)"},
        CLI_PROTOCOL_OPTIONS(&o->proto),
        {"--no-cache", NULL, NULL, CLI_FLAG, .flag = &o->no_cache, .help = "re-evaluate placements seen before"},
        {"--measure", NULL, "CMD", CLI_STRING, .str = &o->measure,
         .help = "evaluate each placement with CMD instead of the simulator (protocol: docs/measure.md; "
                 "scripts/dplace-measure-torch times a PyTorch model's step)"},
        {"--measure-timeout", NULL, "S", CLI_DOUBLE, .real = &o->measure_timeout, .min = 0.001, .max = 1e6,
         .range = "> 0 seconds", .help = "seconds before a measurement counts as failed (default 600)"},
        {"--baselines", NULL, "LIST", CLI_STRING, .str = &o->baselines,
         .help = "baseline placers to compare with (default all; none: skip)"},
        {"--seed", NULL, "N", CLI_LONG, .num = &o->seed, .min = 0, .max = 2147483647L, .range = ">= 0",
         .help = "seeds everything (default 1)"},
        {"--quiet", NULL, NULL, CLI_FLAG, .flag = &o->quiet, .help = "no progress on stderr"},
        CLI_HEADING("distributed (under mpirun; docs/distributed.md):"),
        {"--mpi", NULL, "MODE", CLI_STRING, .str = &o->mpi,
         .help = "sync: rank 0 the controller (policy, all files), ranks 1..N-1 workers evaluating its samples "
                 "(the run equals the single-process one bit for bit); async: rank 0 the parameter server (and all "
                 "files), ranks 1..K controllers updating the shared parameters asynchronously, each with its own "
                 "baseline and workers (the other ranks, shared out)"},
        {"--controllers", NULL, "K", CLI_LONG, .num = &o->controllers, .min = 1, .max = 4096, .range = ">= 1",
         .help = "--mpi async: controller ranks (default 1; needs N >= K + 1 ranks)"},
        CLI_END};
    const cli_command cmd = {"optimize", SYNOPSIS, DESCRIPTION, options, EPILOGUE};
    return cli_parse(&cmd, argc, argv, NULL);
}

static void on_signal(int sig) {
    g_stop = sig;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

static void format_duration(double s, char *buf, size_t size) {
    if (!isfinite(s) || s < 0) snprintf(buf, size, "?");
    else if (s < 60) snprintf(buf, size, "%.1fs", s);
    else if (s < 3600) snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* What found the best (dp_run_best_by): a name for the JSON and words for
 * the summary. */
static const char *const best_by_names[][2] = {
    {"none", "nothing"},
    {"sample", "a placement sampled from the policy"},
    {"walk", "the elite refinement's walk from a sample"},
    {"kept-walk", "the walk from the best elite (elite-keep)"},
    {"greedy", "the policy's greedy placement"},
    {"start", "the search's start"},
    {"search", "a search move"},
};
_Static_assert(sizeof best_by_names / sizeof best_by_names[0] == DP_RUN_BEST_BY_COUNT, "a name per dp_run_best_by");
static const char *best_by_name(int32_t b, int words) {
    return best_by_names[b >= 0 && b < DP_RUN_BEST_BY_COUNT ? b : 0][words];
}

/* --set help: the settings by component group with their values, for a
 * learned agent its groups (and the search's when it searches after), for
 * the search its own; all: the experimental ones too, marked. */
static void print_settings(const opt_args *o, int all) {
    const dp_settings *st = &o->set;
    int with_search = o->search || st->search_after_s > 0 || o->refine > 0;
    printf("settings of agent %s (override with --set KEY=VALUE; --set help=all lists every one; docs/agents.md):\n",
           o->search ? "search" : st->agent.preset);
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    for (int gr = 0; gr < DP_SETTING_GROUP_COUNT; gr++) {
        int search_group = gr == DP_SETTING_GROUP_SEARCH, heading = 0;
        if (search_group ? !with_search : o->search) continue;
        for (int32_t k = 0; k < n; k++) {
            const dp_setting *r = &t[k];
            if ((int)r->group != gr || (!all && (r->flags & DP_SETTING_EXPERIMENTAL))) continue;
            if (o->search && r->target == DP_SETTING_RUN) continue; /* search-after: a learned agent's */
            if (!heading) printf("%s:\n", dp_setting_group_name((dp_setting_group)gr)), heading = 1;
            char v[96], label[160], help[512];
            dp_setting_format(r, st, v, sizeof v);
            snprintf(label, sizeof label, "%s=%s", r->name, v);
            snprintf(help, sizeof help, "%s%s", r->flags & DP_SETTING_EXPERIMENTAL ? "(experimental) " : "", r->help);
            cli_print_labelled(stdout, label, help, 32);
        }
    }
}

/* The settings: the preset (the search's base values for --agent search),
 * then the overrides in order. --set help (or help=all), wherever it stands
 * among them, prints the result. Returns -1 to go on, else the exit status
 * (help, usage errors). */
static int build_settings(opt_args *o) {
    dp_settings *st = &o->set;
    if (o->search) {
        dp_settings_base(st);
    } else if (dp_settings_preset(o->agent_name, st)) {
        char list[256] = "";
        for (const char *const *p = dp_settings_preset_names(); *p; p++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s, ", *p);
        return cli_usage_error("optimize", "unknown agent \"%s\" (agents: %ssearch)", o->agent_name, list);
    }
    st->search.seed = (uint64_t)o->seed, st->search.threads = (int32_t)o->threads;
    dp_agent_config *cfg = &st->agent;
    if (!o->search && cfg->walks.moves > 0 && (o->measure || o->proto.noise > 0)) { /* walks need the simulator */
        fprintf(stderr,
                "optimize: elite walks off (the %s preset's elite-moves=%d: its walks need noiseless "
                "simulations; placements here are %s)\n",
                cfg->preset, (int)cfg->walks.moves, o->measure ? "measured" : "simulated with noise");
        cfg->walks.moves = 0;
    }
    dp_error err;
    dp_error_clear(&err);
    int help = 0;
    for (int k = 0; k < o->sets.n; k++) {
        const char *kv = o->sets.item[k].value;
        if (o->sets.item[k].key) {
            if (o->search)
                return cli_usage_error("optimize", "--%s is a learned agent's component; --agent search has none",
                                       o->sets.item[k].key);
            if (dp_settings_set(st, o->sets.item[k].key, kv, &err)) return cli_usage_error("optimize", "%s", err.msg);
            continue;
        }
        if (!strcmp(kv, "help") || !strcmp(kv, "help=all")) {
            help = strcmp(kv, "help") ? 2 : help > 1 ? 2 : 1;
            continue;
        }
        const char *eq = strchr(kv, '=');
        if (!eq) return cli_usage_error("optimize", "--set wants KEY=VALUE, not \"%s\"", kv);
        char kname[64];
        snprintf(kname, sizeof kname, "%.*s",
                 (int)((size_t)(eq - kv) < sizeof kname ? (size_t)(eq - kv) : sizeof kname - 1), kv);
        const dp_setting *r = dp_settings_find(kname);
        if (r && o->search && r->target != DP_SETTING_SEARCH)
            return cli_usage_error("optimize", "setting %s is a learned agent's; --agent search takes its own (--set "
                                   "help lists them)", kname);
        if (r && dp_settings_renamed(kname))
            fprintf(stderr, "optimize: --set %s is now --set %s (the old name goes in the next release)\n", kname,
                    r->name);
        if (dp_settings_set(st, kname, eq + 1, &err)) return cli_usage_error("optimize", "%s", err.msg);
    }
    if (help) {
        print_settings(o, help > 1);
        return CLI_EXIT_OK;
    }
    if (!o->search && dp_agent_config_check(cfg, &err)) return cli_usage_error("optimize", "%s", err.msg);
    return -1;
}

/* The checks across options; -1 to go on, else the exit status. */
static int check_args(const opt_args *o) {
    if (!o->devices) return cli_usage_error("optimize", "--devices SPEC is required");
    if ((o->updates >= 0) + (o->samples >= 0) > 1) return cli_usage_error("optimize", "give one of --updates and --samples");
    if (o->init_path && o->resume_path)
        return cli_usage_error("optimize", "--init starts a new run from another's networks; --resume continues one: "
                                           "give one of them");
    if (cli_protocol_check("optimize", &o->proto)) return CLI_EXIT_INPUT;
    if (o->search && o->updates == 0)
        return cli_usage_error("optimize", "--updates 0 evaluates a learned agent's greedy placement; --agent search "
                                           "needs at least one update");
    if (o->search && (o->init_path || o->refine > 0 || o->measure))
        return cli_usage_error("optimize", "--agent search takes no --init, --refine or --measure (a start placement: "
                                           "--init-placement FILE)");
    if (o->search && (o->proto.noise > 0 || o->proto.steps > 1))
        return cli_usage_error("optimize", "--agent search simulates one step without noise (no --noise, --steps)");
    if (!o->search && o->init_placement && o->refine <= 0)
        return cli_usage_error("optimize", "--init-placement starts a search: give --agent search or --refine");
    if (o->refine > 0 && o->measure)
        return cli_usage_error("optimize", "--refine searches with the simulator; not with --measure");
    /* the modes by name here: without MPI the dist layer is not built */
    if (o->mpi && strcmp(o->mpi, "sync") && strcmp(o->mpi, "async"))
        return cli_usage_error("optimize", "--mpi: unknown mode \"%s\" (modes: sync, async)", o->mpi);
    if (o->controllers != 1 && !(o->mpi && !strcmp(o->mpi, "async")))
        return cli_usage_error("optimize", "--controllers is for --mpi async");
    if (o->mpi && o->search && strcmp(o->mpi, "sync"))
        return cli_usage_error("optimize", "--agent search runs over ranks with --mpi sync (every rank searches, the "
                                           "best shared), not --mpi %s", o->mpi);
    return -1;
}

/* ---- the comparison ----------------------------------------------------------------- */

/* Runs the listed baselines (NULL: all; "none": none) on sim, for the
 * comparison and the search's starts, and the lower bound. */
static dp_status run_baselines(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const char *list,
                               dp_reference *rt, dp_error *err) {
    dp_reference_options ro = dp_reference_options_default();
    dp_place_method methods[DP_REFERENCE_MAX];
    if (list) {
        dp_status st = dp_reference_parse_methods(list, methods, DP_REFERENCE_MAX, &ro.n_methods, err);
        if (st) return dp_error_set(err, st, "--baselines: %s", err->msg);
        ro.methods = methods;
    }
    ro.place.expert = dp_zoo_expert_placement;
    return dp_reference_compute(sim, g, ds, &ro, rt, err);
}

/* ---- progress on stderr ----------------------------------------------------------- */

typedef struct progress {
    int tty, quiet, quiet_pretrain;
    double every_s, last_s, start_s;
    const dp_run_state *st; /* set once the agent exists */
    double flight_s;        /* the last line about an update in flight */
    double update_s;        /* when the last update ended (or the run began) */
    int64_t total_updates;
    double time_budget;
    /* the last 200 to 400 samples: the window being filled and the one before */
    int64_t n[2], valid[2];
    double sum[2];
    int64_t elite_sims;     /* elite refinement's simulations in this process */
} progress;

/* The agent's progress callback: where the update in flight stands (a Mars
 * update over every op of a large graph takes minutes). */
static void update_progress(void *user, const char *phase, int64_t done, int64_t total) {
    progress *p = user;
    double now = dp_now_s();
    /* only for an update running longer than every_s, and when no line at
     * all came for every_s: update lines keep their own pace */
    if (p->quiet || !p->st || now - p->update_s < p->every_s || now - fmax(p->last_s, p->flight_s) < p->every_s)
        return;
    p->flight_s = now;
    fprintf(stderr, "%supdate %lld in flight: %s %lld/%lld%s", p->tty ? "\r\033[K" : "optimize: ",
            (long long)p->st->updates + 1, phase, (long long)done, (long long)total, p->tty ? "" : "\n");
    fflush(stderr);
}

static void recent_add(progress *w, int valid, double t) {
    if (w->n[1] >= 200) { /* the current window is full: it becomes the previous one */
        w->n[0] = w->n[1], w->valid[0] = w->valid[1], w->sum[0] = w->sum[1];
        w->n[1] = w->valid[1] = 0, w->sum[1] = 0;
    }
    w->n[1]++;
    if (valid) w->valid[1]++, w->sum[1] += t;
}

/* The line after an update (at most every every_s seconds unless final). */
static void progress_show(progress *p, const dp_run_state *s, int final) {
    int64_t n = p->n[0] + p->n[1], nv = p->valid[0] + p->valid[1];
    double recent_mean = nv ? (p->sum[0] + p->sum[1]) / nv : NAN, valid_pct = n ? 100.0 * nv / n : 0;
    double now = dp_now_s();
    p->update_s = now;
    if (p->quiet || (!final && now - p->last_s < p->every_s)) return;
    p->last_s = now;
    double el = now - p->start_s;
    double rate = el > 0 ? s->samples / (s->elapsed_s > 0 ? s->elapsed_s : el) : 0;
    double remain = NAN;
    if (p->total_updates > 0 && s->updates > 0)
        remain = (double)(p->total_updates - s->updates) * (s->elapsed_s / (double)s->updates);
    if (p->time_budget > 0) remain = fmin(isfinite(remain) ? remain : INFINITY, p->time_budget - el);
    char e[32], r[32], best[32], recent[32];
    format_duration(s->elapsed_s, e, sizeof e);
    format_duration(remain, r, sizeof r);
    if (isfinite(s->best_s)) snprintf(best, sizeof best, "%.4f s", s->best_s);
    else snprintf(best, sizeof best, "none yet");
    if (isfinite(recent_mean)) snprintf(recent, sizeof recent, "%.4f s", recent_mean);
    else snprintf(recent, sizeof recent, "-");
    const dp_run_update *d = &s->upd;
    char learn[96] = "";
    if (s->updates > 0 && isfinite(d->entropy[1]))
        snprintf(learn, sizeof learn, "  H %.3g  kl %.2g  |g| %.2g", d->entropy[1], d->kl, d->grad_norm[1]);
    char valid[16] = "-";
    if (n) snprintf(valid, sizeof valid, "%.0f%%", valid_pct);
    fprintf(stderr, "%supdate %lld  samples %lld  best %s  recent %s  valid %s%s  %.1f samples/s  %s  left %s%s",
            p->tty ? "\r\033[K" : "optimize: ", (long long)s->updates, (long long)s->samples, best, recent,
            valid, learn, rate, e, r, p->tty && !final ? "" : "\n");
    fflush(stderr);
}

/* The run driver's hooks: a line per chunk of pre-training, and the
 * progress line after each update. */
static void on_prepared(void *user, const dp_run_state *s) {
    progress *p = user;
    double now = dp_now_s();
    int final = s->pretrain_done == s->pretrain_iters && s->warm_done == s->warm_steps;
    p->update_s = now; /* the first update starts after the preparation */
    if (p->quiet_pretrain || (!final && now - p->last_s < p->every_s)) return;
    p->last_s = now;
    char e[32];
    format_duration(s->pretrain_s, e, sizeof e);
    const char *lead = p->tty ? "\r\033[K" : "optimize: ", *end = p->tty && !final ? "" : "\n";
    if (s->warm_done == 0 || s->pretrain_done < s->pretrain_iters)
        fprintf(stderr, "%spre-training %lld/%lld  DGI loss %.4f  lowest %.4f  %s%s", lead, (long long)s->pretrain_done,
                (long long)s->pretrain_iters, s->pretrain_loss, s->pretrain_best, e, end);
    else
        fprintf(stderr, "%swarm start %lld/%lld  imitating %s (%.4f s)  -log p %.4g  %s%s", lead,
                (long long)s->warm_done, (long long)s->warm_steps, s->warm_from ? s->warm_from : "?",
                s->warm_target_s, s->warm_loss, e, end);
    fflush(stderr);
}

static void on_stepped(void *user, const dp_run_state *s) {
    progress *p = user;
    for (int32_t k = 0; k < s->n_last; k++) recent_add(p, s->last[k].valid, s->last[k].step_time_s);
    if (s->n_last > 0) p->elite_sims += s->upd.elite_sims;
    progress_show(p, s, 0);
}

/* ---- the summary ------------------------------------------------------------------ */

typedef struct summary {
    dp_run_result rr;
    const dp_graph *g;
    const dp_devices *ds;
    const dp_agent_config *cfg;
    const dp_run_state *s;
    const dp_reference *rt;
    const opt_args *o;
    const dp_search *search;   /* --agent search's (cfg NULL), or --refine's     */
    const dp_run_state *refined; /* --refine's state after a learned agent (NULL) */
    int64_t elite_sims;        /* the agent's elite refinement simulations, this process */
} summary;

/* The search's lines: units, moves, the start. */
static void print_search(const summary *m, const dp_search *se, const char *what) {
    dp_search_stats x;
    dp_search_get_stats(se, &x);
    const dp_run_state *s = dp_search_get_state(se);
    const char *start = NULL;
    dp_sim_result sr;
    dp_search_start(se, &start, &sr);
    char t[32];
    format_duration(s->elapsed_s, t, sizeof t);
    printf("%-10s %d threads x %d moves per update; units: %d ops, %d chains, %d scopes, %d parent scopes, %d typed\n",
           what, (int)m->o->set.search.threads, (int)m->o->set.search.moves, (int)x.n_units[0], (int)x.n_units[1],
           (int)x.n_units[2], (int)x.n_units[3], (int)x.n_units[4]);
    printf("searched   %lld updates, %lld moves simulated in %s (%lld proposed, %lld refused by the memory check, "
           "%.1f%% accepted, %lld from the critical path, %lld restarts)\n",
           (long long)s->updates, (long long)x.simulated, t, (long long)x.proposed, (long long)x.oom_rejected,
           x.simulated ? 100.0 * (double)x.accepted / (double)x.simulated : 0.0, (long long)x.critical,
           (long long)x.restarts);
    if (start) printf("start      %s (%.6f s%s)\n", start, sr.step_time_s, sr.valid ? "" : ", out of memory");
}

static json_t *json_num(double v, int ok) { return ok && isfinite(v) ? json_real(v) : json_null(); }

static void print_json(const summary *m) {
    const dp_run_state *s = m->s;
    const dp_reference *rt = m->rt;
    json_t *o = json_object();
    json_object_set_new(o, "graph", json_string(m->g->name));
    json_object_set_new(o, "ops", json_integer(m->g->n_ops));
    json_object_set_new(o, "device_set", json_string(m->ds->name));
    char cbuf[4096];
    if (m->cfg) dp_settings_format_target(DP_SETTING_AGENT, m->cfg, cbuf, sizeof cbuf);
    else dp_settings_format_target(DP_SETTING_SEARCH, &m->o->set.search, cbuf, sizeof cbuf);
    json_object_set_new(o, "agent", json_string(m->cfg ? m->cfg->preset : "search"));
    json_object_set_new(o, "settings", json_string(cbuf));
    if (m->search) {
        const char *start = NULL;
        dp_sim_result sr;
        dp_search_stats x;
        dp_search_get_stats(m->search, &x);
        dp_search_start(m->search, &start, &sr);
        json_object_set_new(o, "search_start", start ? json_string(start) : json_null());
        json_object_set_new(o, "search_start_s", json_num(sr.step_time_s, start != NULL));
        json_object_set_new(o, "search_moves_simulated", json_integer(x.simulated));
        json_object_set_new(o, "search_moves_accepted", json_integer(x.accepted));
        json_object_set_new(o, "search_oom_refused", json_integer(x.oom_rejected));
    }
    if (m->refined) {
        json_object_set_new(o, "refined_step_time_s", json_num(m->refined->best_s, 1));
        json_object_set_new(o, "refined_found_s", json_real(m->refined->best_elapsed_s));
    }
    if (m->cfg && m->cfg->walks.moves > 0) json_object_set_new(o, "elite_simulations", json_integer(m->elite_sims));
    json_object_set_new(o, "seed", json_integer(m->o->seed));
    json_object_set_new(o, "updates", json_integer(s->updates));
    json_object_set_new(o, "samples", json_integer(s->samples));
    json_object_set_new(o, "groups", json_integer(s->n_groups));
    json_object_set_new(o, "best_step_time_s", json_num(s->best_s, 1));
    json_object_set_new(o, "best_update", json_integer(s->best_update));
    json_object_set_new(o, "best_sample", json_integer(s->best_sample));
    json_object_set_new(o, "best_found_s", json_real(s->best_elapsed_s));
    json_object_set_new(o, "best_by", json_string(best_by_name(s->best_by, 0)));
    json_object_set_new(o, "final_greedy_s", json_num(s->final_s, isfinite(s->final_s)));
    json_object_set_new(o, "best_is_final_greedy", json_boolean(s->best_final));
    json_object_set_new(o, "train_s", json_real(s->elapsed_s));
    json_object_set_new(o, "pretrain_iters", json_integer(s->pretrain_done));
    json_object_set_new(o, "pretrain_s", json_real(s->pretrain_s));
    json_object_set_new(o, "pretrain_best_loss", json_num(s->pretrain_best, 1));
    json_object_set_new(o, "warm_start_steps", json_integer(s->warm_done));
    json_object_set_new(o, "warm_start_from", s->warm_from ? json_string(s->warm_from) : json_null());
    json_object_set_new(o, "warm_start_target_s", json_num(s->warm_target_s, s->warm_from != NULL));
    json_object_set_new(o, "policy_s", json_real(s->policy_s));
    json_object_set_new(o, "eval_s", json_real(s->eval_s));
    json_object_set_new(o, "cache_lookups", json_integer(s->cache_lookups));
    json_object_set_new(o, "cache_hits", json_integer(s->cache_hits));
    json_object_set_new(o, "single_gpu_s", json_num(rt->gpu_s, rt->gpu_valid));
    json_object_set_new(o, "expert_s", json_num(rt->expert_s, rt->expert_valid));
    json_object_set_new(o, "best_baseline", rt->best_name ? json_string(rt->best_name) : json_null());
    json_object_set_new(o, "best_baseline_s", json_num(rt->best_s, rt->best >= 0));
    json_object_set_new(o, "lower_bound_critical_path_s", json_real(rt->bound.critical_path_s));
    json_object_set_new(o, "lower_bound_work_s", json_real(rt->bound.work_s));
    json_object_set_new(o, "lower_bound_work_uniform_s", json_real(rt->bound.work_uniform_s));
    json_object_set_new(o, "lower_bound_fanout_s", json_real(rt->bound.fanout_s));
    json_object_set_new(o, "lower_bound_s", json_real(rt->bound.bound_s));
    json_object_set_new(o, "first_tenth_mean_s", json_num(m->rr.first_mean_s, 1));
    json_object_set_new(o, "last_tenth_mean_s", json_num(m->rr.last_mean_s, 1));
    json_object_set_new(o, "tenth_updates", json_integer(m->rr.tenth));
    json_object_set_new(o, "interrupted", json_boolean(g_stop != 0));
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
}

/* The header lines: graph, agent, training and pre-training. */
static void print_header(const summary *m) {
    const dp_run_state *s = m->s;
    const dp_agent_config *cfg = m->cfg;
    char t1[32];
    format_duration(s->elapsed_s, t1, sizeof t1);
    printf("graph      %s: %d ops on %s (%d devices)\n", m->g->name, m->g->n_ops, m->ds->name, m->ds->n_devices);
    if (!cfg) {
        print_search(m, m->search, "agent      search:");
        return;
    }
    if (cfg->encoder.kind == DP_AGENT_ENCODER_NONE)
        printf("agent      %s: grouper %s (%d groups), placer %s, %s, %d samples per update\n", cfg->preset,
               dp_agent_grouper_kind_name(cfg->grouper.kind), (int)s->n_groups, dp_agent_placer_kind_name(cfg->placer.kind),
               dp_agent_algo_name(cfg->train.algo), (int)cfg->train.batch);
    else
        printf("agent      %s: encoder %s, placer %s over every op, %s, %d samples per update\n", cfg->preset,
               dp_agent_encoder_name(cfg->encoder.kind), dp_agent_placer_kind_name(cfg->placer.kind),
               dp_agent_algo_name(cfg->train.algo), (int)cfg->train.batch);
    printf("trained    %lld updates, %lld placements in %s (policy %.0f%%, evaluator %.0f%%; cache hits %.1f%%)\n",
           (long long)s->updates, (long long)s->samples, t1, s->elapsed_s > 0 ? 100 * s->policy_s / s->elapsed_s : 0,
           s->elapsed_s > 0 ? 100 * s->eval_s / s->elapsed_s : 0,
           s->cache_lookups ? 100.0 * s->cache_hits / s->cache_lookups : 0);
    if (cfg->walks.moves > 0) {
        char grown[64] = "";
        if (cfg->walks.chain > 0)
            snprintf(grown, sizeof grown, ", a slower move grown by up to %d elements", (int)cfg->walks.chain);
        printf("refined    the elites by %d walk%s of %d moves per update from the best samples%s%s: %lld simulations "
               "this run (dplace's elite refinement)\n",
               (int)cfg->walks.walks, cfg->walks.walks > 1 ? "s" : "", (int)cfg->walks.moves,
               cfg->walks.keep ? " and one from the best elite" : "", grown, (long long)m->elite_sims);
    }
    if (s->warm_done > 0 && s->warm_from)
        printf("warm start %lld steps imitating %s's placement (%.6f s); -log p of it %.4g after\n",
               (long long)s->warm_done, s->warm_from, s->warm_target_s, s->warm_loss);
    if (s->pretrain_done > 0 && isfinite(s->pretrain_best)) { /* not with --init: its encoder came trained */
        char t3[32];
        format_duration(s->pretrain_s, t3, sizeof t3);
        if (s->pretrain_done == s->pretrain_iters)
            printf("pre-trained %lld Deep Graph Infomax iterations in %s (lowest loss %.4f, kept)\n",
                   (long long)s->pretrain_done, t3, s->pretrain_best);
        else
            printf("pre-training: %lld of %lld Deep Graph Infomax iterations in %s (lowest loss %.4f so far)\n",
                   (long long)s->pretrain_done, (long long)s->pretrain_iters, t3, s->pretrain_best);
    }
}

/* Whether the policy improved: the mean sampled step time over the first
 * and the last tenth of the updates. */
static void print_learning(const summary *m) {
    const dp_run_result *r = &m->rr;
    if (!m->cfg || m->s->updates < 2 || !isfinite(r->first_mean_s) || !isfinite(r->last_mean_s)) return;
    double change = 100.0 * (r->last_mean_s - r->first_mean_s) / r->first_mean_s;
    printf("policy: mean sampled step time %.4f s over the first tenth of the updates (%lld), %.4f s over the "
           "last: %s (%+.1f%%)\n",
           r->first_mean_s, (long long)r->tenth, r->last_mean_s, change < 0 ? "improved" : "did not improve", change);
}

static void print_table(const summary *m) {
    const dp_run_state *s = m->s;
    const dp_reference *rt = m->rt;
    print_header(m);
    if (m->o->measure)
        printf("\n(the learned time was measured by --measure; single GPU, expert, the baselines and the bound are "
               "simulated on the devices given)");
    const char *who = m->cfg ? "learned" : "search";
    if (m->refined) {
        printf("\n");
        print_search(m, m->search, "refine:");
    }
    printf("\n%-26s %12s  %s vs it\n", "placement", "step time", m->refined ? "refined" : who);
    if (isfinite(s->best_s)) printf("%-26s %10.6f s\n", who, s->best_s);
    else printf("%-26s %12s  (no valid placement sampled)\n", who, "none");
    if (isfinite(s->final_s)) printf("%-26s %10.6f s%s\n", "final policy, greedy", s->final_s, s->best_final ? "  (the best)" : "");
    else if (isinf(s->final_s)) printf("%-26s %12s\n", "final policy, greedy", "not valid");
    if (m->refined && isfinite(m->refined->best_s)) {
        char t[32];
        format_duration(m->refined->best_elapsed_s, t, sizeof t);
        printf("%-26s %10.6f s  (found after %s of search)\n", "refined by search", m->refined->best_s, t);
        s = m->refined;
    }
    char name[64];
    snprintf(name, sizeof name, "best baseline (%s)", rt->best_name ? rt->best_name : "none");
    struct {
        const char *label;
        double t;
        int ok;
    } rows[3] = {{"single GPU", rt->gpu_s, rt->gpu_valid}, {"expert", rt->expert_s, rt->expert_valid},
                 {name, rt->best_s, rt->best >= 0}};
    for (int k = 0; k < 3; k++) {
        if (rows[k].ok && isfinite(s->best_s))
            printf("%-26s %10.6f s  %+.1f%%\n", rows[k].label, rows[k].t, 100.0 * (s->best_s - rows[k].t) / rows[k].t);
        else if (rows[k].ok) printf("%-26s %10.6f s\n", rows[k].label, rows[k].t);
        else
            printf("%-26s %12s\n", rows[k].label,
                   m->o->baselines && !strcmp(m->o->baselines, "none") ? "not run" : "invalid or n/a");
    }
    printf("%-26s %10.6f s  (critical path %.6f s, work %.6f s, fan-out %.6f s)\n", "lower bound", rt->bound.bound_s,
           rt->bound.critical_path_s, rt->bound.work_s, rt->bound.fanout_s);
    double ref = NAN;
    const char *ref_name = NULL;
    if (rt->gpu_valid) ref = rt->gpu_s, ref_name = "single GPU";
    if (rt->expert_valid && !(rt->expert_s >= ref)) ref = rt->expert_s, ref_name = "expert";
    if (isfinite(s->best_s)) {
        char t2[32];
        format_duration(s->best_elapsed_s, t2, sizeof t2);
        if (s->best_final)
            printf("\nbest: the final policy's greedy placement, after %lld updates (%lld placements) and %s\n",
                   (long long)s->best_update, (long long)s->best_sample, t2);
        else
            printf("\nbest found at update %lld (placement %lld) after %s, by %s\n", (long long)s->best_update,
                   (long long)s->best_sample + 1, t2, best_by_name(s->best_by, 1));
    }
    if (isfinite(s->best_s) && ref_name)
        printf("reduction over the better of single GPU and expert (%s): %.1f%%\n", ref_name,
               100.0 * (ref - s->best_s) / ref);
    print_learning(m);
    if (m->o->out && s->best_placement) printf("best placement written to %s\n", m->o->out);
}

/* ---- the command ------------------------------------------------------------------- */

/* The evaluator's options from the command line. */
static dp_agent_eval_options eval_options(const opt_args *o, progress *pg) {
    dp_agent_eval_options eo = dp_agent_eval_options_default();
    eo.threads = (int32_t)o->threads;
    eo.cache = !o->no_cache;
    eo.sim.noise_sigma = o->proto.noise;
    eo.sim.steps = (int32_t)o->proto.steps;
    eo.sim.warmup = (int32_t)o->proto.warmup;
    eo.sim.mean = o->proto.mean;
    eo.sim.seed = (uint64_t)o->seed;
    eo.measure_cmd = o->measure;
    eo.measure_timeout_s = o->measure_timeout;
    eo.cancel = &g_stop;
    eo.progress = update_progress;
    eo.progress_user = pg;
    eo.expert = dp_zoo_expert_placement;
    return eo;
}

/* The reference lines of the plot. */
static int plot_lines(const dp_reference *rt, dp_plot_line *lines, char *best_label, size_t size) {
    int nl = 0;
    if (rt->gpu_valid) lines[nl++] = (dp_plot_line){"single GPU", rt->gpu_s};
    if (rt->expert_valid) lines[nl++] = (dp_plot_line){"expert", rt->expert_s};
    if (rt->best >= 0) {
        snprintf(best_label, size, "best baseline (%s)", rt->best_name);
        lines[nl++] = (dp_plot_line){best_label, rt->best_s};
    }
    return nl;
}

/* Runs method m (state s) through the run driver: an agent's training, a
 * search, or a search refining an agent's best (refine: its time, the log
 * beside the agent's, no checkpoint). */
static dp_status run_method(const opt_args *o, const dp_graph *g, const dp_devices *ds, dp_method m,
                            const dp_run_state *s, const dp_reference *rt, progress *pg, int refine, dp_run_result *rr,
                            dp_error *err) {
    dp_run_options ro = dp_run_options_default();
    ro.g = g, ro.ds = ds;
    ro.max_updates = o->updates < 0 && o->samples < 0 && o->time_budget < 0 ? (o->search ? 2000 : 1000) : o->updates;
    ro.max_samples = o->samples;
    ro.max_seconds = o->time_budget;
    ro.best_path = o->out, ro.log_path = o->log_path, ro.checkpoint_path = o->ck_path;
    ro.checkpoint_every = o->ck_every;
    ro.resume_path = o->resume_path;
    ro.cancel = &g_stop;
    dp_plot_line lines[3];
    char best_label[96], title[256], ulog[4096], rlog[4096];
    snprintf(title, sizeof title, "%s on %s: agent %s%s", g->name, ds->name, o->agent_name, refine ? ", refined" : "");
    ro.plot_path = o->plot_path, ro.plot_title = title;
    ro.plot_lines = lines, ro.n_plot_lines = plot_lines(rt, lines, best_label, sizeof best_label);
    const char *stem_end = refine ? ".refine" : ".updates";
    if (o->log_path) { /* next to the per-sample log: X.csv -> X.updates.csv (X.refine.csv) */
        size_t n = strlen(o->log_path);
        int cut = n > 4 && !strcmp(o->log_path + n - 4, ".csv") ? 4 : 0;
        snprintf(ulog, sizeof ulog, "%.*s%s.csv", (int)(n - cut), o->log_path, stem_end);
        ro.update_log_path = ulog;
        if (refine) {
            snprintf(rlog, sizeof rlog, "%.*s.refine.csv", (int)(n - cut), o->log_path);
            ro.log_path = rlog, ro.update_log_path = NULL;
        }
    }
    if (refine) {
        ro.max_updates = ro.max_samples = -1, ro.max_seconds = o->refine;
        ro.checkpoint_path = ro.resume_path = NULL;
        if (o->plot_path) ro.plot_path = NULL;
    }
    pg->st = s, pg->total_updates = ro.max_updates, pg->time_budget = ro.max_seconds;
    dp_run_hooks hooks = {pg, on_prepared, on_stepped};
    dp_status st = dp_run(m, &ro, &hooks, rr, err);
    if (!st) progress_show(pg, s, 1);
    return st;
}

/* Writes the timeline of placement p (the best found) to path. */
static dp_status write_trace(dp_sim *sim, const char *path, const int32_t *p, dp_error *err) {
    if (!path || !p) return DP_STATUS_OK;
    dp_sim_options so = dp_sim_options_default();
    so.record_trace = 1;
    dp_sim_result res;
    dp_status st = dp_sim_run(sim, p, &so, &res, err);
    return st ? st : dp_trace_write(sim, path, err);
}

/* --refine: a search from the agent's best placement for o->refine
 * seconds, writing -o when it improves; *out its state (NULL: none run). */
static dp_status refine_agent(const opt_args *o, const dp_graph *g, const dp_devices *ds, dp_sim *sim,
                              const dp_run_state *s, const dp_reference *rt, progress *pg, dp_search **se,
                              dp_error *err) {
    if (o->refine <= 0 || !s->best_placement || g_stop) return DP_STATUS_OK;
    if (!(*se = dp_search_init(g, ds, sim, &o->set.search, err))) return err->status;
    dp_status st = dp_search_add_start(*se, "learned", s->best_placement, err);
    if (st) return st;
    if (!o->quiet && !o->json) fprintf(stderr, "optimize: refining the learned best (%.6f s) by search\n", s->best_s);
    memset(pg->n, 0, sizeof pg->n), memset(pg->valid, 0, sizeof pg->valid), memset(pg->sum, 0, sizeof pg->sum);
    dp_run_result rr;
    return run_method(o, g, ds, dp_search_method(*se), dp_search_get_state(*se), rt, pg, 1, &rr, err);
}

/* Reads --init-placement (NULL: none given) into *out. */
static dp_status read_init_placement(const opt_args *o, const dp_graph *g, const dp_devices *ds, int32_t **out,
                                     dp_error *err) {
    *out = NULL;
    if (!o->init_placement) return DP_STATUS_OK;
    if (!(*out = malloc(sizeof(int32_t) * (size_t)(g->n_ops + 1)))) return dp_error_set(err, DP_STATUS_NOMEM, "oom");
    return dp_placement_read_file(o->init_placement, g, ds, *out, err);
}

#ifdef DPLACE_HAVE_MPI
/* The line on the ranks of a distributed run (rank 0, stderr). */
static void print_ranks(const opt_args *o, const dp_dist *dist) {
    if (o->search)
        fprintf(stderr, "optimize: --mpi sync over %d ranks: every rank searches (seeds apart), the best shared after "
                "each step\n", (int)dp_dist_size(dist));
    else if (dp_dist_get_role(dist) == DP_DIST_ROLE_SERVER)
        fprintf(stderr, "optimize: --mpi async over %d ranks: rank 0 the parameter server, %d controller(s), %d worker "
                "rank(s)\n", (int)dp_dist_size(dist), (int)o->controllers, (int)(dp_dist_size(dist) - 1 - o->controllers));
    else
        fprintf(stderr, "optimize: --mpi sync over %d ranks: rank 0 the controller, %d worker rank(s)\n",
                (int)dp_dist_size(dist), (int)dp_dist_n_workers(dist));
}

/* A worker rank: loads the graph and devices as rank 0 does and evaluates
 * what its controller sends until stopped; a setup failure is answered to
 * the controller (whose run fails with it), not printed. */
static int optimize_worker(const opt_args *o, dp_dist *dist) {
    dp_error err, setup;
    dp_error_clear(&err);
    dp_error_clear(&setup);
    dp_graph *g = cli_load_graph("optimize", &o->src, &setup);
    dp_devices *ds = g ? dp_devices_load(o->devices, &setup) : NULL;
    dp_agent_eval_options eo = eval_options(o, NULL);
    eo.cancel = NULL, eo.progress = NULL, eo.progress_user = NULL;
    dp_status st = dp_dist_work(dist, g && ds ? g : NULL, ds, &eo, setup.msg, &err);
    dp_devices_free(ds);
    dp_graph_free(g);
    return st ? cli_report(&err) : CLI_EXIT_OK;
}

/* An async controller rank: its own agent (seeded from --seed and its
 * rank), evaluating on its workers, updating the shared parameters until
 * the server stops it. An error ends the whole job: the server waits for
 * this rank. */
static int optimize_controller(const opt_args *o, dp_dist *dist) {
    const dp_agent_config *cfg = &o->set.agent;
    dp_error err;
    dp_error_clear(&err);
    dp_nn_set_threads((int)o->threads);
    dp_graph *g = cli_load_graph("optimize", &o->src, &err);
    dp_devices *ds = g ? dp_devices_load(o->devices, &err) : NULL;
    dp_agent_eval_options eo = eval_options(o, NULL);
    eo.progress = NULL, eo.progress_user = NULL, eo.cancel = NULL;
    dp_dist_attach(dist, &eo);
    uint64_t seed = (uint64_t)o->seed * 1000003u + (uint64_t)dp_dist_rank(dist);
    dp_agent *agent = ds ? dp_agent_init(g, ds, cfg, &eo, seed, &err) : NULL;
    dp_status st = agent ? dp_dist_control(dist, g, agent, &err) : err.status ? err.status : DP_STATUS_NOMEM;
    dp_agent_free(agent);
    dp_devices_free(ds);
    dp_graph_free(g);
    if (!st) return CLI_EXIT_OK;
    fprintf(stderr, "optimize: controller rank %d: ", (int)dp_dist_rank(dist));
    int rc = cli_report(&err);
    dp_dist_abort(dist, rc);
    return rc;
}

/* A search rank other than 0 (--mpi sync --agent search): its own search
 * (seeded from --seed and its rank) from the same starts, in step with
 * rank 0's, sharing the best. A failure before the first step ends the
 * whole job: rank 0 waits for this rank. */
static int optimize_search_rank(const opt_args *o, dp_dist *dist) {
    dp_error err;
    dp_error_clear(&err);
    dp_search_options sopt = o->set.search;
    sopt.seed = o->set.search.seed + 1000003u * (uint64_t)dp_dist_rank(dist);
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL;
    dp_search *se = NULL;
    int32_t *init = NULL;
    dp_reference rt = {0};
    int ready = (g = cli_load_graph("optimize", &o->src, &err)) && (ds = dp_devices_load(o->devices, &err)) &&
                (sim = dp_sim_init(g, ds, &err)) && !read_init_placement(o, g, ds, &init, &err) &&
                (se = dp_search_init(g, ds, sim, &sopt, &err)) && !run_baselines(sim, g, ds, o->baselines, &rt, &err) &&
                !dp_search_add_starts(se, &rt, init, "--init-placement", &err);
    dp_status st = ready ? dp_dist_search_follow(dist, g, se, &err) : err.status;
    dp_reference_free(&rt), dp_search_free(se), free(init), dp_sim_free(sim), dp_devices_free(ds), dp_graph_free(g);
    if (!st) return CLI_EXIT_OK;
    fprintf(stderr, "optimize: search rank %d: ", (int)dp_dist_rank(dist));
    int rc = cli_report(&err);
    if (!ready) dp_dist_abort(dist, rc);
    return rc;
}

#endif

/* The run on this process (dist NULL), or on rank 0 of a distributed
 * run: the baselines, the agent (evaluating on dist's workers; async: the
 * parameter server's method around it) or the search, the run driver and
 * the summary. Returns the exit status. */
static int optimize(opt_args *op, dp_dist *dist) {
    opt_args o = *op;
    dp_agent_config cfg = o.set.agent;
    int rc = CLI_EXIT_OK;
    dp_error err;
    dp_error_clear(&err);
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL; /* baselines, the best placement's trace, the lower bound */
    dp_agent *agent = NULL;
    dp_search *se = NULL, *refine = NULL;
    int32_t *init = NULL;
    dp_reference rt = {0};
    dp_nn_set_threads((int)o.threads);
    progress pg = {.tty = isatty(2), .quiet = o.quiet, .quiet_pretrain = o.quiet || o.json,
                   .every_s = isatty(2) ? 0.5 : 10.0, .start_s = dp_now_s(), .update_s = dp_now_s()};
    if (!(g = cli_load_graph("optimize", &o.src, &err)) || !(ds = dp_devices_load(o.devices, &err)) ||
        !(sim = dp_sim_init(g, ds, &err)) || read_init_placement(&o, g, ds, &init, &err))
        goto fail;
    if (o.search && !(se = dp_search_init(g, ds, sim, &o.set.search, &err))) goto fail;
    if (run_baselines(sim, g, ds, o.baselines, &rt, &err) ||
        (se && dp_search_add_starts(se, &rt, init, "--init-placement", &err)))
        goto fail;
    dp_agent_eval_options eo = eval_options(&o, &pg);
#ifdef DPLACE_HAVE_MPI
    if (dist) dp_dist_attach(dist, &eo);
#endif
    if (!se && !(agent = dp_agent_init(g, ds, &cfg, &eo, (uint64_t)o.seed, &err))) goto fail;
    dp_method meth = se ? dp_search_method(se) : dp_agent_method(agent);
#ifdef DPLACE_HAVE_MPI
    if (dist && se && dp_dist_search_method(dist, g, se, &meth, &err)) goto fail;
    if (dist && dp_dist_get_role(dist) == DP_DIST_ROLE_SERVER &&
        dp_dist_server_method(dist, g, agent, &g_stop, &meth, &err))
        goto fail;
#endif
    const dp_run_state *s = meth.ops->state(meth.self);
    pg.st = s;
    if (o.init_path && dp_agent_load_policy(agent, o.init_path, &err)) goto fail;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (!o.quiet && !o.json && se) {
        const char *start = NULL;
        dp_sim_result sr;
        dp_search_start(se, &start, &sr);
        fprintf(stderr, "optimize: %s on %s, agent search, %d threads, from %s (%.6f s)%s\n", g->name, ds->name,
                (int)o.set.search.threads, start, sr.step_time_s, o.resume_path ? " (resuming)" : "");
    } else if (!o.quiet && !o.json)
        fprintf(stderr, "optimize: %s on %s, agent %s, %d %s%s\n", g->name, ds->name, cfg.preset, (int)s->n_groups,
                cfg.encoder.kind == DP_AGENT_ENCODER_NONE ? "groups" : "ops placed one by one",
                o.resume_path ? " (resuming)" : o.init_path ? " (networks from --init)" : "");
#ifdef DPLACE_HAVE_MPI
    if (dist && !o.quiet && !o.json) print_ranks(&o, dist);
#endif
    summary m = {{0}, g, ds, se ? NULL : &cfg, s, &rt, &o, se, NULL, 0};
    if (run_method(&o, g, ds, meth, s, &rt, &pg, 0, &m.rr, &err)) goto fail;
    m.elite_sims = pg.elite_sims;
    if (refine_agent(&o, g, ds, sim, s, &rt, &pg, &refine, &err)) goto fail;
    if (refine) m.search = refine, m.refined = dp_search_get_state(refine);
    const dp_run_state *fin = m.refined && m.refined->best_placement ? m.refined : s;
    if (write_trace(sim, o.trace_path, fin->best_placement, &err)) goto fail;
    if (o.json) print_json(&m);
    else print_table(&m);
    if (g_stop) {
        fprintf(stderr, "optimize: interrupted after update %lld%s%s\n", (long long)s->updates,
                o.ck_path ? "; resume with --resume " : "", o.ck_path ? o.ck_path : "");
        rc = 130;
    }
    goto done;
fail:
    rc = cli_report(&err);
done:
    dp_reference_free(&rt);
    dp_search_free(refine);
    dp_search_free(se);
    free(init);
    dp_agent_free(agent);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}

/* --mpi: this rank's part of a distributed run. Returns the exit status. */
static int optimize_mpi(opt_args *o, int *argc, char ***argv) {
#ifndef DPLACE_HAVE_MPI
    (void)argc, (void)argv;
    return cli_usage_error("optimize", "--mpi %s: this dplace was built without MPI (install libopenmpi-dev and "
                           "openmpi-bin, then build again: scripts/setup.sh)", o->mpi);
#else
    dp_error err;
    dp_error_clear(&err);
    int32_t rank = 0;
    /* mpirun forwards SIGUSR1 to every rank: caught from before MPI_Init on,
     * since one arriving while the ranks start killed them (exit 138, no
     * checkpoint; measured 0.15-0.3 s after the launch) */
    signal(SIGUSR1, on_signal);
    dp_dist *dist =
        dp_dist_init(argc, argv, (dp_dist_mode)dp_dist_mode_parse(o->mpi), (int32_t)o->controllers, &rank, &err);
    /* said once, by rank 0; the other ranks leave quietly with 0 on bad input, since a rank that exits non-zero
     * first makes mpirun abort the job, rank 0 included, before it has said why (cli_mpi_async) */
    if (!dist) return rank > 0 ? (err.status == DP_STATUS_INVALID ? CLI_EXIT_OK : 1) : cli_report(&err);
    int rc;
    dp_dist_role role = dp_dist_get_role(dist);
    /* rank 0 stops as on SIGINT in one process (the step in flight finished
     * or abandoned, the checkpoint written); the others wait to be stopped by
     * it, forgetting a SIGUSR1 caught during the start */
    if (dp_dist_rank(dist) > 0) {
        signal(SIGUSR1, SIG_IGN);
        if (g_stop == SIGUSR1) g_stop = 0;
    }
    if (o->search && dp_dist_rank(dist) > 0) rc = optimize_search_rank(o, dist);
    else if (role == DP_DIST_ROLE_WORKER) rc = optimize_worker(o, dist);
    else if (role == DP_DIST_ROLE_CONTROLLER && dp_dist_rank(dist) > 0) rc = optimize_controller(o, dist);
    else rc = optimize(o, dist);
    dp_dist_free(dist);
    return rc;
#endif
}

int cmd_optimize(int argc, char **argv) {
    opt_args o;
    int rc = parse_args(argc, argv, &o);
    o.search = rc < 0 && !strcmp(o.agent_name, "search");
    if (rc < 0) rc = build_settings(&o);
    if (rc < 0) rc = check_args(&o);
    if (rc >= 0) return rc;
    if (o.samples > 0) o.updates = -1;
    return o.mpi ? optimize_mpi(&o, &argc, &argv) : optimize(&o, NULL);
}
