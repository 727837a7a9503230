/* dplace calibrate: fits a device set's cost-model parameters to measured
 * step times of placements and writes the calibrated devices file; or
 * proposes the placements worth measuring (docs/calibrate.md). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/calib.h"
#include "dplace/measure.h"
#include "dplace/placement.h"
#include "dplace/reference.h"
#include "dplace/zoo.h"

#define MAX_GRAPHS 64

typedef struct calib_args {
    cli_list graphs; /* --graph FILE and --model NAME, in order (key "graph" or "model") */
    cli_list keep;   /* --keep PARAM, in order */
    long batch;
    const char *devices, *csv, *measure, *propose, *out, *executor;
    double holdout, measure_timeout, min_sensitivity;
    long seed, iters;
    int json;
} calib_args;

/* The loaded problem: graphs (with the argument that named each), the
 * device set, and the measurements. */
typedef struct calib_job {
    int n_graphs;
    dp_graph *g[MAX_GRAPHS];
    const char *arg[MAX_GRAPHS]; /* as given: a model name or a graph path */
    int is_model[MAX_GRAPHS];
    dp_devices *ds;
    int32_t n_samples, cap;
    dp_calib_sample *samples;
    char (*labels)[256];
    int32_t **placements;
} calib_job;

static void job_free(calib_job *j) {
    for (int i = 0; i < j->n_graphs; i++)
        dp_graph_free(j->g[i]);
    for (int32_t m = 0; m < j->n_samples; m++)
        free(j->placements[m]);
    free(j->placements), free(j->samples), free(j->labels);
    dp_devices_free(j->ds);
}

/* Appends a measurement (the placement is taken over); 0, or -1 out of memory. */
static int job_add(calib_job *j, int32_t graph, int32_t *placement, double seconds, const char *label) {
    if (j->n_samples == j->cap) {
        int32_t nc = j->cap ? 2 * j->cap : 64;
        dp_calib_sample *s = realloc(j->samples, (size_t)nc * sizeof *s);
        if (s) j->samples = s;
        char(*l)[256] = realloc(j->labels, (size_t)nc * sizeof *l);
        if (l) j->labels = l;
        int32_t **p = realloc(j->placements, (size_t)nc * sizeof *p);
        if (p) j->placements = p;
        if (!s || !l || !p) return -1;
        j->cap = nc;
    }
    int32_t m = j->n_samples++;
    snprintf(j->labels[m], sizeof j->labels[m], "%s", label);
    j->placements[m] = placement;
    j->samples[m] = (dp_calib_sample){graph, placement, seconds, NULL};
    return 0;
}

/* Loads every --graph and --model and the device set; exit status. */
static int load_job(const calib_args *a, calib_job *j) {
    dp_error err;
    for (int i = 0; i < a->graphs.n; i++) {
        if (j->n_graphs == MAX_GRAPHS) return cli_usage_error("calibrate", "at most %d graphs", MAX_GRAPHS);
        cli_graph_source src = {.executor = a->executor};
        int model = !strcmp(a->graphs.item[i].key, "model");
        if (model)
            src.model = a->graphs.item[i].value, src.batch = a->batch;
        else
            src.graph_path = a->graphs.item[i].value;
        dp_graph *g = cli_load_graph("calibrate", &src, &err);
        if (!g) return cli_report(&err);
        j->arg[j->n_graphs] = a->graphs.item[i].value;
        j->is_model[j->n_graphs] = model;
        j->g[j->n_graphs++] = g;
    }
    if (!(j->ds = dp_devices_load(a->devices, &err))) return cli_report(&err);
    for (int i = 0; i < j->n_graphs; i++) {
        dp_sim *sim = dp_sim_init(j->g[i], j->ds, &err);
        if (!sim) return cli_report(&err);
        dp_sim_free(sim);
    }
    return CLI_EXIT_OK;
}

/* The graph a CSV row names: the argument as given, or the graph's own
 * name; empty when there is one graph. -1: none. */
