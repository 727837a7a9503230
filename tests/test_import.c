/* Importer of MSR dnn-partitioning graphs and splits: every graph of the
 * dataset (read in place under $DPLACE_SHARED/datasets/msr-dnn-partitioning)
 * imported, checked field by field against its JSON and simulated on its
 * devices, on one device and with the human-expert splits; hand-worked small
 * graphs; and the exact message of every kind of bad input. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dplace/import.h"
#include "dplace/placement.h"
#include "dplace/sim.h"
#include "test_util.h"

#define CHECK_STR_EQ(a, b)                                                                         \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        if (strcmp(sa_, sb_) != 0) {                                                               \
            TEST_WHERE_();                                                                         \
            fprintf(stderr, "%s == %s failed:\n  got      \"%s\"\n  expected \"%s\"\n", #a, #b, sa_, sb_); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static char g_tmp[256];
static char g_data[1024];

/* ---- helpers ------------------------------------------------------------------------ */

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

static char *tmp_path(const char *name) {
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", g_tmp, name);
    return p;
}

/* Measured seconds of op for a kind key ("cpu"/"gpu"), -1 when absent. */
static double cost_of(const dp_graph *g, int32_t op, const char *key) {
    int32_t k = dp_graph_find_str(g, key);
    const dp_op *o = &g->ops[op];
    for (int32_t c = 0; c < o->n_costs; c++)
        if (g->costs[o->costs_at + c].key == k) return g->costs[o->costs_at + c].seconds;
    return -1;
}

