/* dplace import: converts graphs and splits of other tools to dplace files.
 * Today: the MSR dnn-partitioning graphs and expert splits (docs/import.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/import.h"
#include "dplace/placement.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: dplace import --from msr GRAPH.json -o OUT.json [--devices-out FILE] [OPTIONS]\n"
            "       dplace import --from msr-placement SPLIT.json --graph GRAPH.json -o OUT.json\n"
            "                     [--devices-out FILE] [OPTIONS]\n"
            "\n"
            "Converts a graph of msr-fiddle/dnn-partitioning (NeurIPS 2020; nodes with\n"
            "cpuLatency, fpgaLatency, size, colorClass, isBackwardNode; edges with cost)\n"
            "to a dplace-graph v1 file, or one of their splits (human-experts/*.json) to a\n"
            "dplace-placement v1 file for that graph. A split's \"cpus\" go to cpu:0 and\n"
            "fpgas[k] to gpu:k; nodes it leaves out (the backward pass, given an inference\n"
            "split) go where the listed nodes of their colorClass are. The mapping and its\n"
            "assumptions: docs/import.md.\n"
            "\n"
            "  --from FORMAT         msr (a graph) or msr-placement (a split)\n"
            "  -o FILE               the dplace-graph or dplace-placement file to write\n"
            "  --graph FILE          with msr-placement: the MSR graph file the split is for\n"
            "                        (the original JSON: node ids and colorClasses are needed)\n"
            "  --devices-out FILE    also write the matching dplace-devices file: cpu:0 with\n"
            "                        maxCPUs streams, gpu:0..gpu:(maxFPGAs-1) with\n"
            "                        maxSizePerFPGA bytes, a cpu:0 <-> gpu:k link each\n"
            "  --time-unit UNIT      unit of cpuLatency, fpgaLatency and cost: ms (default),\n"
            "                        us or s\n"
            "  --bandwidth B         bytes/s of each CPU <-> accelerator link (default: the\n"
            "                        median size/cost ratio of the file's edges, else 2 GiB/s)\n"
            "  --edge-bytes WHAT     size: an edge's \"size\" when present, else cost x\n"
            "                        bandwidth (default); cost: cost x bandwidth for every\n"
            "                        edge, so simulated transfers take exactly the costs\n"
            "  --name NAME           graph name (default: the file name without .json)\n"
            "  -h, --help            this text\n"
            "\n"
            "Errors name the file, the item (nodes[i] with its id, edges[i], fpgas[k]) and\n"
            "the problem, with exit status 2; nothing is written then.\n");
}

static void print_import(const char *path, const dp_import_msr *imp, const char *unit) {
    const dp_import_msr_info *in = &imp->info;
    printf("imported %s: %d nodes (%d backward, %d CPU-only), %d edges, %d colocation groups\n", path, in->n_nodes,
           in->n_backward, in->n_cpu_only, in->n_edges, in->n_colocate_groups);
    printf("  times in %s; links cpu:0 <-> gpu:k at %.6g bytes/s (%s)\n", unit, in->bandwidth,
           in->bandwidth_from_file ? "the median size/cost of the file's edges" : "given or default");
    printf("  edges with bytes from cost: %d; with size and cost off that bandwidth by over 1%%: %d\n",
           in->n_edges_bytes_from_cost, in->n_edges_off_bandwidth);
    char mem[32];
    cli_format_bytes(in->max_size_per_fpga, mem, sizeof mem);
    printf("  machine: cpu:0 with %d stream%s (maxCPUs %d), %d accelerator%s of %s\n",
           imp->devices->devices[0].streams, imp->devices->devices[0].streams == 1 ? "" : "s", in->max_cpus,
           in->max_fpgas, in->max_fpgas == 1 ? "" : "s", mem);
}

int cmd_import(int argc, char **argv) {
    const char *from = NULL, *in = NULL, *out = NULL, *graph = NULL, *devices_out = NULL, *v;
    dp_import_msr_options opt = dp_import_msr_options_default();
    const char *unit = "ms";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if ((v = cli_opt_value(argc, argv, &i, "--from"))) {
            from = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--graph"))) {
            graph = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--devices-out"))) {
            devices_out = v;
        } else if ((v = cli_opt_value(argc, argv, &i, "--time-unit"))) {
            unit = v;
            if (!strcmp(v, "ms")) opt.time_unit_s = 1e-3;
            else if (!strcmp(v, "us")) opt.time_unit_s = 1e-6;
            else if (!strcmp(v, "s")) opt.time_unit_s = 1.0;
            else return cli_usage_error("import", "--time-unit must be ms, us or s, not \"%s\"", v);
        } else if ((v = cli_opt_value(argc, argv, &i, "--bandwidth"))) {
            if (cli_parse_double(v, 1.0, 1e18, &opt.bandwidth))
                return cli_usage_error("import", "--bandwidth must be a number of bytes/s in 1..1e18, not \"%s\"", v);
        } else if ((v = cli_opt_value(argc, argv, &i, "--edge-bytes"))) {
            if (!strcmp(v, "size")) opt.edge_bytes = DP_IMPORT_EDGE_BYTES_SIZE;
            else if (!strcmp(v, "cost")) opt.edge_bytes = DP_IMPORT_EDGE_BYTES_COST;
            else return cli_usage_error("import", "--edge-bytes must be size or cost, not \"%s\"", v);
        } else if ((v = cli_opt_value(argc, argv, &i, "--name"))) {
            if (!*v) return cli_usage_error("import", "--name needs a name");
            opt.name = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("import", "unknown option \"%s\"", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return cli_usage_error("import", "give one input file, not \"%s\" and \"%s\"", in, argv[i]);
        }
    }
    if (!from || !*from) return cli_usage_error("import", "--from FORMAT is required (msr or msr-placement)");
    int placement = !strcmp(from, "msr-placement");
    if (!placement && strcmp(from, "msr") != 0)
        return cli_usage_error("import", "unknown --from format \"%s\" (known: msr, msr-placement)", from);
    if (!in) return cli_usage_error("import", "give the %s file to import", placement ? "split" : "graph");
    if (!out || !*out) return cli_usage_error("import", "-o FILE is required");
    if (devices_out && !*devices_out) return cli_usage_error("import", "--devices-out needs a file name");
    if (placement && (!graph || !*graph))
        return cli_usage_error("import", "--from msr-placement needs --graph GRAPH.json, the MSR graph of the split");
    if (!placement && graph)
        return cli_usage_error("import", "--graph is for --from msr-placement; with --from msr the graph is the input");

    dp_error err;
    dp_error_clear(&err);
    int rc = CLI_EXIT_OK;
    int32_t *place = NULL;
    dp_import_split_info sinfo;
    dp_stage stage = {0};
    dp_import_msr *imp = dp_import_msr_read_file(placement ? graph : in, &opt, &err);
    if (!imp) return cli_report(&err);
    if (placement) {
        place = malloc((size_t)imp->graph->n_ops * sizeof(int32_t));
        if (!place) {
            dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
            rc = cli_report(&err);
            goto done;
        }
        if (dp_import_msr_read_split(in, imp, place, &sinfo, &err)) {
            rc = cli_report(&err);
            goto done;
        }
    }
    /* both outputs or neither: staged, then renamed into place together */
    const char *out_tmp = dp_stage_add(&stage, out, &err);
    const char *dev_tmp = out_tmp && devices_out ? dp_stage_add(&stage, devices_out, &err) : NULL;
    if (!out_tmp || (devices_out && !dev_tmp) ||
        (placement ? dp_placement_write_file(out_tmp, imp->graph, imp->devices, place, &err)
                   : dp_graph_write_file(imp->graph, out_tmp, &err)) ||
        (devices_out && dp_devices_write_file(imp->devices, dev_tmp, &err)) || dp_stage_commit(&stage, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    if (placement) {
        printf("placed the %d ops of %s from %s: %d listed, %d placed with their colorClass; %d accelerator%s used, "
               "%d ops on cpu:0\n",
               imp->graph->n_ops, graph, in, sinfo.n_listed, sinfo.n_inferred, sinfo.n_gpus,
               sinfo.n_gpus == 1 ? "" : "s", sinfo.n_on_cpu);
    } else {
        print_import(in, imp, unit);
    }
    printf("wrote %s\n", out);
    if (devices_out) printf("wrote %s\n", devices_out);
done:
    dp_stage_abort(&stage);
    free(place);
    dp_import_msr_free(imp);
    return rc;
}
