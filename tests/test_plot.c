/* The training-curve SVG (dp_plot_write_svg): well-formed XML (a small
 * checker here, and python3's parser when there is one), labels escaped,
 * outliers clipped to the top edge, NaN and infinity skipped, empty and
 * one-point input, 100,000 points in a small file, bad input and an
 * unwritable path failing cleanly. With DPLACE_PLOT_EXAMPLE=FILE.svg the
 * synthetic training curve is also written there, to look at. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "dplace/plot.h"
#include "test_util.h"

static char dir_path[128];

static char *tmp_path(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir_path, name);
    return buf[k];
}

static char *slurp(const char *path, size_t *len) {
    char *buf;
    dp_error err;
    size_t n;
    if (dp_read_file(path, 64u << 20, &buf, &n, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    char *z = realloc(buf, n + 1); /* dp_read_file does not terminate the text */
    CHECK(z);
    z[n] = '\0';
    if (len) *len = n;
    return z;
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* A small well-formedness check: tags nest and close, attributes are
 * quoted, '&' starts a known entity, no '<' in text, and every byte is
 * printable ASCII, whitespace or part of a UTF-8 sequence. Returns NULL or
 * what is wrong. */
static const char *xml_problem(const char *s) {
    static char msg[256];
    const char *stack[64];
    size_t stack_len[64];
    int depth = 0, root_seen = 0;
    const char *p = s;
    if (strncmp(p, "<?xml ", 6)) return "no XML declaration";
    p = strstr(p, "?>");
    if (!p) return "unterminated XML declaration";
    p += 2;
    while (*p) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') return "control character";
        if (ch == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            int ok = 0;
            for (int i = 0; i < 5; i++) ok |= !strncmp(p, ents[i], strlen(ents[i]));
            if (!ok) return "bare '&'";
            p++;
            continue;
        }
        if (ch == '>') return "bare '>' in text";
        if (ch != '<') {
            if (!depth && ch != '\n' && ch != ' ') return "text outside the root element";
            p++;
            continue;
        }
        int closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t nl = strcspn(name, " \t\n/>");
        if (!nl) return "tag without a name";
        const char *q = name + nl;
        /* attributes: name="value" pairs */
        for (;;) {
            while (*q == ' ' || *q == '\n' || *q == '\t') q++;
            if (*q == '>' || (*q == '/' && q[1] == '>') || !*q) break;
            if (closing) return "attributes on an end tag";
            size_t an = strcspn(q, "= \t\n/>");
            if (!an || q[an] != '=' || q[an + 1] != '"') {
                snprintf(msg, sizeof msg, "bad attribute near \"%.40s\"", q);
                return msg;
            }
            q += an + 2;
            while (*q && *q != '"') {
                if (*q == '<') return "'<' in an attribute value";
                if (*q == '&') {
                    int ok = !strncmp(q, "&amp;", 5) || !strncmp(q, "&lt;", 4) || !strncmp(q, "&gt;", 4) ||
                             !strncmp(q, "&quot;", 6) || !strncmp(q, "&apos;", 6);
                    if (!ok) return "bare '&' in an attribute";
                }
                q++;
            }
            if (!*q) return "unterminated attribute value";
            q++;
        }
        if (!*q) return "unterminated tag";
        int self = *q == '/';
        if (closing) {
            if (!depth || stack_len[depth - 1] != nl || strncmp(stack[depth - 1], name, nl)) {
                snprintf(msg, sizeof msg, "end tag </%.*s> does not match", (int)nl, name);
                return msg;
            }
            depth--;
        } else if (!self) {
            if (!depth && root_seen) return "a second root element";
            if (depth == 64) return "nested too deep";
            root_seen = 1;
            stack[depth] = name;
            stack_len[depth++] = nl;
        } else if (!depth) {
            return "self-closed root";
        }
        p = q + (self ? 2 : 1);
    }
    if (depth) {
        snprintf(msg, sizeof msg, "<%.*s> is never closed", (int)stack_len[depth - 1], stack[depth - 1]);
        return msg;
    }
    return root_seen ? NULL : "no root element";
}

static int have_python = -1; /* -1: not asked yet (python3 takes a while to start) */

