/* Shared pieces of the dplace command-line subcommands. Only the CLI prints
 * and exits; the library returns errors. Exit status: 0 success, 1 internal
 * failure (out of memory, I/O), 2 bad input or usage.
 *
 * Files, each calling only those after it: main.c dispatches (the command
 * table, top-level --help/--version); cmd_NAME.c is one subcommand;
 * cli_opt.c parses options and writes --help from a command's option table;
 * cli_util.c holds the helpers (errors, graph loading, numbers, bytes). */
#ifndef DPLACE_CLI_H
#define DPLACE_CLI_H

#include <stdio.h>

#include "dplace/devices.h"
#include "dplace/graph.h"
#include "dplace/place.h"
#include "dplace/sim.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_INPUT 2

/* ---- option tables (cli_opt.c) ---------------------------------------------
 *
 * A command describes its options once, in a table of cli_option ending with
 * CLI_END, and cli_parse consumes argv with it: "--name VALUE" and
 * "--name=VALUE" (the same for a short alias: "-o FILE", "-o=FILE"), flags
 * without a value, "-h"/"--help" (prints the help, exit 0), "--" (every
 * argument after it is positional). Options apply in the order given; a later
 * one overrides an earlier one (a CLI_LIST collects them all). The same table
 * writes --help (cli_print_help).
 *
 *     const char *devices = NULL, *out = NULL;
 *     long seed = 1;
 *     int json = 0;
 *     cli_graph_source src = {0};
 *     const cli_option options[] = {
 *         CLI_GRAPH_OPTIONS(&src),
 *         {"--devices", NULL, "SPEC", CLI_STRING, .str = &devices, .required = 1,
 *          .help = "a preset (k40x4, ...) or a dplace-devices JSON file (docs/formats.md)"},
 *         {"--seed", NULL, "N", CLI_LONG, .num = &seed, .min = 0, .max = 2147483647, .range = ">= 0",
 *          .help = "seed (default 1)"},
 *         {"--json", NULL, NULL, CLI_FLAG, .flag = &json, .help = "print a JSON object"},
 *         {"--out", "-o", "FILE", CLI_STRING, .str = &out, .help = "the placement to write"},
 *         CLI_END};
 *     const cli_command cmd = {.name = "example", .synopsis = "dplace example --devices SPEC [--seed N]",
 *                              .description = "Does X.\n", .options = options};
 *     int rc = cli_parse(&cmd, argc, argv, NULL);
 *     if (rc != CLI_PARSED) return rc;
 *
 * Several options may feed one ordered list (optimize's overrides: --set
 * KEY=V and --grouper G in the order given), headings group the help, and
 * a duration reads "90s", "10m" or "2h":
 *
 *     cli_list sets = {0};
 *     double time_s = -1;
 *         CLI_HEADING("components (override the preset's):"),
 *         {"--grouper", NULL, "G", CLI_LIST, .list = &sets, .key = "grouper", .help = "learned, ..."},
 *         {"--set", NULL, "KEY=V", CLI_LIST, .list = &sets, .help = "any setting"}, (key NULL)
 *         {"--time", NULL, "D", CLI_DURATION, .real = &time_s, .help = "wall time: 90s, 10m, 2h"},
 *
 * Usage errors name the option and the value ("--seed must be >= 0, not
 * \"x\""), print "(see: dplace CMD --help)" and make cli_parse return 2. */

typedef enum cli_kind {
    CLI_FLAG,     /* no value: *flag = 1 */
    CLI_STRING,   /* *str = the value, which must not be empty */
    CLI_LONG,     /* *num = a whole number in [min, max] */
    CLI_DOUBLE,   /* *real = a number in [min, max] */
    CLI_DURATION, /* *real = seconds > 0 from "90", "90s", "10m" or "2h" */
    CLI_CHOICE,   /* *index = the position of the value in choices */
    CLI_LIST,     /* appends {key, value} to *list (values kept as given, even empty) */
    CLI_CUSTOM,   /* parse(option, value, data, msg, size): 0, or -1 with msg set */
    CLI_SECTION,  /* no option: help is a heading printed in --help before the next options */
} cli_kind;

struct cli_option;
/* A CLI_CUSTOM option's parser: stores value through data; on a bad value
 * returns -1 with the usage message (naming the option and value) in msg. */
typedef int (*cli_parse_fn)(const struct cli_option *o, const char *value, void *data, char *msg, size_t size);

/* A list of values from repeated options, in the order given: for each, the
 * key of the option (NULL for a plain list option such as --set) and the
 * value. Several options may feed one list (--set KEY=V and --grouper G as
 * the ordered overrides of one configuration). */