static uint64_t out_bytes(const dp_graph *g, int32_t op, int32_t slot) {
    return g->outputs[g->ops[op].outputs_at + slot].bytes;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const char *base_name(const char *path) {
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Lists every *.json under root (iteratively, an explicit stack of
 * directories), sorted. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char **list_json(const char *root, int *count) {
    char **stack = malloc(256 * sizeof(char *));
    char **files = malloc(1024 * sizeof(char *));
    int ns = 0, nf = 0;
    stack[ns++] = strdup(root);
    while (ns > 0) {
        char *dir = stack[--ns];
        DIR *d = opendir(dir);
        if (!d) {
            fprintf(stderr, "cannot open %s (set DPLACE_SHARED to the shared folder)\n", dir);
            exit(1);
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat sb;
            CHECK(stat(path, &sb) == 0);
            if (S_ISDIR(sb.st_mode)) {
                CHECK(ns < 256);
                stack[ns++] = strdup(path);
            } else if (ends_with(path, ".json")) {
                CHECK(nf < 1024);
                files[nf++] = strdup(path);
            }
        }
        closedir(d);
        free(dir);
    }
    free(stack);
    qsort(files, (size_t)nf, sizeof(char *), cmp_str);
    *count = nf;
    return files;
}

static int json_flag(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : (int)json_integer_value(v);
}

/* The file's ids and colorClasses, sorted, for lookups without the importer. */
typedef struct id_pos {
    json_int_t key;
    int32_t pos;
} id_pos;

static int cmp_id_pos(const void *a, const void *b) {
    const id_pos *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorted (key, position) of every node that has `field`; returns the count. */
static int32_t index_field(const json_t *nodes, const char *field, id_pos *out) {
    int32_t k = 0;
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        const json_t *v = json_object_get(json_array_get(nodes, i), field);
        if (v) out[k++] = (id_pos){json_integer_value(v), (int32_t)i};
    }
    qsort(out, (size_t)k, sizeof(id_pos), cmp_id_pos);
    return k;
}

/* First entry with this key, -1 when absent. */
static int32_t lookup(const id_pos *ix, int32_t n, json_int_t key) {
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (ix[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && ix[lo].key == key ? lo : -1;
}

/* Simulates placement and returns the result (run must succeed). */
static dp_sim_result simulate(dp_sim *sim, const int32_t *place) {
    dp_sim_result r;
    dp_error err;
    if (dp_sim_run(sim, place, NULL, &r, &err)) {
        fprintf(stderr, "dp_sim_run: %s\n", err.msg);
        exit(1);
    }
    CHECK(isfinite(r.step_time_s) && r.step_time_s >= 0);
    return r;
}

static double max_busy(const dp_sim_result *r) {
    double m = 0;
    for (int32_t d = 0; d < r->n_devices; d++) m = r->device[d].busy_s > m ? r->device[d].busy_s : m;
    return m;
}

/* ---- the dataset ---------------------------------------------------------------------- */

/* Checks an imported graph against its JSON: counts, every node's fields,
 * every edge, the devices; simulates it on one GPU and on the CPU. */
static void check_graph(const char *path, const json_t *root, int *n_ops_total) {
    dp_error err;
    dp_import_msr *imp = dp_import_msr_read_file(path, NULL, &err);
    if (!imp) {
        fprintf(stderr, "import %s: %s\n", path, err.msg);
        exit(1);
    }
    const json_t *nodes = json_object_get(root, "nodes"), *edges = json_object_get(root, "edges");
    const dp_graph *g = imp->graph;
    const dp_devices *ds = imp->devices;
    int32_t n = (int32_t)json_array_size(nodes), m = (int32_t)json_array_size(edges);
    CHECK_INT_EQ(g->n_ops, n);
    CHECK_INT_EQ(g->n_inputs, m);
    CHECK_INT_EQ(imp->info.n_nodes, n);
    CHECK_INT_EQ(imp->info.n_edges, m);
    *n_ops_total += n;
    id_pos *ids = malloc((size_t)n * sizeof(id_pos)), *colors = malloc((size_t)n * sizeof(id_pos));
    int32_t n_ids = index_field(nodes, "id", ids), n_colors = index_field(nodes, "colorClass", colors);
    CHECK_INT_EQ(n_ids, n);
    double sum_cpu = 0, sum_fpga = 0, max_cpu = 0;
    uint64_t sum_bytes = 0;
    int n_backward = 0;
    for (int32_t i = 0; i < n; i++) {
        const json_t *nd = json_array_get(nodes, (size_t)i);
        json_int_t id = json_integer_value(json_object_get(nd, "id"));
        CHECK_INT_EQ(imp->node_id[i], id);
        CHECK_INT_EQ(dp_import_msr_find_node(imp, id), i);
        double cpu = json_number_value(json_object_get(nd, "cpuLatency"));
        double fpga = json_number_value(json_object_get(nd, "fpgaLatency"));
        CHECK(cost_of(g, i, "cpu") == cpu * 1e-3);
        CHECK(cost_of(g, i, "gpu") == fpga * 1e-3);
        sum_cpu += cpu * 1e-3;
        sum_fpga += fpga * 1e-3;
        max_cpu = cpu * 1e-3 > max_cpu ? cpu * 1e-3 : max_cpu;
        uint64_t bytes = (uint64_t)ceil(json_number_value(json_object_get(nd, "size")));
        CHECK_INT_EQ(g->ops[i].param_bytes, bytes);
        sum_bytes += bytes;
        CHECK_INT_EQ(g->ops[i].device.kind, json_flag(nd, "supportedOnFpga") ? DP_DEVCON_NONE : DP_DEVCON_CPU);
        int bw = json_flag(nd, "isBackwardNode");
        n_backward += bw;
        CHECK(strncmp(dp_graph_str(g, g->ops[i].scope), bw ? "backward" : "forward", bw ? 8 : 7) == 0);
        const char *name = json_string_value(json_object_get(nd, "name"));
        CHECK_STR_EQ(g->ops[i].name, name); /* names are unique in every file */
        const json_t *cc_v = json_object_get(nd, "colorClass");
        int32_t at = cc_v ? lookup(colors, n_colors, json_integer_value(cc_v)) : -1;
        if (at >= 0 && at + 1 < n_colors && colors[at + 1].key == colors[at].key) {
            char cc[48];
            snprintf(cc, sizeof cc, "cc%lld", (long long)json_integer_value(json_object_get(nd, "colorClass")));
            CHECK_STR_EQ(dp_graph_str(g, g->ops[i].colocate), cc);
        } else {
            CHECK_INT_EQ(g->ops[i].colocate, -1);
        }
    }
    CHECK_INT_EQ(imp->info.n_backward, n_backward);
    /* each op's inputs are its incoming edges in file order, carrying their size */
    int32_t *next_in = calloc((size_t)n, sizeof(int32_t));
    for (int32_t e = 0; e < m; e++) {
        const json_t *ed = json_array_get(edges, (size_t)e);
        int32_t s = lookup(ids, n, json_integer_value(json_object_get(ed, "sourceId")));
        int32_t d = lookup(ids, n, json_integer_value(json_object_get(ed, "destId")));
        CHECK(s >= 0 && d >= 0);
        s = ids[s].pos;
        d = ids[d].pos;
        CHECK(next_in[d] < g->ops[d].n_inputs);
        dp_input in = g->inputs[g->ops[d].inputs_at + next_in[d]++];
        CHECK_INT_EQ(in.op, s);
        CHECK_INT_EQ(out_bytes(g, s, in.slot), (uint64_t)ceil(json_number_value(json_object_get(ed, "size"))));
    }
    for (int32_t i = 0; i < n; i++) CHECK_INT_EQ(next_in[i], g->ops[i].n_inputs);
    free(next_in);
    free(ids);
    free(colors);
    /* the device set */
    int64_t fpgas = json_integer_value(json_object_get(root, "maxFPGAs"));
    int64_t cpus = json_integer_value(json_object_get(root, "maxCPUs"));
    CHECK_INT_EQ(ds->n_devices, 1 + fpgas);
    CHECK_INT_EQ(ds->kind_count[DP_DEVKIND_GPU], fpgas);
    CHECK_INT_EQ(ds->n_links, 2 * fpgas);
    CHECK_INT_EQ(ds->devices[0].streams, cpus);
    CHECK_INT_EQ(ds->devices[1].memory_bytes,
                 (uint64_t)ceil(json_number_value(json_object_get(root, "maxSizePerFPGA"))));
    CHECK(ds->links[0].bandwidth == imp->info.bandwidth);

    /* one GPU: no transfers, one stream, so the step is the sum of the accelerator latencies */
    dp_sim *sim = dp_sim_init(g, ds, &err);
    if (!sim) {
        fprintf(stderr, "dp_sim_init %s: %s\n", path, err.msg);
        exit(1);
    }
    int32_t *place = malloc((size_t)n * sizeof(int32_t));
    CHECK(dp_placement_single(g, ds, dp_devices_nth(ds, DP_DEVKIND_GPU, 0), place, &err) == DP_STATUS_OK);
    dp_sim_result r = simulate(sim, place);
    CHECK_NEAR(r.step_time_s, sum_fpga, 1e-9);
    CHECK_INT_EQ(r.n_transfers, 0);
    CHECK_INT_EQ(r.device[1].param_bytes, sum_bytes);
    if (r.valid) CHECK(r.device[1].peak_bytes <= r.device[1].memory_bytes);
    else CHECK(r.verdict == DP_SIM_VERDICT_OOM && r.device[1].peak_bytes > r.device[1].memory_bytes);
    double gpu_step = r.step_time_s;
    int gpu_valid = r.valid;
    /* the CPU: valid; with one core the step is the sum of the CPU latencies */
    CHECK(dp_placement_single(g, ds, 0, place, &err) == DP_STATUS_OK);
    r = simulate(sim, place);
    CHECK(r.valid);
    if (cpus == 1) CHECK_NEAR(r.step_time_s, sum_cpu, 1e-9);
    else CHECK(r.step_time_s <= sum_cpu * (1 + 1e-12) && r.step_time_s >= max_cpu);
    printf("  %-50s %5d nodes %5d edges  one GPU %9.3f ms%s  CPU %10.3f ms  bw %.4g B/s\n",
           path + strlen(g_data) + 1, n, m, gpu_step * 1e3, gpu_valid ? "     " : " (OOM)", r.step_time_s * 1e3,
           imp->info.bandwidth);

    /* writing and reading back gives the same graph shape */
    dp_error werr;
    char *out = tmp_path("roundtrip.json");
    CHECK(dp_graph_write_file(g, out, &werr) == DP_STATUS_OK);
    dp_graph *back = dp_graph_read_file(out, &werr);
    if (!back) {
        fprintf(stderr, "re-read %s: %s\n", out, werr.msg);
        exit(1);
    }
    CHECK_INT_EQ(back->n_ops, n);
    CHECK_INT_EQ(back->n_inputs, m);
    dp_graph_free(back);
    unlink(out);
    free(place);
    dp_sim_free(sim);
    dp_import_msr_free(imp);
}

/* A split and the graphs it is for: the same base name, and the training
 * graph when the split is an inference split without a training split. */
static int split_applies(const char *split, const char *graph, char *const *files, int nf) {
    char base[256];
    snprintf(base, sizeof base, "%s", base_name(split));
    char *cut = strstr(base, "_expert.json");
    if (!cut) return 0;
    *cut = '\0';
    char want[300];
    snprintf(want, sizeof want, "%s.json", base);
    if (strcmp(base_name(graph), want) == 0) return 1;
    char *inf = strstr(base, "_inference");
    if (!inf) return 0;
    *inf = '\0';
    char training_split[300];
    snprintf(training_split, sizeof training_split, "%s_training_expert.json", base);
    for (int i = 0; i < nf; i++)
        if (strcmp(base_name(files[i]), training_split) == 0) return 0;
    snprintf(want, sizeof want, "%s_training.json", base);
    return strcmp(base_name(graph), want) == 0;
}

static void check_split(const char *split, const char *graph, int *n_ok, int *n_refused) {
    dp_error err;
    dp_import_msr *imp = dp_import_msr_read_file(graph, NULL, &err);
    CHECK(imp != NULL);
    const dp_graph *g = imp->graph;
    int32_t *place = malloc((size_t)g->n_ops * sizeof(int32_t));
    dp_import_split_info info;
    dp_status st = dp_import_msr_read_split(split, imp, place, &info, &err);
    const char *rel = graph + strlen(g_data) + 1;
    /* The expert splits are layer-granularity; the operator graphs that share
     * a base name are other graphs, and the latency bert24 machine has 5 accelerators. */
    int is_latency_bert = strstr(graph, "latency-inputs/LayerGraphs/bert24_inference.json") != NULL;
    if (!strstr(graph, "/LayerGraphs/") || is_latency_bert) {
        CHECK(st != DP_STATUS_OK);
        if (is_latency_bert) {
            char want[2048];
            snprintf(want, sizeof want,
                     "%s: fpgas[5]: puts 8 nodes on accelerator 5, but %s has maxFPGAs 5: the split needs more "
                     "accelerators than this graph's machine has",
                     split, graph);
            CHECK_STR_EQ(err.msg, want);
        } else {
            CHECK(strstr(err.msg, "the split does not cover this graph") ||
                  strstr(err.msg, "is split across devices") || strstr(err.msg, "does not belong to this graph"));
        }
        printf("  %-28s on %-48s refused: %s\n", base_name(split), rel, err.msg + strlen(split) + 2);
        (*n_refused)++;
    } else {
        if (st) {
            fprintf(stderr, "split %s on %s: %s\n", split, graph, err.msg);
            exit(1);
        }
        CHECK_INT_EQ(info.n_listed + info.n_inferred, g->n_ops);
        dp_sim *sim = dp_sim_init(g, imp->devices, &err);
        CHECK(sim != NULL);
        dp_sim_result r = simulate(sim, place);
        /* The splits were made for the throughput machines (16 GiB accelerators),
         * where the nodes' sizes fit (as the MSR model counts memory); the latency
         * machines have 600 MiB or 2 GiB, and the MSR tools only warn when a
         * split's sizes exceed them. dplace also holds live output tensors, so a
         * split that fits by sizes can still run out of memory (docs/import.md). */
        int params_fit = 1;
        for (int32_t d = 0; d < r.n_devices; d++)
            params_fit &= r.device[d].param_bytes <= r.device[d].memory_bytes;
        if (strstr(graph, "throughput-inputs/")) CHECK(params_fit);
        if (!r.valid && r.verdict != DP_SIM_VERDICT_OOM) {
            fprintf(stderr, "expert placement of %s on %s invalid: %s\n", split, graph, r.reason);
            exit(1);
        }
        double step = r.step_time_s, busy = max_busy(&r);
        int valid = r.valid;
        int32_t transfers = r.n_transfers;
        int32_t *one = malloc((size_t)g->n_ops * sizeof(int32_t));
        CHECK(dp_placement_single(g, imp->devices, 1, one, &err) == DP_STATUS_OK);
        r = simulate(sim, one);
        printf("  %-28s on %-48s %d listed + %d inferred, %d GPUs: step %8.3f ms%s (one GPU %8.3f ms), max device "
               "busy %7.3f ms, %d transfers\n",
               base_name(split), rel, info.n_listed, info.n_inferred, info.n_gpus, step * 1e3,
               valid ? "" : params_fit ? " (OOM by liveness)" : " (OOM: sizes over maxSizePerFPGA)",
               r.step_time_s * 1e3, busy * 1e3, transfers);
        /* write it as a placement file and read it back */
        char *out = tmp_path("expert.json");
        CHECK(dp_placement_write_file(out, g, imp->devices, place, &err) == DP_STATUS_OK);
        CHECK(dp_placement_read_file(out, g, imp->devices, one, &err) == DP_STATUS_OK);
        CHECK(memcmp(one, place, (size_t)g->n_ops * sizeof(int32_t)) == 0);
        unlink(out);
        free(one);
        dp_sim_free(sim);
        (*n_ok)++;
    }
    free(place);
    dp_import_msr_free(imp);
}

/* Every graph of the dataset imports to what its JSON says, simulates on
 * one GPU and on the CPU to the sums of its latencies, and round-trips. */
static void test_dataset_graphs(void) {
    int nf = 0, n_graphs = 0, n_splits = 0, n_ops = 0;
    char **files = list_json(g_data, &nf);
    printf("graphs:\n");
    for (int i = 0; i < nf; i++) {
        TEST_CASE("%s", files[i] + strlen(g_data) + 1);
        json_error_t je;
        json_t *root = json_load_file(files[i], 0, &je);
        CHECK(root != NULL);
        if (json_object_get(root, "nodes")) {
            check_graph(files[i], root, &n_ops);
            n_graphs++;
        } else {
            CHECK(json_object_get(root, "fpgas") != NULL);
            n_splits++;
        }
        json_decref(root);
    }
    test_case_[0] = '\0'; /* the counts are over every file */
    printf("%d graphs (%d nodes in all), %d splits\n", n_graphs, n_ops, n_splits);
    CHECK_INT_EQ(n_graphs, 24);
    CHECK_INT_EQ(n_splits, 6);
    for (int i = 0; i < nf; i++) free(files[i]);
    free(files);
}

/* Every human-expert split imports as a placement of the graphs it is for
 * (simulated, written and read back), or is refused with the reason. */
static void test_dataset_expert_splits(void) {
    int nf = 0, n_ok = 0, n_refused = 0;
    char **files = list_json(g_data, &nf);
    printf("expert splits:\n");
    for (int i = 0; i < nf; i++) {
        if (!strstr(files[i], "human-experts/")) continue;
        for (int j = 0; j < nf; j++)
            if (split_applies(files[i], files[j], files, nf)) {
                TEST_CASE("%s on %s", base_name(files[i]), files[j] + strlen(g_data) + 1);
                check_split(files[i], files[j], &n_ok, &n_refused);
            }
    }
    test_case_[0] = '\0'; /* the counts are over every split */
    printf("%d placements imported, %d refused\n", n_ok, n_refused);
    CHECK_INT_EQ(n_ok, 11);
    CHECK_INT_EQ(n_refused, 4);
    for (int i = 0; i < nf; i++) free(files[i]);
    free(files);
}

/* A split that belongs to another graph is refused with a clear reason. */
static void test_mismatched_splits(void) {
    char gpath[1200], spath[1200], want[4096];
    dp_error err;
    TEST_CASE("bert24_inference_expert.json on gnmt_inference.json");
    snprintf(gpath, sizeof gpath, "%s/throughput-inputs/LayerGraphs/gnmt_inference.json", g_data);
    dp_import_msr *imp = dp_import_msr_read_file(gpath, NULL, &err);
    CHECK(imp != NULL);
    int32_t place[96];
    snprintf(spath, sizeof spath, "%s/human-experts/bert24_inference_expert.json", g_data);
    CHECK(dp_import_msr_read_split(spath, imp, place, NULL, &err) == DP_STATUS_INVALID);
    snprintf(want, sizeof want,
             "%s: node 33 \"node33\" is in no entry of the split, nor is any other node of its colorClass 33 (64 of "
             "the 96 nodes of %s are left unplaced): the split does not cover this graph",
             spath, gpath);
    CHECK_STR_EQ(err.msg, want);
    dp_import_msr_free(imp);

    TEST_CASE("gnmt_training_expert.json on bert24_inference.json");
    snprintf(gpath, sizeof gpath, "%s/throughput-inputs/LayerGraphs/bert24_inference.json", g_data);
    imp = dp_import_msr_read_file(gpath, NULL, &err);
    CHECK(imp != NULL);
    snprintf(spath, sizeof spath, "%s/human-experts/gnmt_training_expert.json", g_data);
    CHECK(dp_import_msr_read_split(spath, imp, place, NULL, &err) == DP_STATUS_INVALID);
    snprintf(want, sizeof want,
             "%s: fpgas[0].nodes[5]: node 97 is not in %s (node ids missing there: 160 of the split's 192): the "
             "split does not belong to this graph",
             spath, gpath);
    CHECK_STR_EQ(err.msg, want);
    dp_import_msr_free(imp);
}

/* ---- small hand-made graphs -------------------------------------------------------- */

static const char *small_graph =
    "{\"maxSizePerFPGA\": 1000, \"maxFPGAs\": 2, \"maxCPUs\": 3, \"nodes\": [\n"
    " {\"id\": 1, \"name\": \"a\", \"supportedOnFpga\": 1, \"cpuLatency\": 2, \"fpgaLatency\": 1,"
    "  \"isBackwardNode\": 0, \"colorClass\": 1, \"size\": 10, \"layerId\": 4},\n"
    " {\"id\": 5, \"name\": \"b\", \"supportedOnFpga\": false, \"cpuLatency\": 3, \"fpgaLatency\": 1,"
    "  \"isBackwardNode\": false, \"colorClass\": 1, \"size\": 0.5},\n"
    " {\"id\": 7, \"supportedOnFpga\": true, \"cpuLatency\": 1, \"fpgaLatency\": 0.5, \"isBackwardNode\": true,"
    "  \"size\": 0}],\n"
    " \"edges\": [{\"sourceId\": 1, \"destId\": 5, \"cost\": 1, \"size\": 2000},"
    " {\"sourceId\": 1, \"destId\": 7, \"cost\": 1, \"size\": 2000}, {\"sourceId\": 5, \"destId\": 7, \"cost\": 0.5}]}\n";

/* small_graph, written to small.json and imported with opt (NULL: the
 * defaults); *path gets the file's path. */
static dp_import_msr *import_small(const dp_import_msr_options *opt, char **path) {
    dp_error err;
    *path = tmp_path("small.json");
    write_text(*path, small_graph);
    dp_import_msr *imp = dp_import_msr_read_file(*path, opt, &err);
    if (!imp) fprintf(stderr, "%s\n", err.msg);
    CHECK(imp != NULL);
    return imp;
}

/* A small graph's nodes become ops: names, scopes, colorClasses, CPU-only
 * constraints, sizes rounded up, latencies in ms; edges become outputs
 * sized from the file (or from cost and the bandwidth), one per size. */
static void test_small_mapping(void) {
    char *path;
    dp_import_msr *imp = import_small(NULL, &path);
    const dp_graph *g = imp->graph;
    CHECK_STR_EQ(g->name, "small");
    CHECK_INT_EQ(g->n_ops, 3);
    CHECK_STR_EQ(g->ops[0].name, "a");
    CHECK_STR_EQ(g->ops[1].name, "b");
    CHECK_STR_EQ(g->ops[2].name, "node7");
    CHECK_STR_EQ(dp_graph_str(g, g->ops[0].scope), "forward/layer4");
    CHECK_STR_EQ(dp_graph_str(g, g->ops[1].scope), "forward");
    CHECK_STR_EQ(dp_graph_str(g, g->ops[2].scope), "backward");
    CHECK_STR_EQ(dp_graph_str(g, g->ops[0].colocate), "cc1");
    CHECK_STR_EQ(dp_graph_str(g, g->ops[1].colocate), "cc1");
    CHECK_INT_EQ(g->ops[2].colocate, -1);
    CHECK_INT_EQ(g->ops[0].device.kind, DP_DEVCON_NONE);
    CHECK_INT_EQ(g->ops[1].device.kind, DP_DEVCON_CPU);
    CHECK_INT_EQ(g->ops[0].param_bytes, 10);
    CHECK_INT_EQ(g->ops[1].param_bytes, 1); /* 0.5 rounds up */
    CHECK(cost_of(g, 0, "cpu") == 2e-3 && cost_of(g, 0, "gpu") == 1e-3);
    CHECK(cost_of(g, 2, "cpu") == 1e-3 && cost_of(g, 2, "gpu") == 0.5e-3);
    /* bandwidth from the sized edges: 2000 bytes per ms; b's edge has no size: 0.5 ms -> 1000 bytes */
    CHECK_NEAR(imp->info.bandwidth, 2e6, 1e-12);
    CHECK_INT_EQ(imp->info.bandwidth_from_file, 1);
    CHECK_INT_EQ(imp->info.n_edges_bytes_from_cost, 1);
    CHECK_INT_EQ(imp->info.n_edges_off_bandwidth, 0);
    CHECK_INT_EQ(imp->info.n_colocate_groups, 1);
    CHECK_INT_EQ(imp->info.n_cpu_only, 1);
    CHECK_INT_EQ(g->ops[0].n_outputs, 1); /* both edges of a carry 2000 bytes: one output */
    CHECK_INT_EQ(out_bytes(g, 0, 0), 2000);
    CHECK_INT_EQ(out_bytes(g, 1, 0), 1000);
    CHECK_INT_EQ(g->ops[2].n_outputs, 0);
    CHECK_INT_EQ(g->ops[2].n_inputs, 2);
    dp_import_msr_free(imp);
    unlink(path);
}

/* The machine of a small graph: the CPU with maxCPUs streams, maxFPGAs
 * accelerators of maxSizePerFPGA bytes, links both ways at the bandwidth. */
static void test_small_devices(void) {
    char *path;
    dp_import_msr *imp = import_small(NULL, &path);
    const dp_devices *ds = imp->devices;
    CHECK_INT_EQ(ds->n_devices, 3);
    CHECK_STR_EQ(ds->devices[0].name, "cpu:0");
    CHECK_STR_EQ(ds->devices[2].name, "gpu:1");
    CHECK_INT_EQ(ds->devices[0].streams, 3);
    CHECK_INT_EQ(ds->devices[1].memory_bytes, 1000);
    CHECK_INT_EQ(ds->n_links, 4);
    CHECK_NEAR(ds->links[0].bandwidth, 2e6, 1e-12);
    dp_import_msr_free(imp);
    unlink(path);
}

/* The imported machine's devices file round-trips. */
static void test_small_devices_round_trip(void) {
    char *path;
    dp_import_msr *imp = import_small(NULL, &path);
    dp_error err;
    char *dpath = tmp_path("small_devices.json");
    CHECK(dp_devices_write_file(imp->devices, dpath, &err) == DP_STATUS_OK);
    dp_devices *back = dp_devices_read_file(dpath, &err);
    CHECK(back != NULL);
    CHECK_INT_EQ(back->n_devices, 3);
    CHECK_INT_EQ(back->n_links, 4);
    CHECK_INT_EQ(back->devices[1].memory_bytes, 1000);
    dp_devices_free(back);
    unlink(dpath);
    dp_import_msr_free(imp);
    unlink(path);
}

/* Options: times in seconds, a given bandwidth, edge bytes from cost, a
 * name. */
static void test_options(void) {
    dp_import_msr_options opt = dp_import_msr_options_default();
    opt.time_unit_s = 1.0;
    opt.bandwidth = 100;
    opt.edge_bytes = DP_IMPORT_EDGE_BYTES_COST;
    opt.name = "renamed";
    char *path;
    dp_import_msr *imp2 = import_small(&opt, &path);
    CHECK_STR_EQ(imp2->graph->name, "renamed");
    CHECK(cost_of(imp2->graph, 0, "cpu") == 2.0);
    CHECK_INT_EQ(out_bytes(imp2->graph, 0, 0), 100); /* 1 s x 100 B/s */
    CHECK_INT_EQ(out_bytes(imp2->graph, 1, 0), 50);
    CHECK_INT_EQ(imp2->info.bandwidth_from_file, 0);
    CHECK_INT_EQ(imp2->info.n_edges_bytes_from_cost, 3);
    CHECK(imp2->devices->links[0].bandwidth == 100);
    dp_import_msr_free(imp2);
    unlink(path);
}

/* Transfers take the edge cost per hop: accelerator to accelerator goes
 * through the host (to and from CPU DRAM), twice the cost. */
static void test_transfer_times(void) {
    const char *text = "{\"maxSizePerFPGA\": 1e9, \"maxFPGAs\": 2, \"maxCPUs\": 1, \"nodes\": [\n"
                       " {\"id\": 10, \"supportedOnFpga\": 1, \"cpuLatency\": 4, \"fpgaLatency\": 1,"
                       "  \"isBackwardNode\": 0, \"size\": 0},\n"
                       " {\"id\": 20, \"supportedOnFpga\": 1, \"cpuLatency\": 8, \"fpgaLatency\": 3,"
                       "  \"isBackwardNode\": 0, \"size\": 0}],\n"
                       " \"edges\": [{\"sourceId\": 10, \"destId\": 20, \"cost\": 2}]}\n";
    dp_error err;
    dp_import_msr *imp = dp_import_msr_read_string(text, "chain", NULL, &err);
    CHECK(imp != NULL);
    CHECK_NEAR(imp->info.bandwidth, DP_IMPORT_MSR_DEFAULT_BANDWIDTH, 1e-12);
    CHECK_INT_EQ(out_bytes(imp->graph, 0, 0), 4294967); /* 2 ms at 2 GiB/s */
    dp_sim *sim = dp_sim_init(imp->graph, imp->devices, &err);
    CHECK(sim != NULL);
    int32_t gg[2] = {1, 2}, cg[2] = {0, 1}, same[2] = {2, 2};
    dp_sim_result r = simulate(sim, gg);
    CHECK_NEAR(r.step_time_s, 1e-3 + 2 * 2e-3 + 3e-3, 1e-6);
    r = simulate(sim, cg);
    CHECK_NEAR(r.step_time_s, 4e-3 + 2e-3 + 3e-3, 1e-6);
    r = simulate(sim, same);
    CHECK_NEAR(r.step_time_s, 4e-3, 1e-12);
    dp_sim_free(sim);
    dp_import_msr_free(imp);
}

/* Three nodes, two named "x", one unnamed; node 3's edges carry 8 and 16
 * bytes, node 9's 0; maxCPUs 0. */
static dp_import_msr *names_graph(void) {
    const char *text = "{\"maxSizePerFPGA\": 1e9, \"maxFPGAs\": 1, \"maxCPUs\": 0, \"nodes\": [\n"
                       " {\"id\": 3, \"name\": \"x\", \"supportedOnFpga\": 1, \"cpuLatency\": 0, \"fpgaLatency\": 0,"
                       "  \"isBackwardNode\": 0},\n"
                       " {\"id\": 9, \"name\": \"x\", \"supportedOnFpga\": 1, \"cpuLatency\": 0, \"fpgaLatency\": 0,"
                       "  \"isBackwardNode\": 0},\n"
                       " {\"id\": -2, \"name\": \"\", \"supportedOnFpga\": 1, \"cpuLatency\": 0, \"fpgaLatency\": 0,"
                       "  \"isBackwardNode\": 0}],\n"
                       " \"edges\": [{\"sourceId\": 3, \"destId\": 9, \"cost\": 1, \"size\": 8},"
                       " {\"sourceId\": 3, \"destId\": -2, \"cost\": 1, \"size\": 16},"
                       " {\"sourceId\": 9, \"destId\": -2, \"cost\": 0, \"size\": 0}]}\n";
    dp_error err;
    dp_import_msr *imp = dp_import_msr_read_string(text, "names", NULL, &err);
    if (!imp) fprintf(stderr, "%s\n", err.msg);
    CHECK(imp != NULL);
    return imp;
}

/* Duplicate names get "#id"; missing names become "node<id>". */
static void test_names(void) {
    dp_import_msr *imp = names_graph();
    const dp_graph *g = imp->graph;
    CHECK_STR_EQ(g->ops[0].name, "x");
    CHECK_STR_EQ(g->ops[1].name, "x#9");
    CHECK_STR_EQ(g->ops[2].name, "node-2");
    dp_import_msr_free(imp);
}

/* Several outputs when one node's edges carry different sizes, each
 * consumer reading its own; the bandwidth is the median over the sized
 * edges, so both are off it. */
static void test_slots(void) {
    dp_import_msr *imp = names_graph();
    const dp_graph *g = imp->graph;
    CHECK_INT_EQ(g->ops[0].n_outputs, 2);
    CHECK_INT_EQ(out_bytes(g, 0, 0), 8);
    CHECK_INT_EQ(out_bytes(g, 0, 1), 16);
    CHECK_INT_EQ(g->inputs[g->ops[2].inputs_at].slot, 1);
    CHECK_NEAR(imp->info.bandwidth, 12000, 1e-12); /* median of 8 and 16 bytes per ms */
    CHECK_INT_EQ(imp->info.n_edges_off_bandwidth, 2); /* so both sized edges are off it */
    dp_import_msr_free(imp);
}

/* maxCPUs 0: the CPU still has one stream. */
static void test_zero_cpus_one_stream(void) {
    dp_import_msr *imp = names_graph();
    CHECK_INT_EQ(imp->devices->devices[0].streams, 1); /* maxCPUs 0: still one stream */
    dp_import_msr_free(imp);
}

/* A node is found by its id; an unknown id is not. */
static void test_find_node(void) {
    dp_import_msr *imp = names_graph();
    CHECK_INT_EQ(dp_import_msr_find_node(imp, -2), 2);
    CHECK_INT_EQ(dp_import_msr_find_node(imp, 4), -1);
    dp_import_msr_free(imp);
}

/* ---- bad graphs ------------------------------------------------------------------- */

/* Imports text from a file and expects exactly "PATH: tail". */
static void expect_graph_error(const char *text, const char *tail) {
    TEST_CASE("the graph refused with \"%.80s\"", tail);
    char *path = tmp_path("bad.json");
    write_text(path, text);
    dp_error err;
    dp_import_msr *imp = dp_import_msr_read_file(path, NULL, &err);
    if (imp) fprintf(stderr, "expected an error for: %s\n", text);
    CHECK(imp == NULL);
    char want[2048];
    snprintf(want, sizeof want, "%s: %s", path, tail);
    CHECK_STR_EQ(err.msg, want);
    unlink(path);
}

#define HEAD "{\"maxSizePerFPGA\": 1000, \"maxFPGAs\": 2, \"maxCPUs\": 1, "
#define NODE(id, extra)                                                                                         \
    "{\"id\": " #id ", \"supportedOnFpga\": 1, \"cpuLatency\": 2, \"fpgaLatency\": 1, \"isBackwardNode\": 0" extra \
    "}"
#define EDGE(s, d, c) "{\"sourceId\": " #s ", \"destId\": " #d ", \"cost\": " #c "}"

/* Each kind of malformed graph is refused with exactly its message,
 * naming the file and the item. */
static void test_bad_graphs(void) {
    expect_graph_error("", "file is empty");
    expect_graph_error("[1, 2]", "expected a JSON object at the top, got an array");
    expect_graph_error("{\"format\": \"dplace-graph\", \"version\": 1, \"ops\": []}",
                       "this is a \"dplace-graph\" file, not an MSR dnn-partitioning graph (an object with maxFPGAs, "
                       "maxCPUs, maxSizePerFPGA, nodes and edges)");
    expect_graph_error("{\"cpus\": [], \"fpgas\": []}",
                       "missing field \"nodes\"; this looks like a split (cpus/fpgas), not a graph");
    expect_graph_error("{\"maxSizePerFPGA\": 1000, \"maxCPUs\": 1, \"nodes\": [" NODE(1, "") "], \"edges\": []}",
                       "missing field \"maxFPGAs\"");
    expect_graph_error("{\"maxSizePerFPGA\": 1000, \"maxFPGAs\": 100, \"maxCPUs\": 1, \"nodes\": [" NODE(1, "")
                       "], \"edges\": []}",
                       "field \"maxFPGAs\" must be in 0..63, got 100");
    expect_graph_error("{\"maxSizePerFPGA\": \"big\", \"maxFPGAs\": 1, \"maxCPUs\": 1, \"nodes\": [" NODE(1, "")
                       "], \"edges\": []}",
                       "field \"maxSizePerFPGA\" must be a number, got a string");
    expect_graph_error(HEAD "\"nodes\": [], \"edges\": []}", "field \"nodes\" is empty");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") "]}", "missing field \"edges\"");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", 7], \"edges\": []}", "nodes[1]: must be an object, got an integer");
    expect_graph_error(HEAD "\"nodes\": [{\"id\": \"x\"}], \"edges\": []}",
                       "nodes[0]: field \"id\" must be an integer, got a string");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", {\"id\": 5, \"supportedOnFpga\": 1, \"fpgaLatency\": 1,"
                       " \"isBackwardNode\": 0}], \"edges\": []}",
                       "nodes[1] (id 5): missing field \"cpuLatency\"");
    expect_graph_error(HEAD "\"nodes\": [{\"id\": 1, \"supportedOnFpga\": \"yes\", \"cpuLatency\": 2,"
                       " \"fpgaLatency\": 1, \"isBackwardNode\": 0}], \"edges\": []}",
                       "nodes[0] (id 1): field \"supportedOnFpga\" must be true, false, 0 or 1, got a string");
    expect_graph_error(HEAD "\"nodes\": [{\"id\": 1, \"supportedOnFpga\": 1, \"cpuLatency\": 2,"
                       " \"fpgaLatency\": 1, \"isBackwardNode\": 2}], \"edges\": []}",
                       "nodes[0] (id 1): field \"isBackwardNode\" must be true, false, 0 or 1, got 2");
    expect_graph_error(HEAD "\"nodes\": [{\"id\": 1, \"supportedOnFpga\": 1, \"cpuLatency\": 2,"
                       " \"fpgaLatency\": -1, \"isBackwardNode\": 0}], \"edges\": []}",
                       "nodes[0] (id 1): field \"fpgaLatency\" must be >= 0, got -1");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, ", \"size\": -5") "], \"edges\": []}",
                       "nodes[0] (id 1): field \"size\" must be >= 0, got -5");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, ", \"colorClass\": 1.5") "], \"edges\": []}",
                       "nodes[0] (id 1): field \"colorClass\" must be a whole number, got 1.5");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, ", \"name\": 3") "], \"edges\": []}",
                       "nodes[0] (id 1): field \"name\" must be a string, got an integer");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", " NODE(5, "") ", " NODE(5, "") "], \"edges\": []}",
                       "nodes[2]: id 5 is also the id of nodes[1]");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", " NODE(5, "") "], \"edges\": [" EDGE(1, 5, 1) ", "
                       EDGE(5, 9, 1) "]}",
                       "edges[1]: destId 9 is not the id of any node");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") "], \"edges\": [" EDGE(1, 1, 1) "]}",
                       "edges[0]: sourceId and destId are both 1 (a self-loop)");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", " NODE(5, "") "], \"edges\": [{\"sourceId\": 1,"
                       " \"destId\": 5}]}",
                       "edges[0]: missing field \"cost\"");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", " NODE(5, "") "], \"edges\": [" EDGE(1, 5, -3) "]}",
                       "edges[0]: field \"cost\" must be >= 0, got -3");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, "") ", " NODE(5, "") ", " NODE(7, "") "], \"edges\": ["
                       EDGE(1, 5, 1) ", " EDGE(1, 7, 2) "]}",
                       "edges[1]: cost 2 differs from cost 1 of edges[0]; both leave node 1, and the edges leaving "
                       "one node must share one cost");
    expect_graph_error(HEAD "\"nodes\": [" NODE(1, ", \"name\": \"a\"") ", " NODE(5, ", \"name\": \"b\"") ", "
                       NODE(7, "") ", " NODE(8, "") "], \"edges\": [" EDGE(8, 1, 1) ", " EDGE(1, 5, 1) ", "
                       EDGE(5, 7, 1) ", " EDGE(7, 1, 1) "]}",
                       "the edges form a cycle: node 1 \"a\" -> node 5 \"b\" -> node 7 -> node 1 \"a\"");
}

