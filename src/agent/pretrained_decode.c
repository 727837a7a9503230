/* The pretrained placer's decoder: what a graph and a device set determine
 * (computed once per context) and the placement decoded unit by unit with
 * a list scheduler's estimate of the schedule so far as the features'
 * state (docs/pretrained.md, "Features").
 *
 * The estimate is m-ETF's without its link booking: a unit starts on a
 * device when the device is free and the inputs from the units placed
 * before it have crossed the route (latency plus bytes over the slowest
 * link), and occupies the device for its time there. Memory is counted at
 * the graph's peak: with every op run in topological order on one device,
 * the moment the most bytes are live; a unit holds its parameters and
 * scratch, and those of its outputs that are live at that moment (a
 * training step's peak is where the forward pass's activations wait for
 * the backward pass, whichever device holds them), and a device that
 * receives a tensor holds its copy as long. A GPU a unit would take over
 * its memory is not offered while another GPU has room; when none has, the
 * other devices with room (the CPU) are. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/place.h"
#include "dplace/sim.h"
#include "agent/pretrained_internal.h"

#define F DP_PRETRAINED_FEATURES
#define UF PF_UNIT_END /* the unit's own features, first in a row */
_Static_assert(PF_END == DP_PRETRAINED_FEATURES, "a name per row feature (pretrained_internal.h)");

struct dp_pretrained_ctx {
    const dp_graph *g;
    const dp_devices *ds;
    dp_units u;
    int32_t nu, nd, n_gpus;
    dp_mask *mask;      /* [nu] devices each unit may use: the GPUs      */
    dp_mask *mask_all;  /* [nu] and beyond them (the CPU), offered only
                           when no GPU has room                          */
    int32_t *order;     /* [nu] units in decode order                    */
    double *comp;       /* [nu, nd] seconds of the unit on each device   */
    double *comp_min;   /* [nu] on its fastest allowed device            */
    double *mem;        /* [nu] bytes it holds at the peak               */
    double *live_frac;  /* [nu] share of its output bytes live at the peak
                           (a copy sent elsewhere lives as long)         */
    /* unit graph in decode order: in-edges from units decoded before, and
     * every neighbour (either direction, any order) for the affinity */
    int64_t *in_at, *nb_at; /* [nu + 1]                                  */
    int32_t *in_src, *nb;
    double *in_bytes, *nb_bytes;
    float *ufeat;       /* [nu, UF] static features of each unit         */
    int32_t *scope, *parent; /* [nu] the unit's layer scope and its parent
                                (ids; -1 none), from its first op        */
    int32_t n_scopes, n_parents;
    /* the hints: m-ETF's and METIS's placements as groupings (each unit's
     * device there, -1 none) and how far each is from the faster (log of
     * its step time over the faster's; 2 when not valid) */
    int32_t *hint[DP_PRETRAINED_HINTS];
    float hint_q[DP_PRETRAINED_HINTS];
    double xfer_rate[DP_MAX_DEVICES][DP_MAX_DEVICES], xfer_lat[DP_MAX_DEVICES][DP_MAX_DEVICES];
    double cap[DP_MAX_DEVICES];
    double mem_scale; /* dp_pretrained_ctx_set_memory_scale */
    double heavy_at;  /* a unit of at least this compute is heavy (INFINITY: none) */
    float dfeat[DP_MAX_DEVICES][3];
    double T, total_work;
};

int32_t dp_pretrained_ctx_units(const dp_pretrained_ctx *c) { return c->nu; }

void dp_pretrained_ctx_set_memory_scale(dp_pretrained_ctx *c, double scale) {
    c->mem_scale = scale > 0 && isfinite(scale) ? scale : 1;
}

int32_t dp_pretrained_ctx_set_heavy_share(dp_pretrained_ctx *c, double share) {
    double at = share * c->total_work / (c->n_gpus > 0 ? c->n_gpus : 1);
    c->heavy_at = at > 0 && isfinite(at) ? at : INFINITY; /* a graph of no work has no heavy unit */
    int32_t n = 0;
    for (int32_t k = 0; k < c->nu; k++) n += c->comp_min[k] >= c->heavy_at;
    return n;
}

void dp_pretrained_ctx_free(dp_pretrained_ctx *c) {
    if (!c) return;
    dp_units_free(&c->u);
    free(c->mask), free(c->mask_all), free(c->order), free(c->comp), free(c->comp_min), free(c->mem);
    free(c->live_frac);
    free(c->in_at), free(c->nb_at), free(c->in_src), free(c->nb), free(c->in_bytes), free(c->nb_bytes);
    free(c->ufeat), free(c->scope), free(c->parent);
    for (int h = 0; h < DP_PRETRAINED_HINTS; h++) free(c->hint[h]);
    free(c);
}

static float clampf(double x, double lo, double hi) { return (float)(x < lo ? lo : x > hi ? hi : x); }

/* ---- the unit graph ----------------------------------------------------------- */

typedef struct edge {
    int32_t src, dst;
    double bytes;
} edge;

static int edge_cmp(const void *a, const void *b) {
    const edge *x = a, *y = b;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    return x->src < y->src ? -1 : x->src > y->src;
}

/* CSR keyed by dst of edges e[n] (sorted here), equal (src, dst) merged:
 * at [nu + 1], src, bytes. */
static dp_status edges_csr(edge *e, int64_t n, int32_t nu, int64_t **at, int32_t **src, double **bytes) {
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    *at = calloc((size_t)nu + 1, sizeof(int64_t));
    *src = malloc(sizeof(int32_t) * (size_t)(n + 1));
    *bytes = malloc(sizeof(double) * (size_t)(n + 1));
    if (!*at || !*src || !*bytes) return DP_STATUS_NOMEM;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && e[i - 1].dst == e[i].dst && e[i - 1].src == e[i].src) {
            (*bytes)[m - 1] += e[i].bytes;
            continue;
        }
        (*src)[m] = e[i].src, (*bytes)[m] = e[i].bytes, m++;
        (*at)[e[i].dst + 1] = m;
    }
    for (int32_t k = 0; k < nu; k++)
        if ((*at)[k + 1] < (*at)[k]) (*at)[k + 1] = (*at)[k];
    return DP_STATUS_OK;
}