static int find_graph(const calib_job *j, const char *name) {
    if (!name[0]) return j->n_graphs == 1 ? 0 : -1;
    for (int i = 0; i < j->n_graphs; i++)
        if (!strcmp(j->arg[i], name)) return i;
    for (int i = 0; i < j->n_graphs; i++)
        if (j->g[i]->name && !strcmp(j->g[i]->name, name)) return i;
    return -1;
}

/* Reads the measurements of --measurements CSV: every row's graph and
 * placement file (relative to the CSV's folder). Bad input: one line naming
 * the file and the row, exit status 2. */
static int read_csv(const calib_args *a, calib_job *j) {
    dp_error err;
    dp_calib_row *rows = NULL;
    int32_t n = 0;
    if (dp_calib_read_measurements(a->csv, &rows, &n, &err)) return cli_report(&err);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", a->csv);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = 0;
    else
        dir[0] = 0;
    int rc = CLI_EXIT_OK;
    for (int32_t r = 0; r < n && !rc; r++) {
        int gi = find_graph(j, rows[r].graph);
        if (gi < 0) {
            fprintf(stderr, "dplace: %s: line %d: graph \"%s\" is none of those given (--graph, --model)%s\n", a->csv,
                    (int)rows[r].line, rows[r].graph, j->n_graphs > 1 ? "; name one with several graphs" : "");
            rc = CLI_EXIT_INPUT;
            break;
        }
        char path[8300], label[512];
        if (rows[r].placement[0] == '/')
            snprintf(path, sizeof path, "%s", rows[r].placement);
        else
            snprintf(path, sizeof path, "%s%s", dir, rows[r].placement);
        int32_t *p = malloc(((size_t)j->g[gi]->n_ops + 1) * sizeof *p);
        if (!p) {
            dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
            rc = cli_report(&err);
            break;
        }
        if (dp_placement_read_file(path, j->g[gi], j->ds, p, &err)) {
            fprintf(stderr, "dplace: %s: line %d: %s\n", a->csv, (int)rows[r].line, err.msg);
            free(p);
            rc = err.status == DP_STATUS_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_INPUT; /* a missing file is bad input */
            break;
        }
        snprintf(label, sizeof label, "%.200s: line %d (%.200s)", a->csv, (int)rows[r].line, rows[r].placement);
        if (job_add(j, gi, p, rows[r].seconds, label)) {
            free(p);
            dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
            rc = cli_report(&err);
        }
    }
    free(rows);
    return rc;
}

/* A file name made of a graph's tag and a placement's name: letters,
 * digits, '.', '-' and '_' kept, anything else '_'. */
static void file_name(const char *tag, const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s-%s.json", tag, name);
    for (char *c = buf; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '-' || *c == '_'))
            *c = '_';
}

/* The tag of graph i in file names: the model's name, or the graph file's
 * name without its folder and ".json". */
static void graph_tag(const calib_job *j, int i, char *buf, size_t size) {
    const char *s = strrchr(j->arg[i], '/');
    snprintf(buf, size, "%s", s ? s + 1 : j->arg[i]);
    size_t n = strlen(buf);
    if (n > 5 && !strcmp(buf + n - 5, ".json")) buf[n - 5] = 0;
}

/* The proposed placements of every graph, in one list. */
typedef struct proposals {
    int n_graphs;
    dp_calib_proposal p[MAX_GRAPHS];
} proposals;

static void proposals_free(proposals *ps) {
    for (int i = 0; i < ps->n_graphs; i++)
        dp_calib_proposal_free(&ps->p[i]);
}

/* Proposes the placements of every graph (singles, baselines, splits). */
static int propose_all(calib_job *j, proposals *ps) {
    dp_error err;
    memset(ps, 0, sizeof *ps);
    dp_reference_options ro = dp_reference_options_default();
    ro.bound = 0;
    ro.place.expert = dp_zoo_expert_placement;
    for (int i = 0; i < j->n_graphs; i++) {
        dp_sim *sim = dp_sim_init(j->g[i], j->ds, &err);
        if (!sim) return cli_report(&err);
        dp_status st = dp_calib_propose(sim, j->g[i], j->ds, &ro, &ps->p[i], &err);
        dp_sim_free(sim);
        if (st) return cli_report(&err);
        ps->n_graphs = i + 1;
    }
    return CLI_EXIT_OK;
}

