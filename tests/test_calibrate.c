/* Calibration: fitting a device set to measured step times. The
 * "measurements" are simulations on a hidden machine whose parameters
 * differ from the stock set's (links, launch overheads, compute and memory
 * efficiencies); the fit starts from the stock set and must predict the
 * placements held out of it. */
#include <math.h>
#include <unistd.h>

#include "dplace/calib.h"
#include "dplace/cost.h"
#include "dplace/placement.h"
#include "dplace/zoo.h"
#include "test_util.h"

/* The hidden machine: k40x2 with its GPUs' matmul compute efficiency at
 * 0.7x, element-wise memory efficiency at 1.3x, reduction memory at 0.8x,
 * the CPU's matmul at 1.25x and data at 0.75x, launch overheads at 1.6x
 * (GPU) and 0.7x (CPU), the PCIe links at 80% of their bandwidth with twice
 * the latency. Twin GPUs stay twins: the stock set's groups. */
static dp_devices *hidden_machine(const dp_devices *stock) {
    dp_error err;
    dp_devices *h = dp_devices_copy(stock, &err);
    CHECK(h);
    for (int32_t d = 0; d < h->n_devices; d++) {
        dp_device *v = &h->devices[d];
        if (v->kind == DP_DEVKIND_GPU) {
            v->eff[DP_OPCLASS_MATMUL].compute *= 0.7;
            v->eff[DP_OPCLASS_ELEMENTWISE].memory *= 1.3;
            v->eff[DP_OPCLASS_REDUCTION].memory *= 0.8;
            v->launch_overhead_s *= 1.6;
        } else {
            v->eff[DP_OPCLASS_MATMUL].compute *= 1.25;
            v->eff[DP_OPCLASS_DATA].compute *= 0.75;
            v->launch_overhead_s *= 0.7;
        }
    }
    for (int32_t l = 0; l < h->n_links; l++)
        h->links[l].efficiency = 0.8, h->links[l].latency_s *= 2;
    return h;
}

/* The problem: synthetic graphs, their proposed placements (on the stock
 * set) "measured" on the hidden machine. */
typedef struct problem {
    int n_graphs;
    dp_graph *g[8];
    dp_devices *stock, *hidden;
    dp_calib_proposal prop[8];
    int32_t n;
    dp_calib_sample s[1024];
    char label[1024][64];
} problem;

static void problem_measure(problem *pb);

/* An empty problem: k40x2 as the stock set, its hidden machine, no graphs. */
static void problem_init(problem *pb) {
    dp_error err;
    memset(pb, 0, sizeof *pb);
    pb->stock = dp_devices_preset("k40x2", &err);
    CHECK(pb->stock);
    pb->hidden = hidden_machine(pb->stock);
}

/* The problem; eager: the graphs run under the eager executor and the
 * hidden machine's host takes 3 times the stock dispatch cost per op, and
 * when eager is 2, a third of the stock switch cost besides. */
static void problem_open_as(problem *pb, const int *sizes, int n_graphs, int eager) {
    dp_error err;
    problem_init(pb);
    if (eager) pb->hidden->devices[0].dispatch_s *= 3;
    if (eager == 2) pb->hidden->devices[0].switch_s /= 3;
    pb->n_graphs = n_graphs;
    for (int i = 0; i < n_graphs; i++) {
        pb->g[i] = dp_graph_synth(sizes[i], (uint64_t)(i + 3), &err);
        CHECK(pb->g[i]);
        if (eager) pb->g[i]->executor = DP_EXECUTOR_TORCH;
    }
    problem_measure(pb);
}

/* The proposed placements of each of pb's graphs (on the stock set),
 * "measured" on the hidden machine. */
static void problem_measure(problem *pb) {
    dp_error err;
    dp_reference_options ro = dp_reference_options_default();
    ro.bound = 0;
    for (int i = 0; i < pb->n_graphs; i++) {
        dp_sim *sim = dp_sim_init(pb->g[i], pb->stock, &err), *hid = dp_sim_init(pb->g[i], pb->hidden, &err);
        CHECK(sim && hid);
        CHECK_INT_EQ(dp_calib_propose(sim, pb->g[i], pb->stock, &ro, &pb->prop[i], &err), DP_STATUS_OK);
        for (int32_t k = 0; k < pb->prop[i].n && pb->n < 1024; k++) {
            dp_sim_result r;
            const int32_t *p = pb->prop[i].placements + (size_t)k * pb->g[i]->n_ops;
            CHECK_INT_EQ(dp_sim_run(hid, p, NULL, &r, &err), DP_STATUS_OK);
            snprintf(pb->label[pb->n], sizeof pb->label[0], "graph %d %s", i, pb->prop[i].name[k]);
            pb->s[pb->n] = (dp_calib_sample){i, p, r.step_time_s, pb->label[pb->n]};
            pb->n++;
        }
        dp_sim_free(sim), dp_sim_free(hid);
    }
}

