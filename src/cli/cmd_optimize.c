/* dplace optimize: trains a learned placer (an agent preset with optional
 * component overrides) on one graph and device set, and writes the best
 * placement found, a per-sample log, the training curve, checkpoints and
 * a summary beside the baselines. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/agent.h"
#include "dplace/nn.h"
#include "dplace/place.h"
#include "dplace/placement.h"
#include "dplace/plot.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dplace optimize (--graph FILE | --model NAME [--batch N]) --devices SPEC [--agent PRESET]\n"
            "                       [--grouper G] [--placer P] [--algo A] [--groups N] [--set KEY=VALUE]...\n"
            "                       [--updates N | --samples N | --time DURATION] [--seed N] [--threads N]\n"
            "                       [-o FILE] [--log FILE.csv] [--plot FILE.svg] [--trace FILE] [--json]\n"
            "                       [--checkpoint FILE [--checkpoint-every N]] [--resume FILE] [--init FILE]\n"
            "                       [--noise SIGMA] [--steps N] [--warmup N] [--mean] [--no-cache]\n"
            "                       [--measure CMD [--measure-timeout SECONDS]] [--baselines LIST|none]\n"
            "\n"
            "Learns a placement with reinforcement learning: the agent samples placements,\n"
            "each is evaluated (simulated, or measured by --measure), and the step times\n"
            "train it. Prints progress on stderr and, at the end, the best placement's step\n"
            "time beside single GPU, the expert and the best baseline placer.\n"
            "\n"
            "agents (docs/agents.md lists every hyperparameter and its source):\n"
            "  hp        Hierarchical Planner (seed 001): learned feed-forward grouper (256 groups),\n"
            "            seq2seq placer with attention after the decoder, REINFORCE (default)\n"
            "  colocrl   ColocRL (seed 004): colocation + per-cell/branch groups, seq2seq placer,\n"
            "            REINFORCE with a simple moving-average baseline and a failing signal\n"
            "  eagle     EAGLE (seed 003): learned grouper linked to the placer by an extra RNN,\n"
            "            seq2seq placer (512 units) with attention before the decoder, PPO\n"
            "  eagle-ppo-ce  EAGLE trained by PPO with cross-entropy over elite placements\n"
            "  post      Post (as seed 003 describes it): METIS groups, one device distribution\n"
            "            per group, PPO and cross-entropy over elites mixed with the uniform\n"
            "  mars      Mars (seed 002): every op placed; GCN encoder (3 x 256) pre-trained by Deep\n"
            "            Graph Infomax (1,000 iterations), segment-level seq2seq placer (segments of\n"
            "            128 ops, 512 units), PPO (20 samples, 4 minibatches, 3 epochs)\n"
            "  mars-nopretrain  Mars without the pre-training (its Table 2)\n"
            "  mars-seq2seq     Mars with one plain seq2seq over the whole op sequence (Table 1;\n"
            "                   small graphs only: its attention spans every op)\n"
            "  mars-trfxl       Mars with the Transformer-XL placer (Table 1)\n"
            "  mars-dplace      Mars with dplace's sequence prior: ops in depth-first order, the\n"
            "                   previous op's device favoured (op-order=dfs, stick=5; docs/agents.md)\n"
            "components (override the preset's):\n"
            "  --grouper G    learned, colocation, metis, scotch, fluid, random, scope, none\n"
            "  --placer P     seq2seq-after, seq2seq-before, gcn, table, seq2seq-seg, trfxl\n"
            "  --algo A       reinforce, ppo, ppo-ce\n"
            "  --groups N     groups of the learned and partitioning groupers\n"
            "  --set KEY=V    any setting (lr, samples, hidden, tanh-c, temperature, noise-amp,\n"
            "                 noise-updates, valid-only-after, baseline-decay, baseline-window,\n"
            "                 fail-reward, link, ppo-epochs, ppo-clip, ce-every, ce-elites, post-mix,\n"
            "                 ...; --set help lists them with the preset's values)\n"
            "budget (default --updates 1000, the papers'):\n"
            "  --updates N    policy updates      --samples N   placements evaluated\n"
            "  --time D       wall time: 90s, 10m, 2h (stops after the update in flight)\n"
            "outputs:\n"
            "  -o FILE              the best placement (dplace-placement v1), rewritten\n"
            "                       atomically whenever it improves\n"
            "  --log FILE.csv       one row per sampled placement\n"
            "  --plot FILE.svg      training curve with single GPU, expert and best baseline\n"
            "  --trace FILE         timeline of the best placement (Chrome trace)\n"
            "  --json               print a JSON summary instead of the table\n"
            "  --checkpoint FILE    training state, atomically, every --checkpoint-every updates\n"
            "                       (default 50) or 10 minutes, at the end and on SIGINT/SIGTERM\n"
            "                       (an update in flight is abandoned: Mars's stop between\n"
            "                       minibatches, measurements are killed)\n"
            "  --resume FILE        continue from a checkpoint (same graph, devices, agent, seed;\n"
            "                       --updates and --samples count from the first run, --time\n"
            "                       from this one)\n"
            "  --init FILE          start from the networks of another run's checkpoint (any graph:\n"
            "                       Mars's transfer; same agent settings and device count), without\n"
            "                       its counters, optimiser state or pre-training\n"
            "evaluation:\n"
            "  --threads N          threads for the policy's products and the evaluations (default 1)\n"
            "  --noise SIGMA        log-normal noise on op times; with --steps N --warmup W the\n"
            "                       papers' protocol (median of the steps after the warm-up;\n"
            "                       --mean: their mean, as EAGLE measured: --steps 15 --warmup 5)\n"
            "  --no-cache           re-evaluate placements seen before\n"
            "  --measure CMD        evaluate each placement with CMD instead of the simulator\n"
            "                       (protocol: docs/measure.md; example: scripts/measure-example.sh)\n"
            "  --measure-timeout S  seconds before a measurement counts as failed (default 600)\n"
            "  --baselines LIST     baseline placers to compare with (default all; none: skip)\n"
            "  --seed N             seeds everything (default 1)\n"
            "  --quiet              no progress on stderr\n"
            "\n"
            "exit status: 0 done, 1 internal failure, 2 bad input or usage, 130 interrupted\n"
            "(the checkpoint and the best placement so far are written first)\n");
}

static volatile sig_atomic_t g_stop;

#define MAX_SETS 128
#define CK_EVERY_S 600.0 /* a checkpoint at least this often (after an update) */

