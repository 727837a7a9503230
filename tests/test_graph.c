/* dplace-graph v1: reading, validation errors, writing and round trips. */
#include <unistd.h>

#include "dplace/graph.h"
#include "test_util.h"

#define HDR "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":["
#define A "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"bytes\":4}]}"

typedef struct bad_case {
    const char *text;
    const char *expect; /* substring of the one error message */
} bad_case;

/* Each malformed graph and the exact problem its message must name. */
static const bad_case bad_graphs[] = {
    {"{\"format\":\"dplace-graph\",\"version\":1,\"ops\":[\n{\"name\":\"a\",,}]}", "bad.json:2:"},
    {"[1,2]", "bad.json: expected a JSON object at the top, got an array"},
    {"{\"format\":\"dplace-devices\",\"version\":1,\"ops\":[]}", "field \"format\" is \"dplace-devices\", expected \"dplace-graph\""},
    {"{\"format\":\"dplace-graph\",\"version\":2,\"ops\":[]}", "unsupported dplace-graph version 2"},
    {"{\"format\":\"dplace-graph\",\"version\":1}", "bad.json: missing field \"ops\""},
    {HDR "]}", "bad.json: the graph has no ops"},
    {HDR "{\"type\":\"Const\"}]}", "bad.json: op 0: missing field \"name\""},
    {HDR "{\"name\":5,\"type\":\"Const\"}]}", "bad.json: op 0: field \"name\" must be a string, got an integer"},
    {HDR "{\"name\":\"a\"}]}", "bad.json: op 0 \"a\": missing field \"type\""},
    {HDR A "," A "]}", "bad.json: op 1 \"a\": duplicate name (also op 0)"},
    {HDR A ",{\"name\":\"b\",\"type\":\"Neg\",\"inputs\":[7]}]}",
     "bad.json: op 1 \"b\": input 0 refers to op 7, but the graph has 2 ops (0..1)"},
    {HDR A ",{\"name\":\"b\",\"type\":\"Neg\",\"inputs\":[[0,3]]}]}",
     "bad.json: op 1 \"b\": input 0 refers to output 3 of op 0 \"a\", which has 1 output"},
    {HDR A ",{\"name\":\"b\",\"type\":\"Neg\",\"inputs\":[-1]}]}", "op 1 \"b\": input 0 must not be negative, got -1"},
    {HDR A ",{\"name\":\"b\",\"type\":\"Neg\",\"inputs\":[[0]]}]}",
     "op 1 \"b\": input 0 must be [producer_index, output_slot], got an array of 1"},
    {HDR "{\"name\":\"p\",\"type\":\"Add\",\"inputs\":[2],\"outputs\":[{\"bytes\":4}]},"
         "{\"name\":\"q\",\"type\":\"Add\",\"inputs\":[0],\"outputs\":[{\"bytes\":4}]},"
         "{\"name\":\"r\",\"type\":\"Add\",\"inputs\":[1],\"outputs\":[{\"bytes\":4}]}]}",
     "bad.json: the graph has a cycle: 0 \"p\" -> 1 \"q\" -> 2 \"r\" -> 0 \"p\""},
    {HDR "{\"name\":\"s\",\"type\":\"Add\",\"inputs\":[0],\"outputs\":[{\"bytes\":4}]}]}",
     "the graph has a cycle: 0 \"s\" -> 0 \"s\""},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"flops\":-5}]}", "op 0 \"a\": field \"flops\" must be >= 0, got -5"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"flops\":1e999}]}", "bad.json:1:"},
    /* the largest flops and measured cost keep every simulated time finite */
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"flops\":1e300}]}", "op 0 \"a\": flops must be in 0..1e24 (got 1e+300)"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"cost\":{\"gpu\":1e300}}]}",
     "op 0 \"a\": cost \"gpu\" must be in 0..1e9 seconds (got 1e+300)"},
    /* names hold no control characters */
    {HDR "{\"name\":\"a\\u001b[2J\",\"type\":\"Const\"}]}", "op 0: name \"a\\x1b[2J\" holds control character 0x1b at byte 1"},
    {HDR "{\"name\":\"a\",\"type\":\"Co\\nst\"}]}", "op 0: type \"Co\\x0ast\" holds control character 0x0a at byte 2"},
    {"{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"g\\u0007\",\"ops\":[]}",
     "bad.json: graph name \"g\\x07\" holds control character 0x07"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"flops\":\"many\"}]}", "op 0 \"a\": field \"flops\" must be a number, got a string"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"param_bytes\":-1}]}", "op 0 \"a\": field \"param_bytes\" must not be negative, got -1"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"temp_bytes\":2.5}]}", "op 0 \"a\": field \"temp_bytes\" must be a whole number, got 2.5"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"shape\":[100000,100000,100000,100000],\"dtype\":\"float32\"}]}]}",
     "op 0 \"a\": output 0: size of the shape overflows 64 bits"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"shape\":[10000000,10000000,100],\"dtype\":\"float32\"}]}]}",
     "op 0 \"a\": output 0: 40000000000000000 bytes is over the limit of 2^50"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"shape\":[3],\"dtype\":\"float31\"}]}]}",
     "op 0 \"a\": output 0: unknown dtype \"float31\""},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"shape\":[3,-2],\"dtype\":\"float32\"}]}]}",
     "op 0 \"a\": output 0: shape dimension 1 must not be negative, got -2"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"dtype\":\"float32\"}]}]}",
     "op 0 \"a\": output 0: needs \"shape\" and \"dtype\", or \"bytes\""},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"outputs\":[{\"bytes\":99999999999999999999}]}]}", "bad.json:1:"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"device\":\"tpu:0\"}]}",
     "op 0 \"a\": unknown device constraint \"tpu:0\" (expected cpu, gpu, cpu:N or gpu:N)"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"cost\":{\"gpu\":-1}}]}", "op 0 \"a\": cost: field \"gpu\" must be >= 0, got -1"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"cost\":[1]}]}", "op 0 \"a\": field \"cost\" must be an object, got an array"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"name\":\"b\"}]}", "bad.json:1:"},
    {HDR "{\"name\":\"a\",\"type\":\"Const\",\"device\":\"cpu\",\"colocate\":\"g\"},"
         "{\"name\":\"b\",\"type\":\"Const\",\"device\":\"gpu\",\"colocate\":\"g\"}]}",
     "op 1 \"b\": device \"gpu\" conflicts with \"cpu\" required by another op of colocation group \"g\""},
    {HDR "7]}", "bad.json: op 0 must be an object, got an integer"},
    /* the graph's TF32 leave */
    {"{\"format\":\"dplace-graph\",\"version\":1,\"tf32\":true,\"ops\":[" A "]}",
     "bad.json: field \"tf32\" must be an object, got a boolean"},
    {"{\"format\":\"dplace-graph\",\"version\":1,\"tf32\":{\"matmul\":1},\"ops\":[" A "]}",
     "bad.json: tf32: field \"matmul\" must be true or false, got an integer"},
    {"{\"format\":\"dplace-graph\",\"version\":1,\"tf32\":{\"attention\":true},\"ops\":[" A "]}",
     "bad.json: tf32: unknown field \"attention\" (expected \"matmul\" or \"conv\")"},
};

