/* Baechi's list placers (Jeon et al., SoCC 2020), on dplace's cost model:
 *
 * m-topo  walks the ops in topological order and fills the GPUs one after
 *         the other, moving on when the next op would take the current GPU
 *         over its cap. Memory is counted as Baechi counts it for m-topo:
 *         every op's parameters, outputs and scratch, plus the tensors the
 *         GPU receives, never freed. The cap is Baechi's uniform one (the
 *         graph's memory so counted, divided by the number of GPUs, plus the
 *         largest op), lowered to memory_fraction of the GPU's memory when
 *         the whole graph fits in the GPUs counted this way (the placement
 *         then fits for certain). When it does not, a GPU is also full when
 *         the op would take its memory by liveness (as m-etf counts it,
 *         below) over memory_fraction, and ops left over when the last GPU
 *         is full go where liveness leaves the most room.
 * m-etf   earliest-time-first list scheduling (Hwang et al. 1989): among
 *         every ready op and every device it may use, schedule the pair that
 *         can start soonest (ties: the op with the longer path to the end of
 *         the graph, then the lower op index, then the lower device index),
 *         counting transfers along the route with each link direction busy
 *         for one transfer at a time, as the simulator does; a device is out
 *         of the running for an op when the op would take it over its
 *         memory cap.
 *
 * Both place on the GPUs (every device when the set has none); CPU-only ops
 * stay on the CPU, and a colocation group goes where its first op is put.
 * In the forward-only placement (Baechi's; place_forward.c) they place the
 * forward ops, each gradient op in its anchor's unit, and then put every
 * backward op where its unit is, or beside its data (list_follow); so do
 * the forward ops no forward op reads (the loss, views kept for the
 * backward pass); state (parameters, buffers, optimizer state, what is
 * computed from them alone) and the batch and constants are not scheduled:
 * each goes where its first reader goes (list_mark_lazy); and an
 * activation's transfer counts twice in the estimates, as its gradient
 * comes back the same way (list_comm_weight). Those three are dplace's
 * rules (dp_place_options.rules DATAFLOW); with PAPER the placers make
 * Baechi's forward-only placement as published.
 *
 * Memory by liveness, like the simulator but in placement order: a device
 * holds the parameters of every colocation group put on it (reserved whole
 * when the group's first op arrives), the outputs of its ops until every
 * consumer of them is placed, copies of tensors it received until the same
 * moment, and an op's scratch while it runs. A device's figure is its
 * parameters plus the peak of the rest, kept under memory_fraction of its
 * memory. When no device has room for an op it goes where the most room is
 * left, and the simulator reports the placement out of memory. In m-etf the
 * refreshed estimate of an op's start also accounts for transfers booked
 * after it became ready (estimates only grow, so a lazy refresh of each
 * device's best candidate is exact for the op chosen). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/heap.h"
#include "common/uf.h"
#include "common/util.h"
#include "dplace/cost.h"
#include "place/place_internal.h"

/* ---- memory by liveness -------------------------------------------------- */

typedef struct memtrack {
    const dp_graph *g;
    double cap[DP_MAX_DEVICES];
    double params[DP_MAX_DEVICES]; /* reserved parameters           */
    double live[DP_MAX_DEVICES];   /* outputs and copies held now   */
    double peak[DP_MAX_DEVICES];   /* peak of live (+ scratch)      */
    int64_t *remaining;            /* [n_tensors] consumer edges not placed yet */
    dp_mask *have;              /* [n_tensors] devices holding the tensor    */
    int32_t *stamp;                /* [n_tensors] dedup of an op's inputs       */
    int32_t stamp_now;
} memtrack;

/* Caps at fraction x each device's memory; every tensor waits for all its
 * consumer edges; nothing held yet. */
static dp_status memtrack_init(memtrack *mt, const dp_graph *g, const dp_devices *ds, double fraction,
                               dp_error *err) {
    memset(mt, 0, sizeof *mt);
    mt->g = g;
    for (int32_t d = 0; d < ds->n_devices; d++) mt->cap[d] = fraction * (double)ds->devices[d].memory_bytes;
    size_t nt = (size_t)g->n_tensors + 1;
    mt->remaining = malloc(nt * sizeof(int64_t));
    mt->have = calloc(nt, sizeof(dp_mask));
    mt->stamp = malloc(nt * sizeof(int32_t));
    if (!mt->remaining || !mt->have || !mt->stamp) {
        free(mt->remaining);
        free(mt->have);
        free(mt->stamp);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%lld tensors)", (long long)g->n_tensors);
    }
    for (int64_t t = 0; t < g->n_tensors; t++) {
        mt->remaining[t] = g->consumers_at[t + 1] - g->consumers_at[t];
        mt->stamp[t] = -1;
    }
    return DP_STATUS_OK;
}

/* Frees the tracker's arrays (not the tracker). */
static void memtrack_free(memtrack *mt) {
    free(mt->remaining);
    free(mt->have);
    free(mt->stamp);
}

/* Bytes of all of op's outputs. */
static double op_output_bytes(const dp_graph *g, int32_t op) {
    double b = 0;
    for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++) b += (double)place_tensor_bytes(g, t);
    return b;
}

/* Bytes m-topo counts for op, as if never freed: its parameters, outputs
 * and scratch. */
static double op_kept_bytes(const dp_graph *g, int32_t op) {
    return (double)g->ops[op].param_bytes + op_output_bytes(g, op) + (double)g->ops[op].temp_bytes;
}

/* Bytes of op's input tensors not yet on d (each tensor once). */
static double memtrack_recv(memtrack *mt, int32_t op, int32_t d) {
    const dp_graph *g = mt->g;
    const dp_op *o = &g->ops[op];
    double b = 0;
    int32_t stamp = ++mt->stamp_now;
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        int64_t t = dp_graph_tensor(g, in.op, in.slot);
        if (mt->stamp[t] == stamp || (mt->have[t] & dp_mask_bit(d))) continue;
        mt->stamp[t] = stamp;
        b += (double)place_tensor_bytes(g, t);
    }
    return b;
}

/* Device d's figure if op went there now, reserving new_params. */
static double memtrack_need(memtrack *mt, int32_t op, int32_t d, double new_params) {
    const dp_graph *g = mt->g;
    double during = mt->live[d] + memtrack_recv(mt, op, d) + op_output_bytes(g, op) + (double)g->ops[op].temp_bytes;
    return mt->params[d] + new_params + (during > mt->peak[d] ? during : mt->peak[d]);
}

/* Frees tensor t on every device holding it (its last consumer is placed). */
static void memtrack_release(memtrack *mt, int64_t t) {
    double b = (double)place_tensor_bytes(mt->g, t);
    for (dp_mask m = mt->have[t]; m; m &= m - 1) mt->live[dp_mask_first(m)] -= b;
    mt->have[t] = 0;
}

/* Puts op on d: receives its inputs, allocates its outputs, frees every
 * tensor whose last consumer this was. */