/* The file is well-formed XML with an <svg> root; returns its text. */
static char *check_svg(const char *path) {
    size_t len;
    char *s = slurp(path, &len);
    CHECK_INT_EQ(strlen(s), len); /* no NUL bytes */
    const char *problem = xml_problem(s);
    if (problem) fprintf(stderr, "%s: %s\n", path, problem);
    CHECK(!problem);
    CHECK_STR_CONTAINS(s, "<svg xmlns=\"http://www.w3.org/2000/svg\"");
    if (have_python < 0) {
        have_python = system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") == 0;
        if (!have_python) printf("note: no python3; only the built-in XML check runs\n");
    }
    if (have_python) {
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "python3 -c \"import sys, xml.dom.minidom as m; "
                 "sys.exit(m.parse(sys.argv[1]).documentElement.tagName != 'svg')\" '%s'",
                 path);
        int rc = system(cmd);
        if (rc) fprintf(stderr, "python3's XML parser rejects %s\n", path);
        CHECK_INT_EQ(rc, 0);
    }
    return s;
}

/* No temporary file of dp_atomic_open is left beside the outputs. */
static void check_no_temporaries(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q '\\.tmp\\.'", dir_path);
    CHECK(system(cmd) != 0);
}

/* A training curve: step times falling from ~5 to ~1.2 with noise, 10%
 * invalid, one sample 100 times slower, the best so far, reference lines. */
typedef struct synth {
    int64_t n;
    double *x, *y, *best;
    unsigned char *valid;
} synth;

static synth make_synth(int64_t n, uint64_t seed) {
    synth s = {n, malloc((size_t)n * sizeof(double)), malloc((size_t)n * sizeof(double)),
               malloc((size_t)n * sizeof(double)), malloc((size_t)n)};
    CHECK(s.x && s.y && s.best && s.valid);
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    double best = NAN;
    for (int64_t i = 0; i < n; i++) {
        s.x[i] = (double)(i + 1);
        s.valid[i] = dp_rng_uniform(&rng) >= 0.1;
        s.y[i] = (1.2 + 3.8 * exp(-(double)i / (0.2 * (double)n))) * exp(0.15 * dp_rng_normal(&rng));
        if (i == n / 3) s.y[i] *= 100; /* an outlier */
        if (s.valid[i] && !(s.y[i] >= best)) best = s.y[i];
        s.best[i] = best;
    }
    return s;
}

static void free_synth(synth *s) {
    free(s->x);
    free(s->y);
    free(s->best);
    free(s->valid);
}

static const dp_plot_line ref_lines[] = {
    {"single GPU", 5.2},
    {"expert", 2.4},
    {"best baseline (m-etf) <&> \"q\"", 1.9},
    {"CPU only", 480.0}, /* far off: listed, not drawn */
    {"no such baseline", NAN},
};

/* The synthetic training curve of 2000 samples with its labels and
 * reference lines, over s. */
static dp_plot_curve synth_curve(const synth *s) {
    dp_plot_curve c = {0};
    c.title = "nmt4 on k40x4: Hierarchical Planner <seed 1> & friends";
    c.x_label = "sampled placements";
    c.y_label = "step time (s)";
    c.n = s->n;
    c.x = s->x;
    c.y = s->y;
    c.valid = s->valid;
    c.best = s->best;
    c.lines = ref_lines;
    c.n_lines = 5;
    return c;
}

/* The training curve: labels escaped, reference lines listed (drawn when
 * in view), outliers clipped to the top edge, invalid samples counted,
 * the figures in the footer, no NaN or infinity. */
