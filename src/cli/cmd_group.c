/* dplace group: one grouping heuristic on a graph, with its figures. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/group.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dplace group (--graph FILE | --model NAME [--batch N]) --method NAME [--groups N]\n"
            "                    [--devices SPEC] [--json] [--seed N] [-o FILE]\n"
            "\n"
            "Groups the graph's ops and prints the number of groups, ops per group (min,\n"
            "median, max), the bytes crossing groups and the compute balance. Ops of one\n"
            "colocation group always share a group.\n"
            "\n"
            "methods (docs/baselines.md):\n"
            "  colocation  TensorFlow's colocation groups plus ColocRL's rule: an op whose\n"
            "              outputs all go to one other op joins its group (no --groups)\n"
            "  metis       METIS k-way into N groups: least bytes cut, balanced compute\n"
            "  scotch      Scotch partitioning into N groups, same objective\n"
            "  fluid       asynchronous fluid communities (EAGLE's grouper), seeded\n"
            "  random      N groups at random, seeded\n"
            "\n"
            "  --graph FILE     a dplace-graph v1 JSON file\n"
            "  --model NAME     a built-in graph (dplace zoo list)\n"
            "  --batch N        batch size of a built-in graph (default: the papers')\n"
            "  --method NAME    one of the methods above\n"
            "  --groups N       groups wanted (1..1000000; required except for colocation);\n"
            "                   fewer come out when the graph has fewer colocation units\n"
            "  --devices SPEC   device set whose first GPU (else first device) gives the op\n"
            "                   times that weigh compute (default k40x1: a Tesla K40)\n"
            "  --json           print a JSON object instead of the summary\n"
            "  --seed N         seed (default 1)\n"
            "  -o FILE          write the grouping as a dplace-groups v1 file (docs/formats.md)\n"
            "  -h, --help       this text\n");
}

int cmd_group(int argc, char **argv) {
    const char *method_arg = NULL, *devices = "k40x1", *out = NULL, *v;
    int json = 0;
    long seed = 1, groups = -1;
    cli_graph_source src = {0};
    int r;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if ((r = cli_graph_option("group", argc, argv, &i, &src))) {
            if (r < 0) return CLI_EXIT_INPUT;
        } else if ((v = cli_opt_value(argc, argv, &i, "--method"))) {
            method_arg = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--devices"))) {
            devices = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--groups"))) {
            if (cli_parse_long(v, 1, 1000000, &groups))
                return cli_usage_error("group", "--groups must be in 1..1000000");
        } else if ((v = cli_opt_value(argc, argv, &i, "--seed"))) {
            if (cli_parse_long(v, 0, 2147483647L, &seed)) return cli_usage_error("group", "--seed must be >= 0");
        } else {
            return cli_usage_error("group", "unknown option \"%s\"", argv[i]);
        }
    }
    dp_group_method method;
    if (!method_arg || !*method_arg) return cli_usage_error("group", "--method NAME is required");
    if (dp_group_method_from_name(method_arg, &method))
        return cli_usage_error("group", "unknown method \"%s\" (colocation, metis, scotch, fluid, random)",
                               method_arg);
    if (groups < 0 && method != DP_GROUP_METHOD_COLOCATION)
        return cli_usage_error("group", "--groups N is required for %s", method_arg);
    if (out && !*out) return cli_usage_error("group", "-o needs a file name");
    if (!*devices) return cli_usage_error("group", "--devices needs a preset or a file");

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
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "graph", json_string(g->name));
        json_object_set_new(o, "ops", json_integer(g->n_ops));
        json_object_set_new(o, "method", json_string(method_arg));
        json_object_set_new(o, "groups_requested",
                            groups > 0 && method != DP_GROUP_METHOD_COLOCATION ? json_integer(groups) : json_null());
        json_object_set_new(o, "groups", json_integer(st.n_groups));
        json_object_set_new(o, "seed", json_integer(seed));
        json_object_set_new(o, "ops_per_group",
                            json_pack("{s:i, s:i, s:i}", "min", st.min_ops, "median", st.median_ops, "max",
                                      st.max_ops));
        json_object_set_new(o, "cut_bytes", json_integer((json_int_t)st.cut_bytes));
        json_object_set_new(o, "cut_edges", json_integer((json_int_t)st.cut_edges));
        json_object_set_new(o, "reference_device", json_string(reference->model));
        json_object_set_new(o, "compute_total_s", json_real(st.compute_total));
        json_object_set_new(o, "compute_max_s", json_real(st.compute_max));
        json_object_set_new(o, "imbalance", json_real(st.imbalance));
        json_object_set_new(o, "seconds", json_real(took));
        if (out) json_object_set_new(o, "file", json_string(out));
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
        json_decref(o);
    } else {
        char cb[32];
        cli_format_bytes((double)st.cut_bytes, cb, sizeof cb);
        printf("graph      %s: %d ops\n", g->name, g->n_ops);
        if (method == DP_GROUP_METHOD_COLOCATION)
            printf("method     colocation%s\n", groups > 0 ? " (--groups does not apply)" : "");
        else
            printf("method     %s, %ld groups asked, seed %ld\n", method_arg, groups, seed);
        printf("groups     %d; ops per group: min %d, median %d, max %d\n", st.n_groups, st.min_ops, st.median_ops,
               st.max_ops);
        printf("cut        %s in %lld edges (bytes once per tensor and consuming group)\n", cb,
               (long long)st.cut_edges);
        printf("compute    %.6f s in all on %s; heaviest group %.6f s; imbalance %.3f (1 = even)\n",
               st.compute_total, reference->model, st.compute_max, st.imbalance);
        printf("took       %.1f ms\n", took * 1e3);
        if (out) printf("written    %s\n", out);
    }
done:
    free(map);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}
