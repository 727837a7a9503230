/* tfb: TensorFlow-1.x-style training graphs (forward tape, gradients,
 * optimizer). See tfb.h for the contract. */
#include "zoo/tfb.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

typedef enum rule {
    RULE_PASS = 0,   /* dx = dy (Identity)                              */
    RULE_RESHAPE,    /* Shape(x), Reshape(dy)                           */
    RULE_MATMUL,
    RULE_BMM,
    RULE_BIAS,
    RULE_UNARY_Y,    /* <Type>Grad(y, dy)                               */
    RULE_UNARY_X,    /* derivative op of x, Mul                         */
    RULE_BINARY,
    RULE_ADDN,
    RULE_CONCAT,
    RULE_SPLIT,
    RULE_UNPACK,
    RULE_PACK,
    RULE_TRANSPOSE,
    RULE_REDUCE,
    RULE_SOFTMAX,
    RULE_CONV,
    RULE_POOL,
    RULE_FBN,
    RULE_GATHER,
    RULE_XENT,
    RULE_L2LOSS, /* dx = x * dy (tfb_l2loss) */
} rule;

typedef struct tensor {
    int32_t op;
    int16_t slot;
    int8_t rank;   /* -1: given in bytes (control outputs) */
    int8_t ng;     /* needs a gradient */
    dp_dtype dtype;
    int64_t dims[TFB_MAX_RANK];
} tensor;

typedef struct tape {
    int32_t op;
    int16_t rule, n_in;
    int16_t n_out, aux;
    int32_t in_at; /* into b->tape_in */
    tfb_t out0;    /* outputs are out0 .. out0 + n_out - 1 */
    const char *type;
} tape;

typedef struct contrib {
    tfb_t g;
    tfb_t sparse_idx; /* -1: dense; else the indices of an IndexedSlices */
    int32_t next;
} contrib;

typedef struct var {
    tfb_t var, read;
    int32_t coloc; /* interned colocation group */
    int trainable;
} var;

struct tfb {
    dp_graph *g;
    dp_error err;
    int failed;
    char scope[512];
    tensor *t;
    int64_t n_t, cap_t;
    tape *tp;
    int64_t n_tp, cap_tp;
    tfb_t *tape_in;
    int64_t n_ti, cap_ti;
    contrib *c;
    int64_t n_c, cap_c;
    int32_t *head; /* [cap_head] first contribution of each tensor, -1 none */
    int64_t cap_head;
    var *v;
    int64_t n_v, cap_v;
    int backward_done;
    int32_t coloc_with; /* tfb_colocate: group of the ops created next, -1 none */
    int gate;           /* tfb_gate_gradients */
};

/* ---- plumbing ---------------------------------------------------------- */

static void fail_oom(tfb *b) {
    if (!b->failed) dp_error_set(&b->err, DP_STATUS_NOMEM, "model builder: out of memory");
    b->failed = 1;
}

static void fail_shape(tfb *b, const char *what) {
    if (!b->failed) dp_error_set(&b->err, DP_STATUS_INVALID, "model builder: %s (scope %s)", what, b->scope);
    b->failed = 1;
}

tfb *tfb_init(const char *graph_name, dp_error *err) {
    tfb *b = calloc(1, sizeof *b);
    if (b) b->g = dp_graph_init(graph_name);
    if (!b || !b->g) {
        free(b);
        dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
        return NULL;
    }
    b->coloc_with = -1;
    return b;
}

static void release(tfb *b) {
    free(b->t);
    free(b->tp);
    free(b->tape_in);
    free(b->c);
    free(b->head);
    free(b->v);
    free(b);
}

void tfb_free(tfb *b) {
    if (!b) return;
    dp_graph_free(b->g);
    release(b);
}

dp_graph *tfb_finish(tfb *b, dp_error *err) {
    dp_graph *g = b->g;
    if (b->failed) {
        *err = b->err;
        tfb_free(b);
        return NULL;
    }
    release(b);
    if (dp_graph_finalize(g, g->name, err)) {
        dp_graph_free(g);
        return NULL;
    }
    return g;
}

int tfb_failed(const tfb *b) { return b->failed; }

void tfb_scope(tfb *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->scope, sizeof b->scope, fmt, ap);
    va_end(ap);
}

int32_t tfb_op_of(const tfb *b, tfb_t t) { return t >= 0 && t < b->n_t ? b->t[t].op : -1; }
int tfb_rank(const tfb *b, tfb_t t) { return b->t[t].rank; }

int64_t tfb_dim(const tfb *b, tfb_t t, int axis) {
    const tensor *x = &b->t[t];
    if (axis < 0) axis += x->rank;
    assert(axis >= 0 && axis < x->rank);
    return x->dims[axis];
}

int64_t tfb_numel(const tfb *b, tfb_t t) {
    const tensor *x = &b->t[t];
    int64_t n = 1;
    for (int i = 0; i < x->rank; i++) n *= x->dims[i];
    return n;
}

void tfb_cpu_only(tfb *b) {
    if (b->failed || b->g->n_ops == 0) return;
    b->g->ops[b->g->n_ops - 1].device = (dp_devcon){DP_DEVCON_CPU, -1};
}

/* Creates an op named "<scope>/<type>_<index>" with inputs; outputs follow
 * with new_out. Returns the op index, -1 after a failure. */
static int32_t new_op_in(tfb *b, const char *scope, const char *type, int n_in, const tfb_t *in, int32_t coloc,
                         double flops) {
    if (b->failed) return -1;
    char name[640];
    snprintf(name, sizeof name, "%s/%s_%d", scope, type, b->g->n_ops);
    const char *cl = coloc >= 0 ? dp_graph_str(b->g, coloc) : NULL;
    int32_t op = dp_graph_add_op(b->g, name, type, scope, cl, &b->err);
    if (op < 0) {
        b->failed = 1;
        return -1;
    }
    b->g->ops[op].flops = flops;
    for (int k = 0; k < n_in; k++) {
        assert(in[k] >= 0 && in[k] < b->n_t);
        const tensor *x = &b->t[in[k]];
        if (dp_graph_add_input(b->g, op, x->op, x->slot, &b->err)) {
            b->failed = 1;
            return -1;
        }
    }
    return op;
}

static int32_t new_op(tfb *b, const char *type, int n_in, const tfb_t *in, double flops) {
    return new_op_in(b, b->scope, type, n_in, in, b->coloc_with, flops);
}

static tfb_t new_tensor(tfb *b, int32_t op, dp_dtype dtype, int rank, const int64_t *dims_in) {
    if (b->failed) return -1;
    int64_t dims[TFB_MAX_RANK]; /* dims_in may point into b->t, which may move */
    if (rank > TFB_MAX_RANK) {
        fail_shape(b, "rank over 4");
        return -1;
    }
    for (int i = 0; i < rank; i++) dims[i] = dims_in[i];
    if (dp_reserve((void **)&b->t, &b->cap_t, b->n_t + 1, sizeof(tensor))) {
        fail_oom(b);
        return -1;
    }
    tensor *x = &b->t[b->n_t];
    memset(x, 0, sizeof *x);
    x->op = op;
    x->slot = (int16_t)b->g->ops[op].n_outputs;
    x->rank = (int8_t)rank;
    x->dtype = dtype;
    for (int i = 0; i < rank; i++) x->dims[i] = dims[i];
    dp_status st = rank >= 0 ? dp_graph_add_output_shape(b->g, op, dtype, dims, rank, &b->err)
                             : dp_graph_add_output_bytes(b->g, op, 0, &b->err);
    if (st) {
        b->failed = 1;
        return -1;
    }
    return (tfb_t)b->n_t++;
}

/* An op with one output shaped like tensor `like`. */
static tfb_t op_like(tfb *b, const char *type, int n_in, const tfb_t *in, tfb_t like, double flops) {
    int32_t op = new_op(b, type, n_in, in, flops);
    if (op < 0) return -1;
    return new_tensor(b, op, b->t[like].dtype, b->t[like].rank, b->t[like].dims);
}

/* An op with one output of the given shape. */
static tfb_t op_shape(tfb *b, const char *type, int n_in, const tfb_t *in, dp_dtype dtype, int rank,
                      const int64_t *dims, double flops) {
    int32_t op = new_op(b, type, n_in, in, flops);
    if (op < 0) return -1;
    return new_tensor(b, op, dtype, rank, dims);
}

static tfb_t shape_of(tfb *b, tfb_t x) {
    int64_t r = b->t[x].rank;
    return op_shape(b, "Shape", 1, &x, DP_DTYPE_INT32, 1, &r, 0);
}

static tfb_t scalar_const(tfb *b) { return op_shape(b, "Const", 0, NULL, DP_DTYPE_FLOAT32, 0, NULL, 0); }
static tfb_t int_const(tfb *b, int64_t n) { return op_shape(b, "Const", 0, NULL, DP_DTYPE_INT32, 1, &n, 0); }

static int any_ng(const tfb *b, int n, const tfb_t *in) {
    for (int k = 0; k < n; k++)
        if (b->t[in[k]].ng) return 1;
    return 0;
}

/* Records op (whose outputs are out0..out0+n_out-1) on the tape when any
 * input needs a gradient, and marks its outputs so. */