/* The unit graph: every tensor crossing two units, once per consumer unit;
 * in-edges only from units decoded before (rank [nu]: decode position). */
static dp_status build_edges(dp_pretrained_ctx *c, const int32_t *rank) {
    const dp_graph *g = c->g;
    int64_t cap = g->n_inputs + 1, n = 0;
    edge *e = malloc(sizeof(edge) * (size_t)cap), *nbe = malloc(sizeof(edge) * (size_t)(2 * cap));
    int64_t *seen = malloc(sizeof(int64_t) * (size_t)(g->n_outputs + 1));
    if (!e || !nbe || !seen) {
        free(e), free(nbe), free(seen);
        return DP_STATUS_NOMEM;
    }
    for (int64_t t = 0; t < g->n_outputs; t++) seen[t] = -1;
    for (int32_t k = 0; k < c->nu; k++)
        for (int32_t j = c->u.first[k]; j < c->u.first[k + 1]; j++) {
            const dp_op *o = &g->ops[c->u.members[j]];
            for (int32_t x = 0; x < o->n_inputs; x++) {
                dp_input in = g->inputs[o->inputs_at + x];
                int32_t s = c->u.unit_of[in.op];
                int64_t t = dp_graph_tensor(g, in.op, in.slot);
                if (s == k || seen[t] == k) continue;
                seen[t] = k;
                e[n].src = s, e[n].dst = k, e[n].bytes = (double)g->outputs[t].bytes, n++;
            }
        }
    int64_t nn = 0, ni = 0;
    for (int64_t i = 0; i < n; i++) {
        nbe[nn++] = e[i];
        nbe[nn].src = e[i].dst, nbe[nn].dst = e[i].src, nbe[nn].bytes = e[i].bytes, nn++;
    }
    for (int64_t i = 0; i < n; i++)
        if (rank[e[i].src] < rank[e[i].dst]) e[ni++] = e[i];
    dp_status st = edges_csr(e, ni, c->nu, &c->in_at, &c->in_src, &c->in_bytes);
    if (!st) st = edges_csr(nbe, nn, c->nu, &c->nb_at, &c->nb, &c->nb_bytes);
    free(e), free(nbe), free(seen);
    return st;
}

/* Route estimate between devices: the slowest link's rate, the latencies
 * summed. */
static void build_links(dp_pretrained_ctx *c) {
    const dp_devices *ds = c->ds;
    for (int32_t s = 0; s < c->nd; s++)
        for (int32_t d = 0; d < c->nd; d++) {
            int64_t pair = (int64_t)s * c->nd + d;
            double rate = INFINITY, lat = 0;
            for (int k = 0; k < ds->route_len[pair]; k++) {
                const dp_link *l = &ds->links[ds->route[pair * 2 + k]];
                double r = dp_devices_link_rate(l);
                if (r < rate) rate = r;
                lat += l->latency_s;
            }
            c->xfer_rate[s][d] = s == d ? INFINITY : rate;
            c->xfer_lat[s][d] = s == d ? 0 : lat;
        }
}

/* ---- units: memory, times, order ---------------------------------------------- */

/* Adds to c->mem each unit's output bytes live at the peak of the
 * topological order (pos [n_ops]: each op's position; a tensor lives from
 * its producer's position to its last consumer's), and sets live_frac. */
static dp_status peak_outputs(dp_pretrained_ctx *c, const int32_t *pos) {
    const dp_graph *g = c->g;
    int32_t n = g->n_ops;
    double *live = calloc((size_t)n + 2, sizeof(double)), *out = calloc((size_t)c->nu + 1, sizeof(double));
    int32_t *end = malloc(sizeof(int32_t) * (size_t)(g->n_outputs + 1));
    if (!live || !end || !out) {
        free(live), free(end), free(out);
        return DP_STATUS_NOMEM;
    }
    for (int32_t op = 0; op < n; op++)
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++) {
            end[t] = pos[op] + 1;
            for (int64_t x = g->consumers_at[t]; x < g->consumers_at[t + 1]; x++)
                if (pos[g->consumers[x]] + 1 > end[t]) end[t] = pos[g->consumers[x]] + 1;
            live[pos[op]] += (double)g->outputs[t].bytes, live[end[t]] -= (double)g->outputs[t].bytes;
        }
    int32_t peak = 0;
    double run = 0, best = -1;
    for (int32_t j = 0; j < n; j++) {
        run += live[j];
        if (run > best) best = run, peak = j;
    }
    for (int32_t op = 0; op < n; op++)
        for (int64_t t = g->tensor_at[op]; t < g->tensor_at[op + 1]; t++) {
            int32_t k = c->u.unit_of[op];
            double b = (double)g->outputs[t].bytes;
            out[k] += b;
            if (pos[op] <= peak && peak < end[t]) c->mem[k] += b, c->live_frac[k] += b;
        }
    for (int32_t k = 0; k < c->nu; k++) c->live_frac[k] = out[k] > 0 ? c->live_frac[k] / out[k] : 0;
    free(live), free(end), free(out);
    return DP_STATUS_OK;
}

/* Cuts a scope at its last '/' or '.' (in place): its parent, the layer of
 * an unrolled RNN's time-step scope or the block of a convolution's. 1
 * when there was a cut. */
static int scope_parent(char *buf) {
    char *cut = strrchr(buf, '/'), *dot = strrchr(buf, '.');
    if (dot > cut) cut = dot;
    if (cut) *cut = '\0';
    return cut != NULL;
}