static void test_curve(void) {
    synth s = make_synth(2000, 7);
    dp_plot_curve c = synth_curve(&s);
    const char *path = tmp_path("curve.svg");
    dp_error err;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    const char *example = getenv("DPLACE_PLOT_EXAMPLE");
    if (example && *example) CHECK_INT_EQ(dp_plot_write_svg(example, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, "nmt4 on k40x4: Hierarchical Planner &lt;seed 1&gt; &amp; friends");
    CHECK_STR_CONTAINS(svg, "best baseline (m-etf) &lt;&amp;&gt; &quot;q&quot;: 1.9<");
    CHECK_STR_CONTAINS(svg, ">single GPU: 5.2<");
    CHECK_STR_CONTAINS(svg, ">expert: 2.4<");
    CHECK_STR_CONTAINS(svg, ">CPU only: 480 (off scale)<");
    CHECK_STR_CONTAINS(svg, ">no such baseline: n/a<");
    CHECK_STR_CONTAINS(svg, ">sampled placements<");
    CHECK_STR_CONTAINS(svg, "above the view (1)");
    CHECK_STR_CONTAINS(svg, "invalid (");
    CHECK_STR_CONTAINS(svg, "2,000 samples, ");
    CHECK_STR_CONTAINS(svg, "best so far: ");
    /* three reference lines drawn (dashed) across the plot, plus the legend's five */
    CHECK_INT_EQ(count_of(svg, "stroke-dasharray"), 3 + 5);
    /* the outlier did not stretch the view: no y tick reaches 10 */
    CHECK(!strstr(svg, "text-anchor=\"end\">10<") && !strstr(svg, "text-anchor=\"end\">100<"));
    CHECK(!strstr(svg, "nan") && !strstr(svg, "inf"));
    free(svg);
    remove(path);
    free_synth(&s);
}

/* Writing again replaces the file. */
static void test_rewrite_replaces_file(void) {
    synth s = make_synth(2000, 7);
    dp_plot_curve c = synth_curve(&s);
    const char *path = tmp_path("curve.svg");
    dp_error err;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    c.title = "second";
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, ">second<");
    free(svg);
    remove(path);
    free_synth(&s);
}

/* NaN and infinite points, x values, best values and reference lines are
 * skipped (the lines listed as n/a); no number drawn is NaN or
 * infinite. */
static void test_nonfinite(void) {
    enum { N = 200 };
    double x[N], y[N], best[N];
    unsigned char valid[N];
    double b = NAN;
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = i % 7 == 0 ? NAN : i % 11 == 0 ? INFINITY : i % 13 == 0 ? -INFINITY : 2.0 + 0.01 * (i % 5);
        valid[i] = i % 17 != 0;
        if (valid[i] && isfinite(y[i]) && !(y[i] >= b)) b = y[i];
        best[i] = b;
    }
    x[5] = NAN;
    x[6] = INFINITY;
    best[0] = INFINITY;
    dp_plot_line lines[] = {{"inf", INFINITY}, {"-inf", -INFINITY}, {"nan", NAN}, {"ok", 2.5}};
    dp_plot_curve c = {0};
    c.n = N;
    c.x = x;
    c.y = y;
    c.valid = valid;
    c.best = best;
    c.lines = lines;
    c.n_lines = 4;
    const char *path = tmp_path("nonfinite.svg");
    dp_error err;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, ">inf: n/a<");
    CHECK_STR_CONTAINS(svg, ">-inf: n/a<");
    CHECK_STR_CONTAINS(svg, ">nan: n/a<");
    CHECK_STR_CONTAINS(svg, ">ok: 2.5<");
    CHECK_STR_CONTAINS(svg, "best so far: 2<");
    /* no number in the drawing is NaN or infinite */
    const char *draw = strstr(svg, "clip-path=");
    CHECK(draw);
    CHECK(!strstr(draw, "nan") || strstr(draw, "nan") > strstr(draw, "</g>"));
    CHECK(!strstr(draw, "inf") || strstr(draw, "inf") > strstr(draw, "</g>"));
    free(svg);
    remove(path);
}

/* Nothing finite at all: empty axes, no best. */
static void test_nothing_finite(void) {
    enum { N = 200 };
    double x[N], y[N], best[N];
    unsigned char valid[N];
    for (int i = 0; i < N; i++) x[i] = i, y[i] = NAN, best[i] = NAN, valid[i] = i % 17 != 0;
    x[5] = NAN;
    x[6] = INFINITY;
    dp_plot_line lines[] = {{"inf", INFINITY}, {"-inf", -INFINITY}, {"nan", NAN}};
    dp_plot_curve c = {0};
    c.n = N;
    c.x = x;
    c.y = y;
    c.valid = valid;
    c.best = best;
    c.lines = lines;
    c.n_lines = 3;
    const char *path = tmp_path("nonfinite.svg");
    dp_error err;
    char *svg;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    svg = check_svg(path);
    CHECK(!strstr(svg, "best so far: "));
    free(svg);
    remove(path);
}