static void memtrack_place(memtrack *mt, int32_t op, int32_t d, double new_params) {
    const dp_graph *g = mt->g;
    const dp_op *o = &g->ops[op];
    mt->params[d] += new_params;
    mt->live[d] += memtrack_recv(mt, op, d);
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        mt->have[dp_graph_tensor(g, in.op, in.slot)] |= dp_mask_bit(d);
    }
    mt->live[d] += op_output_bytes(g, op);
    for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++) mt->have[t] = dp_mask_bit(d);
    double during = mt->live[d] + (double)o->temp_bytes;
    if (during > mt->peak[d]) mt->peak[d] = during;
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        int64_t t = dp_graph_tensor(g, in.op, in.slot);
        assert(mt->remaining[t] > 0);
        if (--mt->remaining[t] == 0) memtrack_release(mt, t);
    }
    for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++)
        if (mt->remaining[t] == 0) memtrack_release(mt, t);
}

/* ---- shared set-up ------------------------------------------------------- */

typedef struct list_ctx {
    const dp_graph *g;
    const dp_devices *ds;
    dp_units u;
    dp_mask *mask;     /* [n_units] */
    double *unit_params;  /* [n_units] */
    int32_t *pinned;      /* [n_units] device, -1 none */
    memtrack mt;
    place_fwd fwd;        /* forward-only placement: the backward ops (none
                             when off or the graph has no gradient scopes) */
    uint8_t *lazy;        /* [n_ops] 1: a state op, placed with its reader */
    int32_t n_lazy;
    int32_t *out;         /* [n_ops] the placement being built, -1 not yet */
    int32_t *closure;     /* [n_ops] scratch: a state closure, producers first */
    int32_t (*walk)[2];   /* [n_ops + 1] scratch: (op, next input) of its walk */
    int32_t *seen;        /* [n_ops] scratch: stamp of the walk that met the op */
    int32_t *useen;       /* [n_units] scratch: stamp of the sum that met the unit */
    int32_t stamp;
    int dataflow;         /* the forward-only placement with dplace's rules */
} list_ctx;

/* Whether op is left to the forward-only placement's second pass. */
static int list_backward(const list_ctx *c, int32_t op) { return c->fwd.backward && c->fwd.backward[op]; }

/* Frees what list_init allocated. */
static void list_free(list_ctx *c) {
    dp_units_free(&c->u);
    free(c->mask);
    free(c->unit_params);
    free(c->pinned);
    free(c->lazy);
    free(c->closure);
    free(c->walk);
    free(c->seen);
    free(c->useen);
    memtrack_free(&c->mt);
    place_fwd_free(&c->fwd);
}

/* In the forward-only placement, marks the ops the list placers do not
 * schedule (c->lazy): forward ops, of a unit with a choice of devices, that read nothing (parameters,
 * buffers, optimizer state, the batch, constants) or only state (a
 * variable or what is computed from variables alone: a variable's read, a
 * parameter's transpose, the decay of a momentum buffer). Where they run is
 * decided by what reads them: the placers schedule the rest and put each of
 * these where its first reader goes (etf_materialize, topo_materialize), as
 * if it were made there when the step begins. Scheduled on their own they
 * would all be ready at time 0 and go round the idle GPUs (m-etf) or fill
 * the first GPU (m-topo), pinning every unit that holds one (a PyTorch batch
 * norm writes its running statistics, an SGD update its parameter) far from
 * its data. The batch and constants are no state: what reads them is
 * scheduled. Placing every op, the placers schedule every op as Baechi's
 * list scheduling does. */
static void list_mark_lazy(list_ctx *c) {
    const dp_graph *g = c->g;
    uint8_t *state = c->lazy + g->n_ops; /* borrowed: c->lazy has room for 2 n_ops */
    if (!c->fwd.backward) return;
    for (int32_t j = 0; j < g->n_ops; j++) {
        int32_t op = g->topo[j];
        const dp_op *o = &g->ops[op];
        /* forward, and a unit with a choice of devices (else no choice to defer) */
        int free_op = !list_backward(c, op) && dp_mask_count(c->mask[c->u.unit_of[op]]) > 1;
        int st = free_op && (o->n_inputs > 0 || dp_cost_type_is_variable(dp_graph_str(g, o->type)));
        for (int32_t k = 0; k < o->n_inputs && st; k++) st = state[g->inputs[o->inputs_at + k].op];
        state[op] = (uint8_t)st;
        c->lazy[op] = (uint8_t)(st || (free_op && o->n_inputs == 0));
        c->n_lazy += c->lazy[op];
    }
}

/* In the forward-only placement, leaves to the second pass (as backward
 * ops) the forward ops that no forward op reads: the loss, and what the
 * forward pass keeps only for the backward one (PyTorch's detached views of
 * activations). They end the forward graph, so earliest-start scheduling
 * would send them to whichever GPU is idle, and with them the activations
 * they hold; the second pass puts them beside their data. */
static void list_mark_ends(list_ctx *c) {
    const dp_graph *g = c->g;
    if (!c->fwd.backward) return;
    for (int32_t op = 0; op < g->n_ops; op++) {
        if (c->fwd.backward[op] || c->lazy[op]) continue;
        int end = 1; /* read by backward ops only (1), not by the ends marked so far (2) */
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1] && end; t++)
            for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1] && end; x++)
                end = c->fwd.backward[g->consumers[x]] == 1;
        if (!end) continue;
        c->fwd.backward[op] = 2;
        c->fwd.n_backward++;
    }
}

/* Whether op is one the list placers schedule themselves: a forward op,
 * neither state (list_mark_lazy) nor an end left to the second pass. */
static int list_scheduled(const list_ctx *c, int32_t op) { return !list_backward(c, op) && !c->lazy[op]; }

/* Baechi's uniform cap: the memory m-topo counts for the ops that go to the
 * GPUs (op_kept_bytes; their sum in *total_out unless NULL), divided by the
 * number of GPUs, plus the largest. */
static double list_uniform_cap(const list_ctx *c, double *total_out) {
    const dp_graph *g = c->g;
    dp_mask pool = dp_mask_gpus(c->ds);
    double total = 0, largest = 0;
    for (int32_t i = 0; i < g->n_ops; i++) {
        if (!(c->mask[c->u.unit_of[i]] & pool)) continue;
        double m = op_kept_bytes(g, i);
        total += m;
        if (m > largest) largest = m;
    }
    if (total_out) *total_out = total;
    return total / dp_mask_count(pool) + largest;
}

/* For each unit, its one successor (succ) and its one predecessor (pred)
 * over the edges between scheduled ops of two units: -1 none, -2 several. */
static void list_chain_links(const list_ctx *c, int32_t *succ, int32_t *pred) {
    const dp_graph *g = c->g;
    for (int32_t k = 0; k < c->u.n_units; k++) succ[k] = pred[k] = -1;
    for (int32_t op = 0; op < g->n_ops; op++) {
        if (!list_scheduled(c, op)) continue;
        const dp_op *o = &g->ops[op];
        for (int32_t x = 0; x < o->n_inputs; x++) {
            int32_t p = g->inputs[o->inputs_at + x].op, a = c->u.unit_of[p], b = c->u.unit_of[op];
            if (a == b || !list_scheduled(c, p)) continue;
            succ[a] = succ[a] == -1 || succ[a] == b ? b : -2;
            pred[b] = pred[b] == -1 || pred[b] == a ? a : -2;
        }
    }
}

/* Replaces the units by group [n_ops] (ng groups, each a union of units with
 * one mask): masks and parameters follow. */