/* A syntax error names the file, its line and column. */
static void test_syntax_error_names_line(void) {
    char *path = tmp_path("trunc.json");
    write_text(path, "{\"maxFPGAs\": 1,\n \"nodes\": [");
    dp_error err;
    CHECK(dp_import_msr_read_file(path, NULL, &err) == NULL);
    char want[1024];
    snprintf(want, sizeof want, "%s:2:", path);
    CHECK(strncmp(err.msg, want, strlen(want)) == 0);
    CHECK_STR_CONTAINS(err.msg, "JSON syntax error");
    unlink(path);
}

/* A missing file is named. */
static void test_missing_file_named(void) {
    dp_error err;
    char want[1024];
    CHECK(dp_import_msr_read_file(tmp_path("missing.json"), NULL, &err) == NULL);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", tmp_path("missing.json"));
    CHECK_STR_EQ(err.msg, want);
}

/* ---- splits ------------------------------------------------------------------------ */

static dp_import_msr *g_small; /* small_graph, read from g_small_path by open_small */
static char g_small_path[600];

static void open_small(void) {
    dp_error err;
    snprintf(g_small_path, sizeof g_small_path, "%s", tmp_path("small_graph.json"));
    write_text(g_small_path, small_graph);
    g_small = dp_import_msr_read_file(g_small_path, NULL, &err);
    CHECK(g_small != NULL);
}