/* No points and nothing else: the default labels, "0 samples". */
static void test_empty(void) {
    dp_plot_curve c = {0};
    const char *path = tmp_path("empty.svg");
    dp_error err;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK); /* n = 0, nothing else */
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, ">0 samples<");
    CHECK_STR_CONTAINS(svg, ">samples<");      /* default x label */
    CHECK_STR_CONTAINS(svg, ">step time (s)<"); /* default y label */
    free(svg);
    remove(path);
}

/* Only reference lines: listed. */
static void test_only_reference_lines(void) {
    dp_plot_curve c = {0};
    const char *path = tmp_path("empty.svg");
    dp_error err;
    dp_plot_line lines[] = {{"expert", 3.0}, {"single GPU", 4.0}};
    c.lines = lines;
    c.n_lines = 2;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, ">expert: 3<");
    free(svg);
    remove(path);
}

/* One valid point: its figures in the footer. */
static void test_one_point(void) {
    dp_plot_curve c = {0};
    const char *path = tmp_path("empty.svg");
    dp_error err;
    dp_plot_line lines[] = {{"expert", 3.0}, {"single GPU", 4.0}};
    c.lines = lines;
    c.n_lines = 2;
    double x = 1, y = 0.75, best = 0.75;
    c.n = 1;
    c.x = &x;
    c.y = &y;
    c.best = &best;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, ">1 sample, 1 valid (100.0%), best 0.75 found at 1<");
    free(svg);
    remove(path);
}

/* One invalid point and no x array: counted as invalid. */
static void test_one_invalid_point(void) {
    dp_plot_curve c = {0};
    const char *path = tmp_path("empty.svg");
    dp_error err;
    dp_plot_line lines[] = {{"expert", 3.0}, {"single GPU", 4.0}};
    c.lines = lines;
    c.n_lines = 2;
    double y = 0.75;
    unsigned char invalid = 0;
    c.n = 1;
    c.y = &y;
    c.valid = &invalid;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, ">1 sample, 0 valid (0.0%)<");
    CHECK_STR_CONTAINS(svg, "invalid (1)");
    free(svg);
    remove(path);
}

/* 100,000 points in a small file: at most 5000 dots drawn, x ticks in
 * thousands. */
static void test_many_points(void) {
    synth s = make_synth(100000, 11);
    dp_plot_curve c = {0};
    c.title = "100,000 samples";
    c.n = s.n;
    c.y = s.y; /* x NULL: 1..n */
    c.valid = s.valid;
    c.best = s.best;
    c.lines = ref_lines;
    c.n_lines = 3;
    const char *path = tmp_path("many.svg");
    dp_error err;
    double t0 = dp_now_s();
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    double took = dp_now_s() - t0;
    size_t len;
    free(slurp(path, &len));
    char *svg = check_svg(path);
    printf("100,000 points: %zu bytes, %d dots, %.3f s\n", len, count_of(svg, "h0.01"), took);
    CHECK(len < 200 * 1024);
    CHECK(count_of(svg, "h0.01") <= 5000 + 3); /* 3 in the legend */
    CHECK(count_of(svg, "h0.01") > 1000);
    CHECK_STR_CONTAINS(svg, "100,000 samples, ");
    CHECK_STR_CONTAINS(svg, ">100k<"); /* x ticks */
    free(svg);
    remove(path);
    free_synth(&s);
}

/* Invalid UTF-8, control characters, a long label, a newline in the
 * title: still well-formed, cut and replaced where they must be. */
