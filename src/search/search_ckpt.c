/* Search checkpoints: the whole state in one file, written atomically, so
 * that a resumed run ends exactly as the run that was not interrupted.
 * Layout (native byte order, docs/search.md):
 *
 *   "DPLACE-SEARCH-CK" (16 bytes), u32 version
 *   u32 cost model version (DP_COST_MODEL_VERSION), u64 hash of the device
 *       parameters (dp_devices_hash): both must match
 *   identity: i32 ops, devices, chains, moves; u64 seed; u32 length + the
 *       search's settings as its rows format them (must match)
 *   i32 begun, starts, next start; per start: f64 score, 64 bytes name,
 *       its result (its bytes, link pointer cleared), i32 [ops] placement
 *   the counters: i64 updates, samples, best update, best sample, restarts;
 *       f64 best, best found at, elapsed, evaluator seconds; i32 have_best;
 *       i32 what found the best (dp_run_best_by); i32 [ops] best
 *   per chain: the generator, f64 temperature, i64 steps since better,
 *       f64 its best, i32 [ops] its best, i32 [ops] its current placement,
 *       its counters (dp_search_stats)
 *   u64 FNV-1a checksum of everything before it
 * Version 1 had no "what found the best"; version 2 no settings in the
 * identity; version 3 no cost model version nor device hash. A run resumes
 * from its own version only. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/bytes.h"
#include "dplace/cost.h"
#include "search/search_internal.h"

#define CK_MAGIC "DPLACE-SEARCH-CK"
#define CK_VERSION 4u

/* The identity that a checkpoint must match. */
typedef struct ck_id {
    int32_t ops, devices, chains, moves;
    uint64_t seed;
} ck_id;

static ck_id identity(const dp_search *s) {
    ck_id id;
    memset(&id, 0, sizeof id);
    id.ops = s->n, id.devices = s->ds->n_devices, id.chains = s->n_chains, id.moves = s->opt.moves;
    id.seed = s->opt.seed;
    return id;
}

/* The search's settings as its rows format them, and its units,
 * into buf; returns the length written. */
static uint32_t settings_identity(const dp_search *s, char *buf, size_t size) {
    size_t n = dp_search_options_format(&s->opt, buf, size);
    if (n >= size) n = size - 1;
    char units[32];
    dp_units_spec_format(s->opt.units, units, sizeof units);
    int w = snprintf(buf + n, size - n, " units=%s", units);
    n += w > 0 ? (size_t)w : 0;
    return (uint32_t)(n < size ? n : size - 1);
}

/* Serialises the state into b. */
static void serialise(const dp_search *s, dp_bytes_writer *b) {
    size_t pn = sizeof(int32_t) * (size_t)s->n;
    dp_bytes_put(b, CK_MAGIC, 16);
    uint32_t version = CK_VERSION;
    DP_BYTES_PUT(b, version);
    uint32_t model = DP_COST_MODEL_VERSION;
    uint64_t devhash = dp_devices_hash(s->ds);
    DP_BYTES_PUT(b, model);
    DP_BYTES_PUT(b, devhash);
    ck_id id = identity(s);
    DP_BYTES_PUT(b, id);
    char settings[1024];
    uint32_t slen = settings_identity(s, settings, sizeof settings);
    DP_BYTES_PUT(b, slen);
    dp_bytes_put(b, settings, slen);
    int32_t begun = s->begun, have_best = s->have_best;
    DP_BYTES_PUT(b, begun), DP_BYTES_PUT(b, s->n_starts), DP_BYTES_PUT(b, s->next_start);
    for (int32_t k = 0; k < s->n_starts; k++) {
        dp_sim_result sr = s->start_res[k];
        sr.link = NULL;
        DP_BYTES_PUT(b, s->start_score[k]);
        dp_bytes_put(b, s->start_name[k], sizeof s->start_name[k]);
        DP_BYTES_PUT(b, sr);
        dp_bytes_put(b, s->start + (size_t)k * s->n, pn);
    }
    const dp_run_state *st = &s->state;
    DP_BYTES_PUT(b, st->updates), DP_BYTES_PUT(b, st->samples), DP_BYTES_PUT(b, st->best_update), DP_BYTES_PUT(b, st->best_sample), DP_BYTES_PUT(b, s->restarts);
    DP_BYTES_PUT(b, st->best_s), DP_BYTES_PUT(b, st->best_elapsed_s), DP_BYTES_PUT(b, st->elapsed_s), DP_BYTES_PUT(b, st->eval_s), DP_BYTES_PUT(b, have_best);
    DP_BYTES_PUT(b, st->best_by);
    dp_bytes_put(b, s->best, pn);
    for (int32_t c = 0; c < s->n_chains; c++) {
        const search_chain *ch = &s->chain[c];
        DP_BYTES_PUT(b, ch->rng), DP_BYTES_PUT(b, ch->temp), DP_BYTES_PUT(b, ch->since_better), DP_BYTES_PUT(b, ch->best_s);
        dp_bytes_put(b, ch->best, pn);
        dp_bytes_put(b, s->begun ? dp_sim_delta_base(ch->d) : s->start, pn);
        DP_BYTES_PUT(b, ch->stats);
    }
    uint64_t sum = dp_fnv1a(b->p, b->n);
    DP_BYTES_PUT(b, sum);
}