static void record(tfb *b, int32_t op, rule r, int n_in, const tfb_t *in, tfb_t out0, int n_out, const char *type,
                   int aux) {
    if (b->failed || !any_ng(b, n_in, in)) return;
    if (dp_reserve((void **)&b->tp, &b->cap_tp, b->n_tp + 1, sizeof(tape)) ||
        dp_reserve((void **)&b->tape_in, &b->cap_ti, b->n_ti + n_in, sizeof(tfb_t))) {
        fail_oom(b);
        return;
    }
    tape *e = &b->tp[b->n_tp++];
    e->op = op;
    e->rule = (int16_t)r;
    e->n_in = (int16_t)n_in;
    e->n_out = (int16_t)n_out;
    e->aux = (int16_t)aux;
    e->in_at = (int32_t)b->n_ti;
    e->out0 = out0;
    e->type = type;
    memcpy(b->tape_in + b->n_ti, in, (size_t)n_in * sizeof(tfb_t));
    b->n_ti += n_in;
    for (int k = 0; k < n_out; k++) b->t[out0 + k].ng = 1;
}

/* ---- sources ------------------------------------------------------------ */

static tfb_t make_variable(tfb *b, const char *name, int rank, const int64_t *dims, int trainable) {
    if (b->failed) return -1;
    char full[640];
    snprintf(full, sizeof full, "%s/%s", b->scope, name);
    int32_t coloc = b->coloc_with >= 0 ? b->coloc_with : dp_graph_intern(b->g, full);
    if (coloc < 0) {
        fail_oom(b);
        return -1;
    }
    int32_t op = new_op_in(b, full, "VariableV2", 0, NULL, coloc, 0);
    if (op < 0) return -1;
    tfb_t vt = new_tensor(b, op, DP_DTYPE_FLOAT32, rank, dims);
    if (vt < 0) return -1;
    b->g->ops[op].param_bytes = (uint64_t)tfb_numel(b, vt) * 4;
    int32_t rop = new_op_in(b, full, "Identity", 1, &vt, coloc, 0);
    if (rop < 0) return -1;
    tfb_t read = new_tensor(b, rop, DP_DTYPE_FLOAT32, rank, dims);
    if (read < 0) return -1;
    if (dp_reserve((void **)&b->v, &b->cap_v, b->n_v + 1, sizeof(var))) {
        fail_oom(b);
        return -1;
    }
    b->v[b->n_v++] = (var){vt, read, coloc, trainable};
    b->t[read].ng = (int8_t)trainable;
    return read;
}

tfb_t tfb_variable(tfb *b, const char *name, int rank, const int64_t *dims) {
    return make_variable(b, name, rank, dims, 1);
}

tfb_t tfb_state(tfb *b, const char *name, int rank, const int64_t *dims) {
    return make_variable(b, name, rank, dims, 0);
}

tfb_t tfb_const(tfb *b, int rank, const int64_t *dims) {
    return op_shape(b, "Const", 0, NULL, DP_DTYPE_FLOAT32, rank, dims, 0);
}

tfb_t tfb_input(tfb *b, const char *name, dp_dtype dtype, int rank, const int64_t *dims) {
    char sc[640];
    snprintf(sc, sizeof sc, "%s/%s", b->scope, name);
    int32_t op = new_op_in(b, sc, "IteratorGetNext", 0, NULL, -1, 0);
    if (op < 0) return -1;
    tfb_cpu_only(b);
    return new_tensor(b, op, dtype, rank, dims);
}

tfb_t tfb_aux(tfb *b, const char *type, int n_in, const tfb_t *in, dp_dtype dtype, int rank, const int64_t *dims,
              double flops_per_elem) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return op_shape(b, type, n_in, in, dtype, rank, dims, flops_per_elem * (double)n);
}

/* ---- forward ops --------------------------------------------------------- */

tfb_t tfb_matmul(tfb *b, tfb_t x, tfb_t w, int trans_b) {
    if (b->failed) return -1;
    const tensor *X = &b->t[x], *W = &b->t[w];
    if (X->rank != 2 || W->rank != 2) {
        fail_shape(b, "MatMul needs rank-2 operands");
        return -1;
    }
    int64_t M = X->dims[0], K = X->dims[1];
    int64_t Kw = trans_b ? W->dims[1] : W->dims[0], N = trans_b ? W->dims[0] : W->dims[1];
    if (K != Kw) {
        fail_shape(b, "MatMul inner dimensions differ");
        return -1;
    }
    tfb_t in[2] = {x, w};
    int64_t d[2] = {M, N};
    tfb_t y = op_shape(b, "MatMul", 2, in, DP_DTYPE_FLOAT32, 2, d, 2.0 * M * K * N);
    if (y >= 0) record(b, b->t[y].op, RULE_MATMUL, 2, in, y, 1, NULL, trans_b);
    return y;
}

tfb_t tfb_batch_matmul(tfb *b, tfb_t x, tfb_t y, int trans_b) {
    if (b->failed) return -1;
    const tensor *X = &b->t[x], *Y = &b->t[y];
    int r = X->rank;
    if (r < 3 || Y->rank != r) {
        fail_shape(b, "BatchMatMul needs operands of equal rank >= 3");
        return -1;
    }
    int64_t M = X->dims[r - 2], K = X->dims[r - 1];
    int64_t Ky = trans_b ? Y->dims[r - 1] : Y->dims[r - 2], N = trans_b ? Y->dims[r - 2] : Y->dims[r - 1];
    if (K != Ky) {
        fail_shape(b, "BatchMatMul inner dimensions differ");
        return -1;
    }
    int64_t d[TFB_MAX_RANK], batch = 1;
    for (int i = 0; i < r - 2; i++) batch *= (d[i] = X->dims[i]);
    d[r - 2] = M;
    d[r - 1] = N;
    tfb_t in[2] = {x, y};
    tfb_t z = op_shape(b, "BatchMatMul", 2, in, DP_DTYPE_FLOAT32, r, d, 2.0 * batch * M * K * N);
    if (z >= 0) record(b, b->t[z].op, RULE_BMM, 2, in, z, 1, NULL, trans_b);
    return z;
}

tfb_t tfb_bias_add(tfb *b, tfb_t x, tfb_t bias) {
    if (b->failed) return -1;
    tfb_t in[2] = {x, bias};
    tfb_t y = op_like(b, "BiasAdd", 2, in, x, (double)tfb_numel(b, x));
    if (y >= 0) record(b, b->t[y].op, RULE_BIAS, 2, in, y, 1, NULL, 0);
    return y;
}

static const char *unary_grad_type(const char *type) {
    if (!strcmp(type, "Relu")) return "ReluGrad";
    if (!strcmp(type, "Tanh")) return "TanhGrad";
    if (!strcmp(type, "Sigmoid")) return "SigmoidGrad";
    if (!strcmp(type, "Rsqrt")) return "RsqrtGrad";
    if (!strcmp(type, "Sqrt")) return "SqrtGrad";
    return NULL;
}

tfb_t tfb_unary(tfb *b, const char *type, tfb_t x) {
    if (b->failed) return -1;
    double per = !strcmp(type, "Tanh") || !strcmp(type, "Sigmoid") || !strcmp(type, "Exp") || !strcmp(type, "Erf")
                     ? 4.0
                     : 1.0;
    tfb_t y = op_like(b, type, 1, &x, x, per * (double)tfb_numel(b, x));
    if (y < 0) return -1;
    const char *gt = unary_grad_type(type);
    record(b, b->t[y].op, gt ? RULE_UNARY_Y : RULE_UNARY_X, 1, &x, y, 1, type, 0);
    return y;
}

tfb_t tfb_binary(tfb *b, const char *type, tfb_t x, tfb_t y) {
    if (b->failed) return -1;
    tfb_t big = tfb_numel(b, x) >= tfb_numel(b, y) ? x : y;
    tfb_t in[2] = {x, y};
    tfb_t z = op_like(b, type, 2, in, big, (double)tfb_numel(b, big));
    if (z >= 0) record(b, b->t[z].op, RULE_BINARY, 2, in, z, 1, type, 0);
    return z;
}

tfb_t tfb_addn(tfb *b, int n, const tfb_t *xs) {
    if (b->failed) return -1;
    if (n == 1) return xs[0];
    tfb_t y = op_like(b, "AddN", n, xs, xs[0], (double)(n - 1) * (double)tfb_numel(b, xs[0]));
    if (y >= 0) record(b, b->t[y].op, RULE_ADDN, n, xs, y, 1, NULL, 0);
    return y;
}

static int norm_axis(const tensor *x, int axis) { return axis < 0 ? axis + x->rank : axis; }

tfb_t tfb_concat(tfb *b, int n, const tfb_t *xs, int axis) {
    if (b->failed) return -1;
    if (n == 1) return xs[0];
    tensor first = b->t[xs[0]];
    int ax = norm_axis(&first, axis);
    int64_t sum = 0;
    for (int k = 0; k < n; k++) sum += b->t[xs[k]].dims[ax];
    tfb_t axis_c = int_const(b, 1);
    if (axis_c < 0) return -1;
    tfb_t *in = malloc(((size_t)n + 1) * sizeof(tfb_t));
    if (!in) {
        fail_oom(b);
        return -1;
    }
    memcpy(in, xs, (size_t)n * sizeof(tfb_t));
    in[n] = axis_c;
    first.dims[ax] = sum;
    tfb_t y = op_shape(b, "ConcatV2", n + 1, in, first.dtype, first.rank, first.dims, 0);
    if (y >= 0) record(b, b->t[y].op, RULE_CONCAT, n, xs, y, 1, NULL, ax);
    free(in);
    return y;
}