/* Writes every proposed placement into dir (all or none), and the CSV
 * template DIR/measurements.csv unless with_csv is 0. */
static int write_proposals(const calib_job *j, const proposals *ps, const char *dir, int with_csv) {
    dp_error err;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "dplace: %s: cannot create the directory: %s\n", dir, strerror(errno));
        return CLI_EXIT_INPUT;
    }
    dp_stage stage = {0};
    char path[8300], name[256], tag[128];
    const char *tmp = NULL;
    FILE *csv = NULL;
    if (with_csv) {
        snprintf(path, sizeof path, "%s/measurements.csv", dir);
        if (!(tmp = dp_stage_add(&stage, path, &err)) || !(csv = fopen(tmp, "w"))) goto fail;
        fprintf(csv,
                "# dplace calibrate: placements proposed for %s; measure each one's training step and fill in\n"
                "# its seconds, then: dplace calibrate ... --measurements %s\ngraph,placement_file,seconds\n",
                j->ds->name, path);
    }
    for (int i = 0; i < ps->n_graphs; i++) {
        graph_tag(j, i, tag, sizeof tag);
        for (int32_t k = 0; k < ps->p[i].n; k++) {
            file_name(tag, ps->p[i].name[k], name, sizeof name);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            if (!(tmp = dp_stage_add(&stage, path, &err)) ||
                dp_placement_write_file(tmp, j->g[i], j->ds, ps->p[i].placements + (size_t)k * ps->p[i].n_ops, &err))
                goto fail;
            if (csv) fprintf(csv, "%s,%s,\n", j->arg[i], name);
        }
    }
    if (csv && fclose(csv) != 0) {
        csv = NULL;
        dp_error_set(&err, DP_STATUS_IO, "%s/measurements.csv: write failed", dir);
        goto fail;
    }
    csv = NULL;
    if (dp_stage_commit(&stage, &err)) return cli_report(&err);
    return CLI_EXIT_OK;
fail:
    if (csv) fclose(csv);
    dp_stage_abort(&stage);
    return cli_report(&err);
}

/* Measures every proposed placement with --measure CMD (its file in dir),
 * keeping those it times; a failed or out-of-memory placement is left out
 * with a line on stderr. When keep_csv, DIR/measurements.csv gets the
 * times. */
static int measure_all(const calib_args *a, calib_job *j, const proposals *ps, const char *dir, int keep_csv) {
    dp_error err;
    char path[8300], name[256], tag[128], env[4200];
    int total = 0, done = 0;
    for (int i = 0; i < ps->n_graphs; i++)
        total += ps->p[i].n;
    FILE *csv = NULL;
    dp_atomic_file af;
    snprintf(path, sizeof path, "%s/measurements.csv", dir);
    if (keep_csv) {
        if (dp_atomic_open(&af, path, &err)) return cli_report(&err);
        csv = af.f;
        fprintf(csv, "# dplace calibrate --measure: step times on %s\ngraph,placement_file,seconds\n", j->ds->name);
    }
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < ps->n_graphs && !rc; i++) {
        graph_tag(j, i, tag, sizeof tag);
        snprintf(env, sizeof env, "%s=%s", j->is_model[i] ? "DPLACE_MODEL" : "DPLACE_GRAPH", j->arg[i]);
        const char *envs[] = {env, NULL};
        dp_measure_options mo = dp_measure_options_default(a->measure_timeout);
        mo.env = envs;
        for (int32_t k = 0; k < ps->p[i].n && !rc; k++) {
            file_name(tag, ps->p[i].name[k], name, sizeof name);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            dp_measure_result res;
            if (dp_measure_run_opts(a->measure, path, &mo, &res, &err)) {
                rc = cli_report(&err);
                break;
            }
            done++;
            if (res.outcome != DP_MEASURE_OUTCOME_OK) {
                fprintf(stderr, "calibrate: %d/%d %s %s: %s (%s): left out\n", done, total, tag, ps->p[i].name[k],
                        dp_measure_outcome_name(res.outcome), res.reason);
                if (csv) fprintf(csv, "# %s,%s: %s\n", j->arg[i], name, dp_measure_outcome_name(res.outcome));
                continue;
            }
            fprintf(stderr, "calibrate: %d/%d %s %s: %.6g s\n", done, total, tag, ps->p[i].name[k], res.step_time_s);
            if (csv) fprintf(csv, "%s,%s,%.9g\n", j->arg[i], name, res.step_time_s);
            size_t bytes = (size_t)ps->p[i].n_ops * sizeof(int32_t);
            int32_t *p = malloc(bytes + 4);
            char label[256];
            snprintf(label, sizeof label, "%s %s (measured)", tag, ps->p[i].name[k]);
            if (!p || job_add(j, i, p, res.step_time_s, label)) {
                free(p);
                dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
                rc = cli_report(&err);
                break;
            }
            memcpy(p, ps->p[i].placements + (size_t)k * ps->p[i].n_ops, bytes);
        }
    }
    if (csv) {
        if (rc)
            dp_atomic_abort(&af);
        else if (dp_atomic_commit(&af, &err))
            rc = cli_report(&err);
    }
    return rc;
}