dp_status search_save(const void *self, const char *path, dp_error *err) {
    const dp_search *s = self;
    dp_bytes_writer b = {0};
    serialise(s, &b);
    if (b.oom) {
        free(b.p);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory for the checkpoint", path);
    }
    dp_status st = dp_write_file(path, b.p, b.n, "the checkpoint", err);
    free(b.p);
    return st;
}

/* ---- reading ---------------------------------------------------------------------- */


/* Whether every entry of p[n] is a device index of s. */
static int devices_ok(const dp_search *s, const int32_t *p) {
    for (int32_t i = 0; i < s->n; i++)
        if (p[i] < 0 || p[i] >= s->ds->n_devices) return 0;
    return 1;
}

/* Checks the header, identity and checksum of the file's bytes. */
static dp_status check_header(const dp_search *s, dp_bytes_reader *r, const char *path, dp_error *err) {
    char magic[16];
    uint32_t version = 0;
    dp_bytes_get(r, magic, 16);
    if (r->short_read || memcmp(magic, CK_MAGIC, 16) != 0)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: not a dplace search checkpoint", path);
    DP_BYTES_GET(r, version);
    if (version != CK_VERSION)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "%s: search checkpoint version %u; this dplace reads %u", path,
                            version, CK_VERSION);
    uint64_t stored = 0;
    if (r->n >= r->at + 8) memcpy(&stored, r->p + r->n - 8, sizeof stored);
    if (r->n < r->at + 8 || dp_fnv1a(r->p, r->n - 8) != stored)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: checksum mismatch (truncated or damaged)", path);
    r->n -= 8;
    uint32_t model = 0;
    uint64_t devhash = 0, want_hash = dp_devices_hash(s->ds);
    DP_BYTES_GET(r, model);
    DP_BYTES_GET(r, devhash);
    if (r->short_read) return dp_error_set(err, DP_STATUS_PARSE, "%s: search checkpoint is truncated or damaged", path);
    if (model != DP_COST_MODEL_VERSION || devhash != want_hash) /* its scores are another model's */
        return dp_error_set(err, DP_STATUS_INVALID,
                            "%s: made under cost model %u with device parameters %016llx; this run has cost model %u "
                            "with %016llx (other devices, efficiencies or links): not resumed",
                            path, model, (unsigned long long)devhash, DP_COST_MODEL_VERSION,
                            (unsigned long long)want_hash);
    ck_id id, want = identity(s);
    DP_BYTES_GET(r, id);
    if (memcmp(&id, &want, sizeof id) != 0)
        return dp_error_set(err, DP_STATUS_INVALID,
                            "%s: made for %d ops, %d devices, %d threads, %d moves, seed %llu; this run has %d, %d, %d, "
                            "%d, seed %llu",
                            path, (int)id.ops, (int)id.devices, (int)id.chains, (int)id.moves,
                            (unsigned long long)id.seed, (int)want.ops, (int)want.devices, (int)want.chains,
                            (int)want.moves, (unsigned long long)want.seed);
    char have[1024], now[1024];
    uint32_t hlen = 0, nlen = settings_identity(s, now, sizeof now);
    DP_BYTES_GET(r, hlen);
    if (r->short_read || hlen >= sizeof have)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: search checkpoint is truncated or damaged", path);
    dp_bytes_get(r, have, hlen);
    have[hlen] = 0;
    if (r->short_read || hlen != nlen || memcmp(have, now, nlen) != 0)
        return dp_error_set(err, DP_STATUS_INVALID, "%s: made with the search settings \"%.200s\"; this run has "
                                                    "\"%.200s\"",
                            path, r->short_read ? "?" : have, now);
    return DP_STATUS_OK;
}

/* Reads the chains' part into a fresh copy of the chains' saved fields:
 * cur [chains * n] and the chains' scalars and bests written into tmp. */
static void read_chains(dp_search *s, dp_bytes_reader *r, search_chain *tmp, int32_t *cur) {
    size_t pn = sizeof(int32_t) * (size_t)s->n;
    for (int32_t c = 0; c < s->n_chains; c++) {
        search_chain *ch = &tmp[c];
        DP_BYTES_GET(r, ch->rng), DP_BYTES_GET(r, ch->temp), DP_BYTES_GET(r, ch->since_better), DP_BYTES_GET(r, ch->best_s);
        dp_bytes_get(r, ch->best, pn);
        dp_bytes_get(r, cur + (size_t)c * s->n, pn);
        DP_BYTES_GET(r, ch->stats);
    }
}