static void problem_open(problem *pb, const int *sizes, int n_graphs) { problem_open_as(pb, sizes, n_graphs, 0); }

static void problem_close(problem *pb) {
    for (int i = 0; i < pb->n_graphs; i++) {
        dp_calib_proposal_free(&pb->prop[i]);
        dp_graph_free(pb->g[i]);
    }
    dp_devices_free(pb->stock), dp_devices_free(pb->hidden);
}

/* On the hidden machine, the fit from the stock set predicts the placements
 * held out of it within 3% (mean absolute percentage error), where the stock
 * set is off by more. */
static void test_holdout_within_three_percent(void) {
    problem pb;
    const int sizes[] = {300, 700};
    problem_open(&pb, sizes, 2);
    dp_calib_options o = dp_calib_options_default();
    dp_calib_result r;
    dp_error err;
    dp_status st = dp_calib_fit((const dp_graph *const *)pb.g, 2, pb.stock, pb.s, pb.n, &o, &r, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    CHECK_INT_EQ(st, DP_STATUS_OK);
    printf("  %d samples (%d held out), %d of %d parameters fitted, %d iterations; MAPE fit %.2f%% -> %.2f%%, "
           "hold-out %.2f%% -> %.2f%%\n",
           (int)r.n_samples, (int)r.n_holdout, (int)r.n_free, (int)r.n_params, (int)r.iterations, r.prior_fit_mape,
           r.fit_mape, r.prior_holdout_mape, r.holdout_mape);
    CHECK(r.n_holdout >= 10);
    CHECK(r.prior_holdout_mape > 3.0);
    CHECK(r.holdout_mape < 3.0);
    CHECK(r.fit_mape < 3.0);
    dp_calib_result_free(&r);
    problem_close(&pb);
}

/* Parameters the measurements cannot move (a graph without convolutions:
 * the conv and Winograd efficiencies) are reported as not determined and
 * keep their stock values, in the calibrated set too. */
static void test_undetermined_left_at_prior(void) {
    problem pb;
    const int sizes[] = {300};
    problem_open(&pb, sizes, 1);
    dp_calib_result r;
    dp_error err;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 1, pb.stock, pb.s, pb.n, NULL, &r, &err), DP_STATUS_OK);
    int conv = 0;
    for (int32_t p = 0; p < r.n_params; p++) {
        const dp_calib_param *q = &r.params[p];
        if (q->kind > DP_CALIB_PARAM_MEMORY || (q->slot != DP_OPCLASS_CONV && q->slot != DP_EFF_WINOGRAD)) continue;
        TEST_CASE("parameter %s", q->name);
        CHECK(!q->determined);
        CHECK(q->value == q->prior);
        CHECK(q->sensitivity == 0);
        conv++;
    }
    test_case_[0] = '\0';
    CHECK(conv == 8); /* two device groups, two slots, compute and memory */
    CHECK(r.calibrated->devices[1].eff[DP_OPCLASS_CONV].compute == pb.stock->devices[1].eff[DP_OPCLASS_CONV].compute);
    CHECK(!(r.calibrated->devices[1].eff_own & DP_EFF_OWN_BIT(DP_OPCLASS_CONV, 0)));
    CHECK(r.calibrated->devices[1].eff_own & DP_EFF_OWN_BIT(DP_OPCLASS_MATMUL, 0));
    dp_calib_result_free(&r);
    problem_close(&pb);
}

/* Measured on the CPU alone, a step under the eager executor cannot tell
 * the host's dispatch cost from the CPU's launch overhead (each CPU op pays
 * both, one after the other): the fit leaves the dispatch cost as it is
 * and fits the launch overhead. */