/* The decode order of the ops into out [n_ops] (pretrained_internal.h): a
 * topological order that takes, among the ready ops, the one whose layer
 * (its forward scope's parent, or the scope when it has none) opened first
 * in g->topo, then the earliest in g->topo. g->topo goes level by level, so
 * an unrolled RNN's layers interleave by time step and, at a layer's first
 * unit, the GPU holding the layer before is free (its later steps are not
 * placed yet) and looks the soonest; layer by layer, that GPU is busy
 * through the whole sequence when the next layer opens, as it will be when
 * the step runs. A graph whose layers follow one another keeps nearly
 * g->topo's order. */
dp_status pretrained_layer_order(const dp_graph *g, int32_t *out) {
    int32_t n = g->n_ops;
    double *key = malloc(sizeof(double) * (size_t)(n + 1));
    uint32_t *pos = malloc(sizeof(uint32_t) * (size_t)(n + 1));
    int32_t *first = malloc(sizeof(int32_t) * (size_t)(n + 1));
    dp_strtab *pt = dp_strtab_init(); /* the layers; first[id]: where each opened in g->topo */
    dp_status st = key && pos && first && pt ? DP_STATUS_OK : DP_STATUS_NOMEM;
    char buf[DP_GRAPH_NAME_MAX + 1];
    for (int32_t j = 0; !st && j < n; j++) {
        int32_t op = g->topo[j];
        const dp_op *o = &g->ops[op];
        pos[op] = (uint32_t)j, key[op] = j;
        if (o->scope < 0) continue;
        snprintf(buf, sizeof buf, "%s", dp_graph_forward_scope(dp_graph_str(g, o->scope)));
        scope_parent(buf);
        if (!*buf) continue;
        int32_t before = (int32_t)pt->n, id = dp_strtab_intern(pt, buf);
        if (id < 0) {
            st = DP_STATUS_NOMEM;
            break;
        }
        if (id >= before) first[id] = j;
        key[op] = first[id];
    }
    dp_error err;
    if (!st) st = dp_graph_topo_keyed(g, key, pos, out, &err);
    free(key), free(pos), free(first);
    if (pt) dp_strtab_free(pt);
    return st;
}

/* Per-unit times and memory, and the decode order: units by their first
 * op's position in pretrained_layer_order (a counting sort: stable, so
 * ties keep the unit order). Fills rank [nu] with each unit's decode
 * position. */
static dp_status build_units(dp_pretrained_ctx *c, dp_sim *sim, int32_t *rank) {
    const dp_graph *g = c->g;
    int32_t nu = c->nu, nd = c->nd, n = g->n_ops;
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)(n + 1)), *count = calloc((size_t)n + 2, sizeof(int32_t));
    if (!pos || !count) {
        free(pos), free(count);
        return DP_STATUS_NOMEM;
    }
    for (int32_t j = 0; j < n; j++) pos[g->topo[j]] = j;
    dp_status st = peak_outputs(c, pos);
    free(pos);
    int32_t *ord = st ? NULL : malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!st && !ord) st = DP_STATUS_NOMEM;
    if (!st) st = pretrained_layer_order(g, ord);
    if (st) {
        free(count), free(ord);
        return st;
    }
    for (int32_t k = 0; k < nu; k++) rank[k] = -1;
    for (int32_t j = 0; j < n; j++) {
        int32_t op = ord[j], k = c->u.unit_of[op];
        if (rank[k] < 0) rank[k] = j;
        const dp_op *o = &g->ops[op];
        c->mem[k] += (double)o->param_bytes + (double)o->temp_bytes;
        for (int32_t d = 0; d < nd; d++) c->comp[(int64_t)k * nd + d] += dp_sim_op_seconds(sim, op, d);
    }
    for (int32_t k = 0; k < nu; k++) {
        c->comp_min[k] = INFINITY;
        for (int32_t d = 0; d < nd; d++)
            if (c->mask[k] & dp_mask_bit(d) && c->comp[(int64_t)k * nd + d] < c->comp_min[k])
                c->comp_min[k] = c->comp[(int64_t)k * nd + d];
        if (!isfinite(c->comp_min[k])) c->comp_min[k] = 0;
        c->total_work += c->comp_min[k];
    }
    free(ord);
    for (int32_t k = 0; k < nu; k++) rank[k] = rank[k] < 0 ? n : rank[k], count[rank[k] + 1]++;
    for (int32_t j = 0; j <= n; j++) count[j + 1] += count[j];
    for (int32_t k = 0; k < nu; k++) c->order[count[rank[k]]++] = k;
    for (int32_t i = 0; i < nu; i++) rank[c->order[i]] = i;
    free(count);
    return DP_STATUS_OK;
}

/* Static features: compute, memory, parameters, position, levels on the
 * critical path of the unit graph in decode order, bytes in and out. */