/* Names longer than DP_GRAPH_NAME_MAX bytes are refused
 * with a message that quotes only their start; a name of exactly the
 * limit is accepted. */
static void test_long_names(void) {
    size_t n = DP_GRAPH_NAME_MAX + 1;
    char *name = malloc(n + 1);
    memset(name, 'n', n);
    name[n] = '\0';
    const char *fmt[2] = {"{\"format\":\"dplace-graph\",\"version\":1,\"name\":\"%s\",\"ops\":[" A "]}",
                          HDR "{\"name\":\"%s\",\"type\":\"Const\"}]}"};
    const char *expect[2] = {"bad.json: graph name \"nnnn", "bad.json: op 0: name \"nnnn"};
    const char *what[2] = {"graph name", "op name"};
    char *text = malloc(n + 200);
    for (int k = 0; k < 2; k++) {
        for (size_t len = n - 1; len <= n; len++) {
            TEST_CASE("%s of %zu bytes", what[k], len);
            name[len] = '\0';
            snprintf(text, n + 200, fmt[k], name);
            dp_error err;
            dp_graph *g = dp_graph_read_string(text, "bad.json", &err);
            if (len < n) { /* exactly the limit: accepted */
                if (!g) fprintf(stderr, "%s\n", err.msg);
                CHECK(g != NULL);
                dp_graph_free(g);
            } else {
                CHECK(g == NULL);
                CHECK_STR_CONTAINS(err.msg, expect[k]);
                CHECK_STR_CONTAINS(err.msg, "is longer than 4096 bytes");
                CHECK(strlen(err.msg) < 200);
            }
            name[len] = 'n';
        }
    }
    free(text);
    free(name);
}