/* Removes the proposals' files from the temporary folder dir, then dir. */
static void remove_proposals(const calib_job *j, const proposals *ps, const char *dir) {
    char path[8300], name[256], tag[128];
    for (int i = 0; i < ps->n_graphs; i++) {
        graph_tag(j, i, tag, sizeof tag);
        for (int32_t k = 0; k < ps->p[i].n; k++) {
            file_name(tag, ps->p[i].name[k], name, sizeof name);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            remove(path);
        }
    }
    remove(dir);
}

/* Prints the fit: errors before and after, the fitted parameters, those
 * left at their prior values. */
static void print_report(const calib_job *j, const dp_calib_result *r, const calib_args *a) {
    printf("calibrate: %d graph%s on %s, %d measurements: %d fitted, %d held out (--holdout %g, --seed %ld)\n",
           j->n_graphs, j->n_graphs > 1 ? "s" : "", j->ds->name, (int)r->n_samples, (int)r->n_fit, (int)r->n_holdout,
           a->holdout, a->seed);
    printf("parameters: %d, fitted %d, not determined %d; %d iterations\n\n", (int)r->n_params, (int)r->n_free,
           (int)(r->n_params - r->n_free), (int)r->iterations);
    printf("%-32s %12s %12s\n", "error (MAPE)", "stock", "calibrated");
    printf("%-32s %11.2f%% %11.2f%%\n", "fitted placements", r->prior_fit_mape, r->fit_mape);
    if (r->n_holdout)
        printf("%-32s %11.2f%% %11.2f%%\n", "held-out placements", r->prior_holdout_mape, r->holdout_mape);
    else
        printf("%-32s %12s %12s\n", "held-out placements", "-", "-");
    printf("\n%-44s %12s %12s %11s\n", "fitted parameter", "stock", "calibrated", "sensitivity");
    for (int32_t p = 0; p < r->n_params; p++) {
        const dp_calib_param *q = &r->params[p];
        if (q->determined) printf("%-44s %12.4g %12.4g %11.3f\n", q->name, q->prior, q->value, q->sensitivity);
    }
    int32_t kept = 0;
    for (int32_t p = 0; p < r->n_params; p++)
        kept += r->params[p].kept;
    if (kept) {
        printf("\nkept (--keep: left at their values in --devices):\n");
        for (int32_t p = 0; p < r->n_params; p++) {
            const dp_calib_param *q = &r->params[p];
            if (q->kept) printf("  %-44s %12.4g  (sensitivity %.3g)\n", q->name, q->prior, q->sensitivity);
        }
    }
    if (r->n_free + kept < r->n_params) {
        printf("\nnot determined (sensitivity under %g: left at their stock values):\n", a->min_sensitivity);
        for (int32_t p = 0; p < r->n_params; p++) {
            const dp_calib_param *q = &r->params[p];
            if (!q->determined && !q->kept)
                printf("  %-44s %12.4g  (sensitivity %.3g)\n", q->name, q->prior, q->sensitivity);
        }
    }
}

