/* Agent checkpoints: the whole training state in one file, written
 * atomically, so that a run resumed from it ends exactly as the run that
 * was not interrupted. Layout (native byte order, docs/agents.md):
 *
 *   "DPLACE-AGENT-CK\n" (16 bytes), u32 version (4)
 *   u32 cost model version (DP_COST_MODEL_VERSION), u64 hash of the device
 *                       parameters (dp_devices_hash): both must match on load
 *   u32 length + bytes: identity (graph, ops, devices, configuration,
 *                       evaluator, seed) that must match on load
 *   u64 length + the run's state: the counters, generator, baseline and its
 *                       window, the best placement; the cross-entropy
 *                       updates done and the elites (i32 count, then
 *                       ce_elites rewards, hashes, devices [ce_elites, G]
 *                       and, with the learned grouper, groupings
 *                       [ce_elites, N]); the encoder's pre-training (i64
 *                       iterations done, f64 last and lowest loss and
 *                       seconds, i64 its Adam steps, i32 whether the
 *                       lowest loss's parameters are kept, u64 floats and
 *                       those parameters); the imitation warm start (i64
 *                       steps done, f64 its last loss and the imitated
 *                       placement's step time, i32 the placer it came from,
 *                       -1: none)
 *   u32 tensors, each u32 name length + name + u64 floats (what --init
 *                       matches, whatever the graph)
 *   u64 floats, then values, Adam m, Adam v (floats), i64 Adam step
 *   u64 FNV-1a checksum of everything before it
 *
 * Version 2 had no length before the state, no pre-training and no tensor
 * table; version 3 no warm start; version 4 not what found the best (the
 * i32 after groups_used); version 5 the settings of the table before it was
 * nested by component (in the identity: other keys, samples for batch);
 * version 6 no cost model version nor device hash.
 * A run resumes from its own version only; --init (dp_agent_load_policy)
 * reads the tensors of any version from 3 on, whose layout up to the
 * tensor table is the same. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "common/bytes.h"
#include "dplace/cost.h"
#include "dplace/place.h"
#include "common/util.h"

#define CK_MAGIC "DPLACE-AGENT-CK\n"
#define CK_VERSION 7u
#define CK_MODEL_FROM 7u /* the first version with the cost model block */
#define CK_POLICY_OLDEST 3u /* the first version with the tensor table --init reads */

/* What must be the same for a checkpoint to apply. */
static char *identity(const dp_agent *a) {
    size_t clen = dp_agent_config_format(&a->cfg, NULL, 0);
    size_t cap = clen + 4096 + (size_t)a->D * 64;
    char *s = malloc(cap);
    if (!s) return NULL;
    int w = snprintf(s, cap, "graph=%s ops=%d devices=%s:", a->g->name ? a->g->name : "", (int)a->N, a->ds->name);
    for (int32_t d = 0; d < a->D; d++) w += snprintf(s + w, cap - (size_t)w, "%s%s", d ? "," : "", a->ds->devices[d].name);
    w += snprintf(s + w, cap - (size_t)w, " seed=%llu eval=%s noise=%.9g steps=%d warmup=%d mean=%d simseed=%llu groups=%d ",
                  (unsigned long long)a->seed, a->eo.measure_cmd ? "measure" : "sim", a->eo.sim.noise_sigma,
                  (int)a->eo.sim.steps, (int)a->eo.sim.warmup, a->eo.sim.mean, (unsigned long long)a->eo.sim.seed, (int)a->T);
    w += (int)dp_agent_config_format(&a->cfg, s + w, cap - (size_t)w);
    char units[32];
    dp_units_spec_format(a->cfg.units, units, sizeof units);
    if ((size_t)w < cap) snprintf(s + w, cap - (size_t)w, " units=%s", units);
    return s;
}