/* One override: --set KEY=VALUE (key NULL) or a component flag. */
typedef struct setting {
    const char *key, *value;
} setting;

/* --grouper, --placer, --algo, --groups at argv[*i]: the value, with *key
 * the setting it overrides; NULL when argv[*i] is another option. */
static const char *component_option(int argc, char **argv, int *i, const char **key) {
    static const char *const opts[][2] = {
        {"--grouper", "grouper"}, {"--placer", "placer"}, {"--algo", "algo"}, {"--groups", "groups"}};
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        const char *v = cli_opt_value(argc, argv, i, opts[k][0]);
        if (v) {
            *key = opts[k][1];
            return v;
        }
    }
    return NULL;
}

static void on_signal(int sig) {
    g_stop = sig;
    signal(sig, SIG_DFL); /* a second one ends the process at once */
}

/* "90", "90s", "10m", "2h" -> seconds; -1 when malformed. */
static double parse_duration(const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || errno || !(v > 0) || !isfinite(v)) return -1;
    if (!strcmp(end, "") || !strcmp(end, "s")) return v;
    if (!strcmp(end, "m")) return v * 60;
    if (!strcmp(end, "h")) return v * 3600;
    return -1;
}

static void format_duration(double s, char *buf, size_t size) {
    if (!isfinite(s) || s < 0) snprintf(buf, size, "?");
    else if (s < 60) snprintf(buf, size, "%.1fs", s);
    else if (s < 3600) snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static const char LOG_HEADER[] = "update,sample,step_time_s,valid,reason,reward,baseline,best_s,wall_s\n";

/* Training curve points kept for the plot. */
typedef struct curve {
    int64_t n, cap;
    double *x, *y, *best;
    unsigned char *valid;
} curve;

static int curve_add(curve *c, double x, double y, int valid, double best) {
    if (c->n == c->cap) {
        int64_t nc = c->cap ? c->cap * 2 : 4096;
        double *nx = realloc(c->x, sizeof(double) * nc), *ny = nx ? realloc(c->y, sizeof(double) * nc) : NULL;
        double *nb = ny ? realloc(c->best, sizeof(double) * nc) : NULL;
        unsigned char *nv = nb ? realloc(c->valid, (size_t)nc) : NULL;
        if (nx) c->x = nx;
        if (ny) c->y = ny;
        if (nb) c->best = nb;
        if (nv) c->valid = nv;
        if (!nv) return -1;
        c->cap = nc;
    }
    c->x[c->n] = x, c->y[c->n] = y, c->valid[c->n] = (unsigned char)valid, c->best[c->n] = best;
    c->n++;
    return 0;
}

/* Splits one CSV line into at most max fields (quotes honoured, in place). */
static int csv_split(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p;
        fields[n++] = p;
        if (*p == '"') {
            char *r = p + 1;
            for (;;) {
                if (!*r) break;
                if (*r == '"' && r[1] == '"') *out++ = '"', r += 2;
                else if (*r == '"') { r++; break; }
                else *out++ = *r++;
            }
            fields[n - 1] = p; /* content copied to the front */
            char *end = r;
            *out = 0;
            if (*end == ',') p = end + 1;
            else return n;
        } else {
            char *comma = strchr(p, ',');
            if (!comma) return n;
            *comma = 0;
            p = comma + 1;
        }
    }
    return n;
}

