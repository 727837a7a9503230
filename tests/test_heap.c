/* The shared binary heap (src/common/heap.h): order by key, ties by
 * insertion order or by the caller's tie then payload, keys of every sign,
 * growth and reserved room. */
#include "common/heap.h"
#include "test_util.h"

typedef struct item {
    double key;
    uint32_t tie;
    int32_t payload;
} item;

static int cmp_item(const void *x, const void *y) {
    const item *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->tie != b->tie) return a->tie < b->tie ? -1 : 1;
    return (a->payload > b->payload) - (a->payload < b->payload);
}

/* Keys, ties and payloads round-trip through an entry. */
static void test_fields(void) {
    const double keys[] = {0.0, -0.0, 1.5, -1.5, 1e-300, -1e300, 3.25e9, 5e-324};
    const int32_t payloads[] = {0, -1, 7, INT32_MIN, INT32_MAX};
    dp_heap h;
    CHECK_INT_EQ(dp_heap_init(&h, 0, NULL), DP_STATUS_OK);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (size_t p = 0; p < sizeof payloads / sizeof payloads[0]; p++) {
            TEST_CASE("key %g, payload %d", keys[k], (int)payloads[p]);
            dp_heap_clear(&h);
            CHECK_INT_EQ(dp_heap_push_tie(&h, keys[k], 0xdeadbeefu, payloads[p]), 0);
            dp_heap_entry e = dp_heap_pop(&h);
            CHECK(dp_heap_entry_key(e) == keys[k]);
            CHECK_INT_EQ(dp_heap_entry_tie(e), 0xdeadbeefu);
            CHECK_INT_EQ(dp_heap_entry_payload(e), payloads[p]);
            CHECK_INT_EQ(h.n, 0);
        }
    dp_heap_free(&h);
}

/* Random keys (many equal, both signs) with insertion-counter ties come out
 * as a stable sort of what went in. */
static void test_fifo_ties(void) {
    enum { N = 5000 };
    static item in[N], out[N];
    dp_rng rng;
    dp_rng_seed(&rng, 42);
    dp_heap h;
    CHECK_INT_EQ(dp_heap_init(&h, 0, NULL), DP_STATUS_OK); /* grows from nothing */
    for (int32_t i = 0; i < N; i++) {
        in[i].key = (double)dp_rng_below(&rng, 50) - 25.0; /* about 100 of each key */
        if (in[i].key == 0 && (i & 1)) in[i].key = -0.0;   /* -0 ties with +0 */
        in[i].tie = (uint32_t)i;
        in[i].payload = (int32_t)dp_rng_below(&rng, 1000) - 500; /* payloads never decide */
        CHECK_INT_EQ(dp_heap_push(&h, in[i].key, in[i].payload), 0);
    }
    CHECK_INT_EQ(h.n, N);
    for (int32_t i = 0; i < N; i++) in[i].key += 0.0;
    qsort(in, N, sizeof in[0], cmp_item);
    for (int32_t i = 0; i < N; i++) {
        dp_heap_entry e = dp_heap_pop(&h);
        out[i] = (item){dp_heap_entry_key(e), dp_heap_entry_tie(e), dp_heap_entry_payload(e)};
        CHECK(out[i].key == in[i].key);
        CHECK_INT_EQ(out[i].tie, in[i].tie); /* the order they went in */
        CHECK_INT_EQ(out[i].payload, in[i].payload);
    }
    CHECK_INT_EQ(h.n, 0);
    dp_heap_free(&h);
}

/* Interleaved pushes and pops, as a discrete-event loop scheduling later
 * events as it goes, after a clear restarted the insertion counter: times
 * never go back, and equal times come out first in, first out. */
static void test_fifo_ties_interleaved(void) {
    dp_rng rng;
    dp_rng_seed(&rng, 42);
    dp_heap h;
    CHECK_INT_EQ(dp_heap_init(&h, 0, NULL), DP_STATUS_OK);
    for (int32_t i = 0; i < 10; i++) CHECK_INT_EQ(dp_heap_push(&h, (double)i, i), 0);
    dp_heap_clear(&h);
    CHECK_INT_EQ(h.seq, 0);
    double now = 0;
    int32_t popped = 0, pushed = 0;
    uint32_t last_tie = 0;
    for (int32_t i = 0; i < 64; i++, pushed++) CHECK_INT_EQ(dp_heap_push(&h, (double)dp_rng_below(&rng, 4), i), 0);
    while (h.n) {
        dp_heap_entry e = dp_heap_pop(&h);
        double t = dp_heap_entry_key(e);
        CHECK(t >= now);
        if (t == now && popped) CHECK(dp_heap_entry_tie(e) > last_tie); /* FIFO among equal times */
        now = t;
        last_tie = dp_heap_entry_tie(e);
        popped++;
        if (pushed < 20000) {
            CHECK_INT_EQ(dp_heap_push(&h, now + (double)dp_rng_below(&rng, 3), pushed), 0);
            pushed++;
        }
    }
    CHECK_INT_EQ(popped, pushed);
    dp_heap_free(&h);
}