dp_status dp_agent_save(const dp_agent *a, const char *path, dp_error *err) {
    dp_bytes_writer b = {0};
    char *id = identity(a);
    if (!id) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    uint32_t version = CK_VERSION, idlen = (uint32_t)strlen(id);
    dp_bytes_put(&b, CK_MAGIC, 16);
    DP_BYTES_PUT(&b, version);
    uint32_t model = DP_COST_MODEL_VERSION;
    uint64_t devhash = dp_devices_hash(a->ds);
    DP_BYTES_PUT(&b, model);
    DP_BYTES_PUT(&b, devhash);
    DP_BYTES_PUT(&b, idlen);
    dp_bytes_put(&b, id, idlen);
    free(id);
    const dp_run_state *s = &a->st;
    uint64_t state_bytes = 0;
    size_t state_at = b.n;
    DP_BYTES_PUT(&b, state_bytes); /* filled in below */
    DP_BYTES_PUT(&b, s->updates), DP_BYTES_PUT(&b, s->samples), DP_BYTES_PUT(&b, s->baseline), DP_BYTES_PUT(&b, s->best_s);
    DP_BYTES_PUT(&b, s->best_update), DP_BYTES_PUT(&b, s->best_sample), DP_BYTES_PUT(&b, s->best_elapsed_s), DP_BYTES_PUT(&b, s->elapsed_s);
    DP_BYTES_PUT(&b, s->policy_s), DP_BYTES_PUT(&b, s->eval_s), DP_BYTES_PUT(&b, s->groups_used), DP_BYTES_PUT(&b, s->best_by);
    dp_bytes_put(&b, a->rng.s, sizeof a->rng.s);
    DP_BYTES_PUT(&b, a->baseline.have), DP_BYTES_PUT(&b, a->baseline.n), DP_BYTES_PUT(&b, a->baseline.pos);
    dp_bytes_put(&b, a->baseline.window, sizeof(double) * (size_t)a->cfg.train.baseline_window);
    DP_BYTES_PUT(&b, a->have_best);
    dp_bytes_put(&b, a->best, sizeof(int32_t) * (size_t)a->N);
    int32_t E = a->cfg.ce.elites;
    DP_BYTES_PUT(&b, a->ce_updates), DP_BYTES_PUT(&b, a->elites.n);
    dp_bytes_put(&b, a->elites.reward, sizeof(double) * (size_t)E);
    dp_bytes_put(&b, a->elites.hash, sizeof(uint64_t) * (size_t)E);
    dp_bytes_put(&b, a->elites.devs, sizeof(int32_t) * (size_t)E * a->T);
    if (a->elites.choice) dp_bytes_put(&b, a->elites.choice, sizeof(int32_t) * (size_t)E * a->N);
    int32_t have_keep = a->pretrain_have_keep;
    uint64_t keep_n = have_keep ? a->enc_floats : 0;
    DP_BYTES_PUT(&b, a->prep.pretrain_done), DP_BYTES_PUT(&b, a->prep.pretrain_loss), DP_BYTES_PUT(&b, a->prep.pretrain_best), DP_BYTES_PUT(&b, a->prep.pretrain_s);
    DP_BYTES_PUT(&b, a->pretrain_step), DP_BYTES_PUT(&b, have_keep), DP_BYTES_PUT(&b, keep_n);
    if (keep_n) dp_bytes_put(&b, a->pretrain_keep, sizeof(float) * keep_n);
    int32_t warm_from = -1;
    for (int m = 0; a->prep.warm_from && m < DP_PLACE_METHOD_COUNT; m++)
        if (!strcmp(a->prep.warm_from, dp_place_method_name((dp_place_method)m))) warm_from = m;
    DP_BYTES_PUT(&b, a->prep.warm_done), DP_BYTES_PUT(&b, a->prep.warm_loss), DP_BYTES_PUT(&b, a->prep.warm_target_s), DP_BYTES_PUT(&b, warm_from);
    if (!b.oom) {
        state_bytes = b.n - state_at - sizeof state_bytes;
        memcpy(b.p + state_at, &state_bytes, sizeof state_bytes);
    }
    uint32_t nt = (uint32_t)a->params.ntensors;
    DP_BYTES_PUT(&b, nt);
    for (int i = 0; i < a->params.ntensors; i++) {
        uint32_t nl = (uint32_t)strlen(a->params.name[i]);
        uint64_t sz = a->params.size[i];
        DP_BYTES_PUT(&b, nl);
        dp_bytes_put(&b, a->params.name[i], nl);
        DP_BYTES_PUT(&b, sz);
    }
    uint64_t count = a->params.count;
    DP_BYTES_PUT(&b, count);
    dp_bytes_put(&b, a->params.data, sizeof(float) * count);
    dp_bytes_put(&b, a->params.m, sizeof(float) * count);
    dp_bytes_put(&b, a->params.v, sizeof(float) * count);
    DP_BYTES_PUT(&b, a->params.step);
    if (b.oom) {
        free(b.p);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    }
    uint64_t sum = dp_fnv1a(b.p, b.n);
    DP_BYTES_PUT(&b, sum);
    if (b.oom) {
        free(b.p);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    }
    dp_status st = dp_write_file(path, b.p, b.n, "the checkpoint", err);
    free(b.p);
    return st;
}