/* A JSON number, or null for NaN (no sample) and infinities. */
static json_t *json_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* Prints the fit as one JSON object (--json): what print_report says, each
 * parameter with its bounds and whether it ended at one (a value the
 * measurements pushed as far as the fit lets it go, worth a second pass
 * from the calibrated file), and each measurement with its simulated times;
 * `written` the -o file or NULL. */
static void print_json(const calib_job *j, const dp_calib_result *r, const calib_args *a, const char *written) {
    json_t *o = json_object();
    json_object_set_new(o, "device_set", json_string(j->ds->name));
    json_t *graphs = json_array();
    for (int i = 0; i < j->n_graphs; i++)
        json_array_append_new(graphs, json_string(j->arg[i]));
    json_object_set_new(o, "graphs", graphs);
    json_object_set_new(o, "measurements", json_integer(r->n_samples));
    json_object_set_new(o, "fitted", json_integer(r->n_fit));
    json_object_set_new(o, "held_out", json_integer(r->n_holdout));
    json_object_set_new(o, "holdout", json_real(a->holdout));
    json_object_set_new(o, "seed", json_integer(a->seed));
    json_object_set_new(o, "iterations", json_integer(r->iterations));
    json_object_set_new(o, "min_sensitivity", json_real(a->min_sensitivity));
    json_object_set_new(o, "fit_mape_stock", json_num(r->prior_fit_mape));
    json_object_set_new(o, "fit_mape", json_num(r->fit_mape));
    json_object_set_new(o, "held_out_mape_stock", json_num(r->prior_holdout_mape));
    json_object_set_new(o, "held_out_mape", json_num(r->holdout_mape));
    json_t *params = json_array();
    for (int32_t p = 0; p < r->n_params; p++) {
        const dp_calib_param *q = &r->params[p];
        json_array_append_new(params, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:b}", "name", q->name,
                                                "stock", json_num(q->prior), "calibrated", json_num(q->value), "low",
                                                json_num(q->lo), "high", json_num(q->hi), "sensitivity",
                                                json_num(q->sensitivity), "determined", q->determined, "kept",
                                                q->kept, "at_bound", q->at_bound));
    }
    json_object_set_new(o, "parameters", params);
    json_t *rows = json_array();
    for (int32_t m = 0; m < r->n_samples; m++)
        json_array_append_new(rows, json_pack("{s:s, s:s, s:o, s:o, s:o, s:b}", "label", j->samples[m].label, "graph",
                                              j->arg[j->samples[m].graph], "measured_s",
                                              json_num(j->samples[m].seconds), "stock_s", json_num(r->prior_s[m]),
                                              "calibrated_s", json_num(r->fitted_s[m]), "held_out",
                                              r->held_out[m] != 0));
    json_object_set_new(o, "samples", rows);
    json_object_set_new(o, "written", written ? json_string(written) : json_null());
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
}

/* Fits the measurements, prints the report (or the JSON object) and writes
 * -o. */
static int fit_and_report(const calib_args *a, calib_job *j) {
    dp_error err;
    for (int32_t m = 0; m < j->n_samples; m++)
        j->samples[m].label = j->labels[m];
    dp_calib_options o = dp_calib_options_default();
    o.holdout = a->holdout, o.seed = (uint64_t)a->seed, o.max_iters = (int32_t)a->iters;
    o.min_sensitivity = a->min_sensitivity;
    const char *keep[CLI_LIST_MAX];
    for (int k = 0; k < a->keep.n; k++)
        keep[k] = a->keep.item[k].value;
    o.keep = keep, o.n_keep = a->keep.n;
    dp_calib_result r;
    if (dp_calib_fit((const dp_graph *const *)j->g, j->n_graphs, j->ds, j->samples, j->n_samples, &o, &r, &err))
        return cli_report(&err);
    if (!a->json) print_report(j, &r, a);
    int rc = CLI_EXIT_OK;
    if (a->out) {
        size_t n = strlen(r.calibrated->name);
        if (n + 11 < sizeof r.calibrated->name && (n < 11 || strcmp(r.calibrated->name + n - 11, "-calibrated")))
            strcat(r.calibrated->name, "-calibrated");
        if (dp_devices_write_file(r.calibrated, a->out, &err))
            rc = cli_report(&err);
        else if (!a->json)
            printf("\nwrote %s (dplace-devices v2)\n", a->out);
    }
    if (a->json && !rc) print_json(j, &r, a, a->out);
    dp_calib_result_free(&r);
    return rc;
}

