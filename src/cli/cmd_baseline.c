/* dplace baseline: every baseline placer on one graph and device set, each
 * placement simulated: one row per method. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/place.h"
#include "dplace/reference.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

/* The first device over its capacity, -1 when none. */
static int32_t oom_device(const dp_sim_result *r) {
    for (int32_t d = 0; d < r->n_devices; d++)
        if (r->device[d].peak_bytes > r->device[d].memory_bytes) return d;
    return -1;
}

/* "valid", "OOM gpu:1" or "INVALID colocation". */
static void verdict_text(const dp_devices *ds, const dp_sim_result *r, char *buf, size_t size) {
    int32_t d = oom_device(r);
    if (r->valid) snprintf(buf, size, "valid");
    else if (r->verdict == DP_SIM_VERDICT_OOM && d >= 0) snprintf(buf, size, "OOM %s", ds->devices[d].name);
    else snprintf(buf, size, "INVALID %s", dp_sim_verdict_name(r->verdict));
}

/* What method m placed under opt into buf: "-" (cpu, gpu, expert: every op
 * on its device), "module" (the accel placers: always modules), the grouping
 * step's name, or the modules' spec. */
static void units_name(dp_place_method m, const dp_place_options *opt, char *buf, size_t size) {
    if (m <= DP_PLACE_METHOD_EXPERT) snprintf(buf, size, "-");
    else if (m >= DP_PLACE_METHOD_ACCEL_BALANCED) snprintf(buf, size, "module");
    else if (opt->units.kind == DP_UNITS_MODULE) dp_units_spec_format(opt->units, buf, size);
    else snprintf(buf, size, "%s", dp_place_group_name(dp_place_group_of(m, opt)));
}

/* The human table: one row per method, then the reasons of invalid rows. */
static void print_table(const dp_graph *g, const dp_devices *ds, const dp_place_report *reps, int n,
                        const dp_place_options *opt, const char *out_dir) {
    dp_graph_stats gs;
    dp_graph_get_stats(g, &gs);
    char pb[32];
    cli_format_bytes((double)gs.total_param_bytes, pb, sizeof pb);
    printf("graph    %s: %d ops, %lld edges, %.3g GFLOP, parameters %s\n", g->name, gs.n_ops, (long long)gs.n_edges,
           gs.total_flops / 1e9, pb);
    printf("devices  %s: %d devices\n\n", ds->name, ds->n_devices);
    printf("%-8s %-10s %12s  %-16s %11s %11s  peak memory:", "method", "units", "step time", "verdict", "place time",
           "crossing");
    for (int32_t d = 0; d < ds->n_devices; d++) printf(" %10s", ds->devices[d].name);
    printf("\n");
    for (int i = 0; i < n; i++) {
        const dp_place_report *r = &reps[i];
        const char *name = dp_place_method_name(r->method);
        char units[32];
        units_name(r->method, opt, units, sizeof units);
        if (r->status) {
            printf("%-8s cannot apply: %s\n", name, r->reason);
            continue;
        }
        char verdict[96], cross[32];
        verdict_text(ds, &r->sim, verdict, sizeof verdict);
        cli_format_bytes((double)r->sim.transfer_bytes, cross, sizeof cross);
        printf("%-8s %-10s %10.6f s  %-16s %8.1f ms %11s             ", name, units, r->sim.step_time_s, verdict,
               r->place_s * 1e3, cross);
        for (int32_t d = 0; d < ds->n_devices; d++) {
            char mem[32], cell[40];
            cli_format_bytes((double)r->sim.device[d].peak_bytes, mem, sizeof mem);
            snprintf(cell, sizeof cell, "%s%s", mem,
                     r->sim.device[d].peak_bytes > r->sim.device[d].memory_bytes ? "!" : "");
            printf(" %10s", cell);
        }
        printf("\n");
    }
    int notes = 0;
    for (int i = 0; i < n; i++) {
        const dp_place_report *r = &reps[i];
        if (r->status || r->sim.valid) continue;
        if (!notes++) printf("\n");
        printf("%-8s %s\n", dp_place_method_name(r->method), r->sim.reason);
    }
    printf("\nunits: what the placer places (none: TensorFlow's colocation groups; colocation: Baechi's\n"
           "co-placement; --group; module: whole modules of a PyTorch export, --units); crossing: bytes\n"
           "sent between devices in one step; \"!\": over the device's memory\n");
    if (out_dir) printf("placements written to %s/METHOD.json\n", out_dir);
}

