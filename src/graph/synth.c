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
    synth S = {dp_graph_init(gname), err, 0, 64};
    if (!S.g) {
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        return NULL;
    }
    synth *s = &S;
    int64_t *width = calloc((size_t)rows + 1, sizeof(int64_t));
    int32_t *h = malloc((size_t)rows * cols * sizeof(int32_t));      /* cell outputs      */
    int32_t *cat = malloc((size_t)rows * cols * sizeof(int32_t));    /* cell concat input */
    int32_t *pre = malloc((size_t)rows * cols * sizeof(int32_t));    /* cell pre-activ.   */
    int32_t *gsplit = malloc((size_t)rows * cols * sizeof(int32_t)); /* grads to inputs   */
    int32_t *gz = malloc((size_t)rows * cols * sizeof(int32_t));     /* grad of pre-act   */
    int32_t *dw = malloc((size_t)rows * cols * sizeof(int32_t));
    int32_t *db = malloc((size_t)rows * cols * sizeof(int32_t));
    int32_t *gtop = malloc((size_t)cols * sizeof(int32_t));
    int32_t *xin = malloc((size_t)cols * sizeof(int32_t));
    int32_t *wv = malloc((size_t)rows * 4 * sizeof(int32_t));
    int32_t *acc = malloc((size_t)rows * sizeof(int32_t)); /* running sum of dW per layer */
    if (!acc || !width || !h || !cat || !pre || !gsplit || !gz || !dw || !db || !gtop || !xin || !wv) {
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        s->failed = 1;
        goto done;
    }
    width[0] = 512;
    for (int r = 1; r <= rows; r++) width[r] = 256 * (2 + (int64_t)dp_rng_below(&rng, 3)); /* 512..1024 */
    int64_t B = s->batch;

    /* CPU-only input pipeline and per-step slices */
    int32_t it = add(s, "IteratorGetNext", "input", NULL, width[0] * cols, 0, NULL, 0, "IteratorGetNext", 0, 0);
    if (!s->failed) s->g->ops[it].device = (dp_devcon){DP_DEVCON_CPU, -1};
    for (int c = 0; c < cols; c++) {
        int32_t in[1] = {it};
        xin[c] = add(s, "StridedSlice", "input", NULL, width[0], 0, in, 1, "x_%d", c, 0);
    }
    /* variables of each layer */
    for (int r = 0; r < rows; r++) {
        char scope[32];
        snprintf(scope, sizeof scope, "layer_%d", r);
        add_variable(s, scope, "W", width[r] + width[r + 1], width[r + 1], &wv[4 * r], &wv[4 * r + 1]);
        add_variable(s, scope, "b", 1, width[r + 1], &wv[4 * r + 2], &wv[4 * r + 3]);
    }
    /* forward: cell (r, c) reads h(r-1, c) (or x_c) and h(r, c-1) */
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++) {
            char scope[32];
            snprintf(scope, sizeof scope, "layer_%d", r);
            int k = r * cols + c;
            int64_t win = width[r] + width[r + 1], w = width[r + 1];
            int32_t below = r ? h[(r - 1) * cols + c] : xin[c];
            int32_t in2[2] = {below, c ? h[k - 1] : wv[4 * r + 3]};
            cat[k] = add(s, "ConcatV2", scope, NULL, win, 0, in2, 2, "t%d/concat", c, 0);
            int32_t mm[2] = {cat[k], wv[4 * r + 1]};
            int32_t m = add(s, "MatMul", scope, NULL, w, 2.0 * B * win * w, mm, 2, "t%d/matmul", c, 0);
            int32_t ba[2] = {m, wv[4 * r + 3]};
            pre[k] = add(s, "BiasAdd", scope, NULL, w, (double)B * w, ba, 2, "t%d/bias", c, 0);
            int32_t th[1] = {pre[k]};
            h[k] = add(s, "Tanh", scope, NULL, w, 4.0 * B * w, th, 1, "t%d/tanh", c, 0);
        }
    /* loss on the top layer, per step, then its gradient */
    int64_t wt = width[rows];
    for (int c = 0; c < cols; c++) {
        int32_t in[1] = {h[(rows - 1) * cols + c]};
        int32_t sm = add(s, "Softmax", "loss", NULL, wt, 5.0 * B * wt, in, 1, "t%d/softmax", c, 0);
        int32_t in2[2] = {sm, xin[c]};
        gtop[c] = add(s, "Sub", "loss", NULL, wt, (double)B * wt, in2, 2, "t%d/grad", c, 0);
    }
    /* backward, mirrored: grad of h(r,c) = from above (r+1,c) and from the right (r,c+1) */
    for (int c = cols - 1; c >= 0; c--)
        for (int r = rows - 1; r >= 0; r--) {
            char scope[48];
            snprintf(scope, sizeof scope, "gradients/layer_%d", r);
            int k = r * cols + c;
            int64_t win = width[r] + width[r + 1], w = width[r + 1];
            int32_t g_up = r + 1 < rows ? gsplit[(r + 1) * cols + c] : gtop[c];
            int32_t addn[2] = {g_up, c + 1 < cols ? -(gsplit[k + 1]) - 1 : g_up};
            int32_t gh = add(s, "AddN", scope, NULL, w, (double)B * w, addn, c + 1 < cols ? 2 : 1, "t%d/addn", c, 0);
            int32_t tg[2] = {h[k], gh};
            gz[k] = add(s, "TanhGrad", scope, NULL, w, 3.0 * B * w, tg, 2, "t%d/tanh_grad", c, 0);
            int32_t bg[1] = {gz[k]};
            db[k] = add(s, "BiasAddGrad", scope, NULL, 0, (double)B * w, bg, 1, "t%d/bias_grad", c, 0);
            if (!s->failed) {
                int64_t dims[1] = {w};
                if (dp_graph_add_output_shape(s->g, db[k], DP_DTYPE_FLOAT32, dims, 1, err)) s->failed = 1;
            }
            int32_t dx[2] = {gz[k], wv[4 * r + 1]};
            int32_t gx = add(s, "MatMul", scope, NULL, win, 2.0 * B * win * w, dx, 2, "t%d/matmul_grad_x", c, 0);
            int32_t dwi[2] = {cat[k], gz[k]};
            dw[k] = add(s, "MatMul", scope, NULL, 0, 2.0 * B * win * w, dwi, 2, "t%d/matmul_grad_w", c, 0);
            if (!s->failed) {
                int64_t dims[2] = {win, w};
                if (dp_graph_add_output_shape(s->g, dw[k], DP_DTYPE_FLOAT32, dims, 2, err)) s->failed = 1;
            }
            /* weight gradients are summed as they come (accumulate-n), not held to the end */
            if (c == cols - 1) {
                acc[r] = dw[k];
            } else if (!s->failed) {
                int32_t ai[2] = {acc[r], dw[k]};
                acc[r] = add(s, "Add", scope, NULL, 0, (double)win * w, ai, 2, "t%d/W_acc", c, 0);
                int64_t dims[2] = {win, w};
                if (!s->failed && dp_graph_add_output_shape(s->g, acc[r], DP_DTYPE_FLOAT32, dims, 2, err)) s->failed = 1;
            }
            /* Split gives the grad of the input below (slot 0) and of h(r, c-1) (slot 1) */
            int32_t sp[1] = {gx};
            gsplit[k] = add(s, "Split", scope, NULL, width[r], 0, sp, 1, "t%d/split", c, 0);
            if (!s->failed) {
                int64_t dims[2] = {B, w};
                if (dp_graph_add_output_shape(s->g, gsplit[k], DP_DTYPE_FLOAT32, dims, 2, err)) s->failed = 1;
            }
        }
    /* gradient sums and Adam updates, colocated with the variables */
    for (int r = 0; r < rows && !s->failed; r++) {
        char scope[48], coloc[64];
        snprintf(scope, sizeof scope, "gradients/layer_%d", r);
        int64_t win = width[r] + width[r + 1], w = width[r + 1];
        int32_t sum_w = acc[r];
        int32_t sum_b = add(s, "AddN", scope, NULL, 0, (double)cols * w, NULL, 0, "b_sum", 0, 0);
        for (int c = 0; c < cols && !s->failed; c++)
            if (dp_graph_add_input(s->g, sum_b, db[r * cols + c], 0, err)) s->failed = 1;
        int64_t bd[1] = {w};
        if (!s->failed && dp_graph_add_output_shape(s->g, sum_b, DP_DTYPE_FLOAT32, bd, 1, err)) s->failed = 1;
        snprintf(scope, sizeof scope, "train/layer_%d", r);
        snprintf(coloc, sizeof coloc, "layer_%d/W", r);
        int32_t aw[2] = {wv[4 * r], sum_w};
        int32_t uw = add(s, "ApplyAdam", scope, coloc, 0, 10.0 * win * w, aw, 2, "W_adam", 0, 0);
        if (!s->failed) s->g->ops[uw].temp_bytes = (uint64_t)(win * w * 8); /* two moment slots touched */
        snprintf(coloc, sizeof coloc, "layer_%d/b", r);
        int32_t ab[2] = {wv[4 * r + 2], sum_b};
        add(s, "ApplyAdam", scope, coloc, 0, 10.0 * w, ab, 2, "b_adam", 0, 0);
    }
    if (!s->failed && dp_graph_finalize(s->g, gname, err)) s->failed = 1;
done:
    free(width);
    free(h);
    free(cat);
    free(pre);
    free(gsplit);
    free(gz);
    free(dw);
    free(db);
    free(gtop);
    free(xin);
    free(wv);
    free(acc);
    if (s->failed) {
        dp_graph_free(s->g);
        return NULL;
    }
    return s->g;
}
