/* Helpers shared by the subcommands (cli.h): errors and exit statuses,
 * numbers, the graph a command works on, bytes for people. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "dplace/cost.h"
#include "dplace/zoo.h"

int cli_exit_status(const dp_error *err) {
    switch (err->status) {
    case DP_STATUS_OK: return CLI_EXIT_OK;
    case DP_STATUS_PARSE:
    case DP_STATUS_INVALID:
    case DP_STATUS_IO:
    case DP_STATUS_UNSUPPORTED: return CLI_EXIT_INPUT;
    default: return CLI_EXIT_FAIL;
    }
}

int cli_report(const dp_error *err) {
    fprintf(stderr, "dplace: %s\n", err->msg[0] ? err->msg : dp_status_name(err->status));
    return cli_exit_status(err);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dplace %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see: dplace %s --help)\n", cmd);
    return CLI_EXIT_INPUT;
}

int cli_parse_long(const char *text, long min, long max, long *out) {
    char *end = NULL;
    if (!text || !*text) return -1;
    long v = strtol(text, &end, 10);
    if (!end || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *text, double min, double max, double *out) {
    char *end = NULL;
    if (!text || !*text) return -1;
    double v = strtod(text, &end);
    if (!end || *end || !(v >= min && v <= max)) return -1;
    *out = v;
    return 0;
}

void cli_format_bytes(double bytes, char *buf, size_t size) {
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int k = 0;
    while (bytes >= 1024 && k < 5) {
        bytes /= 1024;
        k++;
    }
    snprintf(buf, size, k ? "%.2f %s" : "%.0f %s", bytes, unit[k]);
}

int cli_note_unknown_types(const char *cmd, const char *what, const dp_graph *g, dp_error *err) {
    dp_cost_unknown *u;
    int32_t n;
    if (dp_cost_unknown_types(g, &u, &n, err)) return -1;
    if (n) {
        int32_t ops = 0;
        for (int32_t k = 0; k < n; k++) ops += u[k].n_ops;
        fprintf(stderr, "dplace %s: %s: %d op type%s the cost model does not know, %d op%s priced as element-wise:", cmd,
                what, n, n == 1 ? "" : "s", ops, ops == 1 ? "" : "s");
        for (int32_t k = 0; k < n && k < 20; k++)
            fprintf(stderr, "%s %s (%d)", k ? "," : "", dp_graph_str(g, u[k].type), u[k].n_ops);
        if (n > 20) fprintf(stderr, ", and %d more", n - 20);
        fprintf(stderr, "\n");
    }
    free(u);
    return 0;
}

/* The graph src names, as read or built. */
static dp_graph *load_graph(const char *cmd, const cli_graph_source *src, dp_error *err) {
    if (src->graph_path && src->model) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: give --graph FILE or --model NAME, not both", cmd);
        return NULL;
    }
    if (src->batch && !src->model) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: --batch applies to --model only", cmd);
        return NULL;
    }
    if (src->graph_path) {
        dp_graph *g = dp_graph_read_file(src->graph_path, err);
        if (g && cli_note_unknown_types(cmd, src->graph_path, g, err)) {
            dp_graph_free(g);
            return NULL;
        }
        return g;
    }
    if (src->model) return dp_zoo_build(src->model, (int32_t)src->batch, err);
    dp_error_set(err, DP_STATUS_INVALID, "%s: give --graph FILE or --model NAME", cmd);
    return NULL;
}

dp_graph *cli_load_graph(const char *cmd, const cli_graph_source *src, dp_error *err) {
    int e = src->executor ? dp_executor_from_name(src->executor) : 0;
    if (e < 0) {
        dp_error_set(err, DP_STATUS_INVALID, "%s: --executor: tf or torch, not \"%.64s\"", cmd, src->executor);
        return NULL;
    }
    dp_graph *g = load_graph(cmd, src, err);
    if (g && src->executor) g->executor = (dp_executor)e;
    return g;
}