static dp_status list_regroup(list_ctx *c, const int32_t *group, int32_t ng, dp_error *err) {
    const dp_graph *g = c->g;
    dp_units u;
    dp_status st = dp_units_init_from_groups(&u, group, g->n_ops, ng, err);
    if (st) return st;
    dp_mask *mask = malloc(((size_t)ng + 1) * sizeof(dp_mask));
    if (!mask) {
        dp_units_free(&u);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d units)", ng);
    }
    for (int32_t i = 0; i < g->n_ops; i++) mask[group[i]] = c->mask[c->u.unit_of[i]];
    memset(c->unit_params, 0, (size_t)c->u.n_units * sizeof(double)); /* ng <= n_units: room enough */
    for (int32_t i = 0; i < g->n_ops; i++) c->unit_params[group[i]] += (double)g->ops[i].param_bytes;
    dp_units_free(&c->u);
    c->u = u;
    free(c->mask);
    c->mask = mask;
    return DP_STATUS_OK;
}

/* Operator fusion (Baechi fuses chains of ops before placing them), on the
 * modules of a PyTorch export placed forward-only: a unit whose scheduled
 * ops feed one other unit only, which they alone feed, joins it, so the
 * chain goes to one device as one unit. Chains form in topological order
 * and stop where the joined unit would exceed Baechi's uniform cap
 * (list_uniform_cap, counting every op of the units as m-topo does), so a
 * model that does not fit one GPU still splits; units with different
 * devices allowed never join. The exporter makes each layer's convolution,
 * its batch norm and the ReLU of the module around them three modules: as
 * units of their own, earliest start sent a batch norm to an idle GPU when
 * its convolution's GPU was busy, and its activation and gradient across
 * with it. Joining a chain takes none of the graph's parallelism away (the
 * second unit cannot start before the first has run), only the choice to
 * move the rest of a chain to another GPU halfway. Ops placed one by one
 * are left as they are (the zoo's units measured slower fused). */
static dp_status list_fuse_chains(list_ctx *c, const dp_place_options *opt, dp_error *err) {
    const dp_graph *g = c->g;
    if (!c->fwd.backward || dp_units_spec_resolve(opt->units, g).kind != DP_UNITS_MODULE) return DP_STATUS_OK;
    int32_t n = g->n_ops, nu = c->u.n_units, joined = 0;
    size_t su = (size_t)nu + 1;
    int32_t *succ = malloc(su * sizeof(int32_t)), *pred = malloc(su * sizeof(int32_t));
    int32_t *parent = malloc(su * sizeof(int32_t)), *id = malloc(su * sizeof(int32_t));
    int32_t *group = malloc(((size_t)n + 1) * sizeof(int32_t));
    double *mem = calloc(su, sizeof(double));
    dp_status st = DP_STATUS_OK;
    if (!succ || !pred || !parent || !id || !group || !mem) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (fusing %d units)", nu);
        goto done;
    }
    list_chain_links(c, succ, pred);
    for (int32_t k = 0; k < nu; k++) parent[k] = k, id[k] = -1;
    for (int32_t i = 0; i < n; i++) mem[c->u.unit_of[i]] += op_kept_bytes(g, i);
    double cap = list_uniform_cap(c, NULL);
    for (int32_t j = 0; j < n; j++) {
        int32_t op = g->topo[j], k = c->u.unit_of[op];
        if (!list_scheduled(c, op) || id[k] == 0) continue;
        id[k] = 0; /* each unit once, at its first scheduled op */
        int32_t s = succ[k];
        if (s < 0 || pred[s] != k || c->mask[k] != c->mask[s]) continue;
        int32_t a = dp_uf_find(parent, k), b = dp_uf_find(parent, s);
        double sum = mem[a] + mem[b];
        if (a == b || sum > cap) continue;
        mem[dp_uf_join(parent, a, b)] = sum;
        joined++;
    }
    if (!joined) goto done;
    for (int32_t k = 0; k < nu; k++) id[k] = -1;
    memcpy(group, c->u.unit_of, (size_t)n * sizeof(int32_t));
    st = list_regroup(c, group, dp_uf_relabel(parent, group, n, id), err);
done:
    free(succ), free(pred), free(parent), free(id), free(group), free(mem);
    return st;
}

/* Units (method m's grouping step; with opt->forward_only and gradient
 * scopes in g, the backward ops and each gradient op in its anchor's unit;
 * modules with their chains fused, list_fuse_chains), their devices (the
 * GPUs, or their constraint), their parameters, nothing pinned, the memory
 * tracker. */
static dp_status list_init(list_ctx *c, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                           const dp_place_options *opt, dp_error *err) {
    memset(c, 0, sizeof *c);
    c->g = g;
    c->ds = ds;
    if (!(opt->memory_fraction > 0 && opt->memory_fraction <= 1))
        return dp_error_set(err, DP_STATUS_INVALID, "memory fraction %g is not in (0, 1]", opt->memory_fraction);
    dp_status st;
    if (opt->forward_only) {
        if ((st = place_fwd_init(&c->fwd, g, err))) return st;
        if (!c->fwd.n_backward) place_fwd_free(&c->fwd);
    }
    if ((st = place_units_init(&c->u, g, ds, m, opt, c->fwd.backward ? &c->fwd : NULL, err))) {
        place_fwd_free(&c->fwd);
        return st;
    }
    int32_t nu = c->u.n_units;
    size_t n = (size_t)g->n_ops + 1;
    c->mask = malloc((size_t)nu * sizeof(dp_mask));
    c->unit_params = calloc((size_t)nu, sizeof(double));
    c->pinned = malloc((size_t)nu * sizeof(int32_t));
    c->lazy = calloc(2 * n, 1);
    c->closure = malloc(n * sizeof(int32_t));
    c->walk = malloc((n + 1) * sizeof *c->walk);
    c->seen = calloc(n, sizeof(int32_t));
    c->useen = calloc((size_t)nu + 1, sizeof(int32_t));
    if (!c->mask || !c->unit_params || !c->pinned || !c->lazy || !c->closure || !c->walk || !c->seen || !c->useen) {
        list_free(c);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (%d units)", nu);
    }
    if ((st = dp_units_masks(&c->u, g, ds, dp_mask_gpus(ds), c->mask, err)) ||
        (st = memtrack_init(&c->mt, g, ds, opt->memory_fraction, err))) {
        list_free(c);
        return st;
    }
    for (int32_t i = 0; i < g->n_ops; i++) c->unit_params[c->u.unit_of[i]] += (double)g->ops[i].param_bytes;
    for (int32_t k = 0; k < nu; k++) c->pinned[k] = -1;
    c->dataflow = opt->rules != DP_PLACE_RULES_PAPER;
    if (c->dataflow) {
        list_mark_lazy(c);
        list_mark_ends(c);
    }
    if ((st = list_fuse_chains(c, opt, err))) {
        list_free(c);
        return st;
    }
    /* m-etf and m-sct asked to count the backward pass: each unit's backward
     * ops reserved whole with its parameters, as m-topo counts them */
    if (opt->memory_backward && m != DP_PLACE_METHOD_M_TOPO && c->fwd.backward)
        for (int32_t i = 0; i < g->n_ops; i++)
            if (c->fwd.backward[i]) c->unit_params[c->u.unit_of[i]] += op_kept_bytes(g, i);
    return DP_STATUS_OK;
}

/* Starts a placement into out: nothing placed yet. */
static void list_start(list_ctx *c, int32_t *out) {
    c->out = out;
    for (int32_t i = 0; i < c->g->n_ops; i++) out[i] = -1;
}