static dp_status build_features(dp_pretrained_ctx *c, const int32_t *rank) {
    int32_t nu = c->nu;
    double *tl = calloc((size_t)nu + 1, sizeof(double)), *bl = calloc((size_t)nu + 1, sizeof(double));
    double *bin = calloc((size_t)nu + 1, sizeof(double)), *bout = calloc((size_t)nu + 1, sizeof(double));
    double *params = calloc((size_t)nu + 1, sizeof(double));
    dp_status st = tl && bl && bin && bout && params ? DP_STATUS_OK : DP_STATUS_NOMEM;
    if (st) goto done;
    for (int32_t op = 0; op < c->g->n_ops; op++) params[c->u.unit_of[op]] += (double)c->g->ops[op].param_bytes;
    double cp = 0, mean_mem = 0, mean_bytes = 0;
    for (int32_t i = 0; i < nu; i++) {
        int32_t k = c->order[i];
        for (int64_t e = c->in_at[k]; e < c->in_at[k + 1]; e++) {
            int32_t s = c->in_src[e];
            if (tl[s] + c->comp_min[s] > tl[k]) tl[k] = tl[s] + c->comp_min[s];
            bin[k] += c->in_bytes[e], bout[s] += c->in_bytes[e];
        }
        if (tl[k] + c->comp_min[k] > cp) cp = tl[k] + c->comp_min[k];
        mean_mem += c->mem[k] / nu;
    }
    for (int32_t i = nu - 1; i >= 0; i--) {
        int32_t k = c->order[i];
        bl[k] += c->comp_min[k];
        for (int64_t e = c->in_at[k]; e < c->in_at[k + 1]; e++)
            if (bl[k] > bl[c->in_src[e]]) bl[c->in_src[e]] = bl[k];
    }
    for (int32_t k = 0; k < nu; k++) mean_bytes += (bin[k] + bout[k]) / (2.0 * nu);
    double per_gpu = c->total_work / (c->n_gpus > 0 ? c->n_gpus : 1);
    c->T = cp > per_gpu ? cp : per_gpu;
    if (!(c->T > 0)) c->T = 1e-6;
    double mean_comp = c->total_work / nu + 1e-12;
    mean_mem += 1, mean_bytes += 1;
    for (int32_t k = 0; k < nu; k++) {
        float *u = c->ufeat + (size_t)k * UF;
        u[PF_COMPUTE] = clampf(log((c->comp_min[k] + 1e-12) / mean_comp) / 4, -5, 5);
        u[PF_MEMORY] = (float)(log1p(c->mem[k] / mean_mem) / 4);
        u[PF_PARAMS] = (float)(log1p(params[k] / mean_mem) / 4);
        u[PF_POSITION] = (float)rank[k] / (float)nu;
        u[PF_TO_END] = (float)(bl[k] / c->T);
        u[PF_FROM_START] = (float)(tl[k] / c->T);
        u[PF_BYTES_IN] = (float)(log1p(bin[k] / mean_bytes) / 4);
        u[PF_BYTES_OUT] = (float)(log1p(bout[k] / mean_bytes) / 4);
    }
done:
    free(tl), free(bl), free(bin), free(bout), free(params);
    return st;
}

/* Device features; each device's memory as the decoder counts it. */
static void build_devices(dp_pretrained_ctx *c) {
    const dp_devices *ds = c->ds;
    double max_peak = 0, max_mem = 0;
    for (int32_t d = 0; d < c->nd; d++) {
        if (ds->devices[d].peak_flops > max_peak) max_peak = ds->devices[d].peak_flops;
        if ((double)ds->devices[d].memory_bytes > max_mem) max_mem = (double)ds->devices[d].memory_bytes;
    }
    for (int32_t d = 0; d < c->nd; d++) {
        const dp_device *dv = &ds->devices[d];
        c->cap[d] = (double)dv->memory_bytes;
        c->dfeat[d][0] = dv->kind == DP_DEVKIND_CPU;
        c->dfeat[d][1] = clampf(log(dv->peak_flops / max_peak), -10, 0);
        c->dfeat[d][2] = clampf(log((double)dv->memory_bytes / max_mem), -10, 0);
    }
}

/* Each unit's layer scope (its first op's forward scope: a layer's forward
 * and gradient ops share it; a module path for a PyTorch export) and that
 * scope's parent (cut at its last '/' or '.'), interned. */
static dp_status build_scopes(dp_pretrained_ctx *c) {
    const dp_graph *g = c->g;
    dp_strtab *st = dp_strtab_init(), *pt = dp_strtab_init();
    c->scope = malloc(sizeof(int32_t) * (size_t)(c->nu + 1));
    c->parent = malloc(sizeof(int32_t) * (size_t)(c->nu + 1));
    dp_status s = st && pt && c->scope && c->parent ? DP_STATUS_OK : DP_STATUS_NOMEM;
    char buf[DP_GRAPH_NAME_MAX + 1];
    for (int32_t k = 0; !s && k < c->nu; k++) {
        c->scope[k] = c->parent[k] = -1;
        if (c->u.first[k + 1] == c->u.first[k]) continue;
        const dp_op *o = &g->ops[c->u.members[c->u.first[k]]];
        if (o->scope < 0) continue;
        snprintf(buf, sizeof buf, "%s", dp_graph_forward_scope(dp_graph_str(g, o->scope)));
        if (!*buf) continue;
        c->scope[k] = dp_strtab_intern(st, buf);
        int cut = scope_parent(buf);
        if (cut) c->parent[k] = dp_strtab_intern(pt, buf);
        if (c->scope[k] < 0 || (cut && c->parent[k] < 0)) s = DP_STATUS_NOMEM;
    }
    if (!s) c->n_scopes = (int32_t)st->n, c->n_parents = (int32_t)pt->n;
    dp_strtab_free(st), dp_strtab_free(pt);
    return s;
}

/* The hints: each heuristic's placement (its units' devices: the device of
 * each unit's first op) and its simulated step time. A heuristic that
 * cannot place the graph leaves its hint empty (-1) and far (2). */
static dp_status build_hints(dp_pretrained_ctx *c, dp_sim *sim, dp_units_spec units) {
    static const dp_place_method methods[DP_PRETRAINED_HINTS] = {DP_PLACE_METHOD_M_ETF, DP_PLACE_METHOD_METIS};
    const dp_graph *g = c->g;
    int32_t *p = malloc(sizeof(int32_t) * (size_t)(g->n_ops + 1));
    if (!p) return DP_STATUS_NOMEM;
    double t[DP_PRETRAINED_HINTS], best = INFINITY;
    dp_place_options po = dp_place_options_default();
    po.units = units;
    for (int h = 0; h < DP_PRETRAINED_HINTS; h++) {
        if (!(c->hint[h] = malloc(sizeof(int32_t) * (size_t)(c->nu + 1)))) {
            free(p);
            return DP_STATUS_NOMEM;
        }
        dp_error e2;
        dp_sim_result r;
        t[h] = INFINITY;
        for (int32_t k = 0; k < c->nu; k++) c->hint[h][k] = -1;
        if (dp_place_run(methods[h], g, c->ds, &po, p, &e2) || dp_sim_run(sim, p, NULL, &r, &e2)) continue;
        for (int32_t k = 0; k < c->nu; k++)
            if (c->u.first[k + 1] > c->u.first[k]) c->hint[h][k] = p[c->u.members[c->u.first[k]]];
        if (r.valid) t[h] = r.step_time_s;
        if (t[h] < best) best = t[h];
    }
    for (int h = 0; h < DP_PRETRAINED_HINTS; h++)
        c->hint_q[h] = isfinite(t[h]) ? clampf(log(t[h] / best), 0, 2) : 2;
    free(p);
    return DP_STATUS_OK;
}

