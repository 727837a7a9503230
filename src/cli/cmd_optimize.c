/* dplace optimize: the command line of one optimisation job (a learned
 * agent, or dplace's search, on one graph and device set; the job itself:
 * include/dplace/optimize.h): the options, the settings, the dispatch to
 * one process or to the ranks of mpirun, and the job on this process. The
 * progress, the summary and the distributed ranks have files of their own
 * (optimize_cli.h). */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optimize_cli.h"

static const char SYNOPSIS[] =
    "dplace optimize (--graph FILE | --model NAME [--batch N]) --devices SPEC [--agent PRESET]\n"
    "                       [--grouper G] [--placer P] [--algo A] [--groups N] [--set KEY=VALUE]...\n"
    "                       [--updates N | --placements N | --time DURATION] [--seed N] [--threads N]\n"
    "                       [-o FILE] [--log FILE.csv] [--plot FILE.svg] [--trace FILE] [--json]\n"
    "                       [--checkpoint FILE [--checkpoint-every N]] [--resume FILE] [--init FILE]\n"
    "                       [--noise SIGMA] [--steps N] [--warmup N] [--mean] [--no-cache]\n"
    "                       [--measure CMD [--measure-timeout SECONDS]] [--baselines LIST|none]\n"
    "                       [--init-placement FILE] [--search-after DURATION] [--units U]\n"
    "mpirun -n N dplace optimize ... --mpi sync|async [--controllers K]";

static const char EPILOGUE[] = "exit status: 0 done, 1 internal failure, 2 bad input or usage, 130 interrupted\n"
                               "(the checkpoint and the best placement so far are written first)\n";

/* Appends text to buf[size] at *len, wrapped at 80 columns, each line
 * after the first indented by indent spaces. */
