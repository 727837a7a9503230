/* A synthetic training-like graph: an RNN-style grid of cells (rows =
 * layers, columns = time steps) with its forward pass, the mirrored backward
 * pass, per-layer variables with read ops, gradient aggregation and Adam
 * updates colocated with the variables, and a CPU-only input pipeline. It has
 * the shape of the papers' RNNLM/NMT graphs (wavefront parallelism, shared
 * weights, small meta ops) without claiming to be any of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dplace/graph.h"

typedef struct synth {
    dp_graph *g;
    dp_error *err;
    int failed;
    int64_t batch;
    /* the grid: rows layers by cols time steps, cell k = r * cols + c */
    int rows, cols;
    int64_t *width;                 /* width[r]: layer r's input, width[r + 1] its output */
    int32_t *h, *cat, *pre;         /* per cell: output, concat input, pre-activation */
    int32_t *gsplit, *gz, *dw, *db; /* per cell: grads to inputs, of pre-activation, of W and b */
    int32_t *gtop, *xin;            /* per step: the loss gradient, the input slice */
    int32_t *wv;                    /* per layer: W, W/read, b, b/read */
    int32_t *acc;                   /* per layer: running sum of dW */
} synth;

/* Adds an op with one float32 output [batch, width] (width 0: no output). */
static int32_t add(synth *s, const char *type, const char *scope, const char *coloc, int64_t width, double flops,
                   const int32_t *inputs, int n_inputs, const char *fmt, int a, int b) {
    if (s->failed) return 0;
    char name[160];
    snprintf(name, sizeof name, fmt, a, b);
    char full[256];
    snprintf(full, sizeof full, "%s/%s", scope, name);
    int32_t id = dp_graph_add_op(s->g, full, type, scope, coloc, s->err);
    if (id < 0) {
        s->failed = 1;
        return 0;
    }
    s->g->ops[id].flops = flops;
    for (int k = 0; k < n_inputs && !s->failed; k++)
        if (dp_graph_add_input(s->g, id, inputs[k] >= 0 ? inputs[k] : -inputs[k] - 1, inputs[k] >= 0 ? 0 : 1, s->err))
            s->failed = 1;
    if (width > 0 && !s->failed) {
        int64_t dims[2] = {s->batch, width};
        if (dp_graph_add_output_shape(s->g, id, DP_DTYPE_FLOAT32, dims, 2, s->err)) s->failed = 1;
    }
    return id;
}

/* A variable of rows x cols floats: the variable op and its read, colocated. */
static void add_variable(synth *s, const char *scope, const char *vname, int64_t rows, int64_t cols, int32_t *var,
                         int32_t *read) {
    if (s->failed) return;
    char coloc[160];
    snprintf(coloc, sizeof coloc, "%s/%s", scope, vname);
    int64_t dims[2] = {rows, cols};
    char nm[200];
    snprintf(nm, sizeof nm, "%s", vname);
    *var = add(s, "VariableV2", scope, coloc, 0, 0, NULL, 0, nm, 0, 0);
    if (s->failed) return;
    s->g->ops[*var].param_bytes = (uint64_t)(rows * cols * 4);
    if (dp_graph_add_output_shape(s->g, *var, DP_DTYPE_FLOAT32, dims, 2, s->err)) s->failed = 1;
    snprintf(nm, sizeof nm, "%s/read", vname);
    int32_t in[1] = {*var};
    *read = add(s, "Identity", scope, coloc, 0, 0, in, 1, nm, 0, 0);
    if (!s->failed && dp_graph_add_output_shape(s->g, *read, DP_DTYPE_FLOAT32, dims, 2, s->err)) s->failed = 1;
}

/* CPU-only input pipeline and per-step slices; the variables of each layer. */
static void synth_inputs(synth *s) {
    int32_t it = add(s, "IteratorGetNext", "input", NULL, s->width[0] * s->cols, 0, NULL, 0, "IteratorGetNext", 0, 0);
    if (!s->failed) s->g->ops[it].device = (dp_devcon){DP_DEVCON_CPU, -1};
    for (int c = 0; c < s->cols; c++) {
        int32_t in[1] = {it};
        s->xin[c] = add(s, "StridedSlice", "input", NULL, s->width[0], 0, in, 1, "x_%d", c, 0);
    }
    for (int r = 0; r < s->rows; r++) {
        char scope[32];
        snprintf(scope, sizeof scope, "layer_%d", r);
        int32_t *wv = s->wv;
        add_variable(s, scope, "W", s->width[r] + s->width[r + 1], s->width[r + 1], &wv[4 * r], &wv[4 * r + 1]);
        add_variable(s, scope, "b", 1, s->width[r + 1], &wv[4 * r + 2], &wv[4 * r + 3]);
    }
}