/* Applies a checkpoint read into tmp/cur (checked) to s. */
static dp_status apply(dp_search *s, search_chain *tmp, const int32_t *cur, dp_error *err) {
    for (int32_t c = 0; c < s->n_chains; c++) {
        search_chain *ch = &s->chain[c];
        ch->rng = tmp[c].rng, ch->temp = tmp[c].temp, ch->since_better = tmp[c].since_better;
        ch->best_s = tmp[c].best_s, ch->stats = tmp[c].stats;
        memcpy(ch->best, tmp[c].best, sizeof(int32_t) * (size_t)s->n);
        if (s->begun) {
            dp_status st = search_chain_set(s, ch, cur + (size_t)c * s->n, err);
            if (st) return st;
        }
    }
    return DP_STATUS_OK;
}

dp_status search_load(void *self, const char *path, dp_error *err) {
    dp_search *s = self;
    char *text = NULL;
    size_t len = 0, pn = sizeof(int32_t) * (size_t)s->n;
    dp_status st = dp_read_file(path, (size_t)1 << 34, &text, &len, err);
    if (st) return st;
    dp_bytes_reader r = {(const unsigned char *)text, len, 0, 0};
    search_chain *tmp = calloc((size_t)s->n_chains, sizeof *tmp);
    int32_t *cur = malloc(pn * (size_t)s->n_chains + 4), *start = malloc(pn * SEARCH_MAX_STARTS + 4);
    int32_t *best = malloc(pn + 4);
    int32_t *bests = malloc(pn * (size_t)s->n_chains + 4);
    if (!tmp || !cur || !start || !best || !bests) st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
    for (int32_t c = 0; !st && c < s->n_chains; c++) tmp[c].best = bests + (size_t)c * s->n;
    if (!st) st = check_header(s, &r, path, err);
    int32_t begun = 0, have_best = 0, n_starts = 0, next_start = 0;
    double score[SEARCH_MAX_STARTS];
    char name[SEARCH_MAX_STARTS][64];
    dp_sim_result *sr = malloc(sizeof(dp_sim_result) * SEARCH_MAX_STARTS);
    if (!st && !sr) st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
    dp_run_state ns = s->state;
    int64_t restarts = 0;
    if (!st) {
        DP_BYTES_GET(&r, begun), DP_BYTES_GET(&r, n_starts), DP_BYTES_GET(&r, next_start);
        if (n_starts < 0 || n_starts > SEARCH_MAX_STARTS || next_start < 0 || next_start > n_starts) r.short_read = 1;
        for (int32_t k = 0; k < n_starts && !r.short_read; k++) {
            DP_BYTES_GET(&r, score[k]);
            dp_bytes_get(&r, name[k], sizeof name[k]);
            name[k][sizeof name[k] - 1] = 0;
            dp_bytes_get(&r, &sr[k], sizeof sr[k]);
            dp_bytes_get(&r, start + (size_t)k * s->n, pn);
        }
        DP_BYTES_GET(&r, ns.updates), DP_BYTES_GET(&r, ns.samples), DP_BYTES_GET(&r, ns.best_update), DP_BYTES_GET(&r, ns.best_sample), DP_BYTES_GET(&r, restarts);
        DP_BYTES_GET(&r, ns.best_s), DP_BYTES_GET(&r, ns.best_elapsed_s), DP_BYTES_GET(&r, ns.elapsed_s), DP_BYTES_GET(&r, ns.eval_s), DP_BYTES_GET(&r, have_best);
        DP_BYTES_GET(&r, ns.best_by);
        dp_bytes_get(&r, best, pn);
        read_chains(s, &r, tmp, cur);
        int ok = !r.short_read && r.at == r.n && devices_ok(s, best) && ns.best_by >= 0 && ns.best_by < DP_RUN_BEST_BY_COUNT;
        for (int32_t k = 0; ok && k < n_starts; k++) ok = devices_ok(s, start + (size_t)k * s->n);
        for (int32_t c = 0; ok && c < s->n_chains; c++) ok = devices_ok(s, cur + (size_t)c * s->n);
        if (!ok) st = dp_error_set(err, DP_STATUS_PARSE, "%s: malformed search checkpoint", path);
    }
    if (!st) {
        s->begun = begun, s->have_best = have_best, s->n_starts = n_starts, s->next_start = next_start;
        for (int32_t k = 0; k < n_starts; k++) {
            s->start_score[k] = score[k], s->start_res[k] = sr[k], s->start_res[k].link = NULL;
            memcpy(s->start_name[k], name[k], sizeof name[k]);
        }
        memcpy(s->start, start, pn * (size_t)n_starts), memcpy(s->best, best, pn);
        ns.n_last = 0, ns.best_placement = have_best ? s->best : NULL;
        s->state = ns, s->restarts = restarts;
        st = apply(s, tmp, cur, err);
    }
    free(text), free(tmp), free(cur), free(start), free(best), free(bests), free(sr);
    return st;
}