/* The rest of a context whose units c->u are set: masks, times, decode
 * order, unit graph, features, links and devices (the hints apart). */
static dp_status ctx_fill(dp_pretrained_ctx *c, dp_sim *sim, dp_error *err) {
    const dp_graph *g = c->g;
    int32_t nu = c->nu = c->u.n_units, nd = c->nd;
    c->mask = malloc(sizeof(dp_mask) * (size_t)(nu + 1));
    c->mask_all = malloc(sizeof(dp_mask) * (size_t)(nu + 1));
    c->order = malloc(sizeof(int32_t) * (size_t)(nu + 1));
    c->comp = calloc((size_t)nu * nd + 1, sizeof(double));
    c->comp_min = calloc((size_t)nu + 1, sizeof(double));
    c->mem = calloc((size_t)nu + 1, sizeof(double));
    c->live_frac = calloc((size_t)nu + 1, sizeof(double));
    c->ufeat = calloc((size_t)nu * UF + 1, sizeof(float));
    int32_t *rank = malloc(sizeof(int32_t) * (size_t)(nu + 1));
    dp_status st = DP_STATUS_OK;
    if (!c->mask || !c->mask_all || !c->order || !c->comp || !c->comp_min || !c->mem || !c->live_frac ||
        !c->ufeat || !rank)
        st = dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory (%d units)", nu);
    if (!st) st = dp_units_masks(&c->u, g, c->ds, dp_mask_gpus(c->ds), c->mask, err);
    if (!st) st = dp_units_masks(&c->u, g, c->ds, dp_mask_all(c->ds), c->mask_all, err);
    if (!st && (build_units(c, sim, rank) || build_edges(c, rank) || build_features(c, rank) || build_scopes(c)))
        st = dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory (%d units)", nu);
    if (!st) build_links(c), build_devices(c);
    free(rank);
    return st;
}

static dp_pretrained_ctx *ctx_alloc(const dp_graph *g, const dp_devices *ds, dp_error *err) {
    dp_pretrained_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory");
        return NULL;
    }
    c->g = g, c->ds = ds, c->nd = ds->n_devices, c->n_gpus = ds->kind_count[DP_DEVKIND_GPU];
    c->mem_scale = 1;
    c->heavy_at = INFINITY;
    return c;
}

dp_pretrained_ctx *dp_pretrained_ctx_init(const dp_graph *g, const dp_devices *ds, dp_units_spec units,
                                          dp_error *err) {
    dp_pretrained_ctx *c = ctx_alloc(g, ds, err);
    if (!c) return NULL;
    dp_place_options po = dp_place_options_default();
    po.units = units;
    po.forward_only = 0; /* the colocation chains: a search's placement is one of their placements */
    dp_sim *sim = NULL;
    if (dp_place_units(&c->u, g, ds, DP_PLACE_METHOD_M_ETF, &po, err) || !(sim = dp_sim_init(g, ds, err)) ||
        ctx_fill(c, sim, err))
        goto fail;
    if (build_hints(c, sim, units)) {
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory (the hints)");
        goto fail;
    }
    dp_sim_free(sim);
    return c;
fail:
    dp_sim_free(sim);
    dp_pretrained_ctx_free(c);
    return NULL;
}

/* The grouping of f's ops by layer into group [n_ops] (*n groups, in the
 * order of their first unit): each unit of f joins the others of its layer
 * (its scope's parent), unless the devices the group may use and those the
 * unit may use (among the GPUs, and among all) would have none in common;
 * a unit of no layer, or one refused so, is a group of its own. */
static dp_status layer_groups(const dp_pretrained_ctx *f, int32_t *group, int32_t *n) {
    int32_t *of_parent = malloc(sizeof(int32_t) * (size_t)(f->n_parents + 1));
    int32_t *gid = malloc(sizeof(int32_t) * (size_t)(f->nu + 1));
    dp_mask *gm = malloc(sizeof(dp_mask) * (size_t)(f->nu + 1)), *gm_all = malloc(sizeof(dp_mask) * (size_t)(f->nu + 1));
    if (!of_parent || !gid || !gm || !gm_all) {
        free(of_parent), free(gid), free(gm), free(gm_all);
        return DP_STATUS_NOMEM;
    }
    for (int32_t x = 0; x < f->n_parents; x++) of_parent[x] = -1;
    *n = 0;
    for (int32_t k = 0; k < f->nu; k++) {
        int32_t p = f->parent[k], j = p >= 0 ? of_parent[p] : -1;
        if (j >= 0 && (gm[j] & f->mask[k]) && (gm_all[j] & f->mask_all[k])) {
            gid[k] = j, gm[j] &= f->mask[k], gm_all[j] &= f->mask_all[k];
            continue;
        }
        gid[k] = (*n)++, gm[gid[k]] = f->mask[k], gm_all[gid[k]] = f->mask_all[k];
        if (p >= 0 && of_parent[p] < 0) of_parent[p] = gid[k];
    }
    for (int32_t op = 0; op < f->g->n_ops; op++) group[op] = gid[f->u.unit_of[op]];
    free(of_parent), free(gid), free(gm), free(gm_all);
    return DP_STATUS_OK;
}

