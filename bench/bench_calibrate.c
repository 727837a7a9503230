/* dplace calibrate on simulated machines: how well a fit from the stock
 * device set predicts placements held out of it, when the "measurements"
 * are simulations on a hidden machine whose parameters differ from the
 * stock set's (links, launch overheads, compute and memory efficiencies).
 *
 * For each case (graphs, preset, hidden machine) and hold-out seed: the
 * proposed placements of every graph (dp_calib_propose on the stock set)
 * are simulated on the hidden machine, the fit starts from the stock set,
 * and the table gives the mean absolute percentage error of the stock and
 * the calibrated set on the fitted and on the held-out placements, the
 * parameters fitted, the iterations and the fit's wall time. With noise on
 * the measurements, the error against the noisy times is bounded below by
 * the noise (about 0.8 x sigma as a MAPE).
 * usage: bench_calibrate [SEEDS]   (default 3 hold-out seeds per case) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dplace/calib.h"
#include "dplace/placement.h"
#include "dplace/zoo.h"

/* A hidden machine: factors on the stock set's parameters, and the noise
 * of its measurements (each step time times exp(noise x N(0, 1)), seeded). */
typedef struct hidden_spec {
    const char *name;
    double gpu_matmul_c, gpu_conv_c, gpu_elem_m, gpu_red_m, gpu_launch;
    double cpu_matmul_c, cpu_data_c, cpu_elem_m, cpu_launch;
    double link_eff, link_latency;
    double noise;
} hidden_spec;

static const hidden_spec hiddens[] = {
    {"moderate", 0.7, 0.8, 1.3, 0.8, 1.6, 1.25, 0.75, 0.9, 0.7, 0.8, 2.0, 0},
    {"strong", 0.5, 0.6, 1.6, 0.6, 2.5, 1.6, 0.5, 0.7, 0.5, 0.6, 4.0, 0},
    {"moderate, 2% noise", 0.7, 0.8, 1.3, 0.8, 1.6, 1.25, 0.75, 0.9, 0.7, 0.8, 2.0, 0.02},
};

static dp_devices *hidden_machine(const dp_devices *stock, const hidden_spec *h) {
    dp_error err;
    dp_devices *ds = dp_devices_copy(stock, &err);
    if (!ds) return NULL;
    for (int32_t d = 0; d < ds->n_devices; d++) {
        dp_device *v = &ds->devices[d];
        if (v->kind == DP_DEVKIND_GPU) {
            v->eff[DP_OPCLASS_MATMUL].compute *= h->gpu_matmul_c;
            v->eff[DP_OPCLASS_CONV].compute *= h->gpu_conv_c;
            v->eff[DP_EFF_WINOGRAD].compute *= h->gpu_conv_c;
            v->eff[DP_OPCLASS_ELEMENTWISE].memory *= h->gpu_elem_m;
            v->eff[DP_OPCLASS_REDUCTION].memory *= h->gpu_red_m;
            v->launch_overhead_s *= h->gpu_launch;
        } else {
            v->eff[DP_OPCLASS_MATMUL].compute *= h->cpu_matmul_c;
            v->eff[DP_OPCLASS_DATA].compute *= h->cpu_data_c;
            v->eff[DP_OPCLASS_ELEMENTWISE].memory *= h->cpu_elem_m;
            v->launch_overhead_s *= h->cpu_launch;
        }
    }
    for (int32_t l = 0; l < ds->n_links; l++)
        ds->links[l].efficiency = h->link_eff, ds->links[l].latency_s *= h->link_latency;
    return ds;
}

typedef struct bench_case {
    const char *graphs[3]; /* zoo names (synthetic-N included) */
    int32_t batch;         /* 0: the model's default */
    const char *devices;
} bench_case;