/* Parses the options into a; CLI_PARSED or an exit status. */
static int parse_args(int argc, char **argv, calib_args *a) {
    memset(a, 0, sizeof *a);
    a->holdout = 0.25, a->seed = 1, a->iters = 40, a->measure_timeout = 600, a->min_sensitivity = 0.01;
    const cli_option options[] = {
        {"--graph", NULL, "FILE", CLI_LIST, .list = &a->graphs, .key = "graph",
         .help = "a dplace-graph file the placements are of (repeat for several graphs)"},
        {"--model", NULL, "NAME", CLI_LIST, .list = &a->graphs, .key = "model",
         .help = "a built-in graph (dplace zoo list; repeat for several)"},
        CLI_BATCH_OPTION(&a->batch),
        {"--executor", NULL, "E", CLI_STRING, .str = &a->executor,
         .help = "how the steps ran (docs/simulator.md, \"Executors\"): tf or torch, for every graph; default: "
                 "each graph's"},
        {"--devices", NULL, "SPEC", CLI_STRING, .str = &a->devices, .required = 1,
         .help = "the device set to calibrate: a preset (k40x2, ...) or a dplace-devices file; its values are the "
                 "fit's starting point and the peaks stay as they are"},
        CLI_HEADING("measurements (one of):"),
        {"--measurements", NULL, "CSV", CLI_STRING, .str = &a->csv,
         .help = "measured step times: rows graph,placement_file,seconds under that header (docs/formats.md, "
                 "\"dplace-measurements\"); placement files relative to the CSV's folder"},
        {"--measure", NULL, "CMD", CLI_STRING, .str = &a->measure,
         .help = "measure the proposed placements with CMD, as dplace optimize --measure runs it (docs/measure.md; "
                 "DPLACE_GRAPH holds a --graph file, DPLACE_MODEL a --model name); with --propose DIR the "
                 "placements and their times are kept there"},
        {"--measure-timeout", NULL, "S", CLI_DOUBLE, .real = &a->measure_timeout, .min = 0.001, .max = 1e6,
         .range = "> 0 seconds", .help = "seconds before a measurement counts as failed (default 600)"},
        {"--propose", NULL, "DIR", CLI_STRING, .str = &a->propose,
         .help = "write the placements worth measuring into DIR (each device alone, the baselines, splits that load "
                 "each link) and the template DIR/measurements.csv; no fit without measurements"},
        CLI_HEADING("the fit:"),
        {"--holdout", NULL, "F", CLI_DOUBLE, .real = &a->holdout, .min = 0, .max = 0.9, .range = "in 0..0.9",
         .help = "fraction of the measurements held out of the fit to measure its error on placements it has not "
                 "seen (default 0.25)"},
        {"--seed", NULL, "N", CLI_LONG, .num = &a->seed, .min = 0, .max = 2147483647, .range = ">= 0",
         .help = "chooses the held-out measurements (default 1)"},
        {"--iters", NULL, "N", CLI_LONG, .num = &a->iters, .min = 0, .max = 1000,
         .help = "Levenberg-Marquardt iterations at most (default 40)"},
        {"--min-sensitivity", NULL, "S", CLI_DOUBLE, .real = &a->min_sensitivity, .min = 0, .max = 10,
         .help = "a parameter whose root-mean-square d log(step time) / d log(value) over the fitted measurements is "
                 "below S is not fitted but reported and left as it was (default 0.01)"},
        {"--keep", NULL, "PARAM", CLI_LIST, .list = &a->keep,
         .help = "leave a parameter at its value in --devices, not fitted: its name as the report prints it "
                 "(\"cpu:0 data.memory\") or its last word (\"data.memory\": every device's); repeat for several"},
        {"--json", NULL, NULL, CLI_FLAG, .flag = &a->json,
         .help = "print a JSON object instead of the report: the errors, every parameter with its bounds, every "
                 "measurement with its simulated times"},
        {"--out", "-o", "FILE", CLI_STRING, .str = &a->out,
         .help = "write the calibrated device set (dplace-devices v2, atomically): fitted efficiencies as the "
                 "devices' own, launch overheads, link efficiencies and latencies"},
        CLI_END};
    const cli_command cmd = {
        .name = "calibrate",
        .synopsis = "dplace calibrate (--graph FILE | --model NAME)... --devices SPEC\n"
                    "                        (--measurements CSV | --measure CMD [--propose DIR] | --propose DIR)\n"
                    "                        [--holdout F] [--seed N] [--keep PARAM]... [--json] [-o FILE]",
        .description = "Fits the device set's cost-model parameters to measured step times of\n"
                       "placements: each device's compute and memory efficiency per op class and\n"
                       "its launch overhead, each link's efficiency and latency (devices, and links,\n"
                       "to which the set gives equal values share theirs); the vendors' peaks stay.\n"
                       "A robust least squares on log step time over the simulator. Reports the\n"
                       "error on the fitted placements and on those held out of the fit, and the\n"
                       "parameters the measurements could not determine. docs/calibrate.md.\n",
        .options = options};
    int r = cli_parse(&cmd, argc, argv, NULL);
    if (r != CLI_PARSED) return r;
    if (a->graphs.n == 0) return cli_usage_error("calibrate", "give --graph FILE or --model NAME (or several)");
    int models = 0;
    for (int i = 0; i < a->graphs.n; i++)
        models += !strcmp(a->graphs.item[i].key, "model");
    if (a->batch && !models) return cli_usage_error("calibrate", "--batch applies to --model");
    if (!!a->csv + !!a->measure + (a->propose && !a->measure) != 1)
        return cli_usage_error("calibrate", "give one of --measurements CSV, --measure CMD or --propose DIR");
    if (a->propose && a->json && !a->measure)
        return cli_usage_error("calibrate", "--propose DIR without measurements fits nothing: --json needs measurements");
    if (a->propose && a->out && !a->measure)
        return cli_usage_error("calibrate", "--propose DIR without measurements fits nothing: -o needs measurements");
    return CLI_PARSED;
}