/* Whether op is a state op left unplaced: it goes where its first reader goes. */
static int list_pending_lazy(const list_ctx *c, int32_t op) { return c->lazy[op] && c->out[op] < 0; }

/* The device a state op p would take for a reader on d: its unit's device
 * once pinned, else d when p may go there, else the first it may use. */
static int32_t list_lazy_dev(const list_ctx *c, int32_t p, int32_t d) {
    int32_t k = c->u.unit_of[p];
    if (c->pinned[k] >= 0) return c->pinned[k];
    return (c->mask[k] & dp_mask_bit(d)) ? d : dp_mask_first(c->mask[k]);
}

/* How many times a transfer of p's output counts in the list placers'
 * estimates: twice in the forward-only placement when p computes it (an
 * activation), as the backward pass sends its gradient back the same way and
 * both copies delay the step; once for state (p lazy), which can cross while
 * the step begins and whose gradient goes to an update nothing waits for,
 * and once when every op is placed (the schedule then holds both ways). */
static double list_comm_weight(const list_ctx *c, int32_t p) {
    return c->dataflow && c->fwd.backward && !c->lazy[p] ? 2.0 : 1.0;
}

/* Fills c->closure with the unplaced state ops op reads, directly or
 * through other state ops, each once and after the state ops it reads;
 * returns their number. An explicit stack: no recursion on graphs. */
static int32_t list_lazy_closure(list_ctx *c, int32_t op) {
    const dp_graph *g = c->g;
    int32_t stamp = ++c->stamp, n = 0, depth = 1;
    c->walk[0][0] = op, c->walk[0][1] = 0;
    while (depth > 0) {
        int32_t *top = c->walk[depth - 1];
        const dp_op *o = &g->ops[top[0]];
        if (top[1] < o->n_inputs) {
            int32_t p = g->inputs[o->inputs_at + top[1]++].op;
            if (!list_pending_lazy(c, p) || c->seen[p] == stamp) continue;
            c->seen[p] = stamp;
            c->walk[depth][0] = p, c->walk[depth][1] = 0;
            depth++;
            continue;
        }
        if (--depth > 0) c->closure[n++] = top[0];
    }
    return n;
}

/* Parameters the n state ops of c->closure that op reads would reserve
 * with it: those of each unit neither pinned yet nor op's own, once. */
static double list_closure_params(list_ctx *c, int32_t op, int32_t n) {
    int32_t stamp = ++c->stamp;
    c->useen[c->u.unit_of[op]] = stamp;
    double b = 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t k = c->u.unit_of[c->closure[j]];
        if (c->pinned[k] >= 0 || c->useen[k] == stamp) continue;
        c->useen[k] = stamp;
        b += c->unit_params[k];
    }
    return b;
}

/* Parameters op would reserve on arrival: its group's, unless already there. */
static double list_new_params(const list_ctx *c, int32_t op) {
    int32_t k = c->u.unit_of[op];
    return c->pinned[k] < 0 ? c->unit_params[k] : 0;
}

/* The device of mask with the most room left for op (lowest index on ties). */
static int32_t list_roomiest(list_ctx *c, int32_t op, dp_mask m) {
    int32_t best = -1;
    double best_room = 0;
    for (; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        double room = c->mt.cap[d] - memtrack_need(&c->mt, op, d, list_new_params(c, op));
        if (best < 0 || room > best_room) {
            best = d;
            best_room = room;
        }
    }
    return best;
}

/* Puts op on d: memory booked, its colocation group pinned to d. */
static void list_put(list_ctx *c, int32_t op, int32_t d) {
    int32_t k = c->u.unit_of[op];
    memtrack_place(&c->mt, op, d, list_new_params(c, op));
    c->pinned[k] = d;
    c->out[op] = d;
}

/* After the forward ops: puts every backward op of the forward-only
 * placement and every state op no forward op read, in topological order,
 * where its unit is pinned, else with the producer of its largest input
 * (where the data is); then, in reverse order, an op without a placed
 * producer with its first placed consumer. A device outside the unit's mask
 * gives way to the mask's device with the most room. c->out[op] is -1 for
 * the ops not placed yet. */
static void list_follow(list_ctx *c) {
    const dp_graph *g = c->g;
    const int32_t *out = c->out;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t j = 0; j < g->n_ops; j++) {
            int32_t op = g->topo[pass ? g->n_ops - 1 - j : j], k = c->u.unit_of[op];
            if (out[op] >= 0 || !(list_backward(c, op) || c->lazy[op])) continue;
            int32_t d = c->pinned[k];
            const dp_op *o = &g->ops[op];
            double most = -1;
            for (int32_t x = 0; x < o->n_inputs && c->pinned[k] < 0 && !pass; x++) {
                dp_input in = g->inputs[o->inputs_at + x];
                double b = (double)place_tensor_bytes(g, dp_graph_tensor(g, in.op, in.slot));
                if (out[in.op] >= 0 && b > most) most = b, d = out[in.op];
            }
            for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1] && d < 0 && pass; t++)
                for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1] && d < 0; x++)
                    if (out[g->consumers[x]] >= 0) d = out[g->consumers[x]];
            if (d < 0 && !pass) continue;
            if (d < 0 || !(c->mask[k] & dp_mask_bit(d))) d = list_roomiest(c, op, c->mask[k]);
            list_put(c, op, d);
        }
}

/* ---- m-topo -------------------------------------------------------------- */

/* Before a reader goes to d: puts the n state ops of c->closure (its
 * unplaced state inputs, producers first) where they would go for it
 * (list_lazy_dev), adding each one's memory to used as m-topo counts it
 * (with back[unit], its unit's backward ops, when it pins the unit). */
static void topo_materialize(list_ctx *c, int32_t n, int32_t d, double *used, const double *back) {
    const dp_graph *g = c->g;
    for (int32_t j = 0; j < n; j++) {
        int32_t p = c->closure[j], k = c->u.unit_of[p], e = list_lazy_dev(c, p, d);
        const dp_op *o = &g->ops[p];
        used[e] += memtrack_recv(&c->mt, p, e) + (double)o->param_bytes + op_output_bytes(g, p) +
                   (double)o->temp_bytes + (c->pinned[k] < 0 ? back[k] : 0);
        list_put(c, p, e);
    }
}

/* Memory m-topo counts for the n state ops of c->closure that op reads:
 * each one's parameters, outputs and scratch, never freed, and the
 * backward ops (back[unit]) of each unit neither pinned nor op's, once. */
static double topo_closure_bytes(list_ctx *c, int32_t op, int32_t n, const double *back) {
    const dp_graph *g = c->g;
    int32_t stamp = ++c->stamp;
    c->useen[c->u.unit_of[op]] = stamp;
    double b = 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t p = c->closure[j], k = c->u.unit_of[p];
        b += (double)g->ops[p].param_bytes + op_output_bytes(g, p) + (double)g->ops[p].temp_bytes;
        if (c->pinned[k] >= 0 || c->useen[k] == stamp) continue;
        c->useen[k] = stamp;
        b += back[k];
    }
    return b;
}