void tfb_split(tfb *b, tfb_t x, int n, int axis, tfb_t *out) {
    for (int k = 0; k < n; k++) out[k] = -1;
    if (b->failed) return;
    tensor s = b->t[x];
    int ax = norm_axis(&s, axis);
    if (s.dims[ax] % n) {
        fail_shape(b, "Split: dimension not divisible");
        return;
    }
    s.dims[ax] /= n;
    tfb_t dim = int_const(b, 1);
    tfb_t in[2] = {dim, x};
    int32_t op = new_op(b, "Split", 2, in, 0);
    if (op < 0) return;
    for (int k = 0; k < n; k++) out[k] = new_tensor(b, op, s.dtype, s.rank, s.dims);
    if (!b->failed) record(b, op, RULE_SPLIT, 1, &x, out[0], n, NULL, ax);
}

void tfb_unpack(tfb *b, tfb_t x, int axis, tfb_t *out) {
    if (b->failed) return;
    tensor s = b->t[x];
    int ax = norm_axis(&s, axis);
    int n = (int)s.dims[ax];
    for (int i = ax; i < s.rank - 1; i++) s.dims[i] = s.dims[i + 1];
    s.rank--;
    int32_t op = new_op(b, "Unpack", 1, &x, 0);
    if (op < 0) return;
    for (int k = 0; k < n; k++) out[k] = new_tensor(b, op, s.dtype, s.rank, s.dims);
    if (!b->failed) record(b, op, RULE_UNPACK, 1, &x, out[0], n, NULL, ax);
}

tfb_t tfb_pack(tfb *b, int n, const tfb_t *xs, int axis) {
    if (b->failed) return -1;
    tensor s = b->t[xs[0]];
    int ax = axis < 0 ? axis + s.rank + 1 : axis;
    for (int i = s.rank; i > ax; i--) s.dims[i] = s.dims[i - 1];
    s.dims[ax] = n;
    s.rank++;
    tfb_t y = op_shape(b, "Pack", n, xs, s.dtype, s.rank, s.dims, 0);
    if (y >= 0) record(b, b->t[y].op, RULE_PACK, n, xs, y, 1, NULL, ax);
    return y;
}

tfb_t tfb_reshape(tfb *b, tfb_t x, int rank, const int64_t *dims) {
    if (b->failed) return -1;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    if (n != tfb_numel(b, x)) {
        fail_shape(b, "Reshape changes the element count");
        return -1;
    }
    tfb_t shp = int_const(b, rank);
    tfb_t in[2] = {x, shp};
    tfb_t y = op_shape(b, "Reshape", 2, in, b->t[x].dtype, rank, dims, 0);
    if (y >= 0) record(b, b->t[y].op, RULE_RESHAPE, 1, &x, y, 1, NULL, 0);
    return y;
}

tfb_t tfb_transpose(tfb *b, tfb_t x, const int *perm) {
    if (b->failed) return -1;
    tensor s = b->t[x];
    int64_t d[TFB_MAX_RANK];
    for (int i = 0; i < s.rank; i++) d[i] = s.dims[perm[i]];
    tfb_t pc = int_const(b, s.rank);
    tfb_t in[2] = {x, pc};
    tfb_t y = op_shape(b, "Transpose", 2, in, s.dtype, s.rank, d, (double)tfb_numel(b, x));
    if (y >= 0) record(b, b->t[y].op, RULE_TRANSPOSE, 1, &x, y, 1, NULL, 0);
    return y;
}

tfb_t tfb_reduce(tfb *b, const char *type, tfb_t x, int axis, int keepdims) {
    if (b->failed) return -1;
    tensor s = b->t[x];
    int ax = norm_axis(&s, axis);
    if (keepdims) {
        s.dims[ax] = 1;
    } else {
        for (int i = ax; i < s.rank - 1; i++) s.dims[i] = s.dims[i + 1];
        s.rank--;
    }
    tfb_t ic = int_const(b, 1);
    tfb_t in[2] = {x, ic};
    tfb_t y = op_shape(b, type, 2, in, s.dtype, s.rank, s.dims, (double)tfb_numel(b, x));
    if (y >= 0) record(b, b->t[y].op, RULE_REDUCE, 1, &x, y, 1, type, 0);
    return y;
}

tfb_t tfb_softmax(tfb *b, tfb_t x) {
    if (b->failed) return -1;
    tfb_t y = op_like(b, "Softmax", 1, &x, x, 5.0 * (double)tfb_numel(b, x));
    if (y >= 0) record(b, b->t[y].op, RULE_SOFTMAX, 1, &x, y, 1, NULL, 0);
    return y;
}

static int64_t conv_out(int64_t in, int k, int stride, int same) {
    return same ? (in + stride - 1) / stride : (in - k) / stride + 1;
}

tfb_t tfb_conv2d(tfb *b, tfb_t x, tfb_t filter, int stride, int same) {
    if (b->failed) return -1;
    const tensor *X = &b->t[x], *F = &b->t[filter];
    if (X->rank != 4 || F->rank != 4 || X->dims[3] != F->dims[2]) {
        fail_shape(b, "Conv2D: input channels do not match the filter");
        return -1;
    }
    int64_t d[4] = {X->dims[0], conv_out(X->dims[1], (int)F->dims[0], stride, same),
                    conv_out(X->dims[2], (int)F->dims[1], stride, same), F->dims[3]};
    if (d[1] <= 0 || d[2] <= 0) {
        fail_shape(b, "Conv2D: window larger than the input");
        return -1;
    }
    double flops = 2.0 * d[0] * d[1] * d[2] * d[3] * F->dims[0] * F->dims[1] * F->dims[2];
    tfb_t in[2] = {x, filter};
    tfb_t y = op_shape(b, "Conv2D", 2, in, DP_DTYPE_FLOAT32, 4, d, flops);
    if (y >= 0) record(b, b->t[y].op, RULE_CONV, 2, in, y, 1, NULL, 0);
    return y;
}

tfb_t tfb_pool(tfb *b, const char *type, tfb_t x, int k, int stride, int same) {
    if (b->failed) return -1;
    const tensor *X = &b->t[x];
    int64_t d[4] = {X->dims[0], conv_out(X->dims[1], k, stride, same), conv_out(X->dims[2], k, stride, same),
                    X->dims[3]};
    if (d[1] <= 0 || d[2] <= 0) {
        fail_shape(b, "pooling window larger than the input");
        return -1;
    }
    tfb_t y = op_shape(b, type, 1, &x, DP_DTYPE_FLOAT32, 4, d, (double)d[0] * d[1] * d[2] * d[3] * k * k);
    if (y >= 0) record(b, b->t[y].op, RULE_POOL, 1, &x, y, 1, type, k);
    return y;
}

tfb_t tfb_fused_batch_norm(tfb *b, tfb_t x, tfb_t scale, tfb_t offset) {
    if (b->failed) return -1;
    tfb_t in[3] = {x, scale, offset};
    const tensor X = b->t[x];
    int32_t op = new_op(b, "FusedBatchNorm", 3, in, 8.0 * (double)tfb_numel(b, x));
    if (op < 0) return -1;
    int64_t c = X.dims[X.rank - 1];
    tfb_t y = new_tensor(b, op, DP_DTYPE_FLOAT32, X.rank, X.dims);
    for (int k = 0; k < 4; k++) new_tensor(b, op, DP_DTYPE_FLOAT32, 1, &c); /* mean, var, saved mean, saved var */
    if (!b->failed) record(b, op, RULE_FBN, 3, in, y, 5, NULL, 0);
    return y;
}

tfb_t tfb_gather(tfb *b, tfb_t params, tfb_t ids) {
    if (b->failed) return -1;
    const tensor *P = &b->t[params], *I = &b->t[ids];
    int64_t d[TFB_MAX_RANK];
    int r = I->rank + 1;
    if (r > TFB_MAX_RANK) {
        fail_shape(b, "Gather: ids rank too large");
        return -1;
    }
    for (int i = 0; i < I->rank; i++) d[i] = I->dims[i];
    d[I->rank] = P->dims[1];
    tfb_t axis = int_const(b, 1);
    tfb_t in[3] = {params, ids, axis};
    tfb_t y = op_shape(b, "GatherV2", 3, in, DP_DTYPE_FLOAT32, r, d, 0);
    if (y >= 0) record(b, b->t[y].op, RULE_GATHER, 2, in, y, 1, NULL, 0);
    return y;
}