static void test_eager_dispatch_needs_a_gpu(void) {
    problem pb;
    const int sizes[] = {300, 400, 500, 600, 700, 800, 900, 1000};
    problem_open_as(&pb, sizes, 8, 1);
    int32_t kept = 0;
    for (int32_t m = 0; m < pb.n; m++) {
        int cpu_only = 1;
        for (int32_t i = 0; i < pb.g[pb.s[m].graph]->n_ops; i++) cpu_only &= pb.s[m].placement[i] == 0;
        if (cpu_only) pb.s[kept++] = pb.s[m];
    }
    CHECK_INT_EQ(kept, 8); /* each graph's all-on-the-CPU placement */
    dp_calib_result r;
    dp_error err;
    dp_calib_options o = dp_calib_options_default();
    o.holdout = 0;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 8, pb.stock, pb.s, kept, &o, &r, &err), DP_STATUS_OK);
    int launch = 0;
    for (int32_t k = 0; k < r.n_params; k++) {
        CHECK(r.params[k].kind != DP_CALIB_PARAM_DISPATCH);
        launch += r.params[k].kind == DP_CALIB_PARAM_LAUNCH && r.params[k].first == 0;
    }
    CHECK_INT_EQ(launch, 1);
    CHECK_NEAR(r.calibrated->devices[0].dispatch_s, pb.stock->devices[0].dispatch_s, 1e-15);
    dp_calib_result_free(&r);
    problem_close(&pb);
}

static double dispatch_of(const dp_device *d) { return d->dispatch_s; }
static double switch_of(const dp_device *d) { return d->switch_s; }

/* Fits pb (all its samples, the default hold-out) into r and checks the
 * host's one parameter of kind k: fitted, within 10% of the hidden host's
 * value (get reads it from a device), and what the calibrated set holds. */
static void fit_finds_host_param(problem *pb, dp_calib_param_kind k, double (*get)(const dp_device *),
                                 dp_calib_result *r) {
    dp_error err;
    dp_calib_options o = dp_calib_options_default();
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb->g, pb->n_graphs, pb->stock, pb->s, pb->n, &o, r, &err),
                 DP_STATUS_OK);
    int found = 0;
    for (int32_t p = 0; p < r->n_params; p++) {
        const dp_calib_param *q = &r->params[p];
        if (q->kind != k) continue;
        found++;
        printf("  %s: %.3g s (hidden %.3g s, stock %.3g s); hold-out MAPE %.2f%% -> %.2f%%\n", q->name, q->value,
               get(&pb->hidden->devices[0]), get(&pb->stock->devices[0]), r->prior_holdout_mape, r->holdout_mape);
        CHECK(q->determined);
        CHECK(fabs(q->value / get(&pb->hidden->devices[0]) - 1) < 0.1);
        CHECK_NEAR(get(&r->calibrated->devices[0]), q->value, 1e-15);
    }
    CHECK_INT_EQ(found, 1);
}

/* Under the eager executor the host's dispatch cost is a parameter: the fit
 * finds the hidden host's (3 times the stock one) within 10% and predicts
 * the held-out placements within 3%. */
static void test_eager_dispatch_fitted(void) {
    problem pb;
    const int sizes[] = {300, 700};
    problem_open_as(&pb, sizes, 2, 1);
    dp_calib_result r;
    fit_finds_host_param(&pb, DP_CALIB_PARAM_DISPATCH, dispatch_of, &r);
    CHECK(r.holdout_mape < 3.0);
    dp_calib_result_free(&r);
    problem_close(&pb);
}

/* So is its switch cost when placements mix the host and a GPU: the fit
 * finds the hidden host's (a third of the stock one) within 10%, with its
 * dispatch cost, and the file it writes keeps it. */
static void test_eager_switch_fitted(void) {
    problem pb;
    const int sizes[] = {300, 700};
    problem_open_as(&pb, sizes, 2, 2);
    dp_calib_result r;
    dp_error err;
    fit_finds_host_param(&pb, DP_CALIB_PARAM_SWITCH, switch_of, &r);
    const char *path = "test_calibrate_switch.json";
    CHECK_INT_EQ(dp_devices_write_file(r.calibrated, path, &err), DP_STATUS_OK);
    dp_devices *back = dp_devices_read_file(path, &err);
    CHECK(back);
    CHECK(back->devices[0].switch_s == r.calibrated->devices[0].switch_s);
    remove(path);
    dp_devices_free(back);
    dp_calib_result_free(&r);
    problem_close(&pb);
}

