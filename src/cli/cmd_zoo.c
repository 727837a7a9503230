/* dplace zoo: list the built-in models, or build one into a dplace-graph
 * file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/zoo.h"

static int zoo_list(void) {
    printf("%-14s %8s %10s %12s  %s\n", "model", "ops", "GFLOP", "params MiB", "description");
    for (const dp_zoo_entry *e = dp_zoo_list(); e->name; e++) {
        dp_error err;
        dp_graph *g = dp_zoo_build(e->name, 0, &err);
        if (!g) return cli_report(&err);
        dp_graph_stats st;
        dp_graph_get_stats(g, &st);
        printf("%-14s %8d %10.1f %12.1f  %s\n", e->name, st.n_ops, st.total_flops / 1e9,
               (double)st.total_param_bytes / 1048576.0, e->description);
        dp_graph_free(g);
    }
    return CLI_EXIT_OK;
}

int cmd_zoo(int argc, char **argv) {
    const char *out = NULL;
    long batch = 0;
    const cli_option options[] = {
        CLI_BATCH_OPTION(&batch),
        {NULL, "-o", "FILE", CLI_STRING, .str = &out, .help = "output file (build)"},
        CLI_END};
    const cli_command cmd = {
        .name = "zoo",
        .synopsis = "dplace zoo list\n"
                    "       dplace zoo build NAME [--batch N] -o FILE",
        .description = "The four papers' benchmark models as TensorFlow-style training graphs\n"
                       "(forward, gradients, optimizer updates; docs/zoo.md). `list` shows each\n"
                       "model with its op count, GFLOP per step and parameter bytes; `build`\n"
                       "writes one as a dplace-graph v1 file (atomically).\n",
        .options = options};
    cli_args args;
    int r = cli_parse(&cmd, argc, argv, &args);
    if (r != CLI_PARSED) return r;
    if (args.n > 2) return cli_usage_error("zoo", "unexpected argument \"%s\"", args.v[2]);
    const char *action = args.n > 0 ? args.v[0] : NULL, *name = args.n > 1 ? args.v[1] : NULL;
    if (!action) return cli_usage_error("zoo", "give an action: list or build");
    if (!strcmp(action, "list")) {
        if (name || out) return cli_usage_error("zoo", "list takes no arguments");
        return zoo_list();
    }
    if (strcmp(action, "build")) return cli_usage_error("zoo", "unknown action \"%s\" (list, build)", action);
    if (!name) return cli_usage_error("zoo", "build needs a model name (dplace zoo list)");
    if (!out) return cli_usage_error("zoo", "build needs -o FILE");
    dp_error err;
    double t0 = dp_now_s();
    dp_graph *g = dp_zoo_build(name, (int32_t)batch, &err);
    if (!g) return cli_report(&err);
    double built = dp_now_s() - t0;
    int rc = CLI_EXIT_OK;
    if (dp_graph_write_file(g, out, &err)) rc = cli_report(&err);
    else fprintf(stderr, "dplace zoo: built %s (%d ops) in %.3f s, wrote %s\n", name, g->n_ops, built, out);
    dp_graph_free(g);
    return rc;
}