/* Forward: cell (r, c) reads h(r-1, c) (or x_c) and h(r, c-1). */
static void synth_forward(synth *s) {
    int rows = s->rows, cols = s->cols;
    int64_t B = s->batch;
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++) {
            char scope[32];
            snprintf(scope, sizeof scope, "layer_%d", r);
            int k = r * cols + c;
            int64_t win = s->width[r] + s->width[r + 1], w = s->width[r + 1];
            int32_t below = r ? s->h[(r - 1) * cols + c] : s->xin[c];
            int32_t in2[2] = {below, c ? s->h[k - 1] : s->wv[4 * r + 3]};
            s->cat[k] = add(s, "ConcatV2", scope, NULL, win, 0, in2, 2, "t%d/concat", c, 0);
            int32_t mm[2] = {s->cat[k], s->wv[4 * r + 1]};
            int32_t m = add(s, "MatMul", scope, NULL, w, 2.0 * B * win * w, mm, 2, "t%d/matmul", c, 0);
            int32_t ba[2] = {m, s->wv[4 * r + 3]};
            s->pre[k] = add(s, "BiasAdd", scope, NULL, w, (double)B * w, ba, 2, "t%d/bias", c, 0);
            int32_t th[1] = {s->pre[k]};
            s->h[k] = add(s, "Tanh", scope, NULL, w, 4.0 * B * w, th, 1, "t%d/tanh", c, 0);
        }
}

/* The loss on the top layer, per step, then its gradient. */
static void synth_loss(synth *s) {
    int64_t wt = s->width[s->rows], B = s->batch;
    for (int c = 0; c < s->cols; c++) {
        int32_t in[1] = {s->h[(s->rows - 1) * s->cols + c]};
        int32_t sm = add(s, "Softmax", "loss", NULL, wt, 5.0 * B * wt, in, 1, "t%d/softmax", c, 0);
        int32_t in2[2] = {sm, s->xin[c]};
        s->gtop[c] = add(s, "Sub", "loss", NULL, wt, (double)B * wt, in2, 2, "t%d/grad", c, 0);
    }
}

/* Sets the output of op to a float32 tensor of rank dims. */
static void synth_shape(synth *s, int32_t op, const int64_t *dims, int rank) {
    if (!s->failed && dp_graph_add_output_shape(s->g, op, DP_DTYPE_FLOAT32, dims, rank, s->err)) s->failed = 1;
}

/* The backward pass of cell (r, c), mirrored: the grad of h(r, c) from
 * above (r+1, c) and from the right (r, c+1), the tanh, bias and matmul
 * gradients, dW summed into the layer's running sum as it comes
 * (accumulate-n, not held to the end) and a Split into the grads of the
 * input below (slot 0) and of h(r, c-1) (slot 1). */
static void synth_backward_cell(synth *s, int r, int c) {
    int rows = s->rows, cols = s->cols;
    int64_t B = s->batch;
    char scope[48];
    snprintf(scope, sizeof scope, "gradients/layer_%d", r);
    int k = r * cols + c;
    int64_t win = s->width[r] + s->width[r + 1], w = s->width[r + 1];
    int32_t g_up = r + 1 < rows ? s->gsplit[(r + 1) * cols + c] : s->gtop[c];
    int32_t addn[2] = {g_up, c + 1 < cols ? -(s->gsplit[k + 1]) - 1 : g_up};
    int32_t gh = add(s, "AddN", scope, NULL, w, (double)B * w, addn, c + 1 < cols ? 2 : 1, "t%d/addn", c, 0);
    int32_t tg[2] = {s->h[k], gh};
    s->gz[k] = add(s, "TanhGrad", scope, NULL, w, 3.0 * B * w, tg, 2, "t%d/tanh_grad", c, 0);
    int32_t bg[1] = {s->gz[k]};
    s->db[k] = add(s, "BiasAddGrad", scope, NULL, 0, (double)B * w, bg, 1, "t%d/bias_grad", c, 0);
    synth_shape(s, s->db[k], (int64_t[]){w}, 1);
    int32_t dx[2] = {s->gz[k], s->wv[4 * r + 1]};
    int32_t gx = add(s, "MatMul", scope, NULL, win, 2.0 * B * win * w, dx, 2, "t%d/matmul_grad_x", c, 0);
    int32_t dwi[2] = {s->cat[k], s->gz[k]};
    s->dw[k] = add(s, "MatMul", scope, NULL, 0, 2.0 * B * win * w, dwi, 2, "t%d/matmul_grad_w", c, 0);
    synth_shape(s, s->dw[k], (int64_t[]){win, w}, 2);
    if (c == cols - 1) {
        s->acc[r] = s->dw[k];
    } else if (!s->failed) {
        int32_t ai[2] = {s->acc[r], s->dw[k]};
        s->acc[r] = add(s, "Add", scope, NULL, 0, (double)win * w, ai, 2, "t%d/W_acc", c, 0);
        synth_shape(s, s->acc[r], (int64_t[]){win, w}, 2);
    }
    int32_t sp[1] = {gx};
    s->gsplit[k] = add(s, "Split", scope, NULL, s->width[r], 0, sp, 1, "t%d/split", c, 0);
    synth_shape(s, s->gsplit[k], (int64_t[]){B, w}, 2);
}