/* The same as one JSON object. */
static void print_json(const dp_graph *g, const dp_devices *ds, const dp_place_report *reps, int n,
                       const dp_place_options *opt, const char *out_dir) {
    json_t *o = json_object();
    json_object_set_new(o, "graph", json_string(g->name));
    json_object_set_new(o, "ops", json_integer(g->n_ops));
    json_object_set_new(o, "device_set", json_string(ds->name));
    json_t *rows = json_array();
    for (int i = 0; i < n; i++) {
        const dp_place_report *r = &reps[i];
        json_t *row = json_object();
        const char *name = dp_place_method_name(r->method);
        json_object_set_new(row, "method", json_string(name));
        char units[32];
        units_name(r->method, opt, units, sizeof units);
        json_object_set_new(row, "units", r->method <= DP_PLACE_METHOD_EXPERT ? json_null() : json_string(units));
        json_object_set_new(row, "rules",
                            r->rules == DP_PLACE_RULES_BEST ? json_null() : json_string(dp_place_rules_name(r->rules)));
        json_object_set_new(row, "applied", json_boolean(r->status == DP_STATUS_OK));
        json_object_set_new(row, "place_seconds", json_real(r->place_s));
        if (r->status) {
            json_object_set_new(row, "reason", json_string(r->reason));
            json_array_append_new(rows, row);
            continue;
        }
        int32_t od = oom_device(&r->sim);
        json_object_set_new(row, "step_time_s", json_real(r->sim.step_time_s));
        json_object_set_new(row, "valid", json_boolean(r->sim.valid));
        json_object_set_new(row, "verdict", json_string(dp_sim_verdict_name(r->sim.verdict)));
        json_object_set_new(row, "reason", json_string(r->sim.reason));
        json_object_set_new(row, "oom_device", od >= 0 ? json_string(ds->devices[od].name) : json_null());
        json_object_set_new(row, "transfer_bytes", json_integer((json_int_t)r->sim.transfer_bytes));
        json_object_set_new(row, "transfers", json_integer(r->sim.n_transfers));
        json_object_set_new(row, "devices_used", json_integer(r->n_used));
        json_t *devs = json_array();
        for (int32_t d = 0; d < ds->n_devices; d++) {
            const dp_sim_device_stats *st = &r->sim.device[d];
            json_array_append_new(devs, json_pack("{s:s, s:i, s:f, s:I, s:I}", "name", ds->devices[d].name, "ops",
                                                  st->n_ops, "busy_s", st->busy_s, "peak_bytes",
                                                  (json_int_t)st->peak_bytes, "memory_bytes",
                                                  (json_int_t)st->memory_bytes));
        }
        json_object_set_new(row, "devices", devs);
        if (out_dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.json", out_dir, name);
            json_object_set_new(row, "placement_file", json_string(path));
        }
        json_array_append_new(rows, row);
    }
    json_object_set_new(o, "methods", rows);
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
}

#define MAX_METHODS 64 /* entries of --methods (a method may repeat) */

/* dplace baseline's command line, parsed. */
typedef struct baseline_args {
    cli_graph_source src;
    const char *devices, *out_dir;
    int json;
    dp_place_method methods[MAX_METHODS];
    int n_methods;
    int32_t threads;
    dp_place_options opt;
} baseline_args;

/* --units U into the dp_units_spec at data (a CLI_CUSTOM parser). */
static int parse_units(const cli_option *o, const char *value, void *data, char *msg, size_t size) {
    if (!dp_units_spec_parse(value, data)) return 0;
    snprintf(msg, size, "%s: unknown \"%s\" (module, module:DEPTH, op, auto)", o->name, value);
    return -1;
}

/* --group METHOD into the int32_t at data (a CLI_CUSTOM parser). */
static int parse_group(const cli_option *o, const char *value, void *data, char *msg, size_t size) {
    if (!dp_place_group_from_name(value, data)) return 0;
    snprintf(msg, size, "%s: unknown method \"%s\" (none, colocation, metis, scotch, fluid, random, default)",
             o->name, value);
    return -1;
}

/* Fills a from the command line: CLI_PARSED, or the exit status (help,
 * usage error). */