static const bench_case cases[] = {
    {{"synthetic-300", "synthetic-700", NULL}, 0, "k40x2"},
    {{"synthetic-1000", NULL, NULL}, 0, "p100x4"},
    {{"rnnlm", "nmt2", NULL}, 8, "k40x2"},
    {{"inception_v3", NULL, NULL}, 4, "k40x2"},
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs one case on one hidden machine for seeds 1..n_seeds; prints a row
 * per seed. */
static int run_case(const bench_case *bc, const hidden_spec *hs, int n_seeds) {
    dp_error err;
    dp_graph *g[3] = {0};
    dp_calib_proposal prop[3];
    memset(prop, 0, sizeof prop);
    int n_graphs = 0, rc = 1;
    dp_devices *stock = dp_devices_preset(bc->devices, &err), *hid = stock ? hidden_machine(stock, hs) : NULL;
    dp_calib_sample *s = NULL;
    int32_t n = 0;
    if (!hid) goto out;
    dp_reference_options ro = dp_reference_options_default();
    ro.bound = 0;
    ro.place.expert = dp_zoo_expert_placement;
    char names[256] = "";
    dp_rng rng;
    dp_rng_seed(&rng, 7);
    for (; n_graphs < 3 && bc->graphs[n_graphs]; n_graphs++) {
        if (!(g[n_graphs] = dp_zoo_build(bc->graphs[n_graphs], bc->batch, &err))) goto out;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", n_graphs ? "+" : "",
                 bc->graphs[n_graphs]);
        dp_sim *sim = dp_sim_init(g[n_graphs], stock, &err);
        if (!sim || dp_calib_propose(sim, g[n_graphs], stock, &ro, &prop[n_graphs], &err)) goto out;
        dp_sim_free(sim);
        dp_calib_sample *ns = realloc(s, sizeof *s * (size_t)(n + prop[n_graphs].n));
        if (!ns) goto out;
        s = ns;
        dp_sim *h = dp_sim_init(g[n_graphs], hid, &err);
        if (!h) goto out;
        for (int32_t k = 0; k < prop[n_graphs].n; k++) {
            dp_sim_result r;
            const int32_t *p = prop[n_graphs].placements + (size_t)k * g[n_graphs]->n_ops;
            if (dp_sim_run(h, p, NULL, &r, &err)) goto out;
            double t = r.step_time_s * exp(hs->noise * dp_rng_normal(&rng));
            s[n++] = (dp_calib_sample){n_graphs, p, t, prop[n_graphs].name[k]};
        }
        dp_sim_free(h);
    }
    for (int seed = 1; seed <= n_seeds; seed++) {
        dp_calib_options o = dp_calib_options_default();
        o.seed = (uint64_t)seed;
        dp_calib_result r;
        double t0 = now_s();
        if (dp_calib_fit((const dp_graph *const *)g, n_graphs, stock, s, n, &o, &r, &err)) goto out;
        printf("| %s | %s | %s | %d | %d/%d | %d/%d | %d | %.2f | %.2f | %.2f | %.2f | %.1f |\n", names, bc->devices,
               hs->name, seed, (int)r.n_fit, (int)r.n_holdout, (int)r.n_free, (int)r.n_params, (int)r.iterations,
               r.prior_fit_mape, r.prior_holdout_mape, r.fit_mape, r.holdout_mape, now_s() - t0);
        fflush(stdout);
        dp_calib_result_free(&r);
    }
    rc = 0;
out:
    if (rc) fprintf(stderr, "bench_calibrate: %s: %s\n", bc->devices, err.msg);
    for (int i = 0; i < 3; i++)
        dp_calib_proposal_free(&prop[i]), dp_graph_free(g[i]);
    free(s);
    dp_devices_free(stock), dp_devices_free(hid);
    return rc;
}

int main(int argc, char **argv) {
    int n_seeds = argc > 1 ? atoi(argv[1]) : 3;
    if (n_seeds < 1) n_seeds = 1;
    printf("| graphs | devices | hidden machine | seed | fitted/held out | parameters fitted | iterations | "
           "stock fit %% | stock hold-out %% | calibrated fit %% | calibrated hold-out %% | fit s |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int rc = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t h = 0; h < sizeof hiddens / sizeof hiddens[0]; h++)
            rc |= run_case(&cases[c], &hiddens[h], n_seeds);
    return rc;
}