tfb_t tfb_xent(tfb *b, tfb_t logits, tfb_t labels) {
    if (b->failed) return -1;
    const tensor L = b->t[logits];
    tfb_t in[2] = {logits, labels};
    int32_t op = new_op(b, "SparseSoftmaxCrossEntropyWithLogits", 2, in, 6.0 * (double)tfb_numel(b, logits));
    if (op < 0) return -1;
    tfb_t loss = new_tensor(b, op, DP_DTYPE_FLOAT32, 1, L.dims);
    new_tensor(b, op, DP_DTYPE_FLOAT32, 2, L.dims); /* backprop */
    if (!b->failed) record(b, op, RULE_XENT, 1, in, loss, 2, NULL, 0);
    return loss;
}

tfb_t tfb_dense(tfb *b, tfb_t x, int64_t out, const char *w_name, const char *b_name) {
    if (b->failed) return -1;
    int64_t wd[2] = {tfb_dim(b, x, 1), out}, bd[1] = {out};
    tfb_t y = tfb_matmul(b, x, tfb_variable(b, w_name, 2, wd), 0);
    return b_name ? tfb_bias_add(b, y, tfb_variable(b, b_name, 1, bd)) : y;
}

tfb_t tfb_dropout(tfb *b, tfb_t x) {
    if (b->failed) return -1;
    const tensor X = b->t[x];
    tfb_t keep = scalar_const(b);
    tfb_t shp = shape_of(b, x);
    tfb_t ru = tfb_aux(b, "RandomUniform", 1, &shp, DP_DTYPE_FLOAT32, X.rank, X.dims, 2.0);
    tfb_t mx = scalar_const(b), mn = scalar_const(b);
    tfb_t in2[2] = {mx, mn};
    tfb_t range = tfb_aux(b, "Sub", 2, in2, DP_DTYPE_FLOAT32, 0, NULL, 1);
    tfb_t in3[2] = {ru, range};
    tfb_t scaled = tfb_aux(b, "Mul", 2, in3, DP_DTYPE_FLOAT32, X.rank, X.dims, 1);
    tfb_t in4[2] = {scaled, mn};
    tfb_t uni = tfb_aux(b, "Add", 2, in4, DP_DTYPE_FLOAT32, X.rank, X.dims, 1);
    tfb_t in5[2] = {keep, uni};
    tfb_t rt = tfb_aux(b, "Add", 2, in5, DP_DTYPE_FLOAT32, X.rank, X.dims, 1);
    tfb_t mask = tfb_aux(b, "Floor", 1, &rt, DP_DTYPE_FLOAT32, X.rank, X.dims, 1);
    tfb_t div = tfb_binary(b, "RealDiv", x, keep);
    return tfb_binary(b, "Mul", div, mask);
}

/* ---- gradients ------------------------------------------------------------ */

static void add_contrib(tfb *b, tfb_t t, tfb_t g, tfb_t sparse_idx) {
    if (b->failed || g < 0 || !b->t[t].ng) return;
    assert(t < b->cap_head);
    if (dp_reserve((void **)&b->c, &b->cap_c, b->n_c + 1, sizeof(contrib))) {
        fail_oom(b);
        return;
    }
    b->c[b->n_c] = (contrib){g, sparse_idx, b->head[t]};
    b->head[t] = (int32_t)b->n_c++;
}

/* The gradient of t: its single contribution, an AddN of several (sparse
 * ones concatenated, as TensorFlow aggregates IndexedSlices), or -1. */
static tfb_t aggregate(tfb *b, tfb_t t, tfb_t *sparse_idx) {
    if (sparse_idx) *sparse_idx = -1;
    int32_t h = b->head[t];
    if (h < 0 || b->failed) return -1;
    if (b->c[h].next < 0) {
        if (sparse_idx) *sparse_idx = b->c[h].sparse_idx;
        if (b->c[h].sparse_idx >= 0 && !sparse_idx) fail_shape(b, "sparse gradient where a dense one is needed");
        return b->c[h].g;
    }
    int n = 0, n_sparse = 0;
    for (int32_t k = h; k >= 0; k = b->c[k].next, n++) n_sparse += b->c[k].sparse_idx >= 0;
    tfb_t *vals = malloc((size_t)n * 2 * sizeof(tfb_t));
    if (!vals) {
        fail_oom(b);
        return -1;
    }
    tfb_t *idx = vals + n;
    int i = n;
    for (int32_t k = h; k >= 0; k = b->c[k].next) { /* oldest first */
        --i;
        vals[i] = b->c[k].g;
        idx[i] = b->c[k].sparse_idx;
    }
    tfb_t g;
    if (n_sparse == n && sparse_idx) {
        tfb_t tmp_v = tfb_concat(b, n, vals, 0), tmp_i = tfb_concat(b, n, idx, 0);
        g = tmp_v;
        *sparse_idx = tmp_i;
    } else if (n_sparse) {
        g = -1;
        fail_shape(b, "mixed sparse and dense gradients");
    } else {
        g = op_like(b, "AddN", n, vals, vals[0], (double)(n - 1) * (double)tfb_numel(b, vals[0]));
        if (g >= 0) b->c[h] = (contrib){g, -1, -1}; /* built once: tfb_gradient, then tfb_optimizer */
    }
    free(vals);
    return g;
}

/* Sum(dy over broadcast axes) then Reshape to x's shape: the TensorFlow
 * gradient of one operand of a broadcasting binary op. */
static tfb_t unbroadcast(tfb *b, tfb_t dy, tfb_t x, tfb_t rx, tfb_t shape_x, int neg) {
    tfb_t in[2] = {dy, rx};
    tfb_t s = op_like(b, "Sum", 2, in, x, (double)tfb_numel(b, dy));
    if (neg) s = op_like(b, "Neg", 1, &s, x, (double)tfb_numel(b, x));
    tfb_t in2[2] = {s, shape_x};
    return op_like(b, "Reshape", 2, in2, x, 0);
}

static void grad_binary(tfb *b, const tape *e, tfb_t dy) {
    tfb_t x = b->tape_in[e->in_at], y = b->tape_in[e->in_at + 1], z = e->out0;
    tfb_t sx = shape_of(b, x), sy = shape_of(b, y);
    int64_t r2 = 0;
    tfb_t in[2] = {sx, sy};
    int32_t op = new_op(b, "BroadcastGradientArgs", 2, in, 0);
    if (op < 0) return;
    tfb_t rx = new_tensor(b, op, DP_DTYPE_INT32, 1, &r2), ry = new_tensor(b, op, DP_DTYPE_INT32, 1, &r2);
    const char *t = e->type;
    double nz = (double)tfb_numel(b, z);
    tfb_t gx = dy, gy = dy;
    int neg_y = 0;
    if (!strcmp(t, "Mul")) {
        tfb_t a[2] = {dy, y}, c[2] = {x, dy};
        gx = op_like(b, "Mul", 2, a, z, nz);
        gy = op_like(b, "Mul", 2, c, z, nz);
    } else if (!strcmp(t, "RealDiv")) {
        tfb_t a[2] = {dy, y};
        gx = op_like(b, "RealDiv", 2, a, z, nz);
        tfb_t nx = op_like(b, "Neg", 1, &x, x, (double)tfb_numel(b, x));
        tfb_t a2[2] = {nx, y};
        tfb_t d1 = op_like(b, "RealDiv", 2, a2, z, nz);
        tfb_t a3[2] = {d1, y};
        tfb_t d2 = op_like(b, "RealDiv", 2, a3, z, nz);
        tfb_t a4[2] = {dy, d2};
        gy = op_like(b, "Mul", 2, a4, z, nz);
    } else if (!strcmp(t, "SquaredDifference")) {
        tfb_t c2 = scalar_const(b);
        tfb_t a[2] = {x, y};
        tfb_t diff = op_like(b, "Sub", 2, a, z, nz);
        tfb_t a2[2] = {c2, diff};
        tfb_t sc = op_like(b, "Mul", 2, a2, z, nz);
        tfb_t a3[2] = {dy, sc};
        gx = op_like(b, "Mul", 2, a3, z, nz);
        gy = gx;
        neg_y = 1;
    } else if (!strcmp(t, "Maximum") || !strcmp(t, "Minimum")) {
        tfb_t a[2] = {x, y};
        tfb_t mask = tfb_aux(b, !strcmp(t, "Maximum") ? "GreaterEqual" : "LessEqual", 2, a, DP_DTYPE_BOOL,
                             b->t[z].rank, b->t[z].dims, 1);
        tfb_t zeros = op_like(b, "ZerosLike", 1, &dy, z, nz);
        tfb_t a2[3] = {mask, dy, zeros}, a3[3] = {mask, zeros, dy};
        gx = op_like(b, "Select", 3, a2, z, nz);
        gy = op_like(b, "Select", 3, a3, z, nz);
    } else if (!strcmp(t, "Sub")) {
        neg_y = 1;
    } /* Add: dy to both */
    tfb_t dx = unbroadcast(b, gx, x, rx, sx, 0);
    tfb_t dyy = unbroadcast(b, gy, y, ry, sy, neg_y);
    add_contrib(b, x, dx, -1);
    add_contrib(b, y, dyy, -1);
}