/* A parameter the options keep is not fitted, however sensitive: it keeps
 * its starting value on every device group (named by its last word), the
 * calibrated set holds that value, and the fit moves the others; a name
 * that is no parameter is refused naming it. */
static void test_keep_leaves_a_parameter(void) {
    problem pb;
    const int sizes[] = {300, 700};
    problem_open(&pb, sizes, 2);
    dp_error err;
    dp_calib_options o = dp_calib_options_default();
    const char *keep[] = {"matmul.compute"};
    o.keep = keep, o.n_keep = 1;
    dp_calib_result r;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 2, pb.stock, pb.s, pb.n, &o, &r, &err), DP_STATUS_OK);
    int kept = 0, moved = 0;
    for (int32_t k = 0; k < r.n_params; k++) {
        const dp_calib_param *q = &r.params[k];
        if (q->kept) {
            kept++;
            CHECK(q->kind == DP_CALIB_PARAM_COMPUTE && q->slot == DP_OPCLASS_MATMUL);
            CHECK(!q->determined && q->sensitivity > o.min_sensitivity);
            CHECK(q->value == q->prior);
            CHECK(r.calibrated->devices[q->first].eff[DP_OPCLASS_MATMUL].compute == q->prior);
        } else {
            moved += q->determined && q->value != q->prior;
        }
    }
    CHECK(kept >= 1 && moved >= 1);
    dp_calib_result_free(&r);
    const char *bad[] = {"nope.compute"};
    o.keep = bad;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 2, pb.stock, pb.s, pb.n, &o, &r, &err),
                 DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "keep \"nope.compute\" names no parameter");
    problem_close(&pb);
}

/* The calibrated set r written to a file and read back has r's hash, and
 * simulates every measured placement of pb in the time the fit gave it. */
static void check_file_predicts_fit(const problem *pb, const dp_calib_result *r) {
    dp_error err;
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_calib_%d.json", (int)getpid());
    CHECK_INT_EQ(dp_devices_write_file(r->calibrated, path, &err), DP_STATUS_OK);
    dp_devices *back = dp_devices_read_file(path, &err);
    CHECK(back);
    remove(path);
    CHECK(dp_devices_hash(back) == dp_devices_hash(r->calibrated));
    dp_sim *sim[8] = {0};
    for (int i = 0; i < pb->n_graphs; i++) CHECK((sim[i] = dp_sim_init(pb->g[i], back, &err)) != NULL);
    for (int32_t m = 0; m < pb->n; m++) {
        dp_sim_result res;
        CHECK_INT_EQ(dp_sim_run(sim[pb->s[m].graph], pb->s[m].placement, NULL, &res, &err), DP_STATUS_OK);
        CHECK(res.step_time_s == r->fitted_s[m]);
    }
    for (int i = 0; i < pb->n_graphs; i++) dp_sim_free(sim[i]);
    dp_devices_free(back);
}

/* The calibrated set written as a v2 file and read back simulates every
 * sample to the fit's prediction. */
static void test_calibrated_file_predicts_the_same(void) {
    problem pb;
    const int sizes[] = {300};
    problem_open(&pb, sizes, 1);
    dp_calib_result r;
    dp_error err;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 1, pb.stock, pb.s, pb.n, NULL, &r, &err), DP_STATUS_OK);
    check_file_predicts_fit(&pb, &r);
    dp_calib_result_free(&r);
    problem_close(&pb);
}

/* A slot that follows another and that the measurements do not determine
 * (a grouped convolution too small to move any step time, beside a large
 * 1x1 one) takes its leader's fitted value in the result, as the written
 * file resolves it: the file read back has the result's hash and predicts
 * every measured placement as the fit did. */
