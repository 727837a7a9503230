/* dplace simulate: one training step of a placed graph. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "dplace/cost.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "dplace/zoo.h"

static void print_summary(const dp_graph *g, const dp_devices *ds, const char *placement, const dp_sim_result *r,
                          double sim_s) {
    dp_graph_stats gs;
    dp_graph_get_stats(g, &gs);
    char pb[32], ob[32], tb[32];
    cli_format_bytes((double)gs.total_param_bytes, pb, sizeof pb);
    cli_format_bytes((double)r->transfer_bytes, tb, sizeof tb);
    printf("graph      %s: %d ops, %lld edges, %.3g GFLOP, parameters %s\n", g->name, gs.n_ops,
           (long long)gs.n_edges, gs.total_flops / 1e9, pb);
    printf("devices    %s: %d devices, %d links\n", ds->name, ds->n_devices, ds->n_links);
    printf("placement  %s\n", placement);
    printf("step time  %.6f s  %s%s%s\n", r->step_time_s, r->valid ? "valid" : "INVALID (",
           r->valid ? "" : dp_sim_verdict_name(r->verdict), r->valid ? "" : ")");
    if (!r->valid) printf("reason     %s\n", r->reason);
    if (r->steps_measured > 1) printf("protocol   median of %d measured steps\n", r->steps_measured);
    printf("\n%-10s %-22s %7s %10s %6s %12s %12s\n", "device", "model", "ops", "busy s", "util", "peak mem",
           "capacity");
    for (int32_t d = 0; d < ds->n_devices; d++) {
        const dp_sim_device_stats *st = &r->device[d];
        cli_format_bytes((double)st->peak_bytes, pb, sizeof pb);
        cli_format_bytes((double)st->memory_bytes, ob, sizeof ob);
        double util = r->step_time_s > 0 ? st->busy_s / (r->step_time_s * ds->devices[d].streams) : 0;
        printf("%-10s %-22s %7d %10.6f %5.1f%% %12s %12s%s\n", ds->devices[d].name, ds->devices[d].model, st->n_ops,
               st->busy_s, 100 * util, pb, ob, st->peak_bytes > st->memory_bytes ? "  OOM" : "");
    }
    printf("\ntransfers  %d, %s", r->n_transfers, tb);
    int shown = 0;
    for (int32_t l = 0; l < r->n_links; l++) {
        if (!r->link[l].n_transfers) continue;
        if (!shown++) printf("\n%-22s %10s %12s %10s\n", "link", "transfers", "bytes", "busy s");
        char name[2 * DP_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s -> %s", ds->devices[ds->links[l].from].name, ds->devices[ds->links[l].to].name);
        cli_format_bytes((double)r->link[l].bytes, tb, sizeof tb);
        printf("%-22s %10d %12s %10.6f\n", name, r->link[l].n_transfers, tb, r->link[l].busy_s);
    }
    if (!shown) printf("\n");
    printf("\nsimulated in %.3f ms\n", sim_s * 1e3);
}

static void print_json(const dp_graph *g, const dp_devices *ds, const char *placement, const dp_sim_result *r,
                       double sim_s, const dp_cost_unknown *unknown_types, int32_t n_unknown) {
    json_t *o = json_object();
    json_object_set_new(o, "graph", json_string(g->name));
    json_object_set_new(o, "ops", json_integer(g->n_ops));
    json_object_set_new(o, "device_set", json_string(ds->name));
    json_object_set_new(o, "placement", json_string(placement));
    json_object_set_new(o, "step_time_s", json_real(r->step_time_s));
    json_object_set_new(o, "valid", json_boolean(r->valid));
    json_object_set_new(o, "verdict", json_string(dp_sim_verdict_name(r->verdict)));
    json_object_set_new(o, "reason", json_string(r->reason));
    json_object_set_new(o, "steps_measured", json_integer(r->steps_measured));
    json_t *devs = json_array();
    for (int32_t d = 0; d < ds->n_devices; d++) {
        const dp_sim_device_stats *st = &r->device[d];
        json_array_append_new(devs, json_pack("{s:s, s:s, s:s, s:i, s:f, s:I, s:I, s:I}", "name", ds->devices[d].name,
                                              "kind", dp_devkind_name(ds->devices[d].kind), "model",
                                              ds->devices[d].model, "ops", st->n_ops, "busy_s", st->busy_s,
                                              "peak_bytes", (json_int_t)st->peak_bytes, "memory_bytes",
                                              (json_int_t)st->memory_bytes, "param_bytes",
                                              (json_int_t)st->param_bytes));
    }
    json_object_set_new(o, "devices", devs);
    json_t *links = json_array();
    for (int32_t l = 0; l < r->n_links; l++)
        json_array_append_new(links, json_pack("{s:s, s:s, s:i, s:I, s:f}", "from",
                                               ds->devices[ds->links[l].from].name, "to",
                                               ds->devices[ds->links[l].to].name, "transfers", r->link[l].n_transfers,
                                               "bytes", (json_int_t)r->link[l].bytes, "busy_s", r->link[l].busy_s));
    json_object_set_new(o, "links", links);
    json_t *unknown = json_array();
    for (int32_t k = 0; k < n_unknown; k++)
        json_array_append_new(unknown,
                              json_pack("{s:s, s:i}", "type", dp_graph_str(g, unknown_types[k].type), "ops",
                                        unknown_types[k].n_ops));
    json_object_set_new(o, "unknown_op_types", unknown);
    json_object_set_new(o, "transfers", json_integer(r->n_transfers));
    json_object_set_new(o, "transfer_bytes", json_integer((json_int_t)r->transfer_bytes));
    json_object_set_new(o, "simulation_seconds", json_real(sim_s));
    json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(o);
}

int cmd_simulate(int argc, char **argv) {
    const char *devices = NULL, *placement = NULL, *trace = NULL;
    int json = 0;
    long seed = 1;
    cli_protocol proto = {0.0, 1, 0, 0};
    cli_graph_source src = {0};
    const cli_option options[] = {
        CLI_GRAPH_OPTIONS(&src),
        {"--devices", NULL, "SPEC", CLI_STRING, .str = &devices, .required = 1,
         .help = CLI_DEVICES_HELP},
        {"--placement", NULL, "PLACEMENT", CLI_STRING, .str = &placement, .required = 1,
         .help = "a dplace-placement v1 file, or a device for every op: cpu, gpu (the first GPU), or a device name "
                 "such as gpu:1; with a device, ops constrained elsewhere go where they must; expert: the papers' "
                 "human placement of a built-in model"},
        {"--json", NULL, NULL, CLI_FLAG, .flag = &json, .help = "print a JSON object instead of the summary"},
        {"--trace", NULL, "FILE", CLI_STRING, .str = &trace,
         .help = "write the timeline as Chrome trace-event JSON (open it in https://ui.perfetto.dev or "
                 "chrome://tracing)"},
        CLI_PROTOCOL_OPTIONS(&proto),
        {"--seed", NULL, "N", CLI_LONG, .num = &seed, .min = 0, .max = 2147483647L, .range = ">= 0",
         .help = "seed of the noise (default 1)"},
        CLI_END};
    const cli_command cmd = {
        .name = "simulate",
        .synopsis = "dplace simulate (--graph FILE | --model NAME [--batch N]) --devices SPEC --placement PLACEMENT\n"
        "                       [--json] [--trace FILE] [--steps N] [--warmup N] [--mean] [--noise SIGMA] [--seed N]",
        .description = "Simulates one training step of the graph placed on the devices and prints the\n"
        "step time, whether the placement is valid (device constraints, colocation,\n"
        "memory), and per device the busy time and peak memory.\n",
        .options = options};
    int r = cli_parse(&cmd, argc, argv, NULL);
    if (r != CLI_PARSED) return r;
    if (cli_protocol_check("simulate", &proto)) return CLI_EXIT_INPUT;

    dp_error err;
    dp_error_clear(&err);
    int rc = CLI_EXIT_OK;
    dp_graph *g = NULL;
    dp_devices *ds = NULL;
    dp_sim *sim = NULL;
    int32_t *place = NULL;
    if (!(g = cli_load_graph("simulate", &src, &err)) || !(ds = dp_devices_load(devices, &err))) {
        rc = cli_report(&err);
        goto done;
    }
    place = malloc((size_t)g->n_ops * sizeof(int32_t));
    if (!place) {
        dp_error_set(&err, DP_STATUS_NOMEM, "out of memory");
        rc = cli_report(&err);
        goto done;
    }
    if (!(sim = dp_sim_init(g, ds, &err)) || dp_zoo_resolve_placement(placement, g, ds, place, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    dp_sim_options opt = dp_sim_options_default();
    opt.record_trace = trace != NULL;
    opt.steps = (int32_t)proto.steps;
    opt.warmup = (int32_t)proto.warmup;
    opt.mean = proto.mean;
    opt.noise_sigma = proto.noise;
    opt.seed = (uint64_t)seed;
    dp_sim_result res;
    double t0 = dp_now_s();
    if (dp_sim_run(sim, place, &opt, &res, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    double sim_s = dp_now_s() - t0;
    if (trace && dp_trace_write(sim, trace, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    if (json) {
        dp_cost_unknown *unknown_types;
        int32_t n_unknown;
        if (dp_cost_unknown_types(g, &unknown_types, &n_unknown, &err)) {
            rc = cli_report(&err);
            goto done;
        }
        print_json(g, ds, placement, &res, sim_s, unknown_types, n_unknown);
        free(unknown_types);
    }
    else print_summary(g, ds, placement, &res, sim_s);
    if (trace && !json) printf("timeline   %s (open in https://ui.perfetto.dev or chrome://tracing)\n", trace);
done:
    free(place);
    dp_sim_free(sim);
    dp_devices_free(ds);
    dp_graph_free(g);
    return rc;
}
