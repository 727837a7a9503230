/* dplace command-line entry point: dispatches to the subcommands (the
 * shared helpers live in cli_util.c, option parsing in cli_opt.c). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* The subcommands, in the order the help lists them. */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help; /* "\n" continues on the next line of the list */
} commands[] = {
    {"simulate", cmd_simulate,
     "simulate one training step of a placed graph: step time, memory,\n"
     "transfers, validity; optional timeline (Chrome trace)"},
    {"devices", cmd_devices, "show a device set (preset or file), or write it as a file"},
    {"zoo", cmd_zoo, "list the built-in models, or build one into a graph file"},
    {"baseline", cmd_baseline,
     "run the baseline placers (cpu, gpu, expert, scotch, mincut, metis,\n"
     "m-topo, m-etf, m-sct, accel-balanced, accel-sequential) and simulate\n"
     "each placement: one row per method"},
    {"group", cmd_group, "group a graph's ops (colocation, metis, scotch, fluid, random)"},
    {"import", cmd_import, "convert an MSR dnn-partitioning graph or expert split to dplace files"},
    {"optimize", cmd_optimize,
     "find a fast placement: a learned agent (hp, colocrl, eagle, post, mars,\n"
     "dplace, ...) or dplace's search (dplace optimize --help): the best\n"
     "placement, logs, training curve, checkpoints, the baselines beside it"},
    {"calibrate", cmd_calibrate,
     "fit a device set's efficiencies, launch overheads and links to measured\n"
     "step times, or propose the placements to measure; writes a devices file"},
};

static void print_help(FILE *f) {
    fprintf(f, "dplace: fast device placement for neural-network training graphs\n"
               "\n"
               "usage: dplace COMMAND [OPTIONS]\n"
               "\n"
               "commands:\n");
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        fprintf(f, "  %-10s ", commands[k].name);
        for (const char *p = commands[k].help; *p; p++) {
            fputc(*p, f);
            if (*p == '\n') fprintf(f, "%13s", "");
        }
        fputc('\n', f);
    }
    fprintf(f, "  help       this text (also: dplace --help, dplace COMMAND --help)\n"
               "  version    print the version\n"
               "\n"
               "Graphs are dplace-graph JSON files (--graph FILE) or built-in models\n"
               "(--model NAME: dplace zoo list). Device sets are presets (dplace devices:\n"
               "k40xN, p100xN, v100-nvlinkxN, v100-pciexN, a100-sxmxN, a100-pciexN,\n"
               "h100-sxmxN, h100-pciexN, h200xN, l4xN, rtx4090xN) or dplace-devices JSON\n"
               "files.\n"
               "Formats: docs/formats.md.\n"
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
        printf("dplace %s\n", DPLACE_VERSION); /* project(VERSION) in CMakeLists.txt */
        return CLI_EXIT_OK;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (!strcmp(cmd, commands[k].name)) return commands[k].run(argc - 1, argv + 1);
    fprintf(stderr, "dplace: unknown command \"%s\" (see: dplace --help)\n", cmd);
    return CLI_EXIT_INPUT;
}