dp_pretrained_ctx *dp_pretrained_ctx_init_layers(const dp_pretrained_ctx *f, dp_error *err) {
    dp_pretrained_ctx *c = ctx_alloc(f->g, f->ds, err);
    if (!c) return NULL;
    const dp_graph *g = f->g;
    int32_t n = 0, *group = malloc(sizeof(int32_t) * (size_t)(g->n_ops + 1));
    dp_sim *sim = NULL;
    if (!group || layer_groups(f, group, &n)) {
        dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory");
        goto fail;
    }
    if (dp_units_init_from_groups(&c->u, group, g->n_ops, n, err) || !(sim = dp_sim_init(g, f->ds, err)) ||
        ctx_fill(c, sim, err))
        goto fail;
    /* the hints as f has them: a layer takes its first op's unit's */
    for (int h = 0; h < DP_PRETRAINED_HINTS; h++) {
        if (!(c->hint[h] = malloc(sizeof(int32_t) * (size_t)(c->nu + 1)))) {
            dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory (the hints)");
            goto fail;
        }
        for (int32_t k = 0; k < c->nu; k++)
            c->hint[h][k] = c->u.first[k + 1] > c->u.first[k] ? f->hint[h][f->u.unit_of[c->u.members[c->u.first[k]]]] : -1;
        c->hint_q[h] = f->hint_q[h];
    }
    free(group);
    dp_sim_free(sim);
    return c;
fail:
    free(group);
    dp_sim_free(sim);
    dp_pretrained_ctx_free(c);
    return NULL;
}

/* ---- decoding --------------------------------------------------------------- */

dp_status dp_pretrained_trace_init(dp_pretrained_trace *t, const dp_pretrained_ctx *c, dp_error *err) {
    memset(t, 0, sizeof *t);
    t->n_steps = c->nu, t->n_devices = c->nd;
    t->steps = calloc((size_t)c->nu + 1, sizeof *t->steps);
    t->rows = calloc((size_t)c->nu * c->nd * F + 1, sizeof(float));
    if (!t->steps || !t->rows) {
        dp_pretrained_trace_free(t);
        return dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory for a trace of %d units", c->nu);
    }
    return DP_STATUS_OK;
}

void dp_pretrained_trace_free(dp_pretrained_trace *t) {
    free(t->steps), free(t->rows);
    memset(t, 0, sizeof *t);
}

/* The decoder's state: the estimate of the schedule so far. */
typedef struct dstate {
    int32_t *dev;      /* [nu] device of each unit decoded, -1 before */
    double *finish;    /* [nu]                                        */
    double free_at[DP_MAX_DEVICES], load[DP_MAX_DEVICES], used[DP_MAX_DEVICES];
    double placed_work;
    int32_t prev;      /* device of the unit decoded last, -1 none   */
    double *scope_w, *parent_w; /* [n_scopes, nd], [n_parents, nd]: compute
                                   placed per device of each scope       */
    double *hint_w[DP_PRETRAINED_HINTS]; /* [nd, nd]: compute placed per
                                   device of each hint's device group    */
} dstate;

/* Device d's share of what is placed of group id (of w [ids, nd]); with d
 * -1, the total. 0 for id -1 or nothing placed. */
static float share(const double *w, int32_t id, int32_t nd, int32_t d) {
    if (id < 0) return 0;
    double t = 0;
    for (int32_t x = 0; x < nd; x++) t += w[(int64_t)id * nd + x];
    if (d < 0) return (float)t;
    return t > 0 ? (float)(w[(int64_t)id * nd + d] / t) : 0;
}

/* The estimate for unit k on every device it may use (inputs' arrival,
 * start, finish fin[d], memory after it memf[d] with the copies it
 * receives in copies[d]); narrows *cand to the offer: the GPUs with room,
 * else the other devices with room, else the GPUs. */
static void unit_estimate(const dp_pretrained_ctx *c, const dstate *s, int32_t k, dp_mask *cand, double *start,
                          double *fin, double *xin, double *memf, double *copies) {
    int32_t nd = c->nd;
    dp_mask roomy = 0, wide = c->mask_all[k] & ~*cand;
    for (dp_mask m = *cand | wide; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        double ready = 0, x = 0, cp = 0;
        for (int64_t e = c->in_at[k]; e < c->in_at[k + 1]; e++) {
            int32_t p = c->in_src[e], pd = s->dev[p];
            if (pd < 0) continue;
            double t = s->finish[p];
            if (pd != d) {
                double cross = c->xfer_lat[pd][d] + c->in_bytes[e] / c->xfer_rate[pd][d];
                t += cross, x += cross;
                cp += c->in_bytes[e] * c->live_frac[p];
            }
            if (t > ready) ready = t;
        }
        start[d] = ready > s->free_at[d] ? ready : s->free_at[d];
        fin[d] = start[d] + c->comp[(int64_t)k * nd + d];
        xin[d] = x, copies[d] = cp;
        double cap = c->cap[d] * c->mem_scale;
        memf[d] = (s->used[d] + c->mem[k] + cp) / (cap > 0 ? cap : 1);
        if (memf[d] <= 1) roomy |= dp_mask_bit(d);
    }
    if (roomy & *cand) *cand &= roomy;
    else if (roomy & wide) *cand = roomy & wide;
}

/* The rows of unit k (decoded i-th) for the devices of *cand, which it
 * narrows to the offer (unit_estimate); fills fin[d] and copies[d]. */