static void close_small(void) {
    dp_import_msr_free(g_small);
    g_small = NULL;
    unlink(g_small_path);
}

static void expect_split_error(const char *text, const char *tail) {
    TEST_CASE("the split refused with \"%.80s\"", tail);
    char *path = tmp_path("split.json");
    write_text(path, text);
    int32_t place[3];
    dp_error err;
    if (dp_import_msr_read_split(path, g_small, place, NULL, &err) == DP_STATUS_OK)
        fprintf(stderr, "expected an error for: %s\n", text);
    char want[2048];
    snprintf(want, sizeof want, "%s: %s", path, tail);
    CHECK_STR_EQ(err.msg, want);
    unlink(path);
}

/* A split places its listed nodes and the rest of their colorClass. */
static void test_splits(void) {
    dp_error err;
    open_small();
    int32_t place[3];
    dp_import_split_info info;
    /* b (CPU-only, colorClass 1 with a) is inferred from a */
    CHECK(dp_import_msr_read_split_string("{\"cpus\": [{\"nodes\": [7]}], \"fpgas\": [{\"nodes\": []},"
                                          " {\"load\": -1, \"nodes\": [1]}], \"maxLoad\": -1}",
                                          "s", g_small, place, &info, &err) == DP_STATUS_OK);
    CHECK_INT_EQ(place[0], 2);
    CHECK_INT_EQ(place[1], 2);
    CHECK_INT_EQ(place[2], 0);
    CHECK_INT_EQ(info.n_listed, 2);
    CHECK_INT_EQ(info.n_inferred, 1);
    CHECK_INT_EQ(info.n_on_cpu, 1);
    CHECK_INT_EQ(info.n_gpus, 1);
    close_small();
}