static void grad_reduce(tfb *b, const tape *e, tfb_t dy) {
    tfb_t x = b->tape_in[e->in_at];
    /* reduced_shape bookkeeping of _SumGrad: Shape, Size, Add, FloorMod,
     * Range, Fill, DynamicStitch, Maximum, FloorDiv */
    tfb_t sx = shape_of(b, x);
    int64_t r = b->t[x].rank, one = 1;
    tfb_t sz = op_shape(b, "Size", 1, &sx, DP_DTYPE_INT32, 0, NULL, 0);
    tfb_t ic = int_const(b, 1);
    tfb_t a[2] = {ic, sz};
    tfb_t add = op_shape(b, "Add", 2, a, DP_DTYPE_INT32, 1, &one, 0);
    tfb_t fm = op_shape(b, "FloorMod", 2, a, DP_DTYPE_INT32, 1, &one, 0);
    (void)add;
    tfb_t rg = op_shape(b, "Range", 1, &sz, DP_DTYPE_INT32, 1, &r, 0);
    tfb_t fl = op_shape(b, "Fill", 1, &fm, DP_DTYPE_INT32, 1, &one, 0);
    tfb_t a2[4] = {rg, fm, sx, fl};
    tfb_t st = op_shape(b, "DynamicStitch", 4, a2, DP_DTYPE_INT32, 1, &r, 0);
    tfb_t a3[2] = {st, ic};
    tfb_t mx = op_shape(b, "Maximum", 2, a3, DP_DTYPE_INT32, 1, &r, 0);
    tfb_t a4[2] = {sx, mx};
    tfb_t fd = op_shape(b, "FloorDiv", 2, a4, DP_DTYPE_INT32, 1, &r, 0);
    tfb_t a5[2] = {dy, st};
    tfb_t rs = op_shape(b, "Reshape", 2, a5, DP_DTYPE_FLOAT32, b->t[dy].rank, b->t[dy].dims, 0);
    tfb_t a6[2] = {rs, fd};
    tfb_t g = op_like(b, "Tile", 2, a6, x, (double)tfb_numel(b, x));
    if (!strcmp(e->type, "Mean")) {
        /* _MeanGrad: divide by the reduced count (Shape, Prod x2, Maximum, FloorDiv, Cast) */
        tfb_t sy = shape_of(b, e->out0);
        tfb_t p1 = op_shape(b, "Prod", 1, &sx, DP_DTYPE_INT32, 0, NULL, 0);
        tfb_t p2 = op_shape(b, "Prod", 1, &sy, DP_DTYPE_INT32, 0, NULL, 0);
        tfb_t a7[2] = {p2, ic};
        tfb_t m2 = op_shape(b, "Maximum", 2, a7, DP_DTYPE_INT32, 0, NULL, 0);
        tfb_t a8[2] = {p1, m2};
        tfb_t q = op_shape(b, "FloorDiv", 2, a8, DP_DTYPE_INT32, 0, NULL, 0);
        tfb_t cnt = op_shape(b, "Cast", 1, &q, DP_DTYPE_FLOAT32, 0, NULL, 0);
        tfb_t a9[2] = {g, cnt};
        g = op_like(b, "RealDiv", 2, a9, x, (double)tfb_numel(b, x));
    }
    add_contrib(b, x, g, -1);
}

/* ConcatV2: ShapeN of the inputs, ConcatOffset, a Slice of dy per input. */
static void grad_concat(tfb *b, const tape *e, tfb_t dy) {
    const tfb_t *in = b->tape_in + e->in_at;
    tfb_t x = in[0];
    tfb_t ax = int_const(b, 1);
    int32_t op = new_op(b, "ShapeN", e->n_in, in, 0);
    if (op < 0) return;
    int64_t r = b->t[x].rank;
    tfb_t first = -1;
    for (int k = 0; k < e->n_in; k++) {
        tfb_t s = new_tensor(b, op, DP_DTYPE_INT32, 1, &r);
        if (k == 0) first = s;
    }
    tfb_t *a = malloc(((size_t)e->n_in + 1) * sizeof(tfb_t));
    if (!a) {
        fail_oom(b);
        return;
    }
    a[0] = ax;
    for (int k = 0; k < e->n_in; k++) a[k + 1] = first + k;
    int32_t oop = new_op(b, "ConcatOffset", e->n_in + 1, a, 0);
    free(a);
    if (oop < 0) return;
    tfb_t off0 = -1;
    for (int k = 0; k < e->n_in; k++) {
        tfb_t s = new_tensor(b, oop, DP_DTYPE_INT32, 1, &r);
        if (k == 0) off0 = s;
    }
    for (int k = 0; k < e->n_in && !b->failed; k++) {
        tfb_t sa[3] = {dy, off0 + k, first + k};
        add_contrib(b, in[k], op_like(b, "Slice", 3, sa, in[k], (double)tfb_numel(b, in[k])), -1);
    }
}

/* Softmax: (dy - sum(dy * y, last axis)) * y. */
static void grad_softmax(tfb *b, const tape *e, tfb_t dy) {
    tfb_t x = b->tape_in[e->in_at], y = e->out0;
    double n = (double)tfb_numel(b, y);
    tfb_t a[2] = {dy, y};
    tfb_t m = op_like(b, "Mul", 2, a, y, n);
    tfb_t ic = int_const(b, 1);
    tensor s = b->t[y];
    s.dims[s.rank - 1] = 1;
    tfb_t a2[2] = {m, ic};
    tfb_t sum = op_shape(b, "Sum", 2, a2, DP_DTYPE_FLOAT32, s.rank, s.dims, n);
    tfb_t a3[2] = {dy, sum};
    tfb_t sub = op_like(b, "Sub", 2, a3, y, n);
    tfb_t a4[2] = {sub, y};
    add_contrib(b, x, op_like(b, "Mul", 2, a4, y, n), -1);
}

/* Conv2D: ShapeN of input and filter, Conv2DBackpropInput and Conv2DBackpropFilter. */
static void grad_conv(tfb *b, const tape *e, tfb_t dy) {
    const tfb_t *in = b->tape_in + e->in_at;
    tfb_t x = in[0], f = in[1];
    double fl = b->g->ops[e->op].flops;
    int32_t op = new_op(b, "ShapeN", 2, in, 0);
    if (op < 0) return;
    int64_t four = 4;
    tfb_t s0 = new_tensor(b, op, DP_DTYPE_INT32, 1, &four);
    tfb_t s1 = new_tensor(b, op, DP_DTYPE_INT32, 1, &four);
    tfb_t a[3] = {s0, f, dy}, c[3] = {x, s1, dy};
    add_contrib(b, x, op_like(b, "Conv2DBackpropInput", 3, a, x, fl), -1);
    add_contrib(b, f, op_like(b, "Conv2DBackpropFilter", 3, c, f, fl), -1);
}

/* MaxPool (MaxPoolGrad of x, y, dy) and AvgPool (AvgPoolGrad of the shape and dy). */
static void grad_pool(tfb *b, const tape *e, tfb_t dy) {
    tfb_t x = b->tape_in[e->in_at];
    double n = (double)tfb_numel(b, x) * e->aux * e->aux;
    if (!strcmp(e->type, "MaxPool")) {
        tfb_t a[3] = {x, e->out0, dy};
        add_contrib(b, x, op_like(b, "MaxPoolGrad", 3, a, x, n), -1);
    } else {
        tfb_t sx = shape_of(b, x);
        tfb_t a[2] = {sx, dy};
        add_contrib(b, x, op_like(b, "AvgPoolGrad", 2, a, x, n), -1);
    }
}

/* FusedBatchNorm: one FusedBatchNormGrad with dx, dscale, doffset and two
 * empty reserve outputs. */
static void grad_fused_batch_norm(tfb *b, const tape *e, tfb_t dy) {
    const tfb_t *in = b->tape_in + e->in_at;
    tfb_t x = in[0], scale = in[1], offset = in[2];
    tfb_t a[5] = {dy, x, scale, e->out0 + 3, e->out0 + 4};
    int32_t op = new_op(b, "FusedBatchNormGrad", 5, a, 10.0 * (double)tfb_numel(b, x));
    if (op < 0) return;
    const tensor X = b->t[x];
    int64_t c = X.dims[X.rank - 1], zero = 0;
    tfb_t dx = new_tensor(b, op, DP_DTYPE_FLOAT32, X.rank, X.dims);
    tfb_t ds = new_tensor(b, op, DP_DTYPE_FLOAT32, 1, &c);
    tfb_t dof = new_tensor(b, op, DP_DTYPE_FLOAT32, 1, &c);
    new_tensor(b, op, DP_DTYPE_FLOAT32, 1, &zero);
    new_tensor(b, op, DP_DTYPE_FLOAT32, 1, &zero);
    add_contrib(b, x, dx, -1);
    add_contrib(b, scale, ds, -1);
    add_contrib(b, offset, dof, -1);
}

/* Gather: the IndexedSlices TensorFlow builds for an embedding lookup: dense
 * shape (Shape, Cast), Size of ids, ExpandDims, ConcatV2 of the values'
 * shape, Reshape of values and of indices. */