/* The first word where two identities differ, for the message. */
static void first_difference(const char *want, const char *have, char *buf, size_t size) {
    const char *w = want, *h = have;
    while (*w && *w == *h) w++, h++;
    while (w > want && w[-1] != ' ') w--;
    h = have + (w - want);
    int wl = (int)strcspn(w, " "), hl = (int)strcspn(h, " ");
    snprintf(buf, size, "it has %.*s%s, this run %.*s%s", hl > 80 ? 80 : hl, h, hl > 80 ? "..." : "", wl > 80 ? 80 : wl,
             w, wl > 80 ? "..." : "");
}

/* Reads path whole and checks its magic, version (from oldest to this
 * dplace's) and checksum; on success *text holds it (the caller frees it),
 * *version_out the version, and r is positioned after the version, its end
 * before the checksum. */
static dp_status ck_open(const char *path, uint32_t oldest, char **text, dp_bytes_reader *r, uint32_t *version_out,
                         dp_error *err) {
    size_t len = 0;
    *text = NULL;
    dp_status st = dp_read_file(path, (size_t)1 << 34, text, &len, err);
    if (st) return st;
    *r = (dp_bytes_reader){(const unsigned char *)*text, len, 0, 0};
    char magic[16];
    uint32_t version = 0;
    dp_bytes_get(r, magic, 16);
    if (r->short_read || memcmp(magic, CK_MAGIC, 16) != 0)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: not a dplace agent checkpoint", path);
    DP_BYTES_GET(r, version);
    if (version < oldest || version > CK_VERSION) {
        if (oldest == CK_VERSION)
            return dp_error_set(err, DP_STATUS_UNSUPPORTED, "%s: agent checkpoint version %u; this dplace reads %u",
                                path, version, CK_VERSION);
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "%s: agent checkpoint version %u; this dplace reads %u to %u",
                            path, version, oldest, CK_VERSION);
    }
    uint64_t stored = 0;
    if (len >= 16 + 4 + 8) memcpy(&stored, r->p + len - 8, 8);
    if (len < 16 + 4 + 8 || dp_fnv1a(r->p, len - 8) != stored)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint is truncated or corrupt (checksum)", path);
    r->n = len - 8;
    *version_out = version;
    return DP_STATUS_OK;
}

/* Checks the cost model block at r against this dplace's model and a's
 * device parameters; r moves past it. A run is never resumed under another
 * model: its step times, and so its rewards and its best, would not be
 * those of the run it continues. */
static dp_status check_model(const dp_agent *a, dp_bytes_reader *r, const char *path, dp_error *err) {
    uint32_t model = 0;
    uint64_t devhash = 0, want = dp_devices_hash(a->ds);
    DP_BYTES_GET(r, model);
    DP_BYTES_GET(r, devhash);
    if (r->short_read) return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint is truncated", path);
    if (model != DP_COST_MODEL_VERSION || devhash != want)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "%s: made under cost model %u with device parameters %016llx; this run has cost model %u "
                            "with %016llx (other devices, efficiencies or links): not resumed",
                            path, model, (unsigned long long)devhash, DP_COST_MODEL_VERSION,
                            (unsigned long long)want);
    return DP_STATUS_OK;
}

/* A view of n bytes at the reader's position (NULL and short_read when
 * fewer are left). */
static const unsigned char *view(dp_bytes_reader *r, size_t n) {
    if (r->short_read || n > r->n - r->at) {
        r->short_read = 1;
        return NULL;
    }
    const unsigned char *q = r->p + r->at;
    r->at += n;
    return q;
}

