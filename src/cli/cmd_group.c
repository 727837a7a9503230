/* dplace group: one grouping heuristic on a graph, with its figures. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/group.h"

/* One grouping's figures, for the printers. */
typedef struct group_result {
    const char *name;
    dp_group_method method;
    long groups, seed; /* groups asked (-1: none), the seed */
    const char *out;   /* the file written, or NULL */
    const dp_device *reference;
    dp_group_stats st;
    double took;
} group_result;

/* The figures as one JSON object on stdout. */
static void print_json(const dp_graph *g, const group_result *r) {
    json_t *o = json_object();
    json_object_set_new(o, "graph", json_string(g->name));
    json_object_set_new(o, "ops", json_integer(g->n_ops));
    json_object_set_new(o, "method", json_string(r->name));
    json_object_set_new(o, "groups_requested", r->groups > 0 && r->method != DP_GROUP_METHOD_COLOCATION
                                                   ? json_integer(r->groups)
                                                   : json_null());
    json_object_set_new(o, "groups", json_integer(r->st.n_groups));
    json_object_set_new(o, "seed", json_integer(r->seed));
    json_object_set_new(o, "ops_per_group",
                        json_pack("{s:i, s:i, s:i}", "min", r->st.min_ops, "median", r->st.median_ops, "max",
                                  r->st.max_ops));
    json_object_set_new(o, "cut_bytes", json_integer((json_int_t)r->st.cut_bytes));
    json_object_set_new(o, "cut_edges", json_integer((json_int_t)r->st.cut_edges));
    json_object_set_new(o, "reference_device", json_string(r->reference->model));
    json_object_set_new(o, "compute_total_s", json_real(r->st.compute_total));
    json_object_set_new(o, "compute_max_s", json_real(r->st.compute_max));
    json_object_set_new(o, "imbalance", json_real(r->st.imbalance));
    json_object_set_new(o, "seconds", json_real(r->took));
    if (r->out) json_object_set_new(o, "file", json_string(r->out));
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
}

/* The figures for people. */
static void print_summary(const dp_graph *g, const group_result *r) {
    char cb[32];
    cli_format_bytes((double)r->st.cut_bytes, cb, sizeof cb);
    printf("graph      %s: %d ops\n", g->name, g->n_ops);
    if (r->method == DP_GROUP_METHOD_COLOCATION)
        printf("method     colocation%s\n", r->groups > 0 ? " (--groups does not apply)" : "");
    else
        printf("method     %s, %ld groups asked, seed %ld\n", r->name, r->groups, r->seed);
    printf("groups     %d; ops per group: min %d, median %d, max %d\n", r->st.n_groups, r->st.min_ops,
           r->st.median_ops, r->st.max_ops);
    printf("cut        %s in %lld edges (bytes once per tensor and consuming group)\n", cb, (long long)r->st.cut_edges);
    printf("compute    %.6f s in all on %s; heaviest group %.6f s; imbalance %.3f (1 = even)\n",
           r->st.compute_total, r->reference->model, r->st.compute_max, r->st.imbalance);
    printf("took       %.1f ms\n", r->took * 1e3);
    if (r->out) printf("written    %s\n", r->out);
}

int cmd_group(int argc, char **argv) {
    const char *method_arg = NULL, *devices = "k40x1", *out = NULL;
    int json = 0;
    long seed = 1, groups = -1;
    cli_graph_source src = {0};
    const cli_option options[] = {
        CLI_GRAPH_OPTIONS(&src),
        {"--method", NULL, "NAME", CLI_STRING, .str = &method_arg, .required = 1,
         .help = "one of the methods above"},
        {"--groups", NULL, "N", CLI_LONG, .num = &groups, .min = 1, .max = 1000000,
         .help = "groups wanted (1..1000000; required except for colocation); fewer come out when the graph has "
                 "fewer colocation units"},
        {"--devices", NULL, "SPEC", CLI_STRING, .str = &devices,
         .help = "device set whose first GPU (else first device) gives the op times that weigh compute (default "
                 "k40x1: a Tesla K40)"},
        {"--json", NULL, NULL, CLI_FLAG, .flag = &json, .help = "print a JSON object instead of the summary"},
        {"--seed", NULL, "N", CLI_LONG, .num = &seed, .min = 0, .max = 2147483647L, .range = ">= 0",
         .help = "seed (default 1)"},
        {NULL, "-o", "FILE", CLI_STRING, .str = &out,
         .help = "write the grouping as a dplace-groups v1 file (docs/formats.md)"},
        CLI_END};
    const cli_command cmd = {
        .name = "group",
        .synopsis = "dplace group (--graph FILE | --model NAME [--batch N]) --method NAME [--groups N]\n"
                    "                    [--devices SPEC] [--json] [--seed N] [-o FILE]",
        .description = "Groups the graph's ops and prints the number of groups, ops per group (min,\n"
                       "median, max), the bytes crossing groups and the compute balance. Ops of one\n"
                       "colocation group always share a group.\n"
                       "\n"
                       "methods (docs/baselines.md):\n"
                       "  colocation  TensorFlow's colocation groups plus ColocRL's rule: an op whose\n"
                       "              outputs all go to one other op joins its group (no --groups)\n"
                       "  metis       METIS k-way into N groups: least bytes cut, balanced compute\n"
                       "  scotch      Scotch partitioning into N groups, same objective\n"
                       "  fluid       asynchronous fluid communities (EAGLE's grouper), seeded\n"
                       "  random      N groups at random, seeded\n",
        .options = options};
    int r = cli_parse(&cmd, argc, argv, NULL);
    if (r != CLI_PARSED) return r;
    dp_group_method method;
    if (dp_group_method_from_name(method_arg, &method))
        return cli_usage_error("group", "unknown method \"%s\" (colocation, metis, scotch, fluid, random)",
                               method_arg);
    if (groups < 0 && method != DP_GROUP_METHOD_COLOCATION)
        return cli_usage_error("group", "--groups N is required for %s", method_arg);

    dp_error err;
    dp_error_clear(&err);
    int rc = CLI_EXIT_OK;
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    int32_t *map = NULL;
    if (!(g = cli_load_graph("group", &src, &err)) || !(ds = dp_devices_load(devices, &err))) {
        rc = cli_report(&err);
        goto done;
    }
    if (!(map = malloc((size_t)g->n_ops * sizeof(int32_t)))) {
        dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
        rc = cli_report(&err);
        goto done;
    }
    int32_t ref = dp_devices_nth(ds, DP_DEVKIND_GPU, 0);
    const dp_device *reference = &ds->devices[ref >= 0 ? ref : 0];
    dp_group_options opt = dp_group_options_default();
    opt.n_groups = groups > 0 ? (int32_t)groups : 1;
    opt.seed = (uint64_t)seed;
    opt.reference = reference;
    int32_t n_groups = 0;
    dp_group_stats st;
    double t0 = dp_now_s();
    if (dp_group_run(method, g, &opt, map, &n_groups, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    double took = dp_now_s() - t0;
    if (dp_group_get_stats(g, map, n_groups, reference, &st, &err) ||
        (out && dp_group_write_file(out, g, method_arg, map, n_groups, &err))) {
        rc = cli_report(&err);
        goto done;
    }
    group_result res = {method_arg, method, groups, seed, out, reference, st, took};
    if (json) print_json(g, &res);
    else print_summary(g, &res);
done:
    free(map);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}