int cmd_calibrate(int argc, char **argv) {
    calib_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_PARSED) return rc;
    calib_job j;
    memset(&j, 0, sizeof j);
    proposals ps;
    memset(&ps, 0, sizeof ps);
    char tmpdir[64] = "";
    rc = load_job(&a, &j);
    if (!rc && a.csv) rc = read_csv(&a, &j);
    if (!rc && !a.csv) rc = propose_all(&j, &ps);
    if (!rc && a.propose && !a.measure) {
        rc = write_proposals(&j, &ps, a.propose, 1);
        int n = 0;
        for (int i = 0; i < ps.n_graphs; i++)
            n += ps.p[i].n;
        if (!rc)
            printf("wrote %d placements and %s/measurements.csv: measure them, fill in the seconds, then "
                   "dplace calibrate --measurements %s/measurements.csv\n",
                   n, a.propose, a.propose);
        goto done;
    }
    if (!rc && a.measure) {
        const char *dir = a.propose;
        if (!dir) {
            snprintf(tmpdir, sizeof tmpdir, "/tmp/dplace-calibrate-XXXXXX");
            if (!mkdtemp(tmpdir)) {
                fprintf(stderr, "dplace: cannot create a temporary folder: %s\n", strerror(errno));
                rc = CLI_EXIT_FAIL;
                tmpdir[0] = 0;
                goto done;
            }
            dir = tmpdir;
        }
        rc = write_proposals(&j, &ps, dir, 0);
        if (!rc) rc = measure_all(&a, &j, &ps, dir, a.propose != NULL);
    }
    if (!rc) rc = fit_and_report(&a, &j);
done:
    if (tmpdir[0]) remove_proposals(&j, &ps, tmpdir);
    proposals_free(&ps);
    job_free(&j);
    return rc;
}