static void unit_rows(const dp_pretrained_ctx *c, const dstate *s, int32_t k, int32_t i, dp_mask *cand,
                      float *rows, double *fin, double *copies) {
    int32_t nd = c->nd;
    double start[DP_MAX_DEVICES], xin[DP_MAX_DEVICES], aff[DP_MAX_DEVICES] = {0}, memf[DP_MAX_DEVICES];
    double nb_total = 0;
    for (int64_t e = c->nb_at[k]; e < c->nb_at[k + 1]; e++) {
        int32_t n = c->nb[e];
        if (s->dev[n] < 0) continue;
        aff[s->dev[n]] += c->nb_bytes[e];
        nb_total += c->nb_bytes[e];
    }
    unit_estimate(c, s, k, cand, start, fin, xin, memf, copies);
    double min_start = INFINITY, min_fin = INFINITY, min_free = INFINITY;
    for (dp_mask m = *cand; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        if (start[d] < min_start) min_start = start[d];
        if (fin[d] < min_fin) min_fin = fin[d];
        if (s->free_at[d] < min_free) min_free = s->free_at[d];
    }
    double T = c->T, per_gpu = c->total_work / (c->n_gpus > 0 ? c->n_gpus : 1) + 1e-12;
    for (dp_mask m = *cand; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        float *r = rows + (size_t)d * F;
        memcpy(r, c->ufeat + (size_t)k * UF, sizeof(float) * UF);
        r[PF_IS_CPU] = c->dfeat[d][0], r[PF_PEAK] = c->dfeat[d][1], r[PF_DEVICE_MEMORY] = c->dfeat[d][2];
        r[PF_N_GPUS] = (float)c->n_gpus / 8.0f;
        r[PF_SLOWDOWN] = clampf(log((c->comp[(int64_t)k * nd + d] + 1e-12) / (c->comp_min[k] + 1e-12)) / 4, 0, 5);
        r[PF_START] = clampf((start[d] - min_start) / T, 0, 10);
        r[PF_FINISH] = clampf((fin[d] - min_fin) / T, 0, 10);
        r[PF_FINISH_UNITS] = clampf(log1p((fin[d] - min_fin) / (c->comp_min[k] + 1e-9)) / 4, 0, 10);
        r[PF_FREE_AT] = clampf(s->free_at[d] / T, 0, 10);
        r[PF_FREE_AFTER] = clampf((s->free_at[d] - min_free) / T, 0, 10);
        r[PF_LOAD] = clampf(s->load[d] / per_gpu, 0, 10);
        r[PF_MEMORY_AFTER] = clampf(memf[d], 0, 3);
        r[PF_FITS] = memf[d] <= 1;
        r[PF_NEIGHBOURS] = (float)(nb_total > 0 ? aff[d] / nb_total : 0);
        r[PF_PREVIOUS] = s->prev == d;
        r[PF_TRANSFER_IN] = clampf(xin[d] / T, 0, 10);
        r[PF_SOONEST] = fin[d] == min_fin;
        r[PF_PLACED] = (float)(c->total_work > 0 ? s->placed_work / c->total_work : (double)i / c->nu);
        r[PF_SCOPE_SHARE] = share(s->scope_w, c->scope[k], nd, d);
        r[PF_LAYER_SHARE] = share(s->parent_w, c->parent[k], nd, d);
        r[PF_SCOPE_BEGUN] = c->scope[k] >= 0 && share(s->scope_w, c->scope[k], nd, -1) > 0;
        for (int h = 0; h < DP_PRETRAINED_HINTS; h++) {
            r[PF_HINT + 2 * h] = share(s->hint_w[h], c->hint[h][k], nd, d);
            r[PF_HINT_SLOWER + 2 * h] = c->hint_q[h];
        }
    }
}

/* The teacher's device for unit k: the one given most of its ops' time. */
static int32_t teacher_device(const dp_pretrained_ctx *c, int32_t k, const int32_t *teacher) {
    double w[DP_MAX_DEVICES] = {0};
    int32_t n = c->u.first[k + 1] - c->u.first[k];
    for (int32_t j = c->u.first[k]; j < c->u.first[k + 1]; j++) {
        int32_t op = c->u.members[j], d = teacher[op];
        if (d >= 0 && d < c->nd) w[d] += c->comp[(int64_t)k * c->nd + d] / n + 1e-15;
    }
    int32_t best = -1;
    for (int32_t d = 0; d < c->nd; d++)
        if (w[d] > 0 && (best < 0 || w[d] > w[best])) best = d;
    return best >= 0 ? best : dp_mask_first(c->mask_all[k]);
}

/* The device the policy picks among cand (rows scored into a): the highest
 * score (GREEDY) or a draw from the softmax at temperature temp; *logp its
 * log-probability. */
static int32_t choose(const dp_pretrained_policy *p, dp_pretrained_mode mode, double temp, dp_rng *rng, dp_mask cand,
                      const float *rows, pretrained_acts *a, float *logp) {
    int32_t act = dp_mask_first(cand);
    *logp = 0;
    if (dp_mask_count(cand) < 2) return act;
    /* only the offered devices' rows are scored: each row's score is its
     * own (the network reads one row at a time), so this is the score the
     * whole set's pass gives it, for fewer rows' work */
    float offered[DP_MAX_DEVICES * F], score[DP_MAX_DEVICES];
    int32_t n = 0;
    for (dp_mask m = cand; m; m &= m - 1)
        memcpy(offered + (size_t)n++ * F, rows + (size_t)dp_mask_first(m) * F, sizeof(float) * F);
    pretrained_forward(p, offered, n, a);
    n = 0;
    for (dp_mask m = cand; m; m &= m - 1) score[dp_mask_first(m)] = a->score[n++];
    double t = mode == DP_PRETRAINED_SAMPLE ? temp : 1, mx = -INFINITY, z = 0, prob[DP_MAX_DEVICES] = {0};
    for (dp_mask m = cand; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        if (score[d] / t > mx) mx = score[d] / t, act = d;
    }
    for (dp_mask m = cand; m; m &= m - 1) {
        int32_t d = dp_mask_first(m);
        z += prob[d] = exp(score[d] / t - mx);
    }
    if (mode == DP_PRETRAINED_SAMPLE) {
        double r = dp_rng_uniform(rng) * z;
        for (dp_mask m = cand; m; m &= m - 1) {
            act = dp_mask_first(m);
            if ((r -= prob[act]) < 0) break;
        }
    }
    *logp = (float)log(prob[act] / z);
    return act;
}