dp_status dp_place_m_topo(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                          dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    list_ctx c;
    dp_status st = list_init(&c, g, ds, DP_PLACE_METHOD_M_TOPO, &o, err);
    if (st) return st;
    dp_mask pool = dp_mask_gpus(ds);
    int32_t pool_dev[DP_MAX_DEVICES], n_pool = 0;
    for (dp_mask m = pool; m; m &= m - 1) pool_dev[n_pool++] = dp_mask_first(m);

    /* Baechi's uniform cap over the ops that go to the pool, each op counted
     * as never freed (parameters + outputs + scratch). In the forward-only
     * placement a unit's backward ops come with its first forward op: their
     * memory (back[unit]) is counted when the unit is pinned. */
    double total, room = 0, uniform = list_uniform_cap(&c, &total);
    double *back = calloc((size_t)c.u.n_units + 1, sizeof(double));
    if (!back) {
        list_free(&c);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-topo on %d units)", c.u.n_units);
    }
    for (int32_t i = 0; i < g->n_ops; i++)
        if ((c.mask[c.u.unit_of[i]] & pool) && list_backward(&c, i)) back[c.u.unit_of[i]] += op_kept_bytes(g, i);
    double cap[DP_MAX_DEVICES] = {0};
    for (int32_t p = 0; p < n_pool; p++) room += c.mt.cap[pool_dev[p]];
    for (int32_t p = 0; p < n_pool; p++) {
        int32_t d = pool_dev[p];
        /* when the graph fits counted this way, a device's share also stays
         * under its memory, which makes the placement fit for certain;
         * otherwise the uniform cap alone spreads it evenly */
        cap[d] = total <= room && c.mt.cap[d] < uniform ? c.mt.cap[d] : uniform;
    }
    int fits = total <= room;
    double used[DP_MAX_DEVICES] = {0};
    int32_t cur = 0; /* the GPU being filled (index into pool_dev) */
    list_start(&c, out);
    for (int32_t j = 0; j < g->n_ops; j++) {
        int32_t op = g->topo[j], k = c.u.unit_of[op];
        int32_t d = c.pinned[k];
        if (list_backward(&c, op) || c.lazy[op]) continue;
        dp_mask cand = c.mask[k] & pool;
        /* the op with the state ops it reads that are not placed yet */
        int32_t n_lazy = list_lazy_closure(&c, op);
        double m = (double)g->ops[op].param_bytes + op_output_bytes(g, op) + (double)g->ops[op].temp_bytes +
                   topo_closure_bytes(&c, op, n_lazy, back);
        double lazy_params = list_closure_params(&c, op, n_lazy);
        if (d < 0) m += back[k];
        if (d < 0 && !cand) d = dp_mask_first(c.mask[k]); /* CPU-only */
        for (int32_t p = cur; p < n_pool && d < 0; p++) {
            /* the first GPU from the current one on with room for the op */
            int32_t e = pool_dev[p];
            if ((cand & dp_mask_bit(e)) && used[e] + memtrack_recv(&c.mt, op, e) + m <= cap[e] &&
                (fits || memtrack_need(&c.mt, op, e, list_new_params(&c, op) + lazy_params) <= c.mt.cap[e])) {
                d = e;
                if (cand == pool) cur = p; /* a constrained op does not move the fill on */
            }
        }
        if (d < 0 && fits) { /* no room left: the allowed GPU with the most room */
            for (dp_mask r = cand; r; r &= r - 1) {
                int32_t e = dp_mask_first(r);
                if (d < 0 || cap[e] - used[e] > cap[d] - used[d]) d = e;
            }
        }
        if (d < 0) d = list_roomiest(&c, op, cand);
        topo_materialize(&c, n_lazy, d, used, back);
        used[d] += memtrack_recv(&c.mt, op, d) + (double)g->ops[op].param_bytes + op_output_bytes(g, op) +
                   (double)g->ops[op].temp_bytes + (c.pinned[k] < 0 ? back[k] : 0);
        list_put(&c, op, d);
    }
    list_follow(&c);
    free(back);
    list_free(&c);
    return DP_STATUS_OK;
}

/* ---- m-etf --------------------------------------------------------------- */

typedef struct etf {
    list_ctx c;
    place_costs costs;
    double *blevel;      /* [n_ops] longest path to the end, op included */
    int32_t *pending;    /* [n_ops] input edges whose producer is not placed; state
                            ops (c.lazy) are never scheduled and count for none */
    double *finish;      /* [n_ops] */
    uint8_t *done;       /* [n_ops] */
    dp_mask *dropped; /* [n_ops] devices without room for the op */
    uint8_t *forced;     /* [n_ops] placed without a memory check */
    double *arrive;      /* [n_tensors * n_devices] when a copy arrives (valid where mt.have says) */
    int32_t *stamp;      /* [n_tensors] dedup of an op's inputs */
    int32_t stamp_now;
    double link_free[2 * DP_MAX_DEVICES * DP_MAX_DEVICES];
    double stream_free[DP_MAX_DEVICES][DP_MAX_STREAMS];
    uint32_t *rank;      /* [n_ops] rank of -blevel among the ops (equal blevels, equal ranks) */
    /* candidates per device, entries (key, tie, op); ties then go to the lower op */
    dp_heap wait[DP_MAX_DEVICES];  /* (data ready, rank): inputs not all there yet */
    dp_heap avail[DP_MAX_DEVICES]; /* (-blevel, 0): could start once the device is free */
    /* m-sct */
    int sct;                        /* favourite children in force          */
    int32_t *fav;                   /* [n_ops] favourite child, -1 none      */
    int32_t last[DP_MAX_DEVICES];   /* last op scheduled on each device, -1  */
} etf;

/* When d can start its next op: its earliest free stream. */
static double etf_device_free(const etf *e, int32_t d) {
    double t = e->stream_free[d][0];
    for (int32_t s = 1; s < e->c.ds->devices[d].streams; s++)
        if (e->stream_free[d][s] < t) t = e->stream_free[d][s];
    return t;
}

/* When tensor t (produced by p) would be on d if sent now; with `commit`
 * (p placed), books the links and records the copy. Hops as the simulator
 * runs them: a hop takes its link when free for latency + bytes / bandwidth;
 * through the host, the second hop asks for its link when the first ends
 * (store and forward) or starts (pipelined: it starts a first-hop latency
 * later at the soonest and ends a latency after the first hop at the
 * soonest). Bytes and latencies count list_comm_weight times. */
static double etf_arrival(etf *e, int32_t p, int64_t t, int32_t d, int commit) {
    const dp_devices *ds = e->c.ds;
    /* a state op not placed yet would be put where the reader needs it,
     * its finish time 0 (state exists when the step begins) */
    int32_t s = list_pending_lazy(&e->c, p) ? list_lazy_dev(&e->c, p, d) : e->c.pinned[e->c.u.unit_of[p]];
    assert(!commit || !list_pending_lazy(&e->c, p));
    int32_t nd = ds->n_devices;
    if (s == d) return e->finish[p];
    if (e->c.mt.have[t] & dp_mask_bit(d)) return e->arrive[t * nd + d];
    int64_t pair = (int64_t)s * nd + d;
    int pipelined = ds->staging == DP_STAGING_PIPELINED;
    double w = list_comm_weight(&e->c, p);
    double bytes = w * (double)place_tensor_bytes(e->c.g, t), ask = e->finish[p], first_start = 0, first_end = 0, at = 0;
    for (int k = 0; k < ds->route_len[pair]; k++) {
        int32_t l = ds->route[pair * 2 + k];
        double take = ask > e->link_free[l] ? ask : e->link_free[l], start = take, lat = w * ds->links[l].latency_s;
        if (k > 0 && pipelined && first_start + ds->links[ds->route[pair * 2]].latency_s > start)
            start = first_start + ds->links[ds->route[pair * 2]].latency_s;
        at = start + lat + bytes / dp_devices_link_rate(&ds->links[l]);
        if (k > 0 && pipelined && first_end + lat > at) at = first_end + lat;
        if (commit) e->link_free[l] = at;
        if (k == 0) first_start = take, first_end = at;
        ask = pipelined ? take : at;
    }
    if (commit) e->arrive[t * nd + d] = at;
    return at;
}