/* Nesting deeper than jansson's 2048 levels: a syntax error, no stack
 * overflow. */
static void test_deep_nesting_refused(void) {
    size_t depth = 100000;
    char *deep = malloc(depth + 200);
    int at = snprintf(deep, depth + 200, "{\"format\":\"dplace-graph\",\"version\":1,\"ops\":[],\"x\":");
    memset(deep + at, '[', depth);
    deep[at + depth] = '\0';
    dp_error err;
    CHECK(dp_graph_read_string(deep, "bad.json", &err) == NULL);
    CHECK_STR_CONTAINS(err.msg, "bad.json:1:");
    CHECK_STR_CONTAINS(err.msg, "maximum parsing depth");
    free(deep);
}

/* Each malformed graph is refused with its exact error, in one line. */
static void test_bad_graphs(void) {
    size_t n = sizeof bad_graphs / sizeof bad_graphs[0];
    CHECK(n >= 15);
    for (size_t i = 0; i < n; i++) {
        TEST_CASE("bad graph %zu", i);
        dp_error err;
        dp_error_clear(&err);
        dp_graph *g = dp_graph_read_string(bad_graphs[i].text, "bad.json", &err);
        if (g || !strstr(err.msg, bad_graphs[i].expect)) {
            fprintf(stderr, "case %zu: %s\n  got: %s\n  expected: %s\n", i, bad_graphs[i].text,
                    g ? "(accepted)" : err.msg, bad_graphs[i].expect);
            exit(1);
        }
        CHECK(err.status == DP_STATUS_PARSE || err.status == DP_STATUS_INVALID);
        CHECK(strchr(err.msg, '\n') == NULL); /* one line */
    }
    printf("  %zu malformed graphs rejected with their exact errors\n", n);
}

/* An empty, a truncated and a missing file are refused, naming the file
 * (and the line of the syntax error). */
static void test_bad_files(void) {
    dp_error err;
    CHECK(!dp_graph_read_file("data/empty.json", &err));
    CHECK_STR_CONTAINS(err.msg, "data/empty.json: file is empty");
    CHECK(!dp_graph_read_file("data/truncated.json", &err));
    CHECK_STR_CONTAINS(err.msg, "data/truncated.json:3:");
    CHECK_STR_CONTAINS(err.msg, "JSON syntax error");
    CHECK(!dp_graph_read_file("data/no-such-file.json", &err));
    CHECK_INT_EQ(err.status, DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, "data/no-such-file.json: cannot open: No such file or directory");
}

/* tests/data/tiny.json reads to its ops, outputs, constraints, groups,
 * scopes, costs, consumers and a topological order. */
static void test_read_tiny(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_file("data/tiny.json", &err);
    if (!g) fprintf(stderr, "%s\n", err.msg);
    CHECK(g);
    CHECK_INT_EQ(g->n_ops, 5);
    CHECK(strcmp(g->name, "tiny") == 0);
    CHECK_INT_EQ(g->n_inputs, 5);
    CHECK_INT_EQ(g->outputs[0].bytes, 32 * 784 * 4);
    CHECK_INT_EQ(g->ops[3].n_outputs, 2);
    CHECK_INT_EQ(g->outputs[g->ops[3].outputs_at + 1].bytes, 4); /* scalar */
    CHECK_INT_EQ(g->ops[3].temp_bytes, 1024);
    CHECK_INT_EQ(g->ops[0].device.kind, DP_DEVCON_CPU);
    CHECK(g->ops[1].colocate >= 0 && g->ops[1].colocate == g->ops[4].colocate);
    CHECK_INT_EQ(g->n_colocate, 1);
    for (int32_t i = 0; i < 5; i++) CHECK_INT_EQ(g->coloc_group[i], i == 1 || i == 4 ? 0 : -1);
    CHECK(strcmp(dp_graph_str(g, g->ops[2].scope), "dense") == 0);
    CHECK_INT_EQ(g->ops[2].n_costs, 2);
    CHECK_INT_EQ(dp_graph_find_op(g, "loss"), 3);
    /* consumers of w (tensor of op 1, slot 0): logits and update */
    int64_t t = dp_graph_tensor(g, 1, 0);
    CHECK_INT_EQ(g->consumers_at[t + 1] - g->consumers_at[t], 2);
    /* topo order: every input before its consumer */
    int32_t pos[5];
    for (int32_t k = 0; k < 5; k++) pos[g->topo[k]] = k;
    for (int32_t i = 0; i < 5; i++)
        for (int32_t k = 0; k < g->ops[i].n_inputs; k++) CHECK(pos[g->inputs[g->ops[i].inputs_at + k].op] < pos[i]);
    dp_graph_free(g);
}