static int parse_args(int argc, char **argv, baseline_args *a) {
    const char *methods = NULL;
    long seed = 1, n_groups = 256, threads = 1;
    double fraction = 0.9, sct_threshold = 0.1;
    static const char *const yes_no[] = {"yes", "no", NULL};
    int forward_only = 0; /* index in yes_no */
    int32_t group = DP_PLACE_GROUP_DEFAULT;
    dp_units_spec units = {DP_UNITS_AUTO, 0};
    memset(a, 0, sizeof *a);
    const cli_option options[] = {
        CLI_GRAPH_OPTIONS(&a->src),
        {"--devices", NULL, "SPEC", CLI_STRING, .str = &a->devices, .required = 1,
         .help = CLI_DEVICES_HELP},
        {"--methods", NULL, "LIST", CLI_STRING, .str = &methods,
         .help = "comma-separated methods (default: all, in the order above)"},
        {"--json", NULL, NULL, CLI_FLAG, .flag = &a->json, .help = "print a JSON object instead of the table"},
        {"--out-dir", NULL, "DIR", CLI_STRING, .str = &a->out_dir,
         .help = "write each placement as DIR/METHOD.json (dplace-placement v1; DIR is created if missing)"},
        {"--seed", NULL, "N", CLI_LONG, .num = &seed, .min = 0, .max = 2147483647L, .range = ">= 0",
         .help = "seed of Scotch's and METIS's random state (default 1)"},
        {"--threads", NULL, "N", CLI_LONG, .num = &threads, .min = 1, .max = 256, .range = "in 1..256",
         .help = "placers run at once (default 1); the table is the same whatever N"},
        {"--memory-fraction", NULL, "F", CLI_DOUBLE, .real = &fraction, .min = 1e-6, .max = 1, .range = "in (0, 1]",
         .help = "share of each device's memory m-topo and m-etf fill (0 < F <= 1, default 0.9)"},
        {"--group", NULL, "METHOD", CLI_CUSTOM, .data = &group, .parse = parse_group,
         .help = "grouping step before the placers (not cpu, gpu, expert): none (TensorFlow's colocation groups), "
                 "colocation (Baechi's co-placement), metis, scotch, fluid, random; default: none for every method "
                 "(on the zoo it beats co-placement for m-etf; docs/baselines.md)"},
        {"--groups", NULL, "N", CLI_LONG, .num = &n_groups, .min = 1, .max = 1000000L,
         .help = "groups made by metis, scotch, fluid, random (default 256)"},
        {"--sct-threshold", NULL, "X", CLI_DOUBLE, .real = &sct_threshold, .min = 1e-9, .max = 1,
         .range = "in (0, 1]",
         .help = "m-sct: LP value under which an edge is a favourite child (0 < X <= 1, default 0.1, Baechi's)"},
        {"--units", NULL, "U", CLI_CUSTOM, .data = &units, .parse = parse_units,
         .help = "what the placers but cpu, gpu and expert place: module (a PyTorch export's modules, each whole "
                 "with its gradients and updates: what the user applies; --group does not apply), module:DEPTH "
                 "(cut to DEPTH path components), op (--group's units), auto (default: module on an export of "
                 "scripts/dplace-export-torch, else op)"},
        {"--forward-only", NULL, "B", CLI_CHOICE, .index = &forward_only, .choices = yes_no,
         .help = "m-topo, m-etf, m-sct: yes (default, Baechi's setting) places the forward ops, each gradient op "
                 "with the forward op it differentiates (read from the \"gradients/\" scopes); no: every op"},
        CLI_END};
    const cli_command cmd = {
        .name = "baseline",
        .synopsis =
            "dplace baseline (--graph FILE | --model NAME [--batch N]) --devices SPEC [--methods LIST]\n"
            "                       [--json] [--out-dir DIR] [--seed N] [--threads N] [--memory-fraction F]\n"
            "                       [--group METHOD] [--groups N] [--sct-threshold X] [--forward-only yes|no]\n"
            "                       [--units U]",
        .description =
            "Runs the baseline placers on the graph and the devices, simulates each\n"
            "placement and prints one row per method: the step time, whether it is valid\n"
            "(or out of memory, and on which device), how long the method took, the bytes\n"
            "crossing devices and the peak memory of every device. A method that cannot\n"
            "apply (no expert placement for the graph, no GPU) says why.\n"
            "\n"
            "methods (docs/baselines.md):\n"
            "  cpu      every op on the CPU\n"
            "  gpu      every op on the first GPU; CPU-only ops on the CPU\n"
            "  expert   the papers' human placement of a zoo model\n"
            "  scotch   Scotch static mapping onto all devices, weighted by speed\n"
            "  mincut   the same onto the GPUs only\n"
            "  metis    METIS k-way over the GPUs, part weights by speed\n"
            "  m-topo   Baechi's topological fill of the GPUs up to a memory cap\n"
            "  m-etf    Baechi's earliest-time-first scheduling with memory limits\n"
            "  m-sct    Baechi's m-SCT: m-etf keeping each op's favourite child (an LP\n"
            "           relaxation solved by CLP) on the op's device\n",
        .options = options};
    int r = cli_parse(&cmd, argc, argv, NULL);
    if (r != CLI_PARSED) return r;
    a->n_methods = DP_PLACE_METHOD_COUNT;
    for (int m = 0; m < DP_PLACE_METHOD_COUNT; m++) a->methods[m] = (dp_place_method)m;
    if (methods) {
        dp_error err;
        int32_t n = 0;
        if (!*methods || !strcmp(methods, "none")) return cli_usage_error("baseline", "--methods: no method given");
        if (dp_reference_parse_methods(methods, a->methods, MAX_METHODS, &n, &err))
            return cli_usage_error("baseline", "--methods: %s", err.msg);
        a->n_methods = n;
    }
    a->opt = dp_place_options_default();
    a->threads = (int32_t)threads;
    a->opt.seed = (uint64_t)seed;
    a->opt.memory_fraction = fraction;
    a->opt.group = group;
    a->opt.n_groups = (int32_t)n_groups;
    a->opt.sct_threshold = sct_threshold;
    a->opt.forward_only = forward_only == 0;
    a->opt.expert = dp_zoo_expert_placement;
    a->opt.units = units;
    return CLI_PARSED;
}