/* The tensor table and the parameter block after it. */
typedef struct ck_tensors {
    uint32_t n;
    const unsigned char *table; /* the table's bytes */
    uint64_t count;
    const unsigned char *values, *m, *v; /* count floats each */
    int64_t step;
} ck_tensors;

static dp_status read_tensors(dp_bytes_reader *r, const char *path, ck_tensors *t, dp_error *err) {
    memset(t, 0, sizeof *t);
    DP_BYTES_GET(r, t->n);
    t->table = r->p + r->at;
    uint64_t total = 0;
    for (uint32_t i = 0; i < t->n && !r->short_read; i++) {
        uint32_t nl = 0;
        uint64_t sz = 0;
        DP_BYTES_GET(r, nl);
        if (nl >= DP_NN_NAME_MAX) r->short_read = 1;
        view(r, nl);
        DP_BYTES_GET(r, sz);
        if (sz > ((uint64_t)1 << 40)) r->short_read = 1;
        total += sz;
    }
    DP_BYTES_GET(r, t->count);
    if (r->short_read || t->count != total || r->n - r->at != sizeof(float) * 3 * t->count + sizeof(int64_t))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint has inconsistent tensor sizes", path);
    t->values = view(r, sizeof(float) * t->count);
    t->m = view(r, sizeof(float) * t->count);
    t->v = view(r, sizeof(float) * t->count);
    DP_BYTES_GET(r, t->step);
    if (t->step < 0 || t->step > ((int64_t)1 << 40))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint has an impossible Adam step %lld", path,
                            (long long)t->step);
    return DP_STATUS_OK;
}

/* Checks that the file's tensors are the agent's, in its order, and
 * returns DP_STATUS_OK; else INVALID naming the first difference. With
 * any_order, each of the agent's tensors is looked up by name instead, and
 * offset[i] gets its position in the file's values. */
static dp_status match_tensors(const dp_agent *a, const ck_tensors *t, int any_order, size_t *offset,
                               const char *path, dp_error *err) {
    for (int i = 0; i < a->params.ntensors; i++) {
        const char *want = a->params.name[i];
        dp_bytes_reader q = {t->table, SIZE_MAX, 0, 0};
        uint64_t at = 0;
        int found = 0;
        for (uint32_t k = 0; k < t->n; k++) {
            uint32_t nl;
            uint64_t sz;
            DP_BYTES_GET(&q, nl);
            const char *name = (const char *)view(&q, nl);
            DP_BYTES_GET(&q, sz);
            int same = strlen(want) == nl && memcmp(want, name, nl) == 0;
            if (!any_order && (int)k == i && !same)
                return dp_error_set(err, DP_STATUS_INVALID, "%s: tensor %u is %.*s, this agent's %s", path, k,
                                    (int)nl, name, want);
            if (same) {
                if (sz != a->params.size[i])
                    return dp_error_set(err, DP_STATUS_INVALID,
                                        "%s: tensor %s has %llu floats there, %llu in this agent (another "
                                        "network size, device count or type vocabulary; type-ids=fixed makes the "
                                        "last graph-independent)",
                                        path, want, (unsigned long long)sz, (unsigned long long)a->params.size[i]);
                if (offset) offset[i] = (size_t)at;
                found = 1;
                break;
            }
            at += sz;
        }
        if (!found)
            return dp_error_set(err, DP_STATUS_INVALID, "%s: has no tensor %s (the checkpoint of another kind of agent)",
                                path, want);
    }
    if (!any_order && t->n != (uint32_t)a->params.ntensors)
        return dp_error_set(err, DP_STATUS_INVALID, "%s: has %u tensors, this agent %d", path, t->n,
                            a->params.ntensors);
    return DP_STATUS_OK;
}