/* Two graphs are equivalent when every op field, edge, output and cost agrees. */
static void check_equivalent(const dp_graph *a, const dp_graph *b) {
    CHECK(strcmp(a->name, b->name) == 0);
    CHECK_INT_EQ(a->tf32, b->tf32);
    CHECK_INT_EQ(a->n_ops, b->n_ops);
    for (int32_t i = 0; i < a->n_ops; i++) {
        const dp_op *x = &a->ops[i], *y = &b->ops[i];
        CHECK(strcmp(x->name, y->name) == 0);
        CHECK(strcmp(dp_graph_str(a, x->type), dp_graph_str(b, y->type)) == 0);
        CHECK(strcmp(dp_graph_str(a, x->scope), dp_graph_str(b, y->scope)) == 0);
        CHECK(strcmp(dp_graph_str(a, x->colocate), dp_graph_str(b, y->colocate)) == 0);
        CHECK(x->flops == y->flops);
        CHECK_INT_EQ(x->param_bytes, y->param_bytes);
        CHECK_INT_EQ(x->temp_bytes, y->temp_bytes);
        CHECK_INT_EQ(x->device.kind, y->device.kind);
        CHECK_INT_EQ(x->device.index, y->device.index);
        CHECK_INT_EQ(x->n_inputs, y->n_inputs);
        for (int32_t k = 0; k < x->n_inputs; k++) {
            CHECK_INT_EQ(a->inputs[x->inputs_at + k].op, b->inputs[y->inputs_at + k].op);
            CHECK_INT_EQ(a->inputs[x->inputs_at + k].slot, b->inputs[y->inputs_at + k].slot);
        }
        CHECK_INT_EQ(x->n_outputs, y->n_outputs);
        for (int32_t k = 0; k < x->n_outputs; k++) {
            const dp_output *p = &a->outputs[x->outputs_at + k], *q = &b->outputs[y->outputs_at + k];
            CHECK_INT_EQ(p->bytes, q->bytes);
            CHECK_INT_EQ(p->dtype, q->dtype);
            CHECK_INT_EQ(p->rank, q->rank);
            for (int32_t d = 0; d < p->rank; d++) CHECK_INT_EQ(a->dims[p->dims_at + d], b->dims[q->dims_at + d]);
        }
        CHECK_INT_EQ(x->n_costs, y->n_costs);
        for (int32_t k = 0; k < x->n_costs; k++) {
            CHECK(strcmp(dp_graph_str(a, a->costs[x->costs_at + k].key), dp_graph_str(b, b->costs[y->costs_at + k].key)) == 0);
            CHECK(a->costs[x->costs_at + k].seconds == b->costs[y->costs_at + k].seconds);
        }
    }
}

static void roundtrip(dp_graph *g) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/dplace_rt_%d.json", (int)getpid());
    dp_error err;
    CHECK_INT_EQ(dp_graph_write_file(g, path, &err), DP_STATUS_OK);
    dp_graph *h = dp_graph_read_file(path, &err);
    if (!h) fprintf(stderr, "%s\n", err.msg);
    CHECK(h);
    check_equivalent(g, h);
    /* writing again gives the same bytes */
    char path2[80];
    snprintf(path2, sizeof path2, "%s.2", path);
    CHECK_INT_EQ(dp_graph_write_file(h, path2, &err), DP_STATUS_OK);
    FILE *f1 = fopen(path, "rb"), *f2 = fopen(path2, "rb");
    CHECK(f1 && f2);
    int c1, c2;
    do {
        c1 = fgetc(f1);
        c2 = fgetc(f2);
        CHECK(c1 == c2);
    } while (c1 != EOF);
    fclose(f1);
    fclose(f2);
    remove(path);
    remove(path2);
    dp_graph_free(h);
}