/* On --resume: keeps the header and the first `rows` rows of the log,
 * refilling the curve from them. Returns 0, or -1 with err set. */
static int log_truncate(const char *path, int64_t rows, curve *c, dp_error *err) {
    FILE *f = fopen(path, "r+");
    if (!f) {
        if (rows == 0) return 0;
        dp_error_set(err, DP_STATUS_IO, "%s: cannot open the log to resume it: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int64_t n = -1; /* the header is row -1 */
    long keep = 0;
    while (n < rows && (len = getline(&line, &cap, f)) > 0) {
        if (n >= 0) {
            char *fld[9];
            if (csv_split(line, fld, 9) < 9) break;
            curve_add(c, (double)atoll(fld[1]) + 1, strtod(fld[2], NULL), atoi(fld[3]), strtod(fld[7], NULL));
        }
        n++;
        keep = ftell(f);
    }
    free(line);
    if (n < rows) {
        fclose(f);
        dp_error_set(err, DP_STATUS_INVALID, "%s: the log has %lld rows, the checkpoint %lld; cannot resume it", path,
                     (long long)(n < 0 ? 0 : n), (long long)rows);
        return -1;
    }
    fflush(f);
    if (ftruncate(fileno(f), keep) != 0) {
        fclose(f);
        dp_error_set(err, DP_STATUS_IO, "%s: cannot truncate the log: %s", path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

typedef struct ref_times {
    double gpu_s, expert_s, best_s;
    int gpu_valid, expert_valid, have_best;
    const char *best_name;
    int n_reports;
    dp_place_report reports[DP_PLACE_METHOD_COUNT];
} ref_times;

/* Runs the listed baselines (simulated) for the comparison. */
/* Runs the listed baselines (NULL: all; "none": none) on sim, for the
 * comparison. */
static dp_status run_baselines(dp_sim *sim, const dp_graph *g, const dp_devices *ds, const char *list, ref_times *rt,
                               dp_error *err) {
    memset(rt, 0, sizeof *rt);
    rt->gpu_s = rt->expert_s = rt->best_s = NAN;
    if (list && !strcmp(list, "none")) return DP_STATUS_OK;
    int want[DP_PLACE_METHOD_COUNT];
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) want[m] = list == NULL;
    if (list) {
        dp_place_method listed[64];
        char bad[128];
        int n = cli_parse_methods(list, listed, 64, bad, sizeof bad);
        if (n <= 0) return dp_error_set(err, DP_STATUS_INVALID, "--baselines: %s", n < 0 ? bad : "no method given");
        for (int k = 0; k < n; k++) want[listed[k]] = 1;
    }
    int32_t *place = malloc(sizeof(int32_t) * (size_t)g->n_ops);
    if (!place) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    dp_place_options opt = dp_place_options_default();
    opt.expert = dp_zoo_expert_placement;
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) {
        if (!want[m]) continue;
        dp_place_report *r = &rt->reports[rt->n_reports++];
        dp_status st = dp_place_evaluate(sim, g, ds, (dp_place_method)m, &opt, place, r, err);
        if (st) {
            free(place);
            return st;
        }
        r->sim.link = NULL;
        if (r->status) continue;
        if (m == DP_PLACE_METHOD_GPU) rt->gpu_s = r->sim.step_time_s, rt->gpu_valid = r->sim.valid;
        if (m == DP_PLACE_METHOD_EXPERT) rt->expert_s = r->sim.step_time_s, rt->expert_valid = r->sim.valid;
        if (r->sim.valid && (!rt->have_best || r->sim.step_time_s < rt->best_s)) {
            rt->best_s = r->sim.step_time_s;
            rt->best_name = dp_place_method_name((dp_place_method)m);
            rt->have_best = 1;
        }
    }
    free(place);
    return DP_STATUS_OK;
}

typedef struct progress {
    int tty, quiet;
    double every_s, last_s, start_s;
    const dp_agent_state *st; /* set once the agent exists */
    double flight_s;          /* the last line about an update in flight */
    double update_s;          /* when the last update ended (or the run began) */
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

/* The last 200 to 400 samples: the window being filled and the one before. */
typedef struct recent_window {
    int64_t n[2], valid[2];
    double sum[2];
} recent_window;

static void recent_add(recent_window *w, int valid, double t) {
    if (w->n[1] >= 200) { /* the current window is full: it becomes the previous one */
        w->n[0] = w->n[1], w->valid[0] = w->valid[1], w->sum[0] = w->sum[1];
        w->n[1] = w->valid[1] = 0, w->sum[1] = 0;
    }
    w->n[1]++;
    if (valid) w->valid[1]++, w->sum[1] += t;
}

static void progress_show(progress *p, const dp_agent_state *s, int64_t total_updates, double time_budget,
                          const recent_window *w, int final) {
    int64_t n = w->n[0] + w->n[1], nv = w->valid[0] + w->valid[1];
    double recent_mean = nv ? (w->sum[0] + w->sum[1]) / nv : NAN, valid_pct = n ? 100.0 * nv / n : 0;
    double now = dp_now_s();
    p->update_s = now;
    if (p->quiet || (!final && now - p->last_s < p->every_s)) return;
    p->last_s = now;
    double el = now - p->start_s;
    double rate = el > 0 ? s->samples / (s->elapsed_s > 0 ? s->elapsed_s : el) : 0;
    double remain = NAN;
    if (total_updates > 0 && s->updates > 0)
        remain = (double)(total_updates - s->updates) * (s->elapsed_s / (double)s->updates);
    if (time_budget > 0) remain = fmin(isfinite(remain) ? remain : INFINITY, time_budget - el);
    char e[32], r[32], best[32], recent[32];
    format_duration(s->elapsed_s, e, sizeof e);
    format_duration(remain, r, sizeof r);
    if (isfinite(s->best_s)) snprintf(best, sizeof best, "%.4f s", s->best_s);
    else snprintf(best, sizeof best, "none yet");
    if (isfinite(recent_mean)) snprintf(recent, sizeof recent, "%.4f s", recent_mean);
    else snprintf(recent, sizeof recent, "-");
    fprintf(stderr, "%supdate %lld  samples %lld  best %s  recent %s  valid %.0f%%  %.1f samples/s  %s  left %s%s",
            p->tty ? "\r\033[K" : "optimize: ", (long long)s->updates, (long long)s->samples, best, recent,
            valid_pct, rate, e, r, p->tty && !final ? "" : "\n");
    fflush(stderr);
}

/* The encoder's pre-training, in chunks of about a second with a progress
 * line, until done or interrupted. */
static dp_status pretrain_run(dp_agent *agent, int quiet, progress *p, double start, double time_budget,
                              dp_error *err) {
    const dp_agent_state *s = dp_agent_get_state(agent);
    int64_t chunk = 1;
    while (!g_stop && s->pretrain_done < s->pretrain_iters && (time_budget < 0 || dp_now_s() - start < time_budget)) {
        double t0 = dp_now_s();
        dp_status st = dp_agent_pretrain(agent, chunk, err);
        if (st) return st;
        double dt = dp_now_s() - t0;
        chunk = dt > 0 ? (int64_t)fmax(1.0, fmin(1000.0, (double)chunk / dt)) : chunk * 2;
        double now = dp_now_s();
        int final = s->pretrain_done == s->pretrain_iters;
        if (quiet || (!final && now - p->last_s < p->every_s)) continue;
        p->last_s = now;
        char e[32];
        format_duration(s->pretrain_s, e, sizeof e);
        fprintf(stderr, "%spre-training %lld/%lld  DGI loss %.4f  lowest %.4f  %s%s", p->tty ? "\r\033[K" : "optimize: ",
                (long long)s->pretrain_done, (long long)s->pretrain_iters, s->pretrain_loss, s->pretrain_best, e,
                p->tty && !final ? "" : "\n");
        fflush(stderr);
    }
    return DP_STATUS_OK;
}

int cmd_optimize(int argc, char **argv) {
    const char *devices = NULL, *agent_name = "hp", *out = NULL, *log_path = NULL, *plot_path = NULL;
    const char *trace_path = NULL, *ck_path = NULL, *resume_path = NULL, *measure = NULL, *baselines = NULL, *v;
    const char *init_path = NULL;
    long updates = -1, samples = -1, seed = 1, threads = 1, ck_every = 50;
    double time_budget = -1, measure_timeout = 600;
    cli_protocol proto = {0.0, 1, 0, 0};
    int json = 0, quiet = 0, no_cache = 0;
    cli_graph_source src = {0};
    setting sets[MAX_SETS];
    const char *key = NULL;
    int n_sets = 0, r;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--no-cache")) {
            no_cache = 1;
        } else if ((r = cli_graph_option("optimize", argc, argv, &i, &src))) {
            if (r < 0) return CLI_EXIT_INPUT;
        } else if ((v = cli_opt_value(argc, argv, &i, "--devices"))) {
            devices = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--agent"))) {
            agent_name = v;
        } else if ((v = component_option(argc, argv, &i, &key)) || (v = cli_opt_value(argc, argv, &i, "--set"))) {
            if (n_sets == MAX_SETS) return cli_usage_error("optimize", "more than %d settings", MAX_SETS);
            sets[n_sets].key = key, sets[n_sets].value = v, n_sets++;
            key = NULL;
        } else if ((v = cli_opt_value(argc, argv, &i, "--updates"))) {
            if (cli_parse_long(v, 1, 100000000L, &updates)) return cli_usage_error("optimize", "--updates must be >= 1");
        } else if ((v = cli_opt_value(argc, argv, &i, "--samples"))) {
            if (cli_parse_long(v, 1, 1000000000L, &samples)) return cli_usage_error("optimize", "--samples must be >= 1");
        } else if ((v = cli_opt_value(argc, argv, &i, "--time"))) {
            if ((time_budget = parse_duration(v)) <= 0)
                return cli_usage_error("optimize", "--time wants a duration such as 90s, 10m or 2h, not \"%s\"", v);
        } else if ((v = cli_opt_value(argc, argv, &i, "--seed"))) {
            if (cli_parse_long(v, 0, 2147483647L, &seed)) return cli_usage_error("optimize", "--seed must be >= 0");
        } else if ((v = cli_opt_value(argc, argv, &i, "--threads"))) {
            if (cli_parse_long(v, 1, 256, &threads)) return cli_usage_error("optimize", "--threads must be in 1..256");
        } else if ((v = cli_opt_value(argc, argv, &i, "-o")) || (v = cli_opt_value(argc, argv, &i, "--out"))) {
            out = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--log"))) {
            log_path = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--plot"))) {
            plot_path = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--trace"))) {
            trace_path = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--checkpoint"))) {
            ck_path = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--checkpoint-every"))) {
            if (cli_parse_long(v, 1, 100000000L, &ck_every))
                return cli_usage_error("optimize", "--checkpoint-every must be >= 1");
        } else if ((v = cli_opt_value(argc, argv, &i, "--resume"))) {
            resume_path = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--init"))) {
            init_path = v;
        } else if ((r = cli_protocol_option("optimize", argc, argv, &i, &proto))) {
            if (r < 0) return CLI_EXIT_INPUT;
        } else if ((v = cli_opt_value(argc, argv, &i, "--measure"))) {
            measure = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--measure-timeout"))) {
            if (cli_parse_double(v, 0.001, 1e6, &measure_timeout))
                return cli_usage_error("optimize", "--measure-timeout must be > 0 seconds");
        } else if ((v = cli_opt_value(argc, argv, &i, "--baselines"))) {
            baselines = v;
        } else {
            return cli_usage_error("optimize", "unknown option \"%s\"", argv[i]);
        }
    }

    /* the configuration: preset, then the overrides in order */
    dp_agent_config cfg;
    if (dp_agent_preset(agent_name, &cfg)) {
        char list[256] = "";
        for (const char *const *p = dp_agent_preset_names(); *p; p++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", p == dp_agent_preset_names() ? "" : ", ", *p);
        return cli_usage_error("optimize", "unknown agent \"%s\" (agents: %s)", agent_name, list);
    }
    dp_error err;
    dp_error_clear(&err);
    for (int k = 0; k < n_sets; k++) {
        const char *kv = sets[k].value;
        if (sets[k].key) {
            if (dp_agent_config_set(&cfg, sets[k].key, kv, &err)) return cli_usage_error("optimize", "%s", err.msg);
            continue;
        }
        if (!strcmp(kv, "help")) {
            char buf[4096];
            dp_agent_config_format(&cfg, buf, sizeof buf);
            printf("settings of agent %s (override with --set KEY=VALUE):\n", cfg.preset);
            for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) printf("  %s\n", t);
            return CLI_EXIT_OK;
        }
        const char *eq = strchr(kv, '=');
        if (!eq) return cli_usage_error("optimize", "--set wants KEY=VALUE, not \"%s\"", kv);
        char kname[64];
        snprintf(kname, sizeof kname, "%.*s",
                 (int)((size_t)(eq - kv) < sizeof kname ? (size_t)(eq - kv) : sizeof kname - 1), kv);
        if (dp_agent_config_set(&cfg, kname, eq + 1, &err)) return cli_usage_error("optimize", "%s", err.msg);
    }
    if (dp_agent_config_check(&cfg, &err)) return cli_usage_error("optimize", "%s", err.msg);
    if (!devices || !*devices) return cli_usage_error("optimize", "--devices SPEC is required");
    if ((updates > 0) + (samples > 0) > 1) return cli_usage_error("optimize", "give one of --updates and --samples");
    if (init_path && resume_path)
        return cli_usage_error("optimize", "--init starts a new run from another's networks; --resume continues one: "
                                           "give one of them");
    if (proto.warmup >= proto.steps)
        return cli_usage_error("optimize", "--warmup (%ld) must be less than --steps (%ld)", proto.warmup, proto.steps);
    if (updates < 0 && samples < 0 && time_budget < 0) updates = 1000;
    if (samples > 0) updates = (samples + cfg.samples - 1) / cfg.samples;
    for (const char *p[] = {out, log_path, plot_path, trace_path, ck_path}, **q = p; q < p + 5; q++)
        if (*q && !**q) return cli_usage_error("optimize", "an output option needs a file name");

    int rc = CLI_EXIT_OK;
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL; /* baselines, the best placement's trace, the lower bound */
    dp_agent *agent = NULL;
    FILE *logf = NULL;
    curve cv = {0};
    ref_times rt;
    memset(&rt, 0, sizeof rt);
    dp_nn_set_threads((int)threads);
    if (!(g = cli_load_graph("optimize", &src, &err)) || !(ds = dp_devices_load(devices, &err)) ||
        !(sim = dp_sim_init(g, ds, &err)))
        goto fail;
    if (run_baselines(sim, g, ds, baselines, &rt, &err)) goto fail;

    dp_agent_eval_options eo = dp_agent_eval_options_default();
    eo.threads = (int32_t)threads;
    eo.cache = !no_cache;
    eo.sim.noise_sigma = proto.noise;
    eo.sim.steps = (int32_t)proto.steps;
    eo.sim.warmup = (int32_t)proto.warmup;
    eo.sim.mean = proto.mean;
    eo.sim.seed = (uint64_t)seed;
    eo.measure_cmd = measure;
    eo.measure_timeout_s = measure_timeout;
    eo.cancel = &g_stop;
    progress pg = {isatty(2), quiet, isatty(2) ? 0.5 : 10.0, 0, dp_now_s(), NULL, 0, dp_now_s()};
    eo.progress = update_progress;
    eo.progress_user = &pg;
    if (!(agent = dp_agent_init(g, ds, &cfg, &eo, (uint64_t)seed, &err))) goto fail;
    const dp_agent_state *s = dp_agent_get_state(agent);
    pg.st = s;
    if (resume_path) {
        if (dp_agent_load(agent, resume_path, &err)) goto fail;
        if (log_path && log_truncate(log_path, s->samples, &cv, &err)) goto fail;
    }
    if (init_path && dp_agent_load_policy(agent, init_path, &err)) goto fail;
    if (log_path) {
        if (!(logf = fopen(log_path, resume_path ? "a" : "w"))) {
            dp_error_set(&err, DP_STATUS_IO, "%s: cannot write the log: %s", log_path, strerror(errno));
            goto fail;
        }
        if (!resume_path || ftell(logf) == 0) fputs(LOG_HEADER, logf);
        fflush(logf);
    }

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (!quiet && !json)
        fprintf(stderr, "optimize: %s on %s, agent %s, %d %s, %lld updates done%s\n", g->name, ds->name, cfg.preset,
                (int)s->n_groups, cfg.encoder == DP_AGENT_ENCODER_NONE ? "groups" : "ops placed one by one",
                (long long)s->updates, resume_path ? " (resumed)" : init_path ? " (networks from --init)" : "");
    double start = dp_now_s(); /* --time counts the pre-training too */
    int64_t pretrained = s->pretrain_done;
    if (pretrain_run(agent, quiet || json, &pg, start, time_budget, &err)) goto fail;
    if (ck_path && s->pretrain_done > pretrained && dp_agent_save(agent, ck_path, &err)) goto fail;
    recent_window rw = {0};
    int64_t since_ck = 0;
    double last_ck = dp_now_s();
    pg.update_s = last_ck; /* the first update starts after the pre-training */
    double last_best = s->best_s;
    while (!g_stop && (updates < 0 || s->updates < updates) && (time_budget < 0 || dp_now_s() - start < time_budget)) {
        if (dp_agent_update(agent, &err)) goto fail;
        since_ck++;
        for (int32_t k = 0; k < s->n_last; k++) {
            const dp_agent_sample *x = &s->last[k];
            int64_t idx = s->samples - s->n_last + k;
            if (logf) {
                fprintf(logf, "%lld,%lld,%.9g,%d,", (long long)(s->updates - 1), (long long)idx, x->step_time_s, x->valid);
                csv_field(logf, x->reason);
                fprintf(logf, ",%.9g,%.9g,%.9g,%.3f\n", x->reward, s->baseline, s->best_s, s->elapsed_s);
            }
            if (curve_add(&cv, (double)idx + 1, x->step_time_s, x->valid, s->best_s)) {
                dp_error_set(&err, DP_STATUS_NOMEM, "out of memory for the training curve");
                goto fail;
            }
            recent_add(&rw, x->valid, x->step_time_s);
        }
        if (logf && fflush(logf)) {
            dp_error_set(&err, DP_STATUS_IO, "%s: cannot write the log", log_path);
            goto fail;
        }
        if (out && s->best_s < last_best && s->best_placement) {
            if (dp_placement_write_file(out, g, ds, s->best_placement, &err)) goto fail;
        }
        last_best = s->best_s;
        if (ck_path && (since_ck >= ck_every || (since_ck > 0 && dp_now_s() - last_ck >= CK_EVERY_S))) {
            if (dp_agent_save(agent, ck_path, &err)) goto fail;
            since_ck = 0, last_ck = dp_now_s();
        }
        progress_show(&pg, s, updates, time_budget, &rw, 0);
    }
    progress_show(&pg, s, updates, time_budget, &rw, 1);
    if (ck_path && (since_ck || g_stop) && dp_agent_save(agent, ck_path, &err)) goto fail;
    if (logf) {
        fclose(logf);
        logf = NULL;
    }
    if (out && s->best_placement && dp_placement_write_file(out, g, ds, s->best_placement, &err)) goto fail;
    if (plot_path) {
        dp_plot_line lines[3];
        int nl = 0;
        char lb[1][96];
        if (rt.gpu_valid) lines[nl++] = (dp_plot_line){"single GPU", rt.gpu_s};
        if (rt.expert_valid) lines[nl++] = (dp_plot_line){"expert", rt.expert_s};
        if (rt.have_best) {
            snprintf(lb[0], sizeof lb[0], "best baseline (%s)", rt.best_name);
            lines[nl++] = (dp_plot_line){lb[0], rt.best_s};
        }
        char title[256];
        snprintf(title, sizeof title, "%s on %s: agent %s", g->name, ds->name, cfg.preset);
        dp_plot_curve pc = {title, "placements sampled", "step time (s)", cv.n, cv.x, cv.y, cv.valid, cv.best, lines, nl};
        if (dp_plot_write_svg(plot_path, &pc, &err)) goto fail;
    }
    if (trace_path && s->best_placement) {
        dp_sim_options o = dp_sim_options_default();
        o.record_trace = 1;
        dp_sim_result res;
        if (dp_sim_run(sim, s->best_placement, &o, &res, &err) || dp_trace_write(sim, trace_path, &err)) goto fail;
    }

    /* the summary */
    dp_agent_bound lb = {0, 0};
    if (dp_agent_lower_bound(g, ds, sim, &lb, &err)) goto fail;
    double ref = NAN;
    const char *ref_name = NULL;
    if (rt.gpu_valid) ref = rt.gpu_s, ref_name = "single GPU";
    if (rt.expert_valid && !(rt.expert_s >= ref)) ref = rt.expert_s, ref_name = "expert";
    double best_any = rt.have_best ? rt.best_s : NAN;
    const char *best_any_name = rt.best_name;
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "graph", json_string(g->name));
        json_object_set_new(o, "ops", json_integer(g->n_ops));
        json_object_set_new(o, "device_set", json_string(ds->name));
        char cbuf[4096];
        dp_agent_config_format(&cfg, cbuf, sizeof cbuf);
        json_object_set_new(o, "agent", json_string(cfg.preset));
        json_object_set_new(o, "settings", json_string(cbuf));
        json_object_set_new(o, "seed", json_integer(seed));
        json_object_set_new(o, "updates", json_integer(s->updates));
        json_object_set_new(o, "samples", json_integer(s->samples));
        json_object_set_new(o, "groups", json_integer(s->n_groups));
        json_object_set_new(o, "best_step_time_s", isfinite(s->best_s) ? json_real(s->best_s) : json_null());
        json_object_set_new(o, "best_update", json_integer(s->best_update));
        json_object_set_new(o, "best_sample", json_integer(s->best_sample));
        json_object_set_new(o, "best_found_s", json_real(s->best_elapsed_s));
        json_object_set_new(o, "train_s", json_real(s->elapsed_s));
        json_object_set_new(o, "pretrain_iters", json_integer(s->pretrain_done));
        json_object_set_new(o, "pretrain_s", json_real(s->pretrain_s));
        json_object_set_new(o, "pretrain_best_loss", isfinite(s->pretrain_best) ? json_real(s->pretrain_best) : json_null());
        json_object_set_new(o, "policy_s", json_real(s->policy_s));
        json_object_set_new(o, "eval_s", json_real(s->eval_s));
        json_object_set_new(o, "cache_lookups", json_integer(s->cache_lookups));
        json_object_set_new(o, "cache_hits", json_integer(s->cache_hits));
        json_object_set_new(o, "single_gpu_s", rt.gpu_valid ? json_real(rt.gpu_s) : json_null());
        json_object_set_new(o, "expert_s", rt.expert_valid ? json_real(rt.expert_s) : json_null());
        json_object_set_new(o, "best_baseline", best_any_name ? json_string(best_any_name) : json_null());
        json_object_set_new(o, "best_baseline_s", isfinite(best_any) ? json_real(best_any) : json_null());
        json_object_set_new(o, "lower_bound_critical_path_s", json_real(lb.critical_path_s));
        json_object_set_new(o, "lower_bound_work_s", json_real(lb.work_s));
        json_object_set_new(o, "interrupted", json_boolean(g_stop != 0));
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
        json_decref(o);
    } else {
        char t1[32], t2[32];
        format_duration(s->elapsed_s, t1, sizeof t1);
        format_duration(s->best_elapsed_s, t2, sizeof t2);
        printf("graph      %s: %d ops on %s (%d devices)\n", g->name, g->n_ops, ds->name, ds->n_devices);
        if (cfg.encoder == DP_AGENT_ENCODER_NONE)
            printf("agent      %s: grouper %s (%d groups), placer %s, %s, %d samples per update\n", cfg.preset,
                   dp_agent_grouper_kind_name(cfg.grouper), (int)s->n_groups, dp_agent_placer_kind_name(cfg.placer),
                   dp_agent_algo_name(cfg.algo), (int)cfg.samples);
        else
            printf("agent      %s: encoder %s, placer %s over every op, %s, %d samples per update\n", cfg.preset,
                   dp_agent_encoder_name(cfg.encoder), dp_agent_placer_kind_name(cfg.placer),
                   dp_agent_algo_name(cfg.algo), (int)cfg.samples);
        printf("trained    %lld updates, %lld placements in %s (policy %.0f%%, evaluator %.0f%%; cache hits %.1f%%)\n",
               (long long)s->updates, (long long)s->samples, t1,
               s->elapsed_s > 0 ? 100 * s->policy_s / s->elapsed_s : 0, s->elapsed_s > 0 ? 100 * s->eval_s / s->elapsed_s : 0,
               s->cache_lookups ? 100.0 * s->cache_hits / s->cache_lookups : 0);
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
        printf("\n%-26s %12s  %s\n", "placement", "step time", "learned vs it");
        if (isfinite(s->best_s)) printf("%-26s %10.6f s\n", "learned", s->best_s);
        else printf("%-26s %12s  (no valid placement sampled)\n", "learned", "none");
        char name[64];
        struct { const char *label; double t; int ok; } rows[3] = {
            {"single GPU", rt.gpu_s, rt.gpu_valid}, {"expert", rt.expert_s, rt.expert_valid}, {NULL, best_any, rt.have_best}};
        snprintf(name, sizeof name, "best baseline (%s)", best_any_name ? best_any_name : "none");
        rows[2].label = name;
        for (int k = 0; k < 3; k++) {
            if (rows[k].ok && isfinite(s->best_s))
                printf("%-26s %10.6f s  %+.1f%%\n", rows[k].label, rows[k].t, 100.0 * (s->best_s - rows[k].t) / rows[k].t);
            else if (rows[k].ok) printf("%-26s %10.6f s\n", rows[k].label, rows[k].t);
            else printf("%-26s %12s\n", rows[k].label, baselines && !strcmp(baselines, "none") ? "not run" : "invalid or n/a");
        }
        printf("%-26s %10.6f s  (critical path %.6f s, work over all streams %.6f s)\n", "lower bound",
               fmax(lb.critical_path_s, lb.work_s), lb.critical_path_s, lb.work_s);
        if (isfinite(s->best_s))
            printf("\nbest found at update %lld (placement %lld) after %s\n", (long long)s->best_update,
                   (long long)s->best_sample + 1, t2);
        if (isfinite(s->best_s) && ref_name)
            printf("reduction over the better of single GPU and expert (%s): %.1f%%\n", ref_name,
                   100.0 * (ref - s->best_s) / ref);
        if (out && s->best_placement) printf("best placement written to %s\n", out);
    }
    if (g_stop) {
        fprintf(stderr, "optimize: interrupted after update %lld%s%s\n", (long long)s->updates,
                ck_path ? "; resume with --resume " : "", ck_path ? ck_path : "");
        rc = 130;
    }
    goto done;
fail:
    rc = cli_report(&err);
done:
    if (logf) fclose(logf);
    free(cv.x), free(cv.y), free(cv.best), free(cv.valid);
    dp_agent_free(agent);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}
