/* dplace devices: show a device set, or write it as a dplace-devices file
 * (a starting point for describing your own machine). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_devices(int argc, char **argv) {
    const char *out = NULL;
    const cli_option options[] = {
        {NULL, "-o", "FILE", CLI_STRING, .str = &out,
         .help = "write the set as a dplace-devices v2 file (atomically): each device's generation, its own efficiencies, "
                 "each link's efficiency"},
        CLI_END};
    const cli_command cmd = {
        .name = "devices",
        .synopsis = "dplace devices [SPEC] [-o FILE]",
        .description = "Shows a device set: a preset or a dplace-devices file. Without SPEC,\n"
                       "lists the presets. The families: k40xN, p100xN (PCIe 3.0), v100-nvlinkxN\n"
                       "(DGX-1's NVLink mesh), v100-pciexN, a100-sxmxN (NVSwitch), a100-pciexN,\n"
                       "h100-sxmxN (NVSwitch), h100-pciexN, h200xN (NVSwitch), l4xN, all with\n"
                       "N = 1..8, and rtx4090xN with N = 1..4; docs/devices.md gives each figure's\n"
                       "source and what each preset approximates.\n",
        .options = options};
    cli_args args;
    int r = cli_parse(&cmd, argc, argv, &args);
    if (r != CLI_PARSED) return r;
    if (args.n > 1)
        return cli_usage_error("devices", "give one device set, not \"%s\" and \"%s\"", args.v[0], args.v[1]);
    const char *spec = args.n ? args.v[0] : NULL;
    if (!spec) {
        if (out) return cli_usage_error("devices", "-o needs a device set to write");
        printf("presets:");
        for (const char *const *p = dp_devices_preset_names(); *p; p++) printf(" %s", *p);
        printf("\n(every N of each family loads: dplace devices --help, docs/devices.md)\n");
        return CLI_EXIT_OK;
    }
    dp_error err;
    dp_devices *ds = dp_devices_load(spec, &err);
    if (!ds) return cli_report(&err);
    int rc = CLI_EXIT_OK;
    if (out) {
        if (dp_devices_write_file(ds, out, &err)) rc = cli_report(&err);
        else printf("wrote %s\n", out);
    } else {
        printf("device set %s: %d devices, %d link directions\n\n", ds->name, ds->n_devices, ds->n_links);
        printf("%-8s %-4s %-22s %-10s %12s %12s %12s %10s %7s %5s  %s\n", "name", "kind", "model", "generation",
               "TFLOP/s", "mem GB/s", "memory GiB", "launch us", "streams", "own", "tensor TFLOP/s");
        for (int32_t d = 0; d < ds->n_devices; d++) {
            const dp_device *v = &ds->devices[d];
            int own = 0;
            for (uint32_t b = v->eff_own; b; b &= b - 1) own++;
            char tc[128] = "";
            for (int m = 0; m < DP_TENSOR_MATH_COUNT; m++)
                if (v->tensor_flops[m] > 0)
                    snprintf(tc + strlen(tc), sizeof tc - strlen(tc), "%s%s %g", tc[0] ? ", " : "",
                             dp_tensor_math_name((dp_tensor_math)m), v->tensor_flops[m] / 1e12);
            printf("%-8s %-4s %-22s %-10s %12.3f %12.1f %12.3f %10.1f %7d %5d  %s\n", v->name, dp_devkind_name(v->kind),
                   v->model, v->generation[0] ? v->generation : "-", v->peak_flops / 1e12, v->mem_bandwidth / 1e9,
                   (double)v->memory_bytes / 1073741824.0, v->launch_overhead_s * 1e6, v->streams, own,
                   tc[0] ? tc : "-");
        }
        printf("(own: efficiencies the file gives; the others are the generation's, else the kind's; tensor: the\n"
               "tensor-core peaks a bfloat16, float16 or TF32-allowed float32 product takes, docs/devices.md)\n");
        printf("\n%-20s %10s %12s %10s\n", "link", "GB/s", "latency us", "efficiency");
        for (int32_t l = 0; l < ds->n_links; l++) {
            char name[160];
            snprintf(name, sizeof name, "%s -> %s", ds->devices[ds->links[l].from].name,
                     ds->devices[ds->links[l].to].name);
            printf("%-20s %10.2f %12.1f %10.3f\n", name, ds->links[l].bandwidth / 1e9, ds->links[l].latency_s * 1e6,
                   ds->links[l].efficiency);
        }
        if (ds->host >= 0 && ds->n_devices > 1)
            printf("\npairs without a link route through the host %s\n", ds->devices[ds->host].name);
        if (ds->host >= 0) {
            const dp_device *h = &ds->devices[ds->host];
            printf("%seager steps (--executor torch): the host %s issues an op in %.1f us and turns from GPU work to "
                   "a CPU op in %.1f us\n",
                   ds->n_devices > 1 ? "" : "\n", h->name, h->dispatch_s * 1e6, h->switch_s * 1e6);
        }
    }
    dp_devices_free(ds);
    return rc;
}