static void append_wrapped(char *buf, size_t size, size_t *len, const char *text, int col, int indent) {
    const char *w = text;
    while (*w && *len < size) {
        size_t n = strcspn(w, " ");
        if (col + 1 + (int)n > 80 && col > indent) {
            *len += (size_t)snprintf(buf + *len, size - *len, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            *len += (size_t)snprintf(buf + *len, size - *len, " ");
            col++;
        }
        *len += (size_t)snprintf(buf + *len, size - *len, "%.*s", (int)n, w);
        col += (int)n;
        w += n;
        w += strspn(w, " ");
    }
    if (*len < size) *len += (size_t)snprintf(buf + *len, size - *len, "\n");
}

/* One agent's line of the description: its name, then its summary wrapped. */
static void agent_line(char *buf, size_t size, size_t *len, const char *name, const char *summary) {
    if (*len < size) *len += (size_t)snprintf(buf + *len, size - *len, "  %-16s", name);
    if (*len < size) append_wrapped(buf, size, len, summary, 18, 18);
}

/* The command's description: what it does, and every preset in one line
 * (its summary from the settings' data), then the pretrained placer and
 * the search. */
static void describe(char *buf, size_t size) {
    size_t len = (size_t)snprintf(buf, size, "%s",
                                  "Finds a fast placement: a learned agent samples placements, each is evaluated\n"
                                  "(simulated, or measured by --measure), and the step times train it; or dplace's\n"
                                  "search improves one by moves the simulator judges. Prints progress on stderr and,\n"
                                  "at the end, the best placement's step time beside single GPU, the expert, the\n"
                                  "best baseline placer and the lower bound, and whether the policy improved.\n"
                                  "\n"
                                  "agents (docs/agents.md; --set help lists an agent's settings):\n");
    for (const char *const *p = dp_settings_preset_names(); *p; p++)
        agent_line(buf, size, &len, *p, dp_settings_preset_find(*p)->summary);
    agent_line(buf, size, &len, "pretrained",
               "dplace's placer trained across graphs and machines with the search as teacher "
               "(docs/pretrained.md): places any graph zero-shot in seconds (--updates 0), fine-tunes "
               "on it by REINFORCE, --init FILE another policy file");
    agent_line(buf, size, &len, "search",
               "dplace's own placer (docs/search.md): a simulator-guided Metropolis search "
               "over moves of ops, chains, colocation groups and layer scopes, from the best of the expert, "
               "single GPU, every baseline and --init-placement; an update is one round of moves per thread");
}

/* Parses argv into o: -1 to go on, else the exit status (help, usage errors). */
static int parse_args(int argc, char **argv, opt_args *o) {
    memset(o, 0, sizeof *o);
    o->agent_name = "hp";
    o->updates = o->placements = -1, o->seed = 1, o->threads = 1, o->ck_every = 50, o->controllers = 1;
    o->time_budget = -1, o->measure_timeout = 600, o->search_after = -1;
    o->proto = (cli_protocol){0.0, 1, 0, 0};
    const cli_option options[] = {
        CLI_GRAPH_OPTIONS(&o->src),
        {"--devices", NULL, "SPEC", CLI_STRING, .str = &o->devices, /* required unless --set help */
         .help = CLI_DEVICES_HELP " (required)"},
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
         .help = "any setting (lr, batch, hidden, entropy, elite-moves, moves, ...): --set help lists them by "
                 "component with the preset's values, --set help=all the experimental ones too"},
        CLI_HEADING("budget (default --updates 1000, the papers'):"),
        {"--updates", NULL, "N", CLI_LONG, .num = &o->updates, .min = 0, .max = 100000000L, .range = ">= 0",
         .help = "policy updates (0: the preparation, then the policy's greedy placement alone)"},
        {"--placements", NULL, "N", CLI_LONG, .num = &o->placements, .min = 1, .max = 1000000000L, .range = ">= 1",
         .help = "placements evaluated in all (the per-update count is --set batch)"},
        {"--samples", NULL, "N", CLI_LONG, .num = &o->placements, .min = 1, .max = 1000000000L, .range = ">= 1",
         .renamed = "--placements"},
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
        {"--checkpoint-every", NULL, "N", CLI_LONG, .num = &o->ck_every, .min = -1e15, .max = 1e15,
         .range = "a whole number",
         .help = "updates between checkpoints"},
        {"--resume", NULL, "FILE", CLI_STRING, .str = &o->resume_path,
         .help = "continue from a checkpoint (same graph, devices, agent, seed; --updates and --placements count "
                 "from the first run, --time from this one)"},
        {"--init-placement", NULL, "FILE", CLI_STRING, .str = &o->init_placement,
         .help = "search: a start placement (dplace-placement v1, e.g. another run's -o) beside the baselines'"},
        {"--search-after", NULL, "D", CLI_DURATION, .real = &o->search_after,
         .help = "after a learned agent's run, dplace's search from its best placement for this long (90s, 2m; "
                 "--set search-after; the dplace preset's own); a --time budget includes it: the search gets what the "
                 "budget has left when training ends, more when training stops short of its share"},
        {"--refine", NULL, "D", CLI_DURATION, .real = &o->search_after, .renamed = "--search-after"},
        {"--init", NULL, "FILE", CLI_STRING, .str = &o->init_path,
         .help = "start from the networks of another run's checkpoint (any graph: Mars's transfer; same agent "
                 "settings and device count), without its counters, optimiser state or pre-training; for "
                 "--agent pretrained a policy file (dplace-policy v1) instead of the built-in one"},
        CLI_HEADING("evaluation:"),
        {"--threads", NULL, "N", CLI_LONG, .num = &o->threads, .min = -1e15, .max = 1e15,
         .range = "a whole number",
         .help = "threads for the policy's products and the evaluations (default 1)"},
        CLI_PROTOCOL_OPTIONS(&o->proto),
        {"--no-cache", NULL, NULL, CLI_FLAG, .flag = &o->no_cache, .help = "re-evaluate placements seen before"},
        {"--measure", NULL, "CMD", CLI_STRING, .str = &o->measure,
         .help = "evaluate each placement with CMD instead of the simulator (protocol: docs/measure.md; "
                 "scripts/dplace-measure-torch times a PyTorch model's step)"},
        {"--measure-timeout", NULL, "S", CLI_DOUBLE, .real = &o->measure_timeout, .min = -1e300, .max = 1e300,
         .range = "a number", .help = "seconds before a measurement counts as failed (default 600)"},
        {"--baselines", NULL, "LIST", CLI_STRING, .str = &o->baselines,
         .help = "baseline placers to compare with (default all; none: skip)"},
        {"--units", NULL, "U", CLI_STRING, .str = &o->units,
         .help = "what every method places: module (a PyTorch export's modules, each whole with its gradients "
                 "and updates on one device: what the user applies), module:DEPTH (modules cut to DEPTH path "
                 "components), op (every op on its own: for executors that place ops), auto (default: module "
                 "on an export of scripts/dplace-export-torch, else op)"},
        {"--seed", NULL, "N", CLI_LONG, .num = &o->seed, .min = -1e15, .max = 1e15, .range = "a whole number",
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
    char description[8192];
    describe(description, sizeof description);
    const cli_command cmd = {"optimize", SYNOPSIS, description, options, EPILOGUE};
    return cli_parse(&cmd, argc, argv, NULL);
}

/* --set help: the settings by component group with their values, for a
 * learned agent its groups (and the search's when it searches after), for
 * the search its own; all: the experimental ones too, marked. */
static void print_settings(const opt_args *o, int all) {
    const dp_settings *st = &o->plan.settings;
    int search = o->plan.search, with_search = search || st->search_after_s > 0;
    printf("settings of agent %s (override with --set KEY=VALUE; --set help=all lists every one; docs/agents.md):\n",
           search ? "search" : st->agent.preset);
    int32_t n;
    const dp_setting *t = dp_settings_table(&n);
    for (int gr = 0; gr < DP_SETTING_GROUP_COUNT; gr++) {
        int search_group = gr == DP_SETTING_GROUP_SEARCH, pt_group = gr == DP_SETTING_GROUP_PRETRAINED, heading = 0;
        if (search_group ? !with_search : pt_group ? !o->plan.pretrained : search || o->plan.pretrained) continue;
        for (int32_t k = 0; k < n; k++) {
            const dp_setting *r = &t[k];
            if ((int)r->group != gr || (!all && (r->flags & DP_SETTING_EXPERIMENTAL))) continue;
            if (search && r->target == DP_SETTING_RUN) continue; /* search-after: a learned agent's */
            if (!heading) printf("%s:\n", dp_setting_group_name((dp_setting_group)gr)), heading = 1;
            char v[96], label[160], help[512];
            dp_setting_format(r, st, v, sizeof v);
            snprintf(label, sizeof label, "%s=%s", r->name, v);
            snprintf(help, sizeof help, "%s%s", r->flags & DP_SETTING_EXPERIMENTAL ? "(experimental) " : "", r->help);
            cli_print_labelled(stdout, label, help, 32);
        }
    }
}

/* --set KEY=VALUE and the component flags into the job's list of settings,
 * in order; --set help (or help=all), wherever it stands, into *help (1, or
 * 2 for all). Returns -1 to go on, else the exit status. */
static int collect_sets(opt_args *o, int *help) {
    *help = 0;
    o->n_set_list = 0;
    for (int k = 0; k < o->sets.n; k++) {
        const cli_list_item *it = &o->sets.item[k];
        dp_optimize_set *x = &o->set_list[o->n_set_list];
        if (it->key) {
            x->key = it->key, x->value = it->value, o->n_set_list++;
            continue;
        }
        if (!strcmp(it->value, "help") || !strcmp(it->value, "help=all")) {
            *help = strcmp(it->value, "help") ? 2 : *help > 1 ? 2 : 1;
            continue;
        }
        const char *eq = strchr(it->value, '=');
        if (!eq || eq == it->value) return cli_usage_error("optimize", "--set wants KEY=VALUE, not \"%s\"", it->value);
        size_t len = (size_t)(eq - it->value);
        if (len >= sizeof o->set_keys[0]) return cli_usage_error("optimize", "--set: no setting \"%.*s\"", (int)len, it->value);
        memcpy(o->set_keys[o->n_set_list], it->value, len);
        o->set_keys[o->n_set_list][len] = 0;
        x->key = o->set_keys[o->n_set_list], x->value = eq + 1, o->n_set_list++;
    }
    return -1;
}

/* The options the library judges (dp_optimize_prepare: the settings, the
 * ranges, the rules across options, the same as Python's), then those of
 * the command line alone; --set help prints the settings. Returns -1 to go
 * on, else the exit status. */
static int prepare(opt_args *o) {
    int help;
    int rc = collect_sets(o, &help);
    if (rc >= 0) return rc;
    dp_optimize_options jo = opt_job_options(o, NULL, NULL, NULL);
    dp_error err;
    dp_error_clear(&err);
    if (dp_optimize_prepare(&jo, &o->plan, &err)) return cli_usage_error("optimize", "%s", err.msg);
    if (help) {
        print_settings(o, help > 1);
        return CLI_EXIT_OK;
    }
    for (const char *n = o->plan.notes; *n; n += strcspn(n, "\n") + (n[strcspn(n, "\n")] != 0))
        fprintf(stderr, "optimize: %.*s\n", (int)strcspn(n, "\n"), n);
    if (!o->devices) return cli_usage_error("optimize", "--devices SPEC is required");
    /* the modes by name here: without MPI the dist layer is not built */
    if (o->mpi && strcmp(o->mpi, "sync") && strcmp(o->mpi, "async"))
        return cli_usage_error("optimize", "--mpi: unknown mode \"%s\" (modes: sync, async)", o->mpi);
    if (o->controllers != 1 && !(o->mpi && !strcmp(o->mpi, "async")))
        return cli_usage_error("optimize", "--controllers is for --mpi async");
    if (o->mpi && o->plan.search && strcmp(o->mpi, "sync"))
        return cli_usage_error("optimize", "--agent search runs over ranks with --mpi sync (every rank searches, the "
                                           "best shared), not --mpi %s", o->mpi);
    return -1;
}

/* Started by mpirun with more than one rank but without --mpi: each rank
 * would run the whole job and write the same files. The rank count from
 * the launcher's environment (Open MPI, MPICH/PMI, PMIx); 0 when not
 * launched so. */
static long mpirun_ranks(long *rank) {
    static const char *const sizes[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                           {"PMI_SIZE", "PMI_RANK"},
                                           {"PMIX_SIZE", "PMIX_RANK"}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const char *n = getenv(sizes[k][0]), *r = getenv(sizes[k][1]);
        if (n && *n) {
            *rank = r ? strtol(r, NULL, 10) : 0;
            return strtol(n, NULL, 10);
        }
    }
    *rank = 0;
    return 0;
}

int cmd_optimize(int argc, char **argv) {
    static opt_args o; /* large: its lists of settings */
    int rc = parse_args(argc, argv, &o);
    if (rc < 0) rc = prepare(&o);
    if (rc >= 0) return rc;
    long rank, ranks = mpirun_ranks(&rank);
    if (!o.mpi && ranks > 1) {
        if (rank > 0) return CLI_EXIT_OK; /* said once, by rank 0: a rank that fails first aborts the others */
        return cli_usage_error("optimize", "started by mpirun with %ld ranks but without --mpi: give --mpi sync (rank "
                                           "0 learns, the others evaluate) or --mpi async, or run one process",
                               ranks);
    }
    return o.mpi ? opt_mpi(&o, &argc, &argv) : opt_run(&o, NULL);
}