/* When all of op's inputs would be on d (each tensor counted once); with
 * `commit`, books the transfers. */
static double etf_data_ready(etf *e, int32_t op, int32_t d, int commit) {
    const dp_graph *g = e->c.g;
    const dp_op *o = &g->ops[op];
    double ready = 0;
    int32_t stamp = ++e->stamp_now;
    for (int32_t k = 0; k < o->n_inputs; k++) {
        dp_input in = g->inputs[o->inputs_at + k];
        int64_t t = dp_graph_tensor(g, in.op, in.slot);
        if (e->stamp[t] == stamp) continue; /* a tensor read twice is sent once */
        e->stamp[t] = stamp;
        double at = etf_arrival(e, in.op, t, d, commit);
        if (at > ready) ready = at;
    }
    return ready;
}

/* Devices op may still go to: its group's device once pinned, else its
 * unit's devices, less those without room for it. */
static dp_mask etf_candidates(const etf *e, int32_t op) {
    int32_t k = e->c.u.unit_of[op];
    dp_mask m = e->c.pinned[k] >= 0 ? dp_mask_bit(e->c.pinned[k]) : e->c.mask[k];
    return m & ~e->dropped[op];
}

/* Makes op a candidate for d, keyed by its estimated data-ready time;
 * -1 when out of memory. */
static int etf_offer(etf *e, int32_t op, int32_t d) {
    return dp_heap_push_tie(&e->wait[d], etf_data_ready(e, op, d, 0), e->rank[op], op);
}

/* Whether heap entry op is still a candidate for d. */
static int etf_valid(const etf *e, int32_t op, int32_t d) {
    return !e->done[op] && (etf_candidates(e, op) & dp_mask_bit(d));
}

typedef struct etf_prio {
    double blevel;
    int32_t op;
} etf_prio;

/* Longer paths first. */
static int cmp_prio(const void *x, const void *y) {
    double a = ((const etf_prio *)x)->blevel, b = ((const etf_prio *)y)->blevel;
    return (a < b) - (a > b);
}

/* Fills rank[n]: 0 for the ops with the longest path, +1 for each shorter
 * path, so ranks order as -blevel does (the waiting lists' tie-break).
 * Returns -1 when out of memory. */
static int etf_rank(etf *e, int32_t n) {
    etf_prio *p = malloc((size_t)n * sizeof *p);
    e->rank = malloc((size_t)n * sizeof(uint32_t));
    if (!p || !e->rank) {
        free(p);
        return -1;
    }
    for (int32_t i = 0; i < n; i++) p[i] = (etf_prio){e->blevel[i], i};
    qsort(p, (size_t)n, sizeof *p, cmp_prio);
    uint32_t r = 0;
    for (int32_t j = 0; j < n; j++) {
        if (j > 0 && p[j].blevel != p[j - 1].blevel) r++;
        e->rank[p[j].op] = r;
    }
    free(p);
    return 0;
}

/* Frees the scheduler and everything it holds. */
static void etf_free(etf *e) {
    list_free(&e->c);
    place_costs_free(&e->costs);
    free(e->blevel);
    free(e->pending);
    free(e->finish);
    free(e->done);
    free(e->dropped);
    free(e->forced);
    free(e->arrive);
    free(e->stamp);
    free(e->rank);
    free(e->fav);
    for (int32_t d = 0; d < DP_MAX_DEVICES; d++) {
        dp_heap_free(&e->wait[d]);
        dp_heap_free(&e->avail[d]);
    }
    free(e);
}

/* Allocates the scheduler for g on ds: units (method m's grouping), masks, memory tracker (list
 * context), op times, per-op and per-tensor state. */
static dp_status etf_init(etf **out, const dp_graph *g, const dp_devices *ds, dp_place_method m,
                          const dp_place_options *o, dp_error *err) {
    *out = NULL;
    etf *e = calloc(1, sizeof *e);
    if (!e) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory");
    dp_status st = list_init(&e->c, g, ds, m, o, err);
    if (st) {
        free(e);
        return st;
    }
    int32_t n = g->n_ops, nd = ds->n_devices;
    assert(ds->n_links <= 2 * DP_MAX_DEVICES * DP_MAX_DEVICES); /* link_free's size */
    if ((st = place_costs_init(&e->costs, g, ds, err))) {
        etf_free(e);
        return st;
    }
    e->blevel = malloc((size_t)n * sizeof(double));
    e->pending = malloc((size_t)n * sizeof(int32_t));
    e->finish = calloc((size_t)n, sizeof(double));
    e->done = calloc((size_t)n, 1);
    e->dropped = calloc((size_t)n, sizeof(dp_mask));
    e->forced = calloc((size_t)n, 1);
    e->arrive = malloc(((size_t)g->n_tensors * (size_t)nd + 1) * sizeof(double));
    e->stamp = malloc(((size_t)g->n_tensors + 1) * sizeof(int32_t));
    if (!e->stamp || !e->blevel || !e->pending || !e->finish || !e->done || !e->dropped || !e->forced || !e->arrive) {
        etf_free(e);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-etf on %d ops)", n);
    }
    for (int64_t t = 0; t < g->n_tensors; t++) e->stamp[t] = -1;
    for (int32_t i = 0; i < n; i++) {
        const dp_op *op_i = &g->ops[i];
        e->pending[i] = 0;
        for (int32_t k = 0; k < op_i->n_inputs; k++) e->pending[i] += !e->c.lazy[g->inputs[op_i->inputs_at + k].op];
    }
    for (int32_t d = 0; d < DP_MAX_DEVICES; d++) e->last[d] = -1;
    *out = e;
    return DP_STATUS_OK;
}

/* The static priority: an op's mean time over its devices plus the longest
 * path after it (blevel), and its rank. Returns -1 when out of memory. */
static int etf_priorities(etf *e) {
    const dp_graph *g = e->c.g;
    const list_ctx *c = &e->c;
    for (int32_t j = g->n_ops - 1; j >= 0; j--) {
        int32_t op = g->topo[j];
        dp_mask m = c->mask[c->u.unit_of[op]];
        double sum = 0;
        for (dp_mask r = m; r; r &= r - 1) sum += place_costs_op(&e->costs, op, dp_mask_first(r));
        double after = 0;
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++)
            for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1]; x++)
                if (!list_backward(c, g->consumers[x]) && e->blevel[g->consumers[x]] > after)
                    after = e->blevel[g->consumers[x]];
        e->blevel[op] = sum / dp_mask_count(m) + after;
    }
    return etf_rank(e, g->n_ops);
}

/* Offers op, whose inputs are all placed, to each device it may go to.
 * Returns -1 when out of memory. */
static int etf_offer_all(etf *e, int32_t op) {
    int oom = 0;
    for (dp_mask m = etf_candidates(e, op); m && !oom; m &= m - 1) oom = etf_offer(e, op, dp_mask_first(m));
    return oom;
}