#define CLI_LIST_MAX 128
typedef struct cli_list_item {
    const char *key, *value;
} cli_list_item;
typedef struct cli_list {
    int n;
    cli_list_item item[CLI_LIST_MAX];
} cli_list;

/* One option. name is the long form ("--devices") and alias a short one
 * ("-o"); either may be NULL (not both). arg is the value's placeholder in
 * the help and in messages ("FILE"), NULL for CLI_FLAG. Exactly the target
 * field of the kind is set (flag, str, num, real, index, list; data, which
 * CLI_CUSTOM may leave NULL); cli_parse asserts it. */
typedef struct cli_option {
    const char *name, *alias, *arg;
    cli_kind kind;
    int *flag;                   /* CLI_FLAG */
    const char **str;            /* CLI_STRING */
    long *num;                   /* CLI_LONG */
    double *real;                /* CLI_DOUBLE, CLI_DURATION */
    int *index;                  /* CLI_CHOICE */
    cli_list *list;              /* CLI_LIST */
    void *data;                  /* CLI_CUSTOM */
    double min, max;             /* CLI_LONG, CLI_DOUBLE: accepted values */
    const char *range;           /* CLI_LONG, CLI_DOUBLE: the range as messages say it
                                    (">= 0", "in (0, 1]"); NULL: "in MIN..MAX" */
    const char *const *choices;  /* CLI_CHOICE: the accepted values, NULL-terminated */
    const char *key;             /* CLI_LIST: stored with each value */
    cli_parse_fn parse;          /* CLI_CUSTOM */
    int required;                /* missing: "--name ARG is required" */
    const char *help;            /* one paragraph (wrapped; "\n" breaks a line) */
    const char *renamed;         /* an old spelling, accepted until the release
                                  * after the one that renamed it: the
                                  * option's new name; using it warns, and
                                  * --help leaves it out */
} cli_option;

/* The end of a table; a heading in --help before the options after it. */
#define CLI_END {.name = NULL}
#define CLI_HEADING(text) {.kind = CLI_SECTION, .help = (text)}

/* A subcommand: its name, the usage lines after "usage: " (verbatim, several
 * lines allowed), a description and an epilogue (verbatim, may be NULL) and
 * the option table. */
typedef struct cli_command {
    const char *name, *synopsis, *description;
    const cli_option *options;
    const char *epilogue;
} cli_command;

/* Positional arguments (those not starting with '-', "-" itself, and every
 * one after "--"), in order. */
#define CLI_ARGS_MAX 4
typedef struct cli_args {
    int n;
    const char *v[CLI_ARGS_MAX];
} cli_args;

/* cli_parse's answer when the command should go on. */
#define CLI_PARSED (-1)

/* Parses argv[1..argc-1] (argv[0] is the command's name) with cmd's table,
 * storing each value through its option's target. Positional arguments go to
 * args (more than CLI_ARGS_MAX, or any when args is NULL: a usage error).
 * Returns CLI_PARSED when the command should go on; CLI_EXIT_OK after
 * printing the help for -h/--help; CLI_EXIT_INPUT after printing a usage
 * error (unknown option, missing or bad value, missing required option). */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *args);
/* Writes cmd's help to f: usage, description, then each option with its
 * help (sections as headings, -h/--help last), then the epilogue. */
void cli_print_help(const cli_command *cmd, FILE *f);
/* Writes one help entry to f: "  label", then help wrapped as --help wraps
 * it, from column col (on the next line when the label reaches it). */
void cli_print_labelled(FILE *f, const char *label, const char *help, int col);

/* ---- shared option groups -------------------------------------------------- */

/* Where a command's graph comes from: --graph FILE, or --model NAME with an
 * optional --batch N (0: the model's default); --executor NAME, when
 * given, replaces the executor the graph names. */
typedef struct cli_graph_source {
    const char *graph_path, *model, *executor;
    long batch;
} cli_graph_source;

/* --batch N into *(long *)p: a built-in graph's batch size (0 keeps the papers'). */
#define CLI_BATCH_OPTION(p)                                                                                      \
    {"--batch", NULL, "N", CLI_LONG, .num = (p), .min = 1, .max = 65536,                                         \
     .help = "batch size of a built-in graph (default: the papers' for that model)"}
/* The device presets' families, as every --devices option and the help name
 * them (docs/devices.md). */
#define CLI_DEVICE_FAMILIES                                                                                      \
    "k40xN, p100xN, v100-nvlinkxN, v100-pciexN, a100-sxmxN, a100-pciexN, h100-sxmxN, h100-pciexN, h200xN, "    \
    "l4xN with N = 1..8; rtx4090xN with N = 1..4"