dp_status dp_pretrained_decode(const dp_pretrained_ctx *c, const dp_pretrained_policy *p, dp_pretrained_mode mode,
                               double temp, dp_rng *rng, const int32_t *teacher, int32_t *out,
                               dp_pretrained_trace *tr, double *logp_sum, dp_error *err) {
    int sampled = mode == DP_PRETRAINED_SAMPLE || mode == DP_PRETRAINED_OPENINGS || mode == DP_PRETRAINED_HEAVY, taught = mode == DP_PRETRAINED_TEACHER;
    if ((mode != DP_PRETRAINED_TEACHER && !p) || (sampled && (!rng || !(temp > 0))) || (taught && !teacher) ||
        mode < 0 || mode >= DP_PRETRAINED_MODE_COUNT)
        return dp_error_set(err, DP_STATUS_INVALID, "pretrained: decode needs a policy, a random state or a teacher");
    int32_t nu = c->nu, nd = c->nd;
    dstate s;
    memset(&s, 0, sizeof s);
    s.prev = -1;
    s.dev = malloc(sizeof(int32_t) * (size_t)(nu + 1));
    s.finish = calloc((size_t)nu + 1, sizeof(double));
    s.scope_w = calloc((size_t)c->n_scopes * nd + 1, sizeof(double));
    s.parent_w = calloc((size_t)c->n_parents * nd + 1, sizeof(double));
    int hints_ok = 1;
    for (int h = 0; h < DP_PRETRAINED_HINTS; h++)
        if (!(s.hint_w[h] = calloc((size_t)nd * nd + 1, sizeof(double)))) hints_ok = 0;
    int32_t *unit_dev = malloc(sizeof(int32_t) * (size_t)(nu + 1));
    int32_t *tdev = taught ? malloc(sizeof(int32_t) * (size_t)(nu + 1)) : NULL;
    if (tdev)
        for (int32_t k = 0; k < nu; k++) tdev[k] = teacher_device(c, k, teacher);
    pretrained_acts a;
    memset(&a, 0, sizeof a);
    dp_status st = DP_STATUS_OK;
    if (!s.dev || !s.finish || !unit_dev || !s.scope_w || !s.parent_w || !hints_ok || (taught && !tdev))
        st = dp_error_set(err, DP_STATUS_NOMEM, "pretrained: out of memory");
    if (!st && p) st = pretrained_acts_init(&a, p, nd, err);
    if (tr) tr->temp = sampled ? temp : 1;
    double lp = 0;
    float rows[DP_MAX_DEVICES * F];
    for (int32_t k = 0; !st && k < nu; k++) s.dev[k] = -1;
    for (int32_t i = 0; !st && i < nu; i++) {
        int32_t k = c->order[i], act;
        dp_mask cand = c->mask[k], target = 0;
        double fin[DP_MAX_DEVICES], copies[DP_MAX_DEVICES];
        float logp = 0;
        int32_t drawn = 0;
        memset(rows, 0, sizeof(float) * (size_t)nd * F);
        unit_rows(c, &s, k, i, &cand, rows, fin, copies);
        if (taught) {
            act = tdev[k];
            if (cand & dp_mask_bit(act)) /* identical devices in identical states: one target */
                for (dp_mask m = cand; m; m &= m - 1) {
                    int32_t d = dp_mask_first(m);
                    if (!memcmp(rows + (size_t)d * F, rows + (size_t)act * F, sizeof(float) * F)) target |= dp_mask_bit(d);
                }
        } else {
            dp_pretrained_mode m = mode;
            double t = temp;
            if (mode == DP_PRETRAINED_HEAVY) /* uniform: at an infinite temperature every score is 0 */
                m = c->comp_min[k] >= c->heavy_at ? DP_PRETRAINED_SAMPLE : DP_PRETRAINED_GREEDY, t = INFINITY;
            if (mode == DP_PRETRAINED_OPENINGS) /* a layer (the scope's parent, else the scope) not begun */
                m = (c->parent[k] >= 0 ? !(share(s.parent_w, c->parent[k], nd, -1) > 0)
                                       : c->scope[k] >= 0 && !(share(s.scope_w, c->scope[k], nd, -1) > 0))
                        ? DP_PRETRAINED_SAMPLE
                        : DP_PRETRAINED_GREEDY;
            act = choose(p, m, t, rng, cand, rows, &a, &logp);
            drawn = m == DP_PRETRAINED_SAMPLE && dp_mask_count(cand) > 1;
        }
        lp += logp;
        if (tr) {
            tr->steps[i] = (dp_pretrained_step){cand, target, act, logp, drawn};
            memcpy(tr->rows + (size_t)i * nd * F, rows, sizeof(float) * (size_t)nd * F);
        }
        s.dev[k] = unit_dev[k] = act;
        int offered = (cand & dp_mask_bit(act)) != 0; /* a teacher's device outside the offer was not estimated */
        s.finish[k] = offered ? fin[act] : s.free_at[act] + c->comp[(int64_t)k * nd + act];
        s.free_at[act] = s.finish[k];
        s.used[act] += c->mem[k] + (offered ? copies[act] : 0);
        s.load[act] += c->comp_min[k];
        s.placed_work += c->comp_min[k];
        s.prev = act;
        /* a unit of no time still marks its scope as begun */
        if (c->scope[k] >= 0) s.scope_w[(int64_t)c->scope[k] * nd + act] += c->comp_min[k] + 1e-12;
        if (c->parent[k] >= 0) s.parent_w[(int64_t)c->parent[k] * nd + act] += c->comp_min[k] + 1e-12;
        for (int h = 0; h < DP_PRETRAINED_HINTS; h++)
            if (c->hint[h][k] >= 0) s.hint_w[h][(int64_t)c->hint[h][k] * nd + act] += c->comp_min[k] + 1e-12;
    }
    if (!st) dp_units_expand(&c->u, unit_dev, out);
    if (logp_sum) *logp_sum = lp;
    pretrained_acts_free(&a);
    free(s.dev), free(s.finish), free(unit_dev), free(s.scope_w), free(s.parent_w), free(tdev);
    for (int h = 0; h < DP_PRETRAINED_HINTS; h++) free(s.hint_w[h]);
    return st;
}