/* Checks the identity block at r against a's; r moves past it. */
static dp_status check_identity(const dp_agent *a, dp_bytes_reader *r, const char *path, dp_error *err) {
    uint32_t idlen = 0;
    DP_BYTES_GET(r, idlen);
    if (r->short_read || idlen > r->n - r->at)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint is truncated", path);
    char *want = identity(a);
    if (!want) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
    dp_status st = DP_STATUS_OK;
    if (strlen(want) != idlen || memcmp(want, r->p + r->at, idlen) != 0) {
        char have[4096], diff[256];
        snprintf(have, sizeof have, "%.*s", (int)(idlen < sizeof have - 1 ? idlen : sizeof have - 1),
                 (const char *)r->p + r->at);
        first_difference(want, have, diff, sizeof diff);
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: the checkpoint is of another run: %s", path, diff);
    }
    free(want);
    r->at += idlen;
    return st;
}

/* The state block as read, before it is applied. */
typedef struct ck_state {
    dp_run_state s;
    dp_agent_prep p;
    dp_rng rng;
    int have_baseline, have_best;
    int32_t window_n, window_pos, n_elites, have_keep, warm_from;
    int64_t ce_updates, pretrain_step;
    uint64_t keep_n;
    size_t wbytes, bbytes, ebytes;
    const unsigned char *window, *best, *elites, *keep; /* views into the file */
} ck_state;

/* Reads the state block (its length first); r moves past it. The values
 * are not checked yet; r->short_read tells a short file. Returns 0, or -1
 * when the block's length does not match what was read. */
static int read_state(const dp_agent *a, dp_bytes_reader *r, ck_state *c) {
    memset(c, 0, sizeof *c);
    uint64_t state_bytes = 0;
    DP_BYTES_GET(r, state_bytes);
    size_t state_end = r->at + (state_bytes <= r->n - r->at ? state_bytes : 0);
    dp_run_state *s = &c->s;
    *s = a->st;
    c->p = a->prep;
    DP_BYTES_GET(r, s->updates), DP_BYTES_GET(r, s->samples), DP_BYTES_GET(r, s->baseline), DP_BYTES_GET(r, s->best_s);
    DP_BYTES_GET(r, s->best_update), DP_BYTES_GET(r, s->best_sample), DP_BYTES_GET(r, s->best_elapsed_s), DP_BYTES_GET(r, s->elapsed_s);
    DP_BYTES_GET(r, s->policy_s), DP_BYTES_GET(r, s->eval_s), DP_BYTES_GET(r, s->groups_used), DP_BYTES_GET(r, s->best_by);
    dp_bytes_get(r, c->rng.s, sizeof c->rng.s);
    DP_BYTES_GET(r, c->have_baseline), DP_BYTES_GET(r, c->window_n), DP_BYTES_GET(r, c->window_pos);
    int32_t E = a->cfg.ce.elites;
    c->wbytes = sizeof(double) * (size_t)a->cfg.train.baseline_window, c->bbytes = sizeof(int32_t) * (size_t)a->N;
    c->window = view(r, c->wbytes);
    DP_BYTES_GET(r, c->have_best);
    c->best = view(r, c->bbytes);
    DP_BYTES_GET(r, c->ce_updates), DP_BYTES_GET(r, c->n_elites);
    c->ebytes = (sizeof(double) + sizeof(uint64_t)) * (size_t)E + sizeof(int32_t) * (size_t)E * a->T +
                (a->elites.choice ? sizeof(int32_t) * (size_t)E * a->N : 0);
    c->elites = view(r, c->ebytes);
    DP_BYTES_GET(r, c->p.pretrain_done), DP_BYTES_GET(r, c->p.pretrain_loss), DP_BYTES_GET(r, c->p.pretrain_best), DP_BYTES_GET(r, c->p.pretrain_s);
    DP_BYTES_GET(r, c->pretrain_step), DP_BYTES_GET(r, c->have_keep), DP_BYTES_GET(r, c->keep_n);
    int keep_ok = (c->have_keep == 0 && c->keep_n == 0) ||
                  (c->have_keep == 1 && a->pretrain_keep && c->keep_n == a->enc_floats);
    c->keep = keep_ok ? view(r, sizeof(float) * c->keep_n) : NULL;
    DP_BYTES_GET(r, c->p.warm_done), DP_BYTES_GET(r, c->p.warm_loss), DP_BYTES_GET(r, c->p.warm_target_s), DP_BYTES_GET(r, c->warm_from);
    return !keep_ok || r->at != state_end ? -1 : 0;
}