/* Gradient sums and Adam updates, colocated with the variables. */
static void synth_updates(synth *s) {
    int cols = s->cols;
    for (int r = 0; r < s->rows && !s->failed; r++) {
        char scope[48], coloc[64];
        snprintf(scope, sizeof scope, "gradients/layer_%d", r);
        int64_t win = s->width[r] + s->width[r + 1], w = s->width[r + 1];
        int32_t sum_w = s->acc[r];
        int32_t sum_b = add(s, "AddN", scope, NULL, 0, (double)cols * w, NULL, 0, "b_sum", 0, 0);
        for (int c = 0; c < cols && !s->failed; c++)
            if (dp_graph_add_input(s->g, sum_b, s->db[r * cols + c], 0, s->err)) s->failed = 1;
        synth_shape(s, sum_b, (int64_t[]){w}, 1);
        snprintf(scope, sizeof scope, "train/layer_%d", r);
        snprintf(coloc, sizeof coloc, "layer_%d/W", r);
        int32_t aw[2] = {s->wv[4 * r], sum_w};
        int32_t uw = add(s, "ApplyAdam", scope, coloc, 0, 10.0 * win * w, aw, 2, "W_adam", 0, 0);
        if (!s->failed) s->g->ops[uw].temp_bytes = (uint64_t)(win * w * 8); /* two moment slots touched */
        snprintf(coloc, sizeof coloc, "layer_%d/b", r);
        int32_t ab[2] = {s->wv[4 * r + 2], sum_b};
        add(s, "ApplyAdam", scope, coloc, 0, 10.0 * w, ab, 2, "b_adam", 0, 0);
    }
}

dp_graph *dp_graph_synth(int32_t n_ops, uint64_t seed, dp_error *err) {
    if (n_ops < 200 || n_ops > 2000000) {
        dp_error_set(err, DP_STATUS_INVALID, "synthetic graph: op count %d is out of range 200..2000000", n_ops);
        return NULL;
    }
    dp_rng rng;
    dp_rng_seed(&rng, seed);
    int rows = 4 + (int)dp_rng_below(&rng, 5);             /* 4..8 layers */
    int cols = (n_ops - 2 - 11 * rows) / (11 * rows + 5); /* time steps */
    if (cols < 2) cols = 2;
    char gname[64];
    snprintf(gname, sizeof gname, "synthetic-%d-s%llu", n_ops, (unsigned long long)seed);
    synth S = {.g = dp_graph_init(gname), .err = err, .batch = 64, .rows = rows, .cols = cols};
    if (!S.g) {
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        return NULL;
    }
    synth *s = &S;
    size_t cells = (size_t)rows * cols;
    s->width = calloc((size_t)rows + 1, sizeof(int64_t));
    s->h = malloc(cells * sizeof(int32_t));
    s->cat = malloc(cells * sizeof(int32_t));
    s->pre = malloc(cells * sizeof(int32_t));
    s->gsplit = malloc(cells * sizeof(int32_t));
    s->gz = malloc(cells * sizeof(int32_t));
    s->dw = malloc(cells * sizeof(int32_t));
    s->db = malloc(cells * sizeof(int32_t));
    s->gtop = malloc((size_t)cols * sizeof(int32_t));
    s->xin = malloc((size_t)cols * sizeof(int32_t));
    s->wv = malloc((size_t)rows * 4 * sizeof(int32_t));
    s->acc = malloc((size_t)rows * sizeof(int32_t));
    if (!s->acc || !s->width || !s->h || !s->cat || !s->pre || !s->gsplit || !s->gz || !s->dw || !s->db || !s->gtop ||
        !s->xin || !s->wv) {
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        s->failed = 1;
        goto done;
    }
    s->width[0] = 512;
    for (int r = 1; r <= rows; r++) s->width[r] = 256 * (2 + (int64_t)dp_rng_below(&rng, 3)); /* 512..1024 */
    synth_inputs(s);
    synth_forward(s);
    synth_loss(s);
    for (int c = cols - 1; c >= 0; c--)
        for (int r = rows - 1; r >= 0; r--) synth_backward_cell(s, r, c);
    synth_updates(s);
    if (!s->failed && dp_graph_finalize(s->g, gname, err)) s->failed = 1;
done:
    free(s->width), free(s->h), free(s->cat), free(s->pre), free(s->gsplit), free(s->gz), free(s->dw), free(s->db);
    free(s->gtop), free(s->xin), free(s->wv), free(s->acc);
    if (s->failed) {
        dp_graph_free(s->g);
        return NULL;
    }
    return s->g;
}