/* Each kind of malformed or mismatched split is refused with exactly its
 * message. */
static void test_split_errors(void) {
    open_small();
    char tail[2048];
    snprintf(tail, sizeof tail,
             "fpgas[0].nodes[3]: node 99 is not in %s (node ids missing there: 1 of the split's 4): the split does "
             "not belong to this graph",
             g_small_path);
    expect_split_error("{\"cpus\": [], \"fpgas\": [{\"nodes\": [1, 5, 7, 99]}]}", tail);
    expect_split_error("{\"cpus\": [], \"fpgas\": [{\"nodes\": [1, 5]}, {\"nodes\": [5, 7]}]}",
                       "fpgas[1].nodes[0]: node 5 \"b\" is also placed by fpgas[0]");
    snprintf(tail, sizeof tail,
             "fpgas[2]: puts 1 node on accelerator 2, but %s has maxFPGAs 2: the split needs more accelerators than "
             "this graph's machine has",
             g_small_path);
    expect_split_error("{\"cpus\": [], \"fpgas\": [{\"nodes\": [1, 5]}, {\"nodes\": []}, {\"nodes\": [7]}]}", tail);
    expect_split_error("{\"cpus\": [], \"fpgas\": [{\"nodes\": [1]}, {\"nodes\": [5, 7]}]}",
                       "colorClass 1 is split across devices: node 1 \"a\" is in fpgas[0] and node 5 \"b\" in "
                       "fpgas[1] (the nodes of one colorClass must share a device)");
    snprintf(tail, sizeof tail,
             "node 7 \"node7\" is in no entry of the split and has no colorClass to place it by (1 of the 3 nodes of "
             "%s are left unplaced): the split does not cover this graph",
             g_small_path);
    expect_split_error("{\"cpus\": [], \"fpgas\": [{\"nodes\": [1, 5]}]}", tail);
    expect_split_error("{\"fpgas\": [{\"nodes\": [1, 5, 7]}]}", "missing field \"cpus\"");
    expect_split_error("{\"cpus\": [], \"fpgas\": {\"nodes\": [1, 5, 7]}}",
                       "field \"fpgas\" must be an array, got an object");
    expect_split_error("{\"cpus\": [], \"fpgas\": [[1, 5, 7]]}",
                       "fpgas[0]: must be an object with \"nodes\", got an array");
    expect_split_error("{\"cpus\": [{\"load\": 0}], \"fpgas\": []}", "cpus[0]: missing field \"nodes\"");
    expect_split_error("{\"cpus\": [], \"fpgas\": [{\"nodes\": [\"1\"]}]}",
                       "fpgas[0].nodes[0]: the node id must be an integer, got a string");
    expect_split_error("{\"maxFPGAs\": 1, \"nodes\": [], \"edges\": []}",
                       "missing field \"fpgas\"; this looks like a graph (nodes/edges), not a split");
    expect_split_error("[]", "expected a JSON object at the top, got an array");
    close_small();
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    snprintf(g_data, sizeof g_data, "%s", test_dataset_dir("msr-dnn-partitioning"));
    snprintf(g_tmp, sizeof g_tmp, "/tmp/dplace_test_import_XXXXXX");
    CHECK(mkdtemp(g_tmp) != NULL);
    TEST_RUN(test_small_mapping);
    TEST_RUN(test_small_devices);
    TEST_RUN(test_small_devices_round_trip);
    TEST_RUN(test_options);
    TEST_RUN(test_transfer_times);
    TEST_RUN(test_names);
    TEST_RUN(test_slots);
    TEST_RUN(test_zero_cpus_one_stream);
    TEST_RUN(test_find_node);
    TEST_RUN(test_bad_graphs);
    TEST_RUN(test_syntax_error_names_line);
    TEST_RUN(test_missing_file_named);
    TEST_RUN(test_splits);
    TEST_RUN(test_split_errors);
    TEST_RUN_DATASETS(test_dataset_graphs, "msr-dnn-partitioning");
    TEST_RUN_DATASETS(test_dataset_expert_splits, "msr-dnn-partitioning");
    TEST_RUN_DATASETS(test_mismatched_splits, "msr-dnn-partitioning");
    rmdir(g_tmp);
    return test_end();
}