static void grad_gather(tfb *b, const tape *e, tfb_t dy) {
    const tfb_t *in = b->tape_in + e->in_at;
    tfb_t x = in[0], ids = in[1];
    int64_t two = 2, n = tfb_numel(b, ids), d = tfb_dim(b, x, 1);
    tfb_t sp = shape_of(b, x);
    tfb_t cs = op_shape(b, "Cast", 1, &sp, DP_DTYPE_INT64, 1, &two, 0);
    (void)cs;
    tfb_t sz = op_shape(b, "Size", 1, &ids, DP_DTYPE_INT32, 0, NULL, 0);
    tfb_t ic = int_const(b, 1);
    tfb_t a[2] = {sz, ic};
    tfb_t ex = op_shape(b, "ExpandDims", 2, a, DP_DTYPE_INT32, 1, (int64_t[]){1}, 0);
    tfb_t a2[3] = {ex, sp, ic};
    tfb_t vs = op_shape(b, "ConcatV2", 3, a2, DP_DTYPE_INT32, 1, &two, 0);
    tfb_t a3[2] = {dy, vs};
    tfb_t vals = op_shape(b, "Reshape", 2, a3, DP_DTYPE_FLOAT32, 2, (int64_t[]){n, d}, 0);
    tfb_t a4[2] = {ids, ex};
    tfb_t idx = op_shape(b, "Reshape", 2, a4, DP_DTYPE_INT32, 1, &n, 0);
    add_contrib(b, x, vals, idx);
}

/* SoftmaxCrossEntropyWithLogits: dy (expanded) times the backprop output,
 * behind PreventGradient. */
static void grad_xent(tfb *b, const tape *e, tfb_t dy) {
    tfb_t x = b->tape_in[e->in_at];
    tfb_t bp = e->out0 + 1;
    tfb_t pg = op_like(b, "PreventGradient", 1, &bp, bp, 0);
    tfb_t ic = int_const(b, 1);
    tfb_t a[2] = {dy, ic};
    tensor s = b->t[dy];
    s.dims[s.rank++] = 1;
    tfb_t ex = op_shape(b, "ExpandDims", 2, a, DP_DTYPE_FLOAT32, s.rank, s.dims, 0);
    tfb_t a2[2] = {ex, pg};
    add_contrib(b, x, op_like(b, "Mul", 2, a2, bp, (double)tfb_numel(b, bp)), -1);
}

/* Split (ConcatV2 of the parts' gradients) and Unpack (Pack of them); a
 * part without a gradient contributes ZerosLike. */
static void grad_split(tfb *b, const tape *e, const tfb_t *dys) {
    tfb_t x = b->tape_in[e->in_at];
    int n = e->n_out;
    tfb_t *parts = malloc(((size_t)n + 1) * sizeof(tfb_t));
    if (!parts) {
        fail_oom(b);
        return;
    }
    for (int k = 0; k < n; k++)
        parts[k] = dys[k] >= 0 ? dys[k] : op_like(b, "ZerosLike", 1, (tfb_t[]){e->out0 + k}, e->out0 + k, 0);
    if (e->rule == RULE_SPLIT) {
        parts[n] = int_const(b, 1);
        add_contrib(b, x, op_like(b, "ConcatV2", n + 1, parts, x, 0), -1);
    } else {
        add_contrib(b, x, op_like(b, "Pack", n, parts, x, 0), -1);
    }
    free(parts);
}

/* Adds the gradients of one tape entry (dys: of its outputs, -1 for none)
 * to its inputs' contributions, by its rule. */
static void grad_entry(tfb *b, const tape *e, const tfb_t *dys) {
    const tfb_t *in = b->tape_in + e->in_at;
    tfb_t dy = dys[0], x = in[0];
    switch ((rule)e->rule) {
    case RULE_PASS: add_contrib(b, x, dy, -1); break;
    case RULE_RESHAPE: {
        tfb_t sx = shape_of(b, x);
        tfb_t a[2] = {dy, sx};
        add_contrib(b, x, op_like(b, "Reshape", 2, a, x, 0), -1);
        break;
    }
    case RULE_MATMUL:
    case RULE_BMM: {
        tfb_t w = in[1];
        const char *t = e->rule == RULE_MATMUL ? "MatMul" : "BatchMatMul";
        double f = b->g->ops[e->op].flops;
        tfb_t a[2] = {dy, w}, c[2] = {x, dy};
        if (e->aux) { /* y = x w^T: dx = dy w, dw = dy^T x */
            c[0] = dy;
            c[1] = x;
        }
        add_contrib(b, x, op_like(b, t, 2, a, x, f), -1);
        add_contrib(b, w, op_like(b, t, 2, c, w, f), -1);
        break;
    }
    case RULE_BIAS:
        add_contrib(b, x, dy, -1);
        add_contrib(b, in[1], op_like(b, "BiasAddGrad", 1, &dy, in[1], (double)tfb_numel(b, dy)), -1);
        break;
    case RULE_UNARY_Y: {
        tfb_t a[2] = {e->out0, dy};
        add_contrib(b, x, op_like(b, unary_grad_type(e->type), 2, a, x, 2.0 * (double)tfb_numel(b, x)), -1);
        break;
    }
    case RULE_UNARY_X: {
        char dt[64];
        snprintf(dt, sizeof dt, "%sDerivative", e->type);
        tfb_t d = op_like(b, !strcmp(e->type, "Square") ? "Mul" : dt, 1, &x, x, 4.0 * (double)tfb_numel(b, x));
        tfb_t a[2] = {dy, d};
        add_contrib(b, x, op_like(b, "Mul", 2, a, x, (double)tfb_numel(b, x)), -1);
        break;
    }
    case RULE_BINARY: grad_binary(b, e, dy); break;
    case RULE_ADDN:
        for (int k = 0; k < e->n_in; k++) add_contrib(b, in[k], dy, -1);
        break;
    case RULE_CONCAT: grad_concat(b, e, dy); break;
    case RULE_SPLIT:
    case RULE_UNPACK: grad_split(b, e, dys); break;
    case RULE_PACK: {
        int32_t op = new_op(b, "Unpack", 1, &dy, 0);
        if (op < 0) return;
        for (int k = 0; k < e->n_in; k++)
            add_contrib(b, in[k], new_tensor(b, op, b->t[in[k]].dtype, b->t[in[k]].rank, b->t[in[k]].dims), -1);
        break;
    }
    case RULE_TRANSPOSE: {
        tfb_t pc = int_const(b, b->t[x].rank);
        tfb_t inv = op_like(b, "InvertPermutation", 1, &pc, pc, 0);
        tfb_t a[2] = {dy, inv};
        add_contrib(b, x, op_like(b, "Transpose", 2, a, x, (double)tfb_numel(b, x)), -1);
        break;
    }
    case RULE_REDUCE: grad_reduce(b, e, dy); break;
    case RULE_SOFTMAX: grad_softmax(b, e, dy); break;
    case RULE_CONV: grad_conv(b, e, dy); break;
    case RULE_POOL: grad_pool(b, e, dy); break;
    case RULE_FBN: grad_fused_batch_norm(b, e, dy); break;
    case RULE_GATHER: grad_gather(b, e, dy); break;
    case RULE_L2LOSS: {
        tfb_t a[2] = {x, dy};
        add_contrib(b, x, op_like(b, "Mul", 2, a, x, (double)tfb_numel(b, x)), -1);
        break;
    }
    case RULE_XENT: grad_xent(b, e, dy); break;
    }
}

/* control_flow_ops.tuple of the gradients one op just contributed
 * (contributions c0..): a NoOp after all of them and an Identity of each
 * that waits for it (tfb_gate_gradients). */
static void gate_contribs(tfb *b, int64_t c0) {
    int n = (int)(b->n_c - c0);
    tfb_t *in = malloc((size_t)n * sizeof(tfb_t));
    if (!in) {
        fail_oom(b);
        return;
    }
    for (int k = 0; k < n; k++) in[k] = b->c[c0 + k].g;
    int32_t op = new_op(b, "NoOp", n, in, 0);
    free(in);
    tfb_t ctl = op >= 0 ? new_tensor(b, op, DP_DTYPE_NONE, -1, NULL) : -1;
    for (int k = 0; k < n && ctl >= 0; k++) {
        tfb_t a[2] = {b->c[c0 + k].g, ctl};
        tfb_t g = op_like(b, "Identity", 2, a, a[0], 0);
        if (g >= 0) b->c[c0 + k].g = g;
    }
}

void tfb_backward(tfb *b, tfb_t loss) {
    if (b->failed) return;
    assert(!b->backward_done);
    b->backward_done = 1;
    int64_t cap = b->n_t; /* contributions go to forward tensors only */
    b->head = malloc((size_t)(cap ? cap : 1) * sizeof(int32_t));
    if (!b->head) {
        fail_oom(b);
        return;
    }
    b->cap_head = cap;
    for (int64_t i = 0; i < cap; i++) b->head[i] = -1;
    int64_t n_fwd = b->n_t;
    tfb_scope(b, "gradients");
    tfb_t sl = shape_of(b, loss);
    tfb_t one = scalar_const(b);
    tfb_t a[2] = {sl, one};
    tfb_t seed = op_like(b, "Fill", 2, a, loss, (double)tfb_numel(b, loss));
    add_contrib(b, loss, seed, -1);
    tfb_t dys[256];
    for (int64_t i = b->n_tp - 1; i >= 0 && !b->failed; i--) {
        const tape e = b->tp[i];
        assert(e.out0 < n_fwd);
        int any = 0;
        for (int k = 0; k < e.n_out; k++) any |= b->head[e.out0 + k] >= 0;
        if (!any) continue;
        tfb_scope(b, "gradients/%s", dp_graph_str(b->g, b->g->ops[e.op].scope));
        if (e.n_out > (int)(sizeof dys / sizeof dys[0])) {
            fail_shape(b, "too many outputs");
            return;
        }
        for (int k = 0; k < e.n_out; k++) dys[k] = aggregate(b, e.out0 + k, NULL);
        int64_t c0 = b->n_c;
        grad_entry(b, &e, dys);
        if (b->gate && b->n_c - c0 >= 2) gate_contribs(b, c0);
    }
}