static void test_labels(void) {
    char long_label[200];
    memset(long_label, 'L', sizeof long_label - 1);
    long_label[sizeof long_label - 1] = '\0';
    dp_plot_line lines[] = {{"bad \xff\xfe utf-8 \xc3\x28 \xed\xa0\x80 t\tx \x01", 1.0},
                            {"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80", 2.0},
                            {long_label, 3.0},
                            {NULL, 4.0}};
    dp_plot_curve c = {0};
    c.title = "title\nwith newline";
    c.lines = lines;
    c.n_lines = 4;
    const char *path = tmp_path("labels.svg");
    dp_error err;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_OK);
    char *svg = check_svg(path);
    CHECK_STR_CONTAINS(svg, "bad ?? utf-8 ?( ??? t x  : 1<");
    CHECK_STR_CONTAINS(svg, "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80: 2<");
    CHECK_STR_CONTAINS(svg, "LLLLLLLLLLLLLLLLLLLLLLLLLLLLL\xe2\x80\xa6: 3<"); /* 29 + ellipsis */
    CHECK(!strstr(svg, "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLL"));
    CHECK_STR_CONTAINS(svg, "title with newline");
    free(svg);
    remove(path);
}

/* A directory that does not exist: an error naming the path, no file. */
static void test_missing_directory_fails(void) {
    double y[3] = {1, 2, 3};
    dp_plot_curve c = {0};
    c.n = 3;
    c.y = y;
    dp_error err;
    const char *bad = "/nonexistent-dplace-dir/curve.svg";
    CHECK_INT_EQ(dp_plot_write_svg(bad, &c, &err), DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, bad);
    CHECK_STR_CONTAINS(err.msg, "cannot write");
    CHECK(access(bad, F_OK) != 0);
}

/* A parent that is a regular file: an error naming the path. */
static void test_parent_is_a_file_fails(void) {
    double y[3] = {1, 2, 3};
    dp_plot_curve c = {0};
    c.n = 3;
    c.y = y;
    dp_error err;
    const char *file = tmp_path("plain");
    FILE *f = fopen(file, "w");
    CHECK(f);
    fclose(f);
    char under[300];
    snprintf(under, sizeof under, "%s/curve.svg", file);
    CHECK_INT_EQ(dp_plot_write_svg(under, &c, &err), DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, under);
    remove(file);
}

/* A directory in the way of the rename: an error naming it, the
 * temporary file removed. */
static void test_directory_in_the_way_fails(void) {
    double y[3] = {1, 2, 3};
    dp_plot_curve c = {0};
    c.n = 3;
    c.y = y;
    dp_error err;
    const char *d = tmp_path("adir.svg");
    CHECK_INT_EQ(mkdir(d, 0700), 0);
    CHECK_INT_EQ(dp_plot_write_svg(d, &c, &err), DP_STATUS_IO);
    CHECK_STR_CONTAINS(err.msg, d);
    CHECK_INT_EQ(rmdir(d), 0);
    check_no_temporaries();
}

/* Inconsistent input is refused, saying what is wrong, and writes
 * nothing. */
static void test_inconsistent_input_refused(void) {
    double y[3] = {1, 2, 3};
    dp_plot_curve c = {0};
    dp_error err;
    const char *path = tmp_path("never.svg");
    c.n = -1;
    c.y = y;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "n is negative (-1)");
    c.n = 3;
    c.y = NULL;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "3 points but no y values");
    c.y = y;
    c.n_lines = 2;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "2 reference lines but no array");
    c.n_lines = -1;
    CHECK_INT_EQ(dp_plot_write_svg(path, &c, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_plot_write_svg(path, NULL, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_plot_write_svg("", &c, &err), DP_STATUS_INVALID);
    CHECK(access(path, F_OK) != 0);
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    snprintf(dir_path, sizeof dir_path, "/tmp/dplace_plot_%d", (int)getpid());
    CHECK_INT_EQ(mkdir(dir_path, 0700), 0);
    TEST_RUN(test_curve);
    TEST_RUN(test_rewrite_replaces_file);
    TEST_RUN(test_nonfinite);
    TEST_RUN(test_nothing_finite);
    TEST_RUN(test_empty);
    TEST_RUN(test_only_reference_lines);
    TEST_RUN(test_one_point);
    TEST_RUN(test_one_invalid_point);
    TEST_RUN(test_many_points);
    TEST_RUN(test_labels);
    TEST_RUN(test_missing_directory_fails);
    TEST_RUN(test_parent_is_a_file_fails);
    TEST_RUN(test_directory_in_the_way_fails);
    TEST_RUN(test_inconsistent_input_refused);
    check_no_temporaries();
    CHECK_INT_EQ(rmdir(dir_path), 0); /* every output was removed: it is empty */
    return test_end();
}
