/* Timeline export: valid Chrome trace JSON with a track per stream and link. */
#include <jansson.h>
#include <unistd.h>

#include "dplace/placement.h"
#include "dplace/sim.h"
#include "test_util.h"

static void test_trace(void) {
    dp_error err;
    dp_graph *g = dp_graph_synth(1000, 2, &err);
    CHECK(g);
    dp_devices *ds = dp_devices_preset("k40x2", &err);
    dp_sim *s = dp_sim_init(g, ds, &err);
    CHECK(s);
    int32_t *p = malloc((size_t)g->n_ops * sizeof(int32_t));
    CHECK_INT_EQ(dp_placement_single(g, ds, 1, p, &err), 0);
    for (int32_t i = 0; i < g->n_ops; i++)
        if (g->ops[i].device.kind == DP_DEVCON_NONE && g->ops[i].colocate < 0 && i % 3 == 0) p[i] = 2;
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_trace_%d.json", (int)getpid());
    dp_sim_result r;
    CHECK_INT_EQ(dp_sim_run(s, p, NULL, &r, &err), 0);
    CHECK_INT_EQ(dp_trace_write(s, path, &err), DP_STATUS_INVALID); /* not recorded */
    dp_sim_options o = dp_sim_options_default();
    o.record_trace = 1;
    CHECK_INT_EQ(dp_sim_run(s, p, &o, &r, &err), 0);
    CHECK_INT_EQ(dp_trace_write(s, path, &err), DP_STATUS_OK);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) fprintf(stderr, "%s:%d: %s\n", path, je.line, je.text);
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
        if (json_integer_value(json_object_get(e, "pid")) == ds->n_devices) hops++;
        else ops++;
    }
    CHECK_INT_EQ(ops, g->n_ops);
    CHECK(hops >= r.n_transfers); /* through the host: two hops each */
    CHECK_INT_EQ(threads, ds->n_devices + ds->n_links);
    CHECK_NEAR(end / 1e6, r.step_time_s, 1e-6);
    json_decref(root);
    remove(path);
    free(p);
    dp_sim_free(s);
    dp_devices_free(ds);
    dp_graph_free(g);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_trace);
    return test_end();
}
