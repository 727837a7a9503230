/* dplace command-line entry point: dispatches to subcommands. */
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

const char *cli_opt_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
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

int cli_graph_option(const char *cmd, int argc, char **argv, int *i, cli_graph_source *src) {
    const char *v;
    if ((v = cli_opt_value(argc, argv, i, "--graph"))) {
        src->graph_path = v;
    } else if ((v = cli_opt_value(argc, argv, i, "--model"))) {
        src->model = v;
    } else if ((v = cli_opt_value(argc, argv, i, "--batch"))) {
        if (cli_parse_long(v, 1, 65536, &src->batch)) {
            cli_usage_error(cmd, "--batch must be in 1..65536");
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

int cli_parse_methods(const char *list, dp_place_method *out, int max, char *bad, size_t bad_size) {
    int n = 0;
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        dp_place_method m;
        if (len == 0 || len >= sizeof name || dp_place_method_from_name(name, &m)) {
            snprintf(bad, bad_size, "unknown method \"%.*s\"", (int)len, p);
            return -1;
        }
        if (n == max) {
            snprintf(bad, bad_size, "more than %d methods", max);
            return -1;
        }
        out[n++] = m;
        p = comma ? comma + 1 : p + len;
    }
    return n;
}

int cli_protocol_option(const char *cmd, int argc, char **argv, int *i, cli_protocol *p) {
    const char *v;
    if ((v = cli_opt_value(argc, argv, i, "--steps"))) {
        if (cli_parse_long(v, 1, 1024, &p->steps)) goto bad_steps;
    } else if ((v = cli_opt_value(argc, argv, i, "--warmup"))) {
        if (cli_parse_long(v, 0, 1023, &p->warmup)) goto bad_warmup;
    } else if ((v = cli_opt_value(argc, argv, i, "--noise"))) {
        if (cli_parse_double(v, 0, 5, &p->noise)) goto bad_noise;
    } else if (strcmp(argv[*i], "--mean") == 0) {
        p->mean = 1;
    } else {
        return 0;
    }
    return 1;
bad_steps:
    cli_usage_error(cmd, "--steps must be in 1..1024");
    return -1;
bad_warmup:
    cli_usage_error(cmd, "--warmup must be in 0..1023");
    return -1;
bad_noise:
    cli_usage_error(cmd, "--noise must be in 0..5");
    return -1;
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

dp_graph *cli_load_graph(const char *cmd, const cli_graph_source *src, dp_error *err) {
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

static void print_help(FILE *f) {
    fprintf(f,
            "dplace: fast device placement for neural-network training graphs\n"
            "\n"
            "usage: dplace COMMAND [OPTIONS]\n"
            "\n"
            "commands:\n"
            "  simulate   simulate one training step of a placed graph: step time, memory,\n"
            "             transfers, validity; optional timeline (Chrome trace)\n"
            "  devices    show a device set (preset or file), or write it as a file\n"
            "  zoo        list the built-in models, or build one into a graph file\n"
            "  baseline   run the baseline placers (cpu, gpu, expert, scotch, mincut, metis,\n"
            "             m-topo, m-etf, m-sct) and simulate each placement: one row per method\n"
            "  group      group a graph's ops (colocation, metis, scotch, fluid, random)\n"
            "  import     convert an MSR dnn-partitioning graph or expert split to dplace files\n"
            "  optimize   learn a placement with reinforcement learning (agents hp, colocrl,\n"
            "             eagle, post, mars, ...: dplace optimize --help):\n"
            "             best placement, log, training curve, checkpoints, baseline comparison\n"
            "  help       this text (also: dplace --help, dplace COMMAND --help)\n"
            "  version    print the version\n"
            "\n"
            "Graphs are dplace-graph JSON files (--graph FILE) or built-in models\n"
            "(--model NAME: dplace zoo list). Device sets are presets (k40x2, k40x4,\n"
            "k40x8, p100x4, ...) or dplace-devices JSON files. Formats: docs/formats.md.\n"
            "\n"
            "exit status: 0 success, 1 internal failure, 2 bad input or usage\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("dplace 0.1.0\n");
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "simulate")) return cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "devices")) return cmd_devices(argc - 1, argv + 1);
    if (!strcmp(cmd, "zoo")) return cmd_zoo(argc - 1, argv + 1);
    if (!strcmp(cmd, "baseline")) return cmd_baseline(argc - 1, argv + 1);
    if (!strcmp(cmd, "group")) return cmd_group(argc - 1, argv + 1);
    if (!strcmp(cmd, "import")) return cmd_import(argc - 1, argv + 1);
    if (!strcmp(cmd, "optimize")) return cmd_optimize(argc - 1, argv + 1);
    fprintf(stderr, "dplace: unknown command \"%s\" (see: dplace --help)\n", cmd);
    return CLI_EXIT_INPUT;
}
