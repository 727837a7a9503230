/* Timeline export: valid Chrome trace JSON with a track per stream and link. */
#include <jansson.h>
#include <unistd.h>

#include "dplace/placement.h"
#include "dplace/sim.h"
#include "test_util.h"

/* synthetic-1000 on k40x2, every third free op on gpu:1. */
typedef struct trace_fixture {
    dp_graph *g;
    dp_devices *ds;
    dp_sim *s;
    int32_t *p;
    char path[64];
} trace_fixture;

static trace_fixture trace_open(void) {
    trace_fixture f;
    dp_error err;
    f.g = dp_graph_synth(1000, 2, &err);
    CHECK(f.g);
    f.ds = dp_devices_preset("k40x2", &err);
    f.s = dp_sim_init(f.g, f.ds, &err);
    CHECK(f.s);
    f.p = malloc((size_t)f.g->n_ops * sizeof(int32_t));
    CHECK_INT_EQ(dp_placement_single(f.g, f.ds, 1, f.p, &err), 0);
    for (int32_t i = 0; i < f.g->n_ops; i++)
        if (f.g->ops[i].device.kind == DP_DEVCON_NONE && f.g->ops[i].colocate < 0 && i % 3 == 0) f.p[i] = 2;
    snprintf(f.path, sizeof f.path, "/tmp/dplace_trace_%d.json", (int)getpid());
    return f;
}

static void trace_close(trace_fixture *f) {
    remove(f->path);
    free(f->p);
    dp_sim_free(f->s);
    dp_devices_free(f->ds);
    dp_graph_free(f->g);
}

/* A run that recorded no timeline has no trace to write. */
static void test_trace_needs_a_recorded_run(void) {
    trace_fixture f = trace_open();
    dp_error err;
    dp_sim_result r;
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, NULL, &r, &err), 0);
    CHECK_INT_EQ(dp_trace_write(f.s, f.path, &err), DP_STATUS_INVALID); /* not recorded */
    trace_close(&f);
}

/* A recorded run's trace is Chrome trace JSON: every op once, a hop per
 * link a copy crossed, a track per stream and link, ending at the step
 * time. */
static void test_trace_is_chrome_json(void) {
    trace_fixture f = trace_open();
    dp_error err;
    dp_sim_result r;
    dp_sim_options o = dp_sim_options_default();
    o.record_trace = 1;
    CHECK_INT_EQ(dp_sim_run(f.s, f.p, &o, &r, &err), 0);
    CHECK_INT_EQ(dp_trace_write(f.s, f.path, &err), DP_STATUS_OK);
    json_error_t je;
    json_t *root = json_load_file(f.path, 0, &je);
    if (!root) fprintf(stderr, "%s:%d: %s\n", f.path, je.line, je.text);
    CHECK(root);
    json_t *ev = json_object_get(root, "traceEvents");
    CHECK(json_is_array(ev));
    size_t i;
    json_t *e;
    int ops = 0, hops = 0, threads = 0;
    double end = 0;
    json_array_foreach(ev, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        CHECK(ph);
        if (!strcmp(ph, "M") && !strcmp(json_string_value(json_object_get(e, "name")), "thread_name")) threads++;
        if (strcmp(ph, "X")) continue;
        double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
        CHECK(ts >= 0 && dur >= 0);
        if (ts + dur > end) end = ts + dur;
        if (json_integer_value(json_object_get(e, "pid")) == f.ds->n_devices) hops++;
        else ops++;
    }
    CHECK_INT_EQ(ops, f.g->n_ops);
    CHECK(hops >= r.n_transfers); /* through the host: two hops each */
    CHECK_INT_EQ(threads, f.ds->n_devices + f.ds->n_links);
    CHECK_NEAR(end / 1e6, r.step_time_s, 1e-6);
    json_decref(root);
    trace_close(&f);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_trace_needs_a_recorded_run);
    TEST_RUN(test_trace_is_chrome_json);
    return test_end();
}