/* Whether the values of c are possible for a. */
static int state_consistent(const dp_agent *a, const ck_state *c) {
    const dp_run_state *s = &c->s;
    int32_t W = a->cfg.train.baseline_window, E = a->cfg.ce.elites;
    return s->updates >= 0 && s->samples >= 0 && c->window_n >= 0 && c->window_n <= W && c->window_pos >= 0 &&
           (W == 0 || c->window_pos < W) && (c->have_best == 0 || c->have_best == 1) && c->ce_updates >= 0 &&
           c->n_elites >= 0 && c->n_elites <= E && c->p.pretrain_done >= 0 && c->p.pretrain_done <= c->p.pretrain_iters &&
           c->p.warm_done >= 0 && c->p.warm_done <= c->p.warm_steps && c->warm_from >= -1 &&
           c->warm_from < DP_PLACE_METHOD_COUNT &&
           c->pretrain_step >= 0 && s->best_by >= 0 && s->best_by < DP_RUN_BEST_BY_COUNT;
}

/* Checks n int32 values at p (unaligned) against [0, limit): -1 and the
 * bad value in *bad when one is outside. */
static int ids_in_range(const unsigned char *p, int64_t n, int32_t limit, int32_t *bad) {
    for (int64_t i = 0; i < n; i++) {
        int32_t v;
        memcpy(&v, p + sizeof(int32_t) * (size_t)i, sizeof v);
        if (v < 0 || v >= limit) return *bad = v, -1;
    }
    return 0;
}

/* The placements in c name existing devices and elements. */
static dp_status check_placements(const dp_agent *a, const ck_state *c, const char *path, dp_error *err) {
    int32_t E = a->cfg.ce.elites, bad;
    const unsigned char *devs = c->elites + (sizeof(double) + sizeof(uint64_t)) * (size_t)E;
    if (c->have_best && ids_in_range(c->best, a->N, a->D, &bad))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint's best placement has device %d", path, (int)bad);
    if (ids_in_range(devs, (int64_t)c->n_elites * a->T, a->D, &bad))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint's elite placements have device %d", path,
                            (int)bad);
    if (a->elites.choice &&
        ids_in_range(devs + sizeof(int32_t) * (size_t)E * a->T, (int64_t)c->n_elites * a->N, a->T, &bad))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint's elite groupings have group %d", path,
                            (int)bad);
    return DP_STATUS_OK;
}

/* Puts the checked state c and the tensors t into a. */
static void apply_state(dp_agent *a, const ck_state *c, const ck_tensors *t) {
    const dp_run_state *s = &c->s;
    int32_t E = a->cfg.ce.elites;
    a->st.updates = s->updates, a->st.samples = s->samples, a->st.baseline = s->baseline, a->st.best_s = s->best_s;
    a->st.best_update = s->best_update, a->st.best_sample = s->best_sample, a->st.best_elapsed_s = s->best_elapsed_s;
    a->st.best_by = s->best_by;
    a->st.best_final = 0, a->st.final_s = NAN; /* checkpoints never hold the final answer */
    a->st.elapsed_s = s->elapsed_s, a->st.policy_s = s->policy_s, a->st.eval_s = s->eval_s;
    a->st.groups_used = s->groups_used;
    a->prep.pretrain_done = c->p.pretrain_done, a->prep.pretrain_loss = c->p.pretrain_loss;
    a->prep.pretrain_best = c->p.pretrain_best, a->prep.pretrain_s = c->p.pretrain_s;
    a->pretrain_step = c->pretrain_step, a->pretrain_have_keep = c->have_keep;
    a->prep.warm_done = c->p.warm_done, a->prep.warm_loss = c->p.warm_loss, a->prep.warm_target_s = c->p.warm_target_s;
    a->prep.warm_from = c->warm_from >= 0 ? dp_place_method_name((dp_place_method)c->warm_from) : NULL;
    if (c->keep_n) memcpy(a->pretrain_keep, c->keep, sizeof(float) * c->keep_n);
    a->st.n_last = 0;
    a->rng = c->rng;
    a->baseline.have = c->have_baseline, a->baseline.n = c->window_n, a->baseline.pos = c->window_pos;
    a->baseline.value = s->baseline;
    if (c->wbytes) memcpy(a->baseline.window, c->window, c->wbytes);
    a->have_best = c->have_best;
    memcpy(a->best, c->best, c->bbytes);
    a->ce_updates = c->ce_updates, a->elites.n = c->n_elites;
    const unsigned char *q = c->elites;
    memcpy(a->elites.reward, q, sizeof(double) * (size_t)E), q += sizeof(double) * (size_t)E;
    memcpy(a->elites.hash, q, sizeof(uint64_t) * (size_t)E), q += sizeof(uint64_t) * (size_t)E;
    memcpy(a->elites.devs, q, sizeof(int32_t) * (size_t)E * a->T), q += sizeof(int32_t) * (size_t)E * a->T;
    if (a->elites.choice) memcpy(a->elites.choice, q, sizeof(int32_t) * (size_t)E * a->N);
    a->st.best_placement = c->have_best ? a->best : NULL;
    size_t count = a->params.count;
    memcpy(a->params.data, t->values, sizeof(float) * count);
    memcpy(a->params.m, t->m, sizeof(float) * count);
    memcpy(a->params.v, t->v, sizeof(float) * count);
    a->params.step = t->step;
    agent_prep_sync(a);
}