/* ---- optimizer --------------------------------------------------------------- */

static tfb_t slot(tfb *b, const var *v, const char *suffix) {
    const char *vs = dp_graph_str(b->g, v->coloc);
    char sc[700];
    snprintf(sc, sizeof sc, "%s/%s", vs, suffix);
    int32_t op = new_op_in(b, sc, "VariableV2", 0, NULL, v->coloc, 0);
    if (op < 0) return -1;
    const tensor *V = &b->t[v->var];
    tfb_t s = new_tensor(b, op, DP_DTYPE_FLOAT32, V->rank, V->dims);
    if (s >= 0) b->g->ops[op].param_bytes = (uint64_t)tfb_numel(b, s) * 4;
    return s;
}

/* An update op colocated with v, with a control (0-byte) output. */
static tfb_t update_op(tfb *b, const var *v, const char *type, int n_in, const tfb_t *in, double flops) {
    const char *vs = dp_graph_str(b->g, v->coloc);
    int32_t op = new_op_in(b, vs, type, n_in, in, v->coloc, flops);
    if (op < 0) return -1;
    return new_tensor(b, op, DP_DTYPE_NONE, -1, NULL);
}

/* An element-wise op colocated with v, output shaped like `like`. */
static tfb_t update_like(tfb *b, const var *v, const char *type, int n_in, const tfb_t *in, tfb_t like, double flops) {
    const char *vs = dp_graph_str(b->g, v->coloc);
    int32_t op = new_op_in(b, vs, type, n_in, in, v->coloc, flops);
    if (op < 0) return -1;
    return new_tensor(b, op, DP_DTYPE_FLOAT32, b->t[like].rank, b->t[like].dims);
}

/* Phase 1: the aggregated gradient of every trainable variable, in grads[i]
 * (-1 when it receives none), with its sparse indices in sidx[i] (-1: dense).
 * Returns the first variable with a gradient, -1 when none has one. */
static int64_t optimizer_gradients(tfb *b, tfb_t *grads, tfb_t *sidx) {
    int64_t first = -1;
    for (int64_t i = 0; i < b->n_v; i++) {
        grads[i] = -1;
        if (!b->v[i].trainable) continue;
        tfb_scope(b, "gradients/%s", dp_graph_str(b->g, b->v[i].coloc));
        grads[i] = aggregate(b, b->v[i].read, &sidx[i]);
        if (grads[i] >= 0 && first < 0) first = i;
    }
    return first;
}

/* Phase 2: tf.clip_by_global_norm: scale = clip * min(1 / norm, 1 / clip)
 * with norm = sqrt(2 sum L2Loss(g)), every gradient multiplied by it (and
 * passed through an Identity). Replaces grads[i] (those >= 0). */
static void optimizer_clip(tfb *b, tfb_t *grads) {
    int64_t nv = b->n_v;
    tfb_scope(b, "clip_by_global_norm");
    tfb_t *l2 = malloc((size_t)nv * sizeof(tfb_t));
    if (!l2) {
        fail_oom(b);
        return;
    }
    int n = 0;
    for (int64_t i = 0; i < nv; i++)
        if (grads[i] >= 0)
            l2[n++] = op_shape(b, "L2Loss", 1, &grads[i], DP_DTYPE_FLOAT32, 0, NULL, 2.0 * (double)tfb_numel(b, grads[i]));
    tfb_t sum = n > 1 ? op_shape(b, "AddN", n, l2, DP_DTYPE_FLOAT32, 0, NULL, n) : l2[0];
    free(l2);
    tfb_t two = scalar_const(b);
    tfb_t a[2] = {sum, two};
    tfb_t m = op_shape(b, "Mul", 2, a, DP_DTYPE_FLOAT32, 0, NULL, 1);
    tfb_t norm = op_shape(b, "Sqrt", 1, &m, DP_DTYPE_FLOAT32, 0, NULL, 1);
    tfb_t one = scalar_const(b), clip = scalar_const(b);
    tfb_t a2[2] = {one, norm};
    tfb_t inv = op_shape(b, "RealDiv", 2, a2, DP_DTYPE_FLOAT32, 0, NULL, 1);
    tfb_t a3[2] = {inv, one};
    tfb_t mn = op_shape(b, "Minimum", 2, a3, DP_DTYPE_FLOAT32, 0, NULL, 1);
    tfb_t a4[2] = {clip, mn};
    tfb_t scale = op_shape(b, "Mul", 2, a4, DP_DTYPE_FLOAT32, 0, NULL, 1);
    for (int64_t i = 0; i < nv; i++) {
        if (grads[i] < 0) continue;
        tfb_scope(b, "clip_by_global_norm/%s", dp_graph_str(b->g, b->v[i].coloc));
        tfb_t a5[2] = {grads[i], scale};
        tfb_t c = op_like(b, "Mul", 2, a5, grads[i], (double)tfb_numel(b, grads[i]));
        grads[i] = op_like(b, "Identity", 1, &c, c, 0);
    }
}

/* The optimizer's scalar inputs: learning rate, up to three
 * hyperparameters (their meaning depends on the optimizer), and Adam's
 * beta1^t, beta2^t variables (-1 for the others). */
typedef struct optim_consts {
    tfb_t lr, h1, h2, h3;
    tfb_t b1p, b2p;
} optim_consts;

/* Phase 3: the optimizer's constants in scope "<first var>/optimizer";
 * Adam's beta powers live with the first variable fv. */
static optim_consts optimizer_consts(tfb *b, tfb_optim optim, const var *fv) {
    optim_consts k;
    tfb_scope(b, "%s/optimizer", dp_graph_str(b->g, fv->coloc));
    k.lr = scalar_const(b), k.h1 = scalar_const(b), k.h2 = scalar_const(b), k.h3 = scalar_const(b);
    k.b1p = -1, k.b2p = -1;
    if (optim == TFB_OPTIM_ADAM) {
        int32_t op1 = new_op_in(b, dp_graph_str(b->g, fv->coloc), "VariableV2", 0, NULL, fv->coloc, 0);
        if (op1 >= 0) k.b1p = new_tensor(b, op1, DP_DTYPE_FLOAT32, 0, NULL);
        int32_t op2 = new_op_in(b, dp_graph_str(b->g, fv->coloc), "VariableV2", 0, NULL, fv->coloc, 0);
        if (op2 >= 0) k.b2p = new_tensor(b, op2, DP_DTYPE_FLOAT32, 0, NULL);
    }
    return k;
}

/* BERT's AdamWeightDecayOptimizer for v as element-wise ops (no fused
 * kernel): next_m = b1 m + (1-b1) g; next_v = b2 v + (1-b2) g^2;
 * update = next_m / (sqrt(next_v) + eps) + wd param; param -= lr update;
 * assign param, m, v. Returns the NoOp that groups the three assignments. */
static tfb_t update_adam_weight_decay(tfb *b, const var *v, tfb_t g, tfb_t sidx, const optim_consts *k) {
    double n = (double)tfb_numel(b, v->var);
    tfb_t h1 = k->h1, h2 = k->h2, h3 = k->h3, lr = k->lr;
    tfb_t m = slot(b, v, "adam_m"), s2 = slot(b, v, "adam_v");
    if (sidx >= 0) { /* the sparse gradient is densified first */
        tfb_t in[2] = {g, sidx};
        g = update_like(b, v, "UnsortedSegmentSum", 2, in, v->var, n);
    }
    tfb_t a1[2] = {h1, m}, a2[2] = {h1, g};
    tfb_t m1 = update_like(b, v, "Mul", 2, a1, v->var, n), m2 = update_like(b, v, "Mul", 2, a2, v->var, n);
    tfb_t a3[2] = {m1, m2};
    tfb_t nm = update_like(b, v, "Add", 2, a3, v->var, n);
    tfb_t a4[2] = {h2, s2};
    tfb_t v1 = update_like(b, v, "Mul", 2, a4, v->var, n);
    tfb_t sq = update_like(b, v, "Square", 1, &g, v->var, n);
    tfb_t a5[2] = {h2, sq};
    tfb_t v2 = update_like(b, v, "Mul", 2, a5, v->var, n);
    tfb_t a6[2] = {v1, v2};
    tfb_t nvv = update_like(b, v, "Add", 2, a6, v->var, n);
    tfb_t rt = update_like(b, v, "Sqrt", 1, &nvv, v->var, n);
    tfb_t a7[2] = {rt, h3};
    tfb_t den = update_like(b, v, "Add", 2, a7, v->var, n);
    tfb_t a8[2] = {nm, den};
    tfb_t up = update_like(b, v, "RealDiv", 2, a8, v->var, n);
    tfb_t a9[2] = {h3, v->var};
    tfb_t wd = update_like(b, v, "Mul", 2, a9, v->var, n);
    tfb_t a10[2] = {up, wd};
    up = update_like(b, v, "Add", 2, a10, v->var, n);
    tfb_t a11[2] = {lr, up};
    tfb_t st = update_like(b, v, "Mul", 2, a11, v->var, n);
    tfb_t a12[2] = {v->var, st};
    tfb_t np = update_like(b, v, "Sub", 2, a12, v->var, n);
    tfb_t as[3][2] = {{v->var, np}, {m, nm}, {s2, nvv}};
    tfb_t done[3];
    for (int j = 0; j < 3; j++) done[j] = update_op(b, v, "Assign", 2, as[j], n);
    return update_op(b, v, "NoOp", 3, done, 0);
}