static void test_undetermined_follower_follows(void) {
    problem pb;
    dp_error err;
    problem_init(&pb);
    for (int i = 0; i < 3; i++) {
        int b = 8 << i;
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"convs%d\",\"ops\":["
                 "{\"name\":\"x\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[%d,64,32,32],\"dtype\":\"float32\"}]},"
                 "{\"name\":\"w\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[64,64,1,1],\"dtype\":\"float32\"}]},"
                 "{\"name\":\"conv\",\"type\":\"convolution\",\"inputs\":[0,1],"
                 "\"outputs\":[{\"shape\":[%d,64,32,32],\"dtype\":\"float32\"}],\"flops\":%g},"
                 "{\"name\":\"relu\",\"type\":\"relu\",\"inputs\":[2],"
                 "\"outputs\":[{\"shape\":[%d,64,32,32],\"dtype\":\"float32\"}],\"flops\":%g},"
                 "{\"name\":\"x2\",\"type\":\"Placeholder\",\"outputs\":[{\"shape\":[%d,64,1,1],\"dtype\":\"float32\"}]},"
                 "{\"name\":\"wg\",\"type\":\"Parameter\",\"outputs\":[{\"shape\":[64,16,3,3],\"dtype\":\"float32\"}]},"
                 "{\"name\":\"grouped\",\"type\":\"convolution\",\"inputs\":[4,5],"
                 "\"outputs\":[{\"shape\":[%d,64,1,1],\"dtype\":\"float32\"}],\"flops\":%g},"
                 "{\"name\":\"out\",\"type\":\"add\",\"inputs\":[3,3],"
                 "\"outputs\":[{\"shape\":[%d,64,32,32],\"dtype\":\"float32\"}],\"flops\":%g}]}",
                 b, b, b, 2.0 * b * 64 * 1024 * 64, b, (double)b * 65536, b, b, 2.0 * b * 64 * 16 * 9, b,
                 (double)b * 65536);
        pb.g[i] = dp_graph_read_string(text, "convs", &err);
        CHECK(pb.g[i]);
        CHECK(dp_cost_conv_grouped(pb.g[i], 6) && !dp_cost_conv_grouped(pb.g[i], 2));
    }
    pb.n_graphs = 3;
    problem_measure(&pb);
    dp_calib_options o = dp_calib_options_default();
    o.holdout = 0;
    dp_calib_result r;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 3, pb.stock, pb.s, pb.n, &o, &r, &err), DP_STATUS_OK);
    int conv = 0, grouped = 0;
    for (int32_t k = 0; k < r.n_params; k++) {
        const dp_calib_param *q = &r.params[k];
        if (q->kind != DP_CALIB_PARAM_COMPUTE || q->first != 0) continue;
        conv += q->slot == DP_OPCLASS_CONV && q->determined;
        grouped += q->slot == DP_EFF_GROUPED && !q->determined;
    }
    CHECK(conv == 1 && grouped == 1); /* the CPU's conv row fitted, its grouped slot not */
    CHECK(r.calibrated->devices[0].eff[DP_EFF_GROUPED].compute == r.calibrated->devices[0].eff[DP_OPCLASS_CONV].compute);
    check_file_predicts_fit(&pb, &r);
    dp_calib_result_free(&r);
    problem_close(&pb);
}

/* Fewer fitted measurements than the parameters they are sensitive to are
 * refused, saying so. */
static void test_too_few_measurements_refused(void) {
    problem pb;
    const int sizes[] = {300};
    problem_open(&pb, sizes, 1);
    dp_calib_options o = dp_calib_options_default();
    o.holdout = 0;
    dp_calib_result r;
    dp_error err;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 1, pb.stock, pb.s, 4, &o, &r, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "4 measurements in the fit, fewer than the");
    problem_close(&pb);
}

/* A measured time that is not a positive number is refused, naming the
 * sample. */
static void test_bad_time_refused(void) {
    problem pb;
    const int sizes[] = {300};
    problem_open(&pb, sizes, 1);
    pb.s[2].seconds = -1;
    dp_calib_result r;
    dp_error err;
    CHECK_INT_EQ(dp_calib_fit((const dp_graph *const *)pb.g, 1, pb.stock, pb.s, pb.n, NULL, &r, &err),
                 DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, pb.label[2]);
    CHECK_STR_CONTAINS(err.msg, "positive number of seconds");
    problem_close(&pb);
}

/* The proposal: every device alone, baselines, splits between each pair of
 * devices; every placement valid, none twice. */