/* A candidate: op on dev, when it could start, its priority (-blevel). */
typedef struct etf_pick {
    int32_t op, dev;
    double start, prio;
} etf_pick;

/* Device d's memory figure if op went there now, with the parameters of
 * the state ops it would bring (etf_materialize). */
static double etf_need(etf *e, int32_t op, int32_t d) {
    list_ctx *c = &e->c;
    int32_t n = list_lazy_closure(c, op);
    return memtrack_need(&c->mt, op, d, list_new_params(c, op) + list_closure_params(c, op, n));
}

/* Finds device d's best candidate (the earliest start, then the priority),
 * dropping stale entries, refreshing estimates and taking d out of the
 * running for ops it has no room for, and keeps it in *best when it beats
 * the best so far (start, then priority, then the lower op). Returns -1
 * when out of memory. */
static int etf_best_on_device(etf *e, int32_t d, etf_pick *best) {
    list_ctx *c = &e->c;
    double free_at = etf_device_free(e, d);
    dp_heap *w = &e->wait[d], *a = &e->avail[d];
    int oom = 0;
    while (!oom) {
        /* ready by the time d is free */
        while (w->n && dp_heap_entry_key(dp_heap_top(w)) <= free_at && !oom) {
            int32_t op = dp_heap_entry_payload(dp_heap_pop(w));
            if (etf_valid(e, op, d)) oom = dp_heap_push_tie(a, -e->blevel[op], 0, op);
        }
        if (oom) break;
        while (a->n && !etf_valid(e, dp_heap_entry_payload(dp_heap_top(a)), d)) dp_heap_pop(a);
        while (w->n && !etf_valid(e, dp_heap_entry_payload(dp_heap_top(w)), d)) dp_heap_pop(w);
        dp_heap *src = a->n ? a : w->n ? w : NULL;
        if (!src) break;
        dp_heap_entry top = dp_heap_top(src);
        int32_t op = dp_heap_entry_payload(top);
        /* links booked since the op was offered make its inputs
         * later: refresh the estimate (it only grows) and look again */
        double ready = etf_data_ready(e, op, d, 0), stored = src == a ? free_at : dp_heap_entry_key(top);
        if (ready > stored) {
            dp_heap_pop(src);
            oom = dp_heap_push_tie(w, ready, e->rank[op], op);
            continue;
        }
        double start = stored, prio = src == a ? dp_heap_entry_key(top) : -e->blevel[op];
        if (!e->forced[op] && c->pinned[c->u.unit_of[op]] != d && etf_need(e, op, d) > c->mt.cap[d]) {
            /* no room on d: d is out of the running for op; when no
             * device is left, op goes where the most room is */
            dp_heap_pop(src);
            e->dropped[op] |= dp_mask_bit(d);
            if (!etf_candidates(e, op)) {
                int32_t f = list_roomiest(c, op, c->mask[c->u.unit_of[op]]);
                e->dropped[op] = ~dp_mask_bit(f);
                e->forced[op] = 1;
                oom = etf_offer(e, op, f); /* seen this round if f > d, else the next */
            }
            continue;
        }
        if (best->op < 0 || start < best->start ||
            (start == best->start && (prio < best->prio || (prio == best->prio && op < best->op))))
            *best = (etf_pick){op, d, start, prio};
        break;
    }
    return oom;
}

/* Before op goes to d: puts the state ops it reads that are not placed yet
 * where they would go for it (list_lazy_dev), producers first, each with
 * the transfers from the state ops it reads booked (its finish time: when
 * they are there). */
static void etf_materialize(etf *e, int32_t op, int32_t d) {
    list_ctx *c = &e->c;
    int32_t n = list_lazy_closure(c, op);
    for (int32_t j = 0; j < n; j++) {
        int32_t p = c->closure[j], dev = list_lazy_dev(c, p, d);
        e->finish[p] = etf_data_ready(e, p, dev, 1);
        list_put(c, p, dev);
    }
}

/* Schedules op on d: puts the state ops it reads that are not placed yet
 * where it needs them, books its transfers and a stream, pins its colocation
 * group (members waiting elsewhere come to d), and offers the consumers
 * whose inputs are now all placed. Returns -1 when out of memory. */
static int etf_schedule(etf *e, int32_t op, int32_t d) {
    list_ctx *c = &e->c;
    const dp_graph *g = c->g;
    int32_t k = c->u.unit_of[op];
    int newly_pinned = c->pinned[k] < 0;
    etf_materialize(e, op, d);
    double ready = etf_data_ready(e, op, d, 1);
    int32_t s = 0;
    for (int32_t x = 1; x < c->ds->devices[d].streams; x++)
        if (e->stream_free[d][x] < e->stream_free[d][s]) s = x;
    double start = ready > e->stream_free[d][s] ? ready : e->stream_free[d][s];
    e->finish[op] = start + place_costs_op(&e->costs, op, d);
    e->stream_free[d][s] = e->finish[op];
    e->last[d] = op;
    list_put(c, op, d);
    e->done[op] = 1;
    int oom = 0;
    if (newly_pinned) {
        /* members of the group already waiting elsewhere come to d */
        for (int32_t x = c->u.first[k]; x < c->u.first[k + 1] && !oom; x++) {
            int32_t mop = c->u.members[x];
            if (e->done[mop] || e->pending[mop] || !(e->dropped[mop] & dp_mask_bit(d))) continue;
            e->dropped[mop] &= ~dp_mask_bit(d);
            oom = etf_offer(e, mop, d);
        }
    }
    for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1] && !oom; t++)
        for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1] && !oom; x++) {
            int32_t cons = g->consumers[x];
            if (--e->pending[cons] == 0 && !list_backward(c, cons)) oom = etf_offer_all(e, cons);
        }
    return oom;
}

/* ---- m-sct --------------------------------------------------------------- */

/* Solves SCT's LP (place_sct.c) on the op graph: an edge per (producer,
 * consumer) pair, its transfer time that of its distinct tensors between
 * the first two devices of the pool (0 inside a unit: never sent), op
 * times averaged over each op's devices; fills e->fav. */