/* Places and simulates every method of a, writes the placements to
 * --out-dir (all or none) and prints the table or the JSON; returns the
 * exit status. */
static int run_baseline(const baseline_args *a) {
    const char *out_dir = a->out_dir;
    int n_methods = a->n_methods;
    dp_error err;
    dp_error_clear(&err);
    int rc = CLI_EXIT_OK;
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL;
    dp_reference ref = {0};
    dp_stage stage = {0};
    dp_place_report *reps = calloc((size_t)n_methods, sizeof(dp_place_report));
    if (!reps) {
        dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
        rc = cli_report(&err);
        goto done;
    }
    if (!(g = cli_load_graph("baseline", &a->src, &err)) || !(ds = dp_devices_load(a->devices, &err)) ||
        !(sim = dp_sim_init(g, ds, &err))) {
        rc = cli_report(&err);
        goto done;
    }
    dp_place_options opt = a->opt;
    opt.units = dp_units_spec_resolve(opt.units, g);
    if (opt.units.kind == DP_UNITS_MODULE && !dp_units_has_modules(g)) {
        dp_error_set(&err, DP_STATUS_INVALID,
                     "--units: graph \"%s\" has no modules to place (PyTorch steps exported by "
                     "scripts/dplace-export-torch have): use --units op",
                     g->name);
        rc = cli_report(&err);
        goto done;
    }
    if (out_dir && mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        dp_error_set(&err, DP_STATUS_IO, "%s: cannot create the directory: %s", out_dir, strerror(errno));
        rc = cli_report(&err);
        goto done;
    }
    dp_reference_options ro = dp_reference_options_default();
    ro.place = opt, ro.methods = a->methods, ro.n_methods = n_methods, ro.bound = 0;
    ro.threads = a->threads;
    if (dp_reference_compute(sim, g, ds, &ro, &ref, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    for (int i = 0; i < n_methods; i++) {
        reps[i] = ref.reports[i];
        if (out_dir && reps[i].status == DP_STATUS_OK) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.json", out_dir, dp_place_method_name(a->methods[i]));
            const char *tmp = dp_stage_add(&stage, path, &err); /* all placements or none */
            const int32_t *p = ref.placements + (size_t)i * (size_t)g->n_ops;
            if (!tmp || (opt.units.kind == DP_UNITS_MODULE ? dp_units_write_placement(tmp, g, ds, p, opt.units, &err)
                                                           : dp_placement_write_file(tmp, g, ds, p, &err))) {
                rc = cli_report(&err);
                goto done;
            }
        }
    }
    if (out_dir && dp_stage_commit(&stage, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    if (a->json) print_json(g, ds, reps, n_methods, &opt, out_dir);
    else print_table(g, ds, reps, n_methods, &opt, out_dir);
done:
    dp_stage_abort(&stage);
    free(reps);
    dp_reference_free(&ref);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}

int cmd_baseline(int argc, char **argv) {
    baseline_args a;
    int r = parse_args(argc, argv, &a);
    return r != CLI_PARSED ? r : run_baseline(&a);
}