static void test_proposal_covers_devices_and_links(void) {
    problem pb;
    const int sizes[] = {300};
    problem_open(&pb, sizes, 1);
    const dp_calib_proposal *p = &pb.prop[0];
    int singles = 0, splits = 0, others = 0;
    for (int32_t k = 0; k < p->n; k++) {
        if (!strncmp(p->name[k], "single-", 7))
            singles++;
        else if (!strncmp(p->name[k], "split-", 6))
            splits++;
        else
            others++;
        for (int32_t j = 0; j < k; j++)
            CHECK(memcmp(p->placements + (size_t)j * p->n_ops, p->placements + (size_t)k * p->n_ops,
                         sizeof(int32_t) * (size_t)p->n_ops) != 0);
        CHECK(p->simulated_s[k] > 0);
    }
    printf("  %d placements: %d single, %d baselines, %d splits\n", (int)p->n, singles, others, splits);
    CHECK(singles >= 2); /* the two GPUs alone are the same placement only up to the names: both kept */
    CHECK(splits >= 6);
    CHECK(others >= 1);
    problem_close(&pb);
}

/* The measurements CSV: each malformed file is refused with the line. */
static void test_csv_errors(void) {
    static const struct {
        const char *text, *expect;
    } cases[] = {
        {"graph,placement,seconds\n", "line 1: expected the header \"graph,placement_file,seconds\""},
        {"graph,placement_file,seconds\nm,p.json,abc\n", "line 2: seconds \"abc\" is not a number"},
        {"graph,placement_file,seconds\nm,p.json,\n", "line 2: seconds \"\" is not a number"},
        {"graph,placement_file,seconds\n# c\nm,p.json,-0.5\n", "line 3: seconds must be > 0"},
        {"graph,placement_file,seconds\nm,p.json,0\n", "line 2: seconds must be > 0"},
        {"graph,placement_file,seconds\nm,p.json\n", "line 2: expected 3 fields"},
        {"graph,placement_file,seconds\nm,p.json,1,2\n", "line 2: expected 3 fields"},
        {"graph,placement_file,seconds\nm,,1\n", "line 2: no placement file"},
        {"\n# nothing\n", "empty"},
        {"graph,placement_file,seconds\n# none yet\n", "no measurements: the header and no rows"},
    };
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_calib_%d.csv", (int)getpid());
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CASE("case %zu", i);
        FILE *f = fopen(path, "w");
        CHECK(f);
        fputs(cases[i].text, f);
        fclose(f);
        dp_calib_row *rows = NULL;
        int32_t n = 0;
        dp_error err;
        CHECK_INT_EQ(dp_calib_read_measurements(path, &rows, &n, &err), DP_STATUS_PARSE);
        CHECK_STR_CONTAINS(err.msg, cases[i].expect);
        CHECK_STR_CONTAINS(err.msg, path);
    }
    remove(path);
}

/* A good CSV: comments and blanks skipped, fields trimmed, lines kept. */
static void test_csv_reads_rows(void) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_calib_%d.csv", (int)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("# measured\ngraph,placement_file,seconds\n\nnmt2, a.json , 1.5\r\n,b.json,2e-3\n", f);
    fclose(f);
    dp_calib_row *rows = NULL;
    int32_t n = 0;
    dp_error err;
    CHECK_INT_EQ(dp_calib_read_measurements(path, &rows, &n, &err), DP_STATUS_OK);
    CHECK_INT_EQ(n, 2);
    CHECK(!strcmp(rows[0].graph, "nmt2") && !strcmp(rows[0].placement, "a.json") && rows[0].seconds == 1.5);
    CHECK_INT_EQ(rows[0].line, 4);
    CHECK(!rows[1].graph[0] && rows[1].seconds == 2e-3 && rows[1].line == 5);
    free(rows);
    remove(path);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_holdout_within_three_percent);
    TEST_RUN(test_eager_dispatch_fitted);
    TEST_RUN(test_eager_switch_fitted);
    TEST_RUN(test_keep_leaves_a_parameter);
    TEST_RUN(test_eager_dispatch_needs_a_gpu);
    TEST_RUN(test_undetermined_left_at_prior);
    TEST_RUN(test_calibrated_file_predicts_the_same);
    TEST_RUN(test_undetermined_follower_follows);
    TEST_RUN(test_too_few_measurements_refused);
    TEST_RUN(test_bad_time_refused);
    TEST_RUN(test_proposal_covers_devices_and_links);
    TEST_RUN(test_csv_errors);
    TEST_RUN(test_csv_reads_rows);
    return test_end();
}
