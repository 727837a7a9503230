/* Shared pieces of the dplace command-line subcommands. Only the CLI prints
 * and exits; the library returns errors. Exit status: 0 success, 1 internal
 * failure (out of memory, I/O), 2 bad input or usage. */
#ifndef DPLACE_CLI_H
#define DPLACE_CLI_H

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/place.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_INPUT 2

/* Exit status for a library error. */
int cli_exit_status(const dp_error *err);
/* Prints "dplace: MSG" to stderr and returns the exit status for err. */
int cli_report(const dp_error *err);
/* Prints a usage error for `cmd` and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Where a command's graph comes from: --graph FILE, or --model NAME with an
 * optional --batch N (0: the model's default). */
typedef struct cli_graph_source {
    const char *graph_path, *model;
    long batch;
} cli_graph_source;
/* Consumes --graph, --model or --batch at argv[*i] into src: returns 1 when it
 * did, 0 when argv[*i] is another option, -1 after printing a usage error
 * for a bad --batch. */
int cli_graph_option(const char *cmd, int argc, char **argv, int *i, cli_graph_source *src);
/* Parses a comma-separated list of placer names ("cpu,m-etf") into out[max]
 * (a method may repeat); returns the count, or -1 with the bad entry named
 * in bad. */
int cli_parse_methods(const char *list, dp_place_method *out, int max, char *bad, size_t bad_size);
/* The papers' measuring protocol: --noise SIGMA (log-normal noise on op
 * times), --steps N and --warmup W (median of the steps after the warm-up;
 * with --mean their mean, as EAGLE measured). */
typedef struct cli_protocol {
    double noise;
    long steps, warmup;
    int mean;
} cli_protocol;
/* Consumes --noise, --steps, --warmup or --mean at argv[*i] into p: 1 when it did,
 * 0 for another option, -1 after printing a usage error for a bad value. */
int cli_protocol_option(const char *cmd, int argc, char **argv, int *i, cli_protocol *p);
/* Prints one line to stderr naming the op types of g (read from `what`)
 * that the cost model does not know (dp_cost_unknown_types), when there are
 * any; returns -1 with err filled on out of memory. */
int cli_note_unknown_types(const char *cmd, const char *what, const dp_graph *g, dp_error *err);
/* Loads the graph src names: exactly one of --graph and --model, --batch
 * with --model only; a file's unknown op types are noted on stderr. */
dp_graph *cli_load_graph(const char *cmd, const cli_graph_source *src, dp_error *err);

/* Parses a whole number option; returns 0 on success. */
int cli_parse_long(const char *text, long min, long max, long *out);
int cli_parse_double(const char *text, double min, double max, double *out);
/* "--name value" or "--name=value" at argv[*i]: returns the value (advancing
 * *i past it; "" when it is missing), or NULL when argv[*i] is another option. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *name);
/* Writes bytes for people: "512 B", "1.50 MiB". */
void cli_format_bytes(double bytes, char *buf, size_t size);

int cmd_simulate(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_zoo(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_optimize(int argc, char **argv);

#endif