/* A graph written and read back is equivalent, and written again gives the
 * same bytes: tiny.json and a synthetic graph. */
static void test_roundtrip(void) {
    dp_error err;
    TEST_CASE("tiny.json");
    dp_graph *g = dp_graph_read_file("data/tiny.json", &err);
    CHECK(g);
    roundtrip(g);
    dp_graph_free(g);
    TEST_CASE("synthetic, 2000 ops");
    g = dp_graph_synth(2000, 5, &err);
    CHECK(g);
    roundtrip(g);
    dp_graph_free(g);
}

/* A graph's "tf32" reads into its bits (a field not given is false) and
 * survives a round trip; a graph without it reads as 0 and is written
 * without it. */
static void test_tf32_field(void) {
    static const struct {
        const char *field;
        unsigned bits;
    } cases[] = {
        {"", 0},
        {"\"tf32\":{\"matmul\":false,\"conv\":true},", DP_GRAPH_TF32_CONV},
        {"\"tf32\":{\"matmul\":true},", DP_GRAPH_TF32_MATMUL},
        {"\"tf32\":{\"matmul\":true,\"conv\":true},", DP_GRAPH_TF32_MATMUL | DP_GRAPH_TF32_CONV},
        {"\"tf32\":{},", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CASE("tf32 case %zu: %s", i, cases[i].field);
        char text[512];
        snprintf(text, sizeof text, "{\"format\":\"dplace-graph\",\"version\":1,%s\"ops\":[" A "]}", cases[i].field);
        dp_error err;
        dp_graph *g = dp_graph_read_string(text, "tf32.json", &err);
        CHECK(g);
        CHECK_INT_EQ(g->tf32, cases[i].bits);
        roundtrip(g);
        char path[64];
        snprintf(path, sizeof path, "/tmp/dplace_tf32_%d.json", (int)getpid());
        CHECK_INT_EQ(dp_graph_write_file(g, path, &err), DP_STATUS_OK);
        FILE *f = fopen(path, "rb");
        CHECK(f);
        char head[256] = "";
        CHECK(fread(head, 1, sizeof head - 1, f) > 0);
        fclose(f);
        remove(path);
        CHECK((strstr(head, "\"tf32\"") != NULL) == (cases[i].bits != 0));
        dp_graph_free(g);
    }
}

/* Consumers may come before producers in the file. */
static void test_consumers_before_producers(void) {
    dp_error err;
    dp_graph *g = dp_graph_read_string(HDR "{\"name\":\"b\",\"type\":\"Neg\",\"inputs\":[1],\"outputs\":[{\"bytes\":4}]},"
                                           A "]}",
                                       "order", &err);
    CHECK(g);
    CHECK_INT_EQ(g->topo[0], 1);
    CHECK_INT_EQ(g->topo[1], 0);
    dp_graph_free(g);
}

/* Builder misuse (an input from a later op, a negative cost) is an error,
 * not a crash. */
static void test_builder_misuse_refused(void) {
    dp_error err;
    dp_graph *g = dp_graph_init("b");
    CHECK(dp_graph_add_op(g, "x", "T", NULL, NULL, &err) == 0);
    CHECK(dp_graph_add_op(g, "y", "T", NULL, NULL, &err) == 1);
    CHECK_INT_EQ(dp_graph_add_input(g, 0, 1, 0, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_graph_add_cost(g, 1, "gpu", -1.0, &err), DP_STATUS_INVALID);
    dp_graph_free(g);
}

/* Two chains from one source, x -> a1 -> a2 and x -> b1 -> b2, the ops
 * written x, a1, b1, a2, b2 (indices 0 to 4), finalized. */
static dp_graph *two_chains(void) {
    dp_error err;
    dp_graph *g = dp_graph_init("chains");
    const char *names[] = {"x", "a1", "b1", "a2", "b2"};
    const int32_t from[] = {-1, 0, 0, 1, 2};
    for (int i = 0; i < 5; i++) {
        CHECK(dp_graph_add_op(g, names[i], "T", NULL, NULL, &err) == i);
        if (from[i] >= 0) CHECK(dp_graph_add_input(g, i, from[i], 0, &err) == 0);
        CHECK(dp_graph_add_output_bytes(g, i, 4, &err) == 0);
    }
    CHECK(dp_graph_finalize(g, NULL, &err) == 0);
    return g;
}

/* The depth-first order follows chains: x -> a1 -> a2 and x -> b1 -> b2
 * (written a1, b1, a2, b2) give x a1 a2 b1 b2 where FIFO gives x a1 b1 a2
 * b2; both are topological permutations. */
static void test_topo_depth_first(void) {
    dp_error err;
    dp_graph *g = two_chains();
    int32_t dfs[5];
    CHECK(dp_graph_topo_depth_first(g, dfs, &err) == 0);
    const int32_t want_dfs[] = {0, 1, 3, 2, 4}, want_fifo[] = {0, 1, 2, 3, 4};
    for (int i = 0; i < 5; i++) {
        CHECK_INT_EQ(dfs[i], want_dfs[i]);
        CHECK_INT_EQ(g->topo[i], want_fifo[i]);
    }
    dp_graph_free(g);
}

/* The keyed order takes the ready op of least key, then least tie, never
 * an op before its producer: on the chains x -> a1 -> a2, x -> b1 -> b2,
 * keys putting the b chain first give x b1 b2 a1 a2, and equal keys fall
 * to the ties (b2's tie below a1's still waits for b1). */
static void test_topo_keyed(void) {
    dp_error err;
    dp_graph *g = two_chains();
    int32_t out[5];
    const double key_b_first[] = {0, 1, 0, 1, 0};
    const uint32_t tie0[] = {0, 0, 0, 0, 0};
    CHECK(dp_graph_topo_keyed(g, key_b_first, tie0, out, &err) == 0);
    const int32_t want_b[] = {0, 2, 4, 1, 3};
    for (int i = 0; i < 5; i++) CHECK_INT_EQ(out[i], want_b[i]);
    const double same[] = {0, 0, 0, 0, 0};
    const uint32_t tie[] = {0, 3, 2, 4, 1};
    CHECK(dp_graph_topo_keyed(g, same, tie, out, &err) == 0);
    const int32_t want_tie[] = {0, 2, 4, 1, 3};
    for (int i = 0; i < 5; i++) CHECK_INT_EQ(out[i], want_tie[i]);
    dp_graph_free(g);
}

/* Device constraints parse from dplace's and TensorFlow's spellings;
 * malformed ones are refused. */
static void test_devcon_parse(void) {
    dp_devcon c;
    CHECK(dp_devcon_parse("cpu", &c) == 0 && c.kind == DP_DEVCON_CPU && c.index == -1);
    CHECK(dp_devcon_parse("gpu:3", &c) == 0 && c.kind == DP_DEVCON_GPU && c.index == 3);
    CHECK(dp_devcon_parse("/job:w/replica:0/task:0/device:GPU:1", &c) == 0 && c.kind == DP_DEVCON_GPU && c.index == 1);
    CHECK(dp_devcon_parse("/cpu:0", &c) == 0 && c.kind == DP_DEVCON_CPU && c.index == 0);
    CHECK(dp_devcon_parse("gpu:", &c) != 0);
    CHECK(dp_devcon_parse("gpux", &c) != 0);
    CHECK(dp_devcon_parse("tpu", &c) != 0);
}

/* TensorFlow's gradient and clipping scopes lead back to the forward scope. */
static void test_forward_scope(void) {
    const char *fwd = "layer_0/lstm";
    CHECK(dp_graph_forward_scope(fwd) == fwd);
    CHECK(strcmp(dp_graph_forward_scope("gradients/layer_0/lstm"), "layer_0/lstm") == 0);
    CHECK(strcmp(dp_graph_forward_scope("clip_by_global_norm/gradients/gradients/x"), "x") == 0);
    CHECK(strcmp(dp_graph_forward_scope("gradients"), "gradients") == 0); /* no slash: a scope of its own */
    CHECK(strcmp(dp_graph_forward_scope(""), "") == 0);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_bad_graphs);
    TEST_RUN(test_long_names);
    TEST_RUN(test_deep_nesting_refused);
    TEST_RUN(test_bad_files);
    TEST_RUN(test_read_tiny);
    TEST_RUN(test_tf32_field);
    TEST_RUN(test_roundtrip);
    TEST_RUN(test_consumers_before_producers);
    TEST_RUN(test_builder_misuse_refused);
    TEST_RUN(test_devcon_parse);
    TEST_RUN(test_topo_depth_first);
    TEST_RUN(test_topo_keyed);
    TEST_RUN(test_forward_scope);
    return test_end();
}