/* With the caller's ties: order by key, then tie, then payload (signed). */
static void test_caller_ties(void) {
    enum { N = 3000 };
    static item in[N];
    dp_rng rng;
    dp_rng_seed(&rng, 7);
    dp_heap h;
    CHECK_INT_EQ(dp_heap_init(&h, 16, NULL), DP_STATUS_OK);
    for (int32_t i = 0; i < N; i++) {
        in[i].key = dp_rng_below(&rng, 2) ? -(double)dp_rng_below(&rng, 5) : 0.5 * (double)dp_rng_below(&rng, 5);
        in[i].tie = (uint32_t)dp_rng_below(&rng, 4) * 0x40000000u;
        in[i].payload = (int32_t)dp_rng_below(&rng, 7) - 3;
        CHECK_INT_EQ(dp_heap_push_tie(&h, in[i].key, in[i].tie, in[i].payload), 0);
    }
    qsort(in, N, sizeof in[0], cmp_item);
    for (int32_t i = 0; i < N; i++) {
        dp_heap_entry top = dp_heap_top(&h), e = dp_heap_pop(&h);
        CHECK(top == e);
        CHECK(dp_heap_entry_key(e) == in[i].key + 0.0);
        CHECK_INT_EQ(dp_heap_entry_tie(e), in[i].tie);
        CHECK_INT_EQ(dp_heap_entry_payload(e), in[i].payload);
    }
    dp_heap_free(&h);
}

/* dp_heap_push_nonneg makes the entries dp_heap_push makes, -0.0 included. */
static void test_nonneg(void) {
    dp_heap a, b;
    CHECK_INT_EQ(dp_heap_init(&a, 0, NULL), DP_STATUS_OK);
    CHECK_INT_EQ(dp_heap_init(&b, 0, NULL), DP_STATUS_OK);
    dp_rng rng;
    dp_rng_seed(&rng, 9);
    for (int32_t i = 0; i < 2000; i++) {
        double key = i % 7 == 0 ? -0.0 : 0.25 * (double)dp_rng_below(&rng, 40);
        int32_t payload = (int32_t)dp_rng_below(&rng, 100) - 50;
        CHECK_INT_EQ(dp_heap_push(&a, key, payload), 0);
        CHECK_INT_EQ(dp_heap_push_nonneg(&b, key, payload), 0);
    }
    while (a.n) {
        dp_heap_entry x = dp_heap_pop(&a), y = dp_heap_pop(&b);
        CHECK(x == y);
        CHECK(dp_heap_entry_key(x) == dp_heap_entry_key_nonneg(y));
    }
    CHECK_INT_EQ(b.n, 0);
    dp_heap_free(&a);
    dp_heap_free(&b);
}

/* Room reserved up front is used without reallocating; freeing empties
 * the heap. */
static void test_reserved(void) {
    dp_heap h;
    CHECK_INT_EQ(dp_heap_init(&h, 100, NULL), DP_STATUS_OK);
    CHECK(h.cap >= 100);
    dp_heap_entry *a = h.a;
    for (int32_t i = 0; i < 100; i++) CHECK_INT_EQ(dp_heap_push(&h, (double)(i % 10), i), 0);
    CHECK(h.a == a);
    for (int32_t i = 0; i < 100; i++) {
        dp_heap_entry e = dp_heap_pop(&h);
        CHECK_INT_EQ(dp_heap_entry_payload(e), (i % 10) * 10 + i / 10);
    }
    dp_heap_free(&h);
    CHECK(h.a == NULL);
    CHECK_INT_EQ(h.cap, 0);
}

/* Reserving more room than memory holds is an error naming the heap. */
static void test_too_large_refused(void) {
    dp_heap h;
    dp_error err;
    CHECK_INT_EQ(dp_heap_init(&h, INT64_MAX / 4, &err), DP_STATUS_NOMEM);
    CHECK_STR_CONTAINS(err.msg, "heap");
    CHECK(h.a == NULL);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    TEST_RUN(test_fields);
    TEST_RUN(test_fifo_ties);
    TEST_RUN(test_fifo_ties_interleaved);
    TEST_RUN(test_caller_ties);
    TEST_RUN(test_nonneg);
    TEST_RUN(test_reserved);
    TEST_RUN(test_too_large_refused);
    return test_end();
}
