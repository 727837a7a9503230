/* tfb: builds TensorFlow-1.x-style training graphs for the model zoo.
 *
 * A model is written as its forward pass, one call per TensorFlow op
 * (tfb_matmul, tfb_conv2d, tfb_binary, ...). Every forward op is recorded on
 * a tape with its gradient rule; tfb_backward then walks the tape backwards
 * and emits the ops tf.gradients would emit (including the Shape /
 * BroadcastGradientArgs / Sum / Reshape bookkeeping of broadcasting binary
 * ops, AddN where a tensor's gradient has several contributions, and ZerosLike
 * where a multi-output op has outputs without a gradient), and
 * tfb_optimizer adds gradient clipping and the per-variable update ops
 * (Adam, RMSProp, Momentum, SGD, BERT's AdamWeightDecay) with their slot
 * variables, colocated with the variable as TensorFlow colocates them.
 *
 * Op names are "<scope>/<Type>_<index>"; forward ops take the current scope
 * (tfb_scope), gradient ops "gradients/<forward scope>", update ops
 * "<variable scope>/<Optimizer>". The expert placements (expert.c) read
 * these scopes, so scope names follow docs/zoo.md.
 *
 * Errors: the first failure (out of memory, an impossible shape) is kept and
 * every later call does nothing; tfb_finish returns it. Tensor handles are
 * indices into the builder's tensor table (tfb_t, -1 = none). */
#ifndef DPLACE_ZOO_TFB_H
#define DPLACE_ZOO_TFB_H

#include "dplace/graph.h"

#define TFB_MAX_RANK 5 /* 5: ExpandDims of conv filters (models_cnn.c) */

typedef int32_t tfb_t;

typedef struct tfb tfb;

typedef enum tfb_optim {
    TFB_OPTIM_ADAM = 0,
    TFB_OPTIM_RMSPROP,
    TFB_OPTIM_MOMENTUM,
    TFB_OPTIM_SGD,
    TFB_OPTIM_ADAM_WEIGHT_DECAY, /* BERT's AdamWeightDecayOptimizer: Python-level
                                    element-wise ops per variable, not one kernel */
} tfb_optim;

/* ---- builder life cycle ---- */
tfb *tfb_init(const char *graph_name, dp_error *err);
/* Seals the graph (dp_graph_finalize) and returns it, or NULL with the first
 * error in err; frees the builder either way. */
dp_graph *tfb_finish(tfb *b, dp_error *err);
/* Frees the builder and its graph (on an early exit). */
void tfb_free(tfb *b);
int tfb_failed(const tfb *b);

