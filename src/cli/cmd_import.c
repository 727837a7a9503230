/* dplace import: converts graphs and splits of other tools to dplace files.
 * Today: the MSR dnn-partitioning graphs and expert splits (docs/import.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/import.h"
#include "dplace/placement.h"

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
    static const char *const units[] = {"ms", "us", "s", NULL};
    static const double unit_s[] = {1e-3, 1e-6, 1.0};
    static const char *const edge_bytes[] = {"size", "cost", NULL};
    const char *from = NULL, *out = NULL, *graph = NULL, *devices_out = NULL;
    dp_import_msr_options opt = dp_import_msr_options_default();
    int unit = 0, edges = 0;
    const cli_option options[] = {
        {"--from", NULL, "FORMAT", CLI_STRING, .str = &from, .help = "msr (a graph) or msr-placement (a split)"},
        {NULL, "-o", "FILE", CLI_STRING, .str = &out, .help = "the dplace-graph or dplace-placement file to write"},
        {"--graph", NULL, "FILE", CLI_STRING, .str = &graph,
         .help = "with msr-placement: the MSR graph file the split is for (the original JSON: node ids and "
                 "colorClasses are needed)"},
        {"--devices-out", NULL, "FILE", CLI_STRING, .str = &devices_out,
         .help = "also write the matching dplace-devices file: cpu:0 with maxCPUs streams, gpu:0..gpu:(maxFPGAs-1) "
                 "with maxSizePerFPGA bytes, a cpu:0 <-> gpu:k link each"},
        {"--time-unit", NULL, "UNIT", CLI_CHOICE, .index = &unit, .choices = units,
         .help = "unit of cpuLatency, fpgaLatency and cost: ms (default), us or s"},
        {"--bandwidth", NULL, "B", CLI_DOUBLE, .real = &opt.bandwidth, .min = 1.0, .max = 1e18,
         .range = "a number of bytes/s in 1..1e18",
         .help = "bytes/s of each CPU <-> accelerator link (default: the median size/cost ratio of the file's "
                 "edges, else 2 GiB/s)"},
        {"--edge-bytes", NULL, "WHAT", CLI_CHOICE, .index = &edges, .choices = edge_bytes,
         .help = "size: an edge's \"size\" when present, else cost x bandwidth (default); cost: cost x bandwidth "
                 "for every edge, so simulated transfers take exactly the costs"},
        {"--name", NULL, "NAME", CLI_STRING, .str = &opt.name,
         .help = "graph name (default: the file name without .json)"},
        CLI_END};
    const cli_command cmd = {
        .name = "import",
        .synopsis = "dplace import --from msr GRAPH.json -o OUT.json [--devices-out FILE] [OPTIONS]\n"
                    "       dplace import --from msr-placement SPLIT.json --graph GRAPH.json -o OUT.json\n"
                    "                     [--devices-out FILE] [OPTIONS]",
        .description = "Converts a graph of msr-fiddle/dnn-partitioning (NeurIPS 2020; nodes with\n"
                       "cpuLatency, fpgaLatency, size, colorClass, isBackwardNode; edges with cost)\n"
                       "to a dplace-graph v1 file, or one of their splits (human-experts/*.json) to a\n"
                       "dplace-placement v1 file for that graph. A split's \"cpus\" go to cpu:0 and\n"
                       "fpgas[k] to gpu:k; nodes it leaves out (the backward pass, given an inference\n"
                       "split) go where the listed nodes of their colorClass are. The mapping and its\n"
                       "assumptions: docs/import.md.\n",
        .options = options,
        .epilogue = "Errors name the file, the item (nodes[i] with its id, edges[i], fpgas[k]) and\n"
                    "the problem, with exit status 2; nothing is written then.\n"};
    cli_args args;
    int r = cli_parse(&cmd, argc, argv, &args);
    if (r != CLI_PARSED) return r;
    if (args.n > 1)
        return cli_usage_error("import", "give one input file, not \"%s\" and \"%s\"", args.v[0], args.v[1]);
    const char *in = args.n ? args.v[0] : NULL;
    opt.time_unit_s = unit_s[unit];
    opt.edge_bytes = edges == 0 ? DP_IMPORT_EDGE_BYTES_SIZE : DP_IMPORT_EDGE_BYTES_COST;
    if (!from) return cli_usage_error("import", "--from FORMAT is required (msr or msr-placement)");
    int placement = !strcmp(from, "msr-placement");
    if (!placement && strcmp(from, "msr") != 0)
        return cli_usage_error("import", "unknown --from format \"%s\" (known: msr, msr-placement)", from);
    if (!in) return cli_usage_error("import", "give the %s file to import", placement ? "split" : "graph");
    if (!out) return cli_usage_error("import", "-o FILE is required");
    if (placement && !graph)
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
        print_import(in, imp, units[unit]);
    }
    printf("wrote %s\n", out);
    if (devices_out) printf("wrote %s\n", devices_out);
done:
    dp_stage_abort(&stage);
    free(place);
    dp_import_msr_free(imp);
    return rc;
}