dp_status dp_agent_load(dp_agent *a, const char *path, dp_error *err) {
    char *text = NULL;
    dp_bytes_reader r;
    ck_state c;
    ck_tensors t;
    uint32_t version = 0;
    dp_status st = ck_open(path, CK_VERSION, &text, &r, &version, err);
    if (!st) st = check_model(a, &r, path, err);
    if (!st) st = check_identity(a, &r, path, err);
    if (st) goto out;
    /* read into a copy, apply only when everything is there */
    if (read_state(a, &r, &c) || r.short_read || !state_consistent(a, &c)) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint has inconsistent sizes or counters", path);
        goto out;
    }
    if ((st = read_tensors(&r, path, &t, err)) || (st = match_tensors(a, &t, 0, NULL, path, err)) ||
        (st = check_placements(a, &c, path, err)))
        goto out;
    apply_state(a, &c, &t);
out:
    free(text);
    return st;
}

dp_status dp_agent_load_policy(dp_agent *a, const char *path, dp_error *err) {
    char *text = NULL;
    size_t *offset = NULL;
    dp_bytes_reader r;
    uint32_t version = 0;
    dp_status st = ck_open(path, CK_POLICY_OLDEST, &text, &r, &version, err);
    if (st) goto out;
    uint32_t idlen = 0;
    uint64_t state_bytes = 0;
    if (version >= CK_MODEL_FROM) view(&r, sizeof(uint32_t) + sizeof(uint64_t)); /* the networks apply under any model */
    DP_BYTES_GET(&r, idlen);
    view(&r, idlen);
    DP_BYTES_GET(&r, state_bytes);
    view(&r, (size_t)state_bytes);
    if (r.short_read) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint is truncated", path);
        goto out;
    }
    ck_tensors t;
    if (!(offset = calloc((size_t)a->params.ntensors, sizeof *offset))) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
        goto out;
    }
    if ((st = read_tensors(&r, path, &t, err)) || (st = match_tensors(a, &t, 1, offset, path, err))) goto out;
    for (int i = 0; i < a->params.ntensors; i++)
        memcpy(a->params.data + a->params.offset[i], t.values + sizeof(float) * offset[i],
               sizeof(float) * a->params.size[i]);
    /* the networks come from the file: no pre-training, no warm start */
    if (a->prep.pretrain_done < a->prep.pretrain_iters || a->prep.warm_done < a->prep.warm_steps) {
        a->prep.pretrain_done = a->prep.pretrain_iters;
        a->prep.warm_done = a->prep.warm_steps;
        a->pretrain_have_keep = 0;
        memset(a->params.m, 0, sizeof(float) * a->params.count);
        memset(a->params.v, 0, sizeof(float) * a->params.count);
        a->params.step = 0;
        agent_prep_sync(a);
    }
    st = DP_STATUS_OK;
out:
    free(offset);
    free(text);
    return st;
}