/* Sets the scope of the ops created next (printf-style). */
void tfb_scope(tfb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the most recently created op as CPU-only (no GPU kernel). */
void tfb_cpu_only(tfb *b);
/* The graph op that produces tensor t. */
int32_t tfb_op_of(const tfb *b, tfb_t t);
/* Shape access. */
int tfb_rank(const tfb *b, tfb_t t);
int64_t tfb_dim(const tfb *b, tfb_t t, int axis); /* axis < 0 counts from the end */
int64_t tfb_numel(const tfb *b, tfb_t t);

/* ---- sources ---- */
/* A trainable float32 variable "<scope>/<name>" with its read (Identity),
 * colocated; returns the read. */
tfb_t tfb_variable(tfb *b, const char *name, int rank, const int64_t *dims);
/* A non-trainable variable (batch-norm moving statistics, global step). */
tfb_t tfb_state(tfb *b, const char *name, int rank, const int64_t *dims);
/* A constant (scalar or small). */
tfb_t tfb_const(tfb *b, int rank, const int64_t *dims);
/* A CPU-side input pipeline producing a batch tensor (IteratorGetNext-like,
 * CPU-only). dtype float32 or int32. */
tfb_t tfb_input(tfb *b, const char *name, dp_dtype dtype, int rank, const int64_t *dims);

/* ---- forward ops (each differentiable one records its gradient rule) ---- */
/* [M,K] x [K,N] -> [M,N] (trans_b: b is [N,K]). */
tfb_t tfb_matmul(tfb *b, tfb_t x, tfb_t w, int trans_b);
/* [..., M, K] x [..., K, N] -> [..., M, N] (trans_b: [..., N, K]). */
tfb_t tfb_batch_matmul(tfb *b, tfb_t x, tfb_t y, int trans_b);
/* x [..., C] + bias [C]. */
tfb_t tfb_bias_add(tfb *b, tfb_t x, tfb_t bias);
/* Element-wise unary with a gradient op of its own (ReluGrad, TanhGrad,
 * SigmoidGrad, RsqrtGrad): type is "Relu", "Tanh", "Sigmoid", "Rsqrt". Other
 * types ("Exp", "Erf", "Square", "Floor", "Neg", "Pow") get a derivative op
 * and a Mul, as TensorFlow's gradients for them do. */
tfb_t tfb_unary(tfb *b, const char *type, tfb_t x);
/* Broadcasting binary: "Add", "Sub", "Mul", "RealDiv", "SquaredDifference",
 * "Maximum", "Minimum". Output shape = the larger operand's (by elements;
 * the other must broadcast to it). */
tfb_t tfb_binary(tfb *b, const char *type, tfb_t x, tfb_t y);
/* AddN of n same-shaped tensors. */
tfb_t tfb_addn(tfb *b, int n, const tfb_t *xs);
/* Concatenation along axis (ConcatV2 + its axis Const). */
tfb_t tfb_concat(tfb *b, int n, const tfb_t *xs, int axis);
/* Split into n equal parts along axis; fills out[n]. */
void tfb_split(tfb *b, tfb_t x, int n, int axis, tfb_t *out);
/* Unpack along axis 1 of [B, T, ...] into T tensors [B, ...]; Pack inverse. */
void tfb_unpack(tfb *b, tfb_t x, int axis, tfb_t *out);
tfb_t tfb_pack(tfb *b, int n, const tfb_t *xs, int axis);
/* Reshape (with its shape Const) to rank/dims (same element count). */
tfb_t tfb_reshape(tfb *b, tfb_t x, int rank, const int64_t *dims);
/* Transpose by perm. */
tfb_t tfb_transpose(tfb *b, tfb_t x, const int *perm);
/* Sum or Mean over `axis` (keepdims: size 1 there, else removed). */
tfb_t tfb_reduce(tfb *b, const char *type, tfb_t x, int axis, int keepdims);
/* Softmax over the last axis. */
tfb_t tfb_softmax(tfb *b, tfb_t x);
/* NHWC convolution, filter [kh, kw, cin, cout], SAME padding when same. */
tfb_t tfb_conv2d(tfb *b, tfb_t x, tfb_t filter, int stride, int same);
/* Max or average pooling, k x k window. */
tfb_t tfb_pool(tfb *b, const char *type, tfb_t x, int k, int stride, int same);
/* FusedBatchNorm (training mode) of NHWC x with scale and offset [C]. */
tfb_t tfb_fused_batch_norm(tfb *b, tfb_t x, tfb_t scale, tfb_t offset);
/* Gather rows of params [V, D] by int ids [...] -> [..., D]; the gradient
 * is sparse (IndexedSlices) and the variable gets a sparse update. */
tfb_t tfb_gather(tfb *b, tfb_t params, tfb_t ids);
/* Sparse softmax cross-entropy of logits [N, V] with labels [N] -> [N]. */
tfb_t tfb_xent(tfb *b, tfb_t logits, tfb_t labels);
/* A non-differentiable op (Shape, Cast, RandomUniform, Floor of masks...):
 * output of the given shape and dtype; flops per output element. */
tfb_t tfb_aux(tfb *b, const char *type, int n_in, const tfb_t *in, dp_dtype dtype, int rank, const int64_t *dims,
              double flops_per_elem);

/* ---- composite layers TensorFlow 1.x builds from the ops above ---- */
/* A dense layer x [N, in] -> [N, out]: a variable w_name [in, out] in the
 * current scope, MatMul, and (b_name not NULL) a BiasAdd of variable b_name. */
tfb_t tfb_dense(tfb *b, tfb_t x, int64_t out, const char *w_name, const char *b_name);
/* tf.nn.dropout(x, keep_prob): RandomUniform and its scaling, Add, Floor,
 * RealDiv, Mul. */
tfb_t tfb_dropout(tfb *b, tfb_t x);

/* ---- training ---- */
/* Emits the gradient ops of scalar-ish `loss` ([N] or []) back to every
 * trainable variable. Call once. */
void tfb_backward(tfb *b, tfb_t loss);
/* In phases: the aggregated gradient of every trainable variable, an
 * optional clip_by_global_norm, the optimizer's constants (and Adam's beta
 * powers), one update per variable, and a final NoOp "train_op" that
 * depends on all of them. */
void tfb_optimizer(tfb *b, tfb_optim optim, int clip_global_norm);

/* ---- additions for the convolutional models (models_cnn.c) ---- */
/* Sum or Mean over several axes at once (tf.reduce_mean(x, [0, 1, 2]),
 * keepdims as in tfb_reduce); one reduction-indices Const. */
tfb_t tfb_reduce_axes(tfb *b, const char *type, tfb_t x, int n_axes, const int *axes, int keepdims);
/* Squeeze to rank/dims (same element count, no shape Const); its gradient is
 * Reshape(dy, Shape(x)) as for tfb_reshape. */
tfb_t tfb_squeeze(tfb *b, tfb_t x, int rank, const int64_t *dims);
/* tf.nn.l2_loss: sum(x^2) / 2 as a scalar; gradient Mul(x, dy). */
tfb_t tfb_l2loss(tfb *b, tfb_t x);
/* tf.colocate_with: ops created next (variables included) join the
 * colocation group of the op producing `with` (a variable's read);
 * with = -1 ends it. */
void tfb_colocate(tfb *b, tfb_t with);
/* After tfb_backward: the (aggregated) dense gradient of the trainable
 * variable whose read is v, built once and shared with tfb_optimizer (for
 * gradient summaries); -1 when it has none or it is sparse. Sets the scope
 * to "gradients/<variable>". */
tfb_t tfb_gradient(tfb *b, tfb_t v);
/* After tfb_backward: makes g the gradient tfb_optimizer applies to the
 * variable whose read is v (a post-processed gradient, e.g. a tower average). */
void tfb_set_gradient(tfb *b, tfb_t v, tfb_t g);
/* Optimizer.compute_gradients' default gate_gradients=GATE_OP: where an op
 * yields two or more input gradients, tfb_backward wraps them in
 * control_flow_ops.tuple (a NoOp and an Identity per gradient). Off unless
 * set; call before tfb_backward. */
void tfb_gate_gradients(tfb *b, int on);

#endif