/* Phase 4: the update of variable v by gradient g (sparse when sidx >= 0):
 * the optimizer's slot variables and its Apply* op, colocated with v.
 * Returns the update's control output. */
static tfb_t optimizer_update(tfb *b, tfb_optim optim, const var *v, tfb_t g, tfb_t sidx, const optim_consts *k) {
    double n = (double)tfb_numel(b, v->var);
    int sparse = sidx >= 0;
    switch (optim) {
    case TFB_OPTIM_ADAM: {
        tfb_t m = slot(b, v, "Adam"), s = slot(b, v, "Adam_1");
        tfb_t in[11] = {v->var, m, s, k->b1p, k->b2p, k->lr, k->h1, k->h2, k->h3, g, sidx};
        return update_op(b, v, sparse ? "SparseApplyAdam" : "ApplyAdam", sparse ? 11 : 10, in, 12.0 * n);
    }
    case TFB_OPTIM_RMSPROP: {
        tfb_t ms = slot(b, v, "RMSProp"), mom = slot(b, v, "RMSProp_1");
        tfb_t in[9] = {v->var, ms, mom, k->lr, k->h1, k->h2, k->h3, g, sidx};
        return update_op(b, v, sparse ? "SparseApplyRMSProp" : "ApplyRMSProp", sparse ? 9 : 8, in, 10.0 * n);
    }
    case TFB_OPTIM_MOMENTUM: {
        tfb_t acc = slot(b, v, "Momentum");
        tfb_t in[6] = {v->var, acc, k->lr, g, k->h1, sidx};
        return update_op(b, v, sparse ? "SparseApplyMomentum" : "ApplyMomentum", sparse ? 6 : 5, in, 4.0 * n);
    }
    case TFB_OPTIM_ADAM_WEIGHT_DECAY:
        return update_adam_weight_decay(b, v, g, sidx, k);
    case TFB_OPTIM_SGD: {
        tfb_t in[4] = {v->var, k->lr, g, sidx};
        return update_op(b, v, sparse ? "ScatterSub" : "ApplyGradientDescent", sparse ? 4 : 3, in, 2.0 * n);
    }
    }
    return -1;
}

/* Phase 5: the train op. For Adam, beta1_power *= beta1 and beta2_power *=
 * beta2 after every update (control inputs), then a NoOp on both
 * assignments; otherwise a NoOp on every update. */
static void optimizer_train_op(tfb *b, tfb_optim optim, const var *fv, const optim_consts *k, const tfb_t *updates,
                               int n_up) {
    tfb_scope(b, "%s/optimizer", dp_graph_str(b->g, fv->coloc));
    if (b->failed) return;
    if (optim != TFB_OPTIM_ADAM) {
        tfb_scope(b, "train_op");
        new_op(b, "NoOp", n_up, updates, 0);
        return;
    }
    tfb_t *in = malloc(((size_t)n_up + 2) * sizeof(tfb_t));
    if (!in) {
        fail_oom(b);
        return;
    }
    memcpy(in + 2, updates, (size_t)n_up * sizeof(tfb_t));
    tfb_t fin[2];
    for (int j = 0; j < 2; j++) {
        in[0] = j ? k->b2p : k->b1p;
        in[1] = j ? k->h2 : k->h1;
        int32_t op = new_op_in(b, dp_graph_str(b->g, fv->coloc), "Mul", n_up + 2, in, fv->coloc, 1);
        tfb_t m = op >= 0 ? new_tensor(b, op, DP_DTYPE_FLOAT32, 0, NULL) : -1;
        tfb_t a[2] = {in[0], m};
        fin[j] = m >= 0 ? update_op(b, fv, "Assign", 2, a, 1) : -1;
    }
    free(in);
    if (!b->failed) {
        tfb_scope(b, "train_op");
        new_op(b, "NoOp", 2, fin, 0);
    }
}

void tfb_optimizer(tfb *b, tfb_optim optim, int clip_global_norm) {
    if (b->failed) return;
    assert(b->backward_done);
    int64_t nv = b->n_v;
    tfb_t *grads = malloc((size_t)nv * 3 * sizeof(tfb_t));
    if (!grads) {
        fail_oom(b);
        return;
    }
    tfb_t *sidx = grads + nv, *updates = grads + 2 * nv;
    int64_t first = optimizer_gradients(b, grads, sidx);
    if (first < 0) {
        free(grads);
        fail_shape(b, "no trainable variable receives a gradient");
        return;
    }
    if (clip_global_norm) optimizer_clip(b, grads);
    if (b->failed) {
        free(grads);
        return;
    }
    const var *fv = &b->v[first];
    optim_consts k = optimizer_consts(b, optim, fv);
    int n_up = 0;
    for (int64_t i = 0; i < nv && !b->failed; i++)
        if (grads[i] >= 0) updates[n_up++] = optimizer_update(b, optim, &b->v[i], grads[i], sidx[i], &k);
    optimizer_train_op(b, optim, fv, &k, updates, n_up);
    free(grads);
}

/* ---- additions for the convolutional models (models_cnn.c) ---------------- */

tfb_t tfb_reduce_axes(tfb *b, const char *type, tfb_t x, int n_axes, const int *axes, int keepdims) {
    if (b->failed) return -1;
    tensor s = b->t[x];
    int drop[TFB_MAX_RANK] = {0};
    for (int k = 0; k < n_axes; k++) {
        int ax = norm_axis(&s, axes[k]);
        if (ax < 0 || ax >= s.rank) {
            fail_shape(b, "reduction axis out of range");
            return -1;
        }
        drop[ax] = 1;
    }
    int r = 0;
    for (int i = 0; i < s.rank; i++) {
        if (!drop[i]) s.dims[r++] = s.dims[i];
        else if (keepdims) s.dims[r++] = 1;
    }
    tfb_t ic = int_const(b, n_axes);
    tfb_t in[2] = {x, ic};
    tfb_t y = op_shape(b, type, 2, in, s.dtype, r, s.dims, (double)tfb_numel(b, x));
    if (y >= 0) record(b, b->t[y].op, RULE_REDUCE, 1, &x, y, 1, type, 0);
    return y;
}

tfb_t tfb_squeeze(tfb *b, tfb_t x, int rank, const int64_t *dims) {
    if (b->failed) return -1;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    if (n != tfb_numel(b, x)) {
        fail_shape(b, "Squeeze changes the element count");
        return -1;
    }
    tfb_t y = op_shape(b, "Squeeze", 1, &x, b->t[x].dtype, rank, dims, 0);
    if (y >= 0) record(b, b->t[y].op, RULE_RESHAPE, 1, &x, y, 1, NULL, 0);
    return y;
}

tfb_t tfb_l2loss(tfb *b, tfb_t x) {
    if (b->failed) return -1;
    tfb_t y = op_shape(b, "L2Loss", 1, &x, DP_DTYPE_FLOAT32, 0, NULL, 2.0 * (double)tfb_numel(b, x));
    if (y >= 0) record(b, b->t[y].op, RULE_L2LOSS, 1, &x, y, 1, NULL, 0);
    return y;
}

void tfb_colocate(tfb *b, tfb_t with) {
    b->coloc_with = with >= 0 && with < b->n_t ? b->g->ops[b->t[with].op].colocate : -1;
}

tfb_t tfb_gradient(tfb *b, tfb_t v) {
    if (b->failed || !b->backward_done) return -1;
    for (int64_t i = 0; i < b->n_v; i++) {
        if (b->v[i].read != v || !b->v[i].trainable) continue;
        tfb_scope(b, "gradients/%s", dp_graph_str(b->g, b->v[i].coloc));
        tfb_t sidx;
        tfb_t g = aggregate(b, v, &sidx);
        return sidx >= 0 ? -1 : g;
    }
    return -1;
}

void tfb_gate_gradients(tfb *b, int on) { b->gate = on; }

void tfb_set_gradient(tfb *b, tfb_t v, tfb_t g) {
    if (b->failed || !b->backward_done || g < 0 || v < 0 || v >= b->cap_head) return;
    int32_t h = b->head[v];
    if (h >= 0) b->c[h] = (contrib){g, -1, -1};
    else add_contrib(b, v, g, -1);
}