static dp_status sct_init(etf *e, const dp_place_options *o, place_sct_memo *memo, dp_error *err) {
    const dp_graph *g = e->c.g;
    const dp_devices *ds = e->c.ds;
    int32_t n = g->n_ops;
    dp_mask pool = dp_mask_gpus(ds);
    int32_t a = dp_mask_first(pool), b = dp_mask_count(pool) > 1 ? dp_mask_first(pool & (pool - 1)) : a;
    int64_t cap = 0;
    for (int32_t i = 0; i < n; i++) cap += g->ops[i].n_inputs;
    int32_t *from = malloc((size_t)(cap + 1) * sizeof(int32_t));
    int32_t *to = malloc((size_t)(cap + 1) * sizeof(int32_t));
    double *comm = malloc((size_t)(cap + 1) * sizeof(double));
    double *op_s = malloc((size_t)n * sizeof(double));
    int32_t *seen_by = malloc((size_t)n * sizeof(int32_t)); /* producer -> consumer that last saw it */
    int64_t *edge_of = malloc((size_t)n * sizeof(int64_t));
    e->fav = malloc((size_t)n * sizeof(int32_t));
    dp_status st = DP_STATUS_OK;
    if (!from || !to || !comm || !op_s || !seen_by || !edge_of || !e->fav) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct on %d ops)", n);
        goto done;
    }
    for (int32_t i = 0; i < n; i++) {
        dp_mask m = e->c.mask[e->c.u.unit_of[i]];
        double sum = 0;
        for (dp_mask r = m; r; r &= r - 1) sum += place_costs_op(&e->costs, i, dp_mask_first(r));
        op_s[i] = sum / dp_mask_count(m);
        seen_by[i] = -1;
    }
    int64_t ne = 0;
    for (int32_t j = 0; j < n; j++) {
        const dp_op *op = &g->ops[j];
        int32_t stamp = ++e->stamp_now;
        for (int32_t k = 0; k < op->n_inputs; k++) {
            dp_input in = g->inputs[op->inputs_at + k];
            int64_t t = dp_graph_tensor(g, in.op, in.slot);
            /* a forward op reads forward ops only; state ops are placed
             * with their readers, so their edges are no decision */
            if (in.op == j || list_backward(&e->c, j) || e->c.lazy[in.op]) continue;
            if (seen_by[in.op] != j) {
                seen_by[in.op] = j;
                edge_of[in.op] = ne;
                from[ne] = in.op, to[ne] = j, comm[ne] = 0;
                ne++;
            }
            if (e->stamp[t] == stamp) continue; /* a tensor read twice is sent once */
            e->stamp[t] = stamp;
            if (e->c.u.unit_of[in.op] != e->c.u.unit_of[j])
                comm[edge_of[in.op]] +=
                    list_comm_weight(&e->c, in.op) * dp_devices_transfer_seconds(ds, a, b, (double)place_tensor_bytes(g, t));
        }
    }
    double lp_makespan;
    st = place_sct_favourites(n, ne, from, to, comm, op_s, o->sct_threshold, memo, e->fav, &lp_makespan, err);
done:
    free(from), free(to), free(comm), free(op_s), free(seen_by), free(edge_of);
    return st;
}

/* Whether two picks compare as a beats b: earlier start, then higher
 * priority, then the lower op. */
static int etf_beats(const etf_pick *a, const etf_pick *b) {
    return b->op < 0 || a->start < b->start ||
           (a->start == b->start && (a->prio < b->prio || (a->prio == b->prio && a->op < b->op)));
}

/* The time op's inputs could be on every device it may use (SCT's urgent
 * time: by then it can start anywhere). */
static double sct_urgent(etf *e, int32_t op) {
    double u = 0;
    for (dp_mask m = etf_candidates(e, op); m; m &= m - 1) {
        double t = etf_data_ready(e, op, dp_mask_first(m), 0);
        if (t > u) u = t;
    }
    return u;
}

/* SCT's rule on device d whose own best candidate is *mine: when the last
 * op d ran has a favourite child that is ready, may go to d, fits there and
 * can start on d no later than anywhere else, d waits for it (the child
 * becomes d's candidate), unless d's best candidate can start at once and is
 * urgent (its inputs are on every device by then). */
static void sct_awake(etf *e, int32_t d, etf_pick *mine) {
    list_ctx *c = &e->c;
    int32_t last = e->last[d];
    if (last < 0) return;
    int32_t fc = e->fav[last];
    if (fc < 0 || e->done[fc] || e->pending[fc] || !(etf_candidates(e, fc) & dp_mask_bit(d))) return;
    if (mine->op == fc) return;
    double free_at = etf_device_free(e, d);
    double here = etf_data_ready(e, fc, d, 0);
    for (dp_mask m = etf_candidates(e, fc) & ~dp_mask_bit(d); m; m &= m - 1) {
        int32_t x = dp_mask_first(m);
        double there = etf_data_ready(e, fc, x, 0), fx = etf_device_free(e, x);
        if ((there > fx ? there : fx) < (here > free_at ? here : free_at)) return; /* sooner elsewhere */
    }
    if (!e->forced[fc] && c->pinned[c->u.unit_of[fc]] != d && etf_need(e, fc, d) > c->mt.cap[d]) return;
    if (mine->op >= 0 && mine->start <= free_at && sct_urgent(e, mine->op) <= free_at) return;
    *mine = (etf_pick){fc, d, here > free_at ? here : free_at, -e->blevel[fc]};
}

/* m-etf, and m-sct when e->sct: list scheduling until every op is placed. */
static dp_status etf_run(etf *e, int32_t *out, dp_error *err) {
    int32_t n = e->c.g->n_ops;
    int oom = etf_priorities(e);
    dp_mask used_devices = 0;
    for (int32_t k = 0; k < e->c.u.n_units; k++) used_devices |= e->c.mask[k];
    list_start(&e->c, out);
    for (int32_t i = 0; i < n && !oom; i++)
        if (e->pending[i] == 0 && !list_backward(&e->c, i) && !e->c.lazy[i]) oom = etf_offer_all(e, i);
    int idle = 0;
    for (int32_t placed = e->c.fwd.n_backward + e->c.n_lazy; placed < n && !oom;) {
        /* each device's best candidate; the best of them is scheduled */
        etf_pick best = {-1, -1, 0, 0};
        for (dp_mask m = used_devices; m && !oom; m &= m - 1) {
            int32_t d = dp_mask_first(m);
            etf_pick mine = {-1, -1, 0, 0};
            oom = etf_best_on_device(e, d, &mine);
            if (e->sct && !oom) sct_awake(e, d, &mine);
            if (mine.op >= 0 && etf_beats(&mine, &best)) best = mine;
        }
        if (oom) break;
        if (best.op < 0) { /* only forced ops left, offered to devices already looked at */
            /* a third round without a candidate: no device takes what is
             * left under its memory cap; the method cannot place this graph */
            if (++idle < 3) continue;
            return dp_error_set(err, DP_STATUS_UNSUPPORTED,
                                "no device has room for the %d ops left under the memory caps (%d placed)",
                                (int)(n - placed), (int)placed);
        }
        idle = 0;
        oom = etf_schedule(e, best.op, best.dev);
        placed++;
    }
    if (oom) return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (list scheduling of %d ops)", n);
    list_follow(&e->c);
    return DP_STATUS_OK;
}

dp_status dp_place_m_etf(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                         dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    etf *e;
    dp_status st = etf_init(&e, g, ds, DP_PLACE_METHOD_M_ETF, &o, err);
    if (st) return st;
    st = etf_run(e, out, err);
    etf_free(e);
    return st;
}

dp_status dp_place_m_sct(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt, int32_t *out,
                         dp_error *err) {
    return place_m_sct_memo(g, ds, opt, NULL, out, err);
}

dp_status place_m_sct_memo(const dp_graph *g, const dp_devices *ds, const dp_place_options *opt,
                           place_sct_memo *memo, int32_t *out, dp_error *err) {
    dp_place_options o = opt ? *opt : dp_place_options_default();
    if (!(o.sct_threshold > 0 && o.sct_threshold <= 1))
        return dp_error_set(err, DP_STATUS_INVALID, "m-sct threshold %g is not in (0, 1]", o.sct_threshold);
    etf *e;
    dp_status st = etf_init(&e, g, ds, DP_PLACE_METHOD_M_SCT, &o, err);
    if (st) return st;
    e->sct = 1;
    if (!(st = sct_init(e, &o, memo, err))) st = etf_run(e, out, err);
    etf_free(e);
    return st;
}