/* The help of a --devices SPEC option. */
#define CLI_DEVICES_HELP                                                                                         \
    "a preset (" CLI_DEVICE_FAMILIES "; dplace devices lists them) or a dplace-devices JSON file (docs/formats.md)"
/* --graph, --model, --batch, --executor into the cli_graph_source *src (cli_load_graph). */
#define CLI_GRAPH_OPTIONS(src)                                                                                   \
    {"--graph", NULL, "FILE", CLI_STRING, .str = &(src)->graph_path, .help = "a dplace-graph v1 JSON file"},     \
        {"--model", NULL, "NAME", CLI_STRING, .str = &(src)->model,                                              \
         .help = "a built-in graph (dplace zoo list): inception_v3, resnet152, rnnlm, nmt2, nmt4, nmt8, gnmt4, " \
                 "bert_base, synthetic[-N]"},                                                                    \
        CLI_BATCH_OPTION(&(src)->batch),                                                                         \
        {"--executor", NULL, "E", CLI_STRING, .str = &(src)->executor,                                           \
         .help = "how the step runs (docs/simulator.md, \"Executors\"): tf (TensorFlow's executor) or torch "     \
                 "(PyTorch's eager mode); default: the graph's (a PyTorch export's torch, else tf)"}

/* The papers' measuring protocol: --noise SIGMA (log-normal noise on op
 * times), --steps N and --warmup W (median of the steps after the warm-up;
 * with --mean their mean, as EAGLE measured). The values pass through as
 * numbers; the library judges their ranges (dp_sim_options_check). */
typedef struct cli_protocol {
    double noise;
    long steps, warmup;
    int mean;
} cli_protocol;
/* --noise, --steps, --warmup, --mean into the cli_protocol *p (start it at
 * {0.0, 1, 0, 0}; judge it after parsing: cli_protocol_check). */
#define CLI_PROTOCOL_OPTIONS(p)                                                                                  \
    {"--noise", NULL, "SIGMA", CLI_DOUBLE, .real = &(p)->noise, .min = -1e300, .max = 1e300, .range = "a number", \
     .help = "log-normal noise on every op time (0 = none, the default; at most 5)"},                            \
        {"--steps", NULL, "N", CLI_LONG, .num = &(p)->steps, .min = -2147483647L, .max = 2147483647L,            \
         .range = "a whole number",                                                                             \
         .help = "steps simulated (default 1, at most 1024); with --noise, the median of the steps after the "   \
                 "warm-up is reported, as the papers measured"},                                                 \
        {"--warmup", NULL, "N", CLI_LONG, .num = &(p)->warmup, .min = -2147483647L, .max = 2147483647L,          \
         .range = "a whole number",                                                                             \
         .help = "warm-up steps left out of that median (default 0; fewer than --steps)"},                       \
        {"--mean", NULL, NULL, CLI_FLAG, .flag = &(p)->mean,                                                     \
         .help = "report the mean of those steps instead of the median (EAGLE's protocol: --steps 15 "           \
                 "--warmup 5)"}

/* Prints a usage error with the library's message and returns 2 unless
 * the protocol is one the simulator takes (dp_sim_options_check); 0 then. */
int cli_protocol_check(const char *cmd, const cli_protocol *p);
/* ---- helpers (cli_util.c) ---------------------------------------------------- */

/* Exit status for a library error. */
int cli_exit_status(const dp_error *err);
/* Prints "dplace: MSG" to stderr and returns the exit status for err. */
int cli_report(const dp_error *err);
/* Prints a usage error for `cmd` and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints one line to stderr naming the op types of g (read from `what`)
 * that the cost model does not know (dp_cost_unknown_types), when there are
 * any; returns -1 with err filled on out of memory. */
int cli_note_unknown_types(const char *cmd, const char *what, const dp_graph *g, dp_error *err);
/* Loads the graph src names: exactly one of --graph and --model, --batch
 * with --model only; a file's unknown op types are noted on stderr. */
dp_graph *cli_load_graph(const char *cmd, const cli_graph_source *src, dp_error *err);

/* Parses a whole number in [min, max]; returns 0 on success, -1 (out
 * untouched) when text is empty, not a number or out of range. */
int cli_parse_long(const char *text, long min, long max, long *out);
/* The same for a real number. */
int cli_parse_double(const char *text, double min, double max, double *out);
/* Writes bytes for people: "512 B", "1.50 MiB". */
void cli_format_bytes(double bytes, char *buf, size_t size);

int cmd_simulate(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_zoo(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif
