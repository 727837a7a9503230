/* Agent checkpoints: the whole training state in one file, written
 * atomically, so that a run resumed from it ends exactly as the run that
 * was not interrupted. Layout (native byte order, docs/agents.md):
 *
 *   "DPLACE-AGENT-CK\n" (16 bytes), u32 version
 *   u32 length + bytes: identity (graph, ops, devices, configuration,
 *                       evaluator, seed) that must match on load
 *   the counters, generator, baseline and its window, the best placement
 *   (version 2) the cross-entropy updates done and the elites: i32 count,
 *               then ce_elites rewards, hashes, devices [ce_elites, G] and,
 *               with the learned grouper, groupings [ce_elites, N]
 *   u64 floats, then values, Adam m, Adam v (floats), i64 Adam step
 *   u64 FNV-1a checksum of everything before it
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "common/util.h"

#define CK_MAGIC "DPLACE-AGENT-CK\n"
#define CK_VERSION 2u

typedef struct ck_buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} ck_buf;

static void put(ck_buf *b, const void *src, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n) c *= 2;
        unsigned char *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q, b->cap = c;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
#define PUT(b, v) put((b), &(v), sizeof(v))

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

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
                  (int)a->eo.sim.steps, (int)a->eo.sim.warmup, a->eo.sim.mean, (unsigned long long)a->eo.sim.seed, (int)a->G);
    dp_agent_config_format(&a->cfg, s + w, cap - (size_t)w);
    return s;
}

dp_status dp_agent_save(const dp_agent *a, const char *path, dp_error *err) {
    ck_buf b = {0};
    char *id = identity(a);
    if (!id) return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    uint32_t version = CK_VERSION, idlen = (uint32_t)strlen(id);
    put(&b, CK_MAGIC, 16);
    PUT(&b, version);
    PUT(&b, idlen);
    put(&b, id, idlen);
    free(id);
    const dp_agent_state *s = &a->st;
    PUT(&b, s->updates), PUT(&b, s->samples), PUT(&b, s->baseline), PUT(&b, s->best_s);
    PUT(&b, s->best_update), PUT(&b, s->best_sample), PUT(&b, s->best_elapsed_s), PUT(&b, s->elapsed_s);
    PUT(&b, s->policy_s), PUT(&b, s->eval_s), PUT(&b, s->groups_used);
    put(&b, a->rng.s, sizeof a->rng.s);
    PUT(&b, a->have_baseline), PUT(&b, a->window_n), PUT(&b, a->window_pos);
    put(&b, a->window, sizeof(double) * (size_t)a->cfg.baseline_window);
    PUT(&b, a->have_best);
    put(&b, a->best, sizeof(int32_t) * (size_t)a->N);
    int32_t E = a->cfg.ce_elites;
    PUT(&b, a->ce_updates), PUT(&b, a->n_elites);
    put(&b, a->elite_reward, sizeof(double) * (size_t)E);
    put(&b, a->elite_hash, sizeof(uint64_t) * (size_t)E);
    put(&b, a->elite_devs, sizeof(int32_t) * (size_t)E * a->G);
    if (a->elite_group) put(&b, a->elite_group, sizeof(int32_t) * (size_t)E * a->N);
    uint64_t count = a->params.count;
    PUT(&b, count);
    put(&b, a->params.data, sizeof(float) * count);
    put(&b, a->params.m, sizeof(float) * count);
    put(&b, a->params.v, sizeof(float) * count);
    PUT(&b, a->params.step);
    if (b.oom) {
        free(b.p);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    }
    uint64_t sum = fnv1a(b.p, b.n);
    PUT(&b, sum);
    if (b.oom) {
        free(b.p);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    }
    dp_atomic_file af;
    dp_status st = dp_atomic_open(&af, path, err);
    if (!st) {
        if (fwrite(b.p, 1, b.n, af.f) != b.n) {
            dp_atomic_abort(&af);
            st = dp_error_set(err, DP_STATUS_IO, "%s: cannot write the checkpoint", path);
        } else {
            st = dp_atomic_commit(&af, err);
        }
    }
    free(b.p);
    return st;
}

typedef struct ck_reader {
    const unsigned char *p;
    size_t n, at;
    int short_read;
} ck_reader;

static void get(ck_reader *r, void *dst, size_t n) {
    if (r->short_read || r->n - r->at < n) {
        r->short_read = 1;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}
#define GET(r, v) get((r), &(v), sizeof(v))

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

dp_status dp_agent_load(dp_agent *a, const char *path, dp_error *err) {
    char *text = NULL;
    size_t len = 0;
    dp_status st = dp_read_file(path, (size_t)1 << 34, &text, &len, err);
    if (st) return st;
    ck_reader r = {(const unsigned char *)text, len, 0, 0};
    char magic[16];
    uint32_t version = 0, idlen = 0;
    get(&r, magic, 16);
    if (r.short_read || memcmp(magic, CK_MAGIC, 16) != 0) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: not a dplace agent checkpoint", path);
        goto out;
    }
    GET(&r, version);
    if (version != CK_VERSION) {
        st = dp_error_set(err, DP_STATUS_UNSUPPORTED, "%s: agent checkpoint version %u; this dplace reads %u", path,
                          version, CK_VERSION);
        goto out;
    }
    uint64_t stored = 0;
    if (len >= 16 + 4 + 8) memcpy(&stored, r.p + len - 8, 8);
    if (len < 16 + 4 + 8 || fnv1a(r.p, len - 8) != stored) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint is truncated or corrupt (checksum)", path);
        goto out;
    }
    r.n = len - 8;
    GET(&r, idlen);
    if (r.short_read || idlen > r.n - r.at) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint is truncated", path);
        goto out;
    }
    char *want = identity(a);
    if (!want) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
        goto out;
    }
    if (strlen(want) != idlen || memcmp(want, r.p + r.at, idlen) != 0) {
        char have[4096], diff[256];
        snprintf(have, sizeof have, "%.*s", (int)(idlen < sizeof have - 1 ? idlen : sizeof have - 1),
                 (const char *)r.p + r.at);
        first_difference(want, have, diff, sizeof diff);
        free(want);
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: the checkpoint is of another run: %s", path, diff);
        goto out;
    }
    free(want);
    r.at += idlen;

    /* read into a copy, apply only when everything is there */
    dp_agent_state s = a->st;
    dp_rng rng;
    int have_baseline, have_best;
    int32_t window_n, window_pos;
    GET(&r, s.updates), GET(&r, s.samples), GET(&r, s.baseline), GET(&r, s.best_s);
    GET(&r, s.best_update), GET(&r, s.best_sample), GET(&r, s.best_elapsed_s), GET(&r, s.elapsed_s);
    GET(&r, s.policy_s), GET(&r, s.eval_s), GET(&r, s.groups_used);
    get(&r, rng.s, sizeof rng.s);
    GET(&r, have_baseline), GET(&r, window_n), GET(&r, window_pos);
    size_t wbytes = sizeof(double) * (size_t)a->cfg.baseline_window, bbytes = sizeof(int32_t) * (size_t)a->N;
    const unsigned char *window = r.p + r.at;
    r.at += wbytes <= r.n - r.at ? wbytes : (r.short_read = 1, 0);
    GET(&r, have_best);
    const unsigned char *best = r.p + r.at;
    r.at += bbytes <= r.n - r.at ? bbytes : (r.short_read = 1, 0);
    int64_t ce_updates = 0;
    int32_t n_elites = 0, E = a->cfg.ce_elites;
    GET(&r, ce_updates), GET(&r, n_elites);
    size_t ebytes = (sizeof(double) + sizeof(uint64_t)) * (size_t)E + sizeof(int32_t) * (size_t)E * a->G +
                    (a->elite_group ? sizeof(int32_t) * (size_t)E * a->N : 0);
    const unsigned char *elites = r.p + r.at;
    r.at += ebytes <= r.n - r.at ? ebytes : (r.short_read = 1, 0);
    uint64_t count = 0;
    GET(&r, count);
    if (r.short_read || count != a->params.count || r.n - r.at != sizeof(float) * 3 * count + sizeof(int64_t) ||
        s.updates < 0 || s.samples < 0 || window_n < 0 || window_n > a->cfg.baseline_window || window_pos < 0 ||
        (a->cfg.baseline_window > 0 && window_pos >= a->cfg.baseline_window) || (have_best != 0 && have_best != 1) ||
        ce_updates < 0 || n_elites < 0 || n_elites > E) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint has inconsistent sizes or counters", path);
        goto out;
    }
    const unsigned char *params = r.p + r.at;
    int64_t step;
    memcpy(&step, params + sizeof(float) * 3 * count, sizeof step);
    if (step < 0 || step > ((int64_t)1 << 40)) {
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint has an impossible Adam step %lld", path,
                          (long long)step);
        goto out;
    }
    for (int32_t i = 0; have_best && i < a->N; i++) {
        int32_t d;
        memcpy(&d, best + sizeof(int32_t) * (size_t)i, sizeof d);
        if (d < 0 || d >= a->D) {
            st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint's best placement has device %d", path, (int)d);
            goto out;
        }
    }
    for (int64_t i = 0; i < (int64_t)n_elites * a->G; i++) {
        int32_t d;
        memcpy(&d, elites + (sizeof(double) + sizeof(uint64_t)) * (size_t)E + sizeof(int32_t) * (size_t)i, sizeof d);
        if (d < 0 || d >= a->D) {
            st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint's elite placements have device %d", path,
                              (int)d);
            goto out;
        }
    }
    for (int64_t i = 0; a->elite_group && i < (int64_t)n_elites * a->N; i++) {
        int32_t g;
        memcpy(&g, elites + (sizeof(double) + sizeof(uint64_t)) * (size_t)E + sizeof(int32_t) * (size_t)E * a->G +
                       sizeof(int32_t) * (size_t)i,
               sizeof g);
        if (g < 0 || g >= a->G) {
            st = dp_error_set(err, DP_STATUS_PARSE, "%s: agent checkpoint's elite groupings have group %d", path,
                              (int)g);
            goto out;
        }
    }
    /* apply */
    a->st.updates = s.updates, a->st.samples = s.samples, a->st.baseline = s.baseline, a->st.best_s = s.best_s;
    a->st.best_update = s.best_update, a->st.best_sample = s.best_sample, a->st.best_elapsed_s = s.best_elapsed_s;
    a->st.elapsed_s = s.elapsed_s, a->st.policy_s = s.policy_s, a->st.eval_s = s.eval_s;
    a->st.groups_used = s.groups_used;
    a->st.n_last = 0;
    a->rng = rng;
    a->have_baseline = have_baseline, a->window_n = window_n, a->window_pos = window_pos;
    memcpy(a->window, window, wbytes);
    a->have_best = have_best;
    memcpy(a->best, best, bbytes);
    a->ce_updates = ce_updates, a->n_elites = n_elites;
    const unsigned char *q = elites;
    memcpy(a->elite_reward, q, sizeof(double) * (size_t)E), q += sizeof(double) * (size_t)E;
    memcpy(a->elite_hash, q, sizeof(uint64_t) * (size_t)E), q += sizeof(uint64_t) * (size_t)E;
    memcpy(a->elite_devs, q, sizeof(int32_t) * (size_t)E * a->G), q += sizeof(int32_t) * (size_t)E * a->G;
    if (a->elite_group) memcpy(a->elite_group, q, sizeof(int32_t) * (size_t)E * a->N);
    a->ggraph_ok = 0;
    a->st.best_placement = have_best ? a->best : NULL;
    memcpy(a->params.data, params, sizeof(float) * count);
    memcpy(a->params.m, params + sizeof(float) * count, sizeof(float) * count);
    memcpy(a->params.v, params + sizeof(float) * 2 * count, sizeof(float) * count);
    a->params.step = step;
    st = DP_STATUS_OK;
out:
    free(text);
    return st;
}
