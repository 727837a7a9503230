/* The run driver (include/dplace/run.h): budgets, preparation, the
 * per-sample log, the best placement, checkpoints, cancellation and the
 * training curve around any method's steps. */
#include "dplace/run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/util.h"
#include "dplace/placement.h"

const char dp_run_log_header[] = "update,sample,step_time_s,valid,reason,reward,baseline,best_s,wall_s\n";
const char dp_run_update_log_header[] =
    "update,samples,valid,mean_s,median_s,entropy_encoder,entropy_placer,adv_mean,adv_std,grad_norm_encoder,"
    "grad_norm_placer,kl,cache_hits,best_s,wall_s,elite_s,elite_sims,greedy_s\n";

/* What found the best: a name for reports and words for a summary. */
static const char *const best_by_names[][2] = {
    {"none", "nothing"},
    {"sample", "a placement sampled from the policy"},
    {"walk", "an elite walk from a sample"},
    {"kept-walk", "the walk from the best elite (elite-keep)"},
    {"greedy", "the policy's greedy placement"},
    {"start", "the search's start"},
    {"search", "a search move"},
    {"opening-draw", "a zero-shot sample drawn where layers open"},
    {"heavy-draw", "a zero-shot sample drawing the heavy units' devices"},
    {"whole-layers", "a zero-shot placement decided a whole layer at a time"},
};
_Static_assert(sizeof best_by_names / sizeof best_by_names[0] == DP_RUN_BEST_BY_COUNT, "a name per dp_run_best_by");

const char *dp_run_best_by_name(int32_t by) { return best_by_names[by >= 0 && by < DP_RUN_BEST_BY_COUNT ? by : 0][0]; }
const char *dp_run_best_by_words(int32_t by) { return best_by_names[by >= 0 && by < DP_RUN_BEST_BY_COUNT ? by : 0][1]; }

dp_run_options dp_run_options_default(void) {
    dp_run_options o;
    memset(&o, 0, sizeof o);
    o.max_updates = o.max_samples = -1;
    o.max_seconds = -1;
    o.checkpoint_every = 50;
    o.checkpoint_every_s = 600.0;
    return o;
}

/* ---- the training curve --------------------------------------------------------- */

/* The points kept for the plot, and the mean per update (mx: where the
 * update ended, in samples; my: its valid samples' mean, NaN: none); one
 * run's, or several runs' in turn (dp_run_options.curve). */
struct dp_run_curve {
    int64_t n, cap;
    double *x, *y, *best;
    unsigned char *valid;
    int64_t nm, mcap;
    double *mx, *my;
    double end_x;   /* the largest x so far (0: none)        */
    double end_best;/* the last point's best (inf: none)    */
    /* the update being read back from a resumed log */
    int64_t upd;
    double usum, ux;
    int64_t un;
};
typedef struct dp_run_curve curve;

static void curve_free(curve *c) { free(c->x), free(c->y), free(c->best), free(c->valid), free(c->mx), free(c->my); }

dp_run_curve *dp_run_curve_init(void) {
    dp_run_curve *c = calloc(1, sizeof *c);
    if (c) c->end_best = INFINITY;
    return c;
}

void dp_run_curve_free(dp_run_curve *c) {
    if (!c) return;
    curve_free(c);
    free(c);
}

double dp_run_curve_end(const dp_run_curve *c) { return c->end_x; }

dp_status dp_run_curve_write_svg(const dp_run_curve *c, const char *path, const dp_run_plot *p, dp_error *err) {
    dp_plot_curve pc = {p->title, "placements sampled", "step time (s)", c->n, c->x, c->y, c->valid, c->best,
                        p->lines, p->n_lines, c->nm, c->mx, c->my, p->markers, p->n_markers, p->best_label};
    return dp_plot_write_svg(path, &pc, err);
}

/* Appends an update's mean; -1 when out of memory. */
static int curve_add_mean(curve *c, double x, double mean) {
    if (c->nm == c->mcap) {
        int64_t nc = c->mcap ? c->mcap * 2 : 1024;
        double *nx = realloc(c->mx, sizeof(double) * nc);
        if (nx) c->mx = nx;
        double *ny = nx ? realloc(c->my, sizeof(double) * nc) : NULL;
        if (ny) c->my = ny;
        if (!ny) return -1;
        c->mcap = nc;
    }
    c->mx[c->nm] = x, c->my[c->nm] = mean;
    c->nm++;
    return 0;
}

/* Appends a point; -1 when out of memory. */
static int curve_add(curve *c, double x, double y, int valid, double best) {
    if (c->n == c->cap) {
        int64_t nc = c->cap ? c->cap * 2 : 4096;
        double *nx = realloc(c->x, sizeof(double) * nc);
        if (nx) c->x = nx;
        double *ny = nx ? realloc(c->y, sizeof(double) * nc) : NULL;
        if (ny) c->y = ny;
        double *nb = ny ? realloc(c->best, sizeof(double) * nc) : NULL;
        if (nb) c->best = nb;
        unsigned char *nv = nb ? realloc(c->valid, (size_t)nc) : NULL;
        if (nv) c->valid = nv;
        if (!nv) return -1;
        c->cap = nc;
    }
    c->x[c->n] = x, c->y[c->n] = y, c->valid[c->n] = (unsigned char)valid, c->best[c->n] = best;
    c->n++;
    c->end_x = fmax(c->end_x, x), c->end_best = best;
    return 0;
}

/* ---- the per-sample log ------------------------------------------------------------- */

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* Splits one CSV line into at most max fields (quotes honoured, in place). */
static int csv_split(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p;
        fields[n++] = p;
        if (*p != '"') {
            char *comma = strchr(p, ',');
            if (!comma) return n;
            *comma = 0;
            p = comma + 1;
            continue;
        }
        char *r = p + 1;
        while (*r) {
            if (*r == '"' && r[1] == '"') *out++ = '"', r += 2;
            else if (*r == '"') {
                r++;
                break;
            } else *out++ = *r++;
        }
        *out = 0; /* the content, copied to the front */
        if (*r != ',') return n;
        p = r + 1;
    }
    return n;
}

/* On resume: keeps the header and the first `rows` rows of the log,
 * refilling the curve from them. */
static dp_status log_truncate(const char *path, int64_t rows, curve *c, dp_error *err) {
    c->upd = -1, c->ux = 0, c->un = 0, c->usum = 0.0;
    FILE *f = fopen(path, "r+");
    if (!f) {
        if (rows == 0) return DP_STATUS_OK;
        return dp_error_set(err, DP_STATUS_IO, "%s: cannot open the log to resume it: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int64_t n = -1; /* the header is row -1 */
    long keep = 0;
    int oom = 0;
    while (n < rows && (len = getline(&line, &cap, f)) > 0) {
        if (n >= 0) {
            char *fld[9];
            if (csv_split(line, fld, 9) < 9) break;
            int64_t upd = atoll(fld[0]);
            double x = (double)atoll(fld[1]) + 1, t = strtod(fld[2], NULL);
            int valid = atoi(fld[3]);
            oom |= curve_add(c, x, t, valid, strtod(fld[7], NULL));
            if (upd != c->upd && c->ux > 0) oom |= curve_add_mean(c, c->ux, c->un ? c->usum / c->un : NAN);
            if (upd != c->upd) c->upd = upd, c->usum = 0.0, c->un = 0;
            if (valid) c->usum += t, c->un++;
            c->ux = x;
        }
        n++;
        keep = ftell(f);
    }
    free(line);
    if (c->ux > 0) oom |= curve_add_mean(c, c->ux, c->un ? c->usum / c->un : NAN);
    dp_status st = DP_STATUS_OK;
    if (oom) st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the training curve");
    else if (n < rows)
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: the log has %lld rows, the checkpoint %lld; cannot resume it",
                          path, (long long)(n < 0 ? 0 : n), (long long)rows);
    else if (fflush(f) || ftruncate(fileno(f), keep) != 0)
        st = dp_error_set(err, DP_STATUS_IO, "%s: cannot truncate the log: %s", path, strerror(errno));
    fclose(f);
    return st;
}

/* Opens the log: a new one with its header, or the resumed one truncated
 * to the state's samples. */
static dp_status log_open(const dp_run_options *o, const dp_run_state *s, int resumed, curve *c, FILE **out,
                          dp_error *err) {
    *out = NULL;
    if (!o->log_path) return DP_STATUS_OK;
    if (resumed) {
        dp_status st = log_truncate(o->log_path, s->samples, c, err);
        if (st) return st;
    }
    FILE *f = fopen(o->log_path, resumed ? "a" : "w");
    if (!f) return dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log: %s", o->log_path, strerror(errno));
    if (!resumed || ftell(f) == 0) fputs(dp_run_log_header, f);
    if (fflush(f)) {
        fclose(f);
        return dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log", o->log_path);
    }
    *out = f;
    return DP_STATUS_OK;
}

/* Keeps the header and the first `rows` rows of the log at path (on
 * resume); a missing file is fine when no row is wanted. */
static dp_status keep_rows(const char *path, int64_t rows, dp_error *err) {
    FILE *f = fopen(path, "r+");
    if (!f) {
        if (rows == 0) return DP_STATUS_OK;
        return dp_error_set(err, DP_STATUS_IO, "%s: cannot open the log to resume it: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int64_t n = -1; /* the header is row -1 */
    long keep = 0;
    while (n < rows && getline(&line, &cap, f) > 0) n++, keep = ftell(f);
    free(line);
    dp_status st = DP_STATUS_OK;
    if (n < rows)
        st = dp_error_set(err, DP_STATUS_INVALID, "%s: the log has %lld rows, the checkpoint %lld; cannot resume it",
                          path, (long long)(n < 0 ? 0 : n), (long long)rows);
    else if (fflush(f) || ftruncate(fileno(f), keep) != 0)
        st = dp_error_set(err, DP_STATUS_IO, "%s: cannot truncate the log: %s", path, strerror(errno));
    fclose(f);
    return st;
}

/* Opens the per-step log: a new one with its header, or the resumed one
 * cut to the state's steps. */
static dp_status update_log_open(const char *path, const dp_run_state *s, int resumed, FILE **out, dp_error *err) {
    *out = NULL;
    if (!path) return DP_STATUS_OK;
    dp_status st = resumed ? keep_rows(path, s->updates, err) : DP_STATUS_OK;
    if (st) return st;
    FILE *f = fopen(path, resumed ? "a" : "w");
    if (!f) return dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log: %s", path, strerror(errno));
    if (!resumed || ftell(f) == 0) fputs(dp_run_update_log_header, f);
    if (fflush(f)) {
        fclose(f);
        return dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log", path);
    }
    *out = f;
    return DP_STATUS_OK;
}

/* The last step's row of the per-step log. */
static dp_status update_log_step(FILE *f, const char *path, const dp_run_state *s, dp_error *err) {
    if (!f || s->n_last == 0) return DP_STATUS_OK;
    const dp_run_update *d = &s->upd;
    fprintf(f, "%lld,%d,%d,%.9g,%.9g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.9g,%.3f,%.9g,%d,%.9g\n",
            (long long)(s->updates - 1), (int)d->samples, (int)d->valid, d->mean_s, d->median_s, d->entropy[0],
            d->entropy[1], d->adv_mean, d->adv_std, d->grad_norm[0], d->grad_norm[1], d->kl, (int)d->cache_hits,
            s->best_s, s->elapsed_s, d->elite_s, (int)d->elite_sims, d->greedy_s);
    if (fflush(f)) return dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log", path);
    return DP_STATUS_OK;
}

/* The last step's samples: a log row and a curve point each (x after x0,
 * the curve's best the lower of the run's and best0). */
static dp_status log_step(FILE *f, const char *path, const dp_run_state *s, curve *c, double x0, double best0,
                          dp_error *err) {
    for (int32_t k = 0; k < s->n_last; k++) {
        const dp_run_sample *x = &s->last[k];
        int64_t idx = s->samples - s->n_last + k;
        if (f) {
            fprintf(f, "%lld,%lld,%.9g,%d,", (long long)(s->updates - 1), (long long)idx, x->step_time_s, x->valid);
            csv_field(f, x->reason);
            fprintf(f, ",%.9g,%.9g,%.9g,%.3f\n", x->reward, s->baseline, s->best_s, s->elapsed_s);
        }
        if (curve_add(c, x0 + (double)idx + 1, x->step_time_s, x->valid, fmin(s->best_s, best0)))
            return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the training curve");
    }
    if (s->n_last > 0 && curve_add_mean(c, x0 + (double)s->samples, s->upd.mean_s))
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the training curve");
    if (f && fflush(f)) return dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log", path);
    return DP_STATUS_OK;
}

/* ---- the loop -------------------------------------------------------------------- */

static int cancelled(const dp_run_options *o) { return o->cancel && *o->cancel; }

/* Whether the time budget leaves room for `ahead` more seconds. */
static int in_time(const dp_run_options *o, double start, double ahead) {
    return o->max_seconds < 0 || dp_now_s() - start + ahead < o->max_seconds;
}

static int prep_left(const dp_run_state *s) {
    return s->prep_done < s->prep_total;
}

/* The preparation, in chunks of about a second (each reported), until done,
 * out of time or cancelled. */
static dp_status prepare(dp_method m, const dp_run_options *o, const dp_run_hooks *h, double start, dp_error *err) {
    const dp_run_state *s = m.ops->state(m.self);
    int64_t chunk = 1;
    while (m.ops->prepare && !cancelled(o) && prep_left(s) && in_time(o, start, 0)) {
        double t0 = dp_now_s();
        dp_status st = m.ops->prepare(m.self, chunk, err);
        if (st) return st;
        double dt = dp_now_s() - t0;
        chunk = dt > 0 ? (int64_t)fmax(1.0, fmin(1000.0, (double)chunk / dt)) : chunk * 2;
        if (h && h->prepared) h->prepared(h->user, s);
    }
    return DP_STATUS_OK;
}

/* Whether the budgets leave room for another step; with steps_fit, for
 * one as long as the last (last_step_s). */
static int budget_left(const dp_run_options *o, const dp_run_state *s, double start, double last_step_s) {
    return !cancelled(o) && (o->max_updates < 0 || s->updates < o->max_updates) &&
           (o->max_samples < 0 || s->samples < o->max_samples) &&
           in_time(o, start, o->steps_fit ? last_step_s : 0);
}

/* The SVG of the curve, with the caller's reference lines. */
static dp_status write_plot(const dp_run_options *o, const curve *c, dp_error *err) {
    dp_run_plot p = {o->plot_title, o->plot_lines, o->n_plot_lines, NULL, 0, NULL};
    return dp_run_curve_write_svg(c, o->plot_path, &p, err);
}

/* The mean of the per-step means over the first and the last tenth of
 * this run's steps (from the curve's mean m0 on; NaN means left out). */
static void tenths(const curve *c, int64_t m0, dp_run_result *r) {
    const double *my = c->my + m0;
    int64_t n = c->nm - m0, t = n / 10 > 0 ? n / 10 : 1;
    r->tenth = t;
    double s[2] = {0, 0};
    int64_t k[2] = {0, 0};
    for (int64_t i = 0; i < n && i < t; i++)
        if (isfinite(my[i])) s[0] += my[i], k[0]++;
    for (int64_t i = n - t; i < n; i++)
        if (i >= 0 && isfinite(my[i])) s[1] += my[i], k[1]++;
    r->first_mean_s = k[0] ? s[0] / k[0] : NAN;
    r->last_mean_s = k[1] ? s[1] / k[1] : NAN;
}

/* What dp_run keeps between steps. */
typedef struct run_ctx {
    dp_method m;
    const dp_run_options *o;
    const dp_run_hooks *h;
    FILE *log, *ulog;
    curve own, *cv;   /* the curve: the run's own, or the caller's       */
    double x0, best0; /* where this run's points begin, and the best before */
    int64_t m0;       /* this run's first mean on the curve              */
    int64_t since_ck;
    double last_ck;
} run_ctx;

/* The outputs after a step: the log, the best placement when it improved,
 * a checkpoint when one is due. */
static dp_status after_step(run_ctx *r, double last_best, dp_error *err) {
    const dp_run_options *o = r->o;
    const dp_run_state *s = r->m.ops->state(r->m.self);
    dp_status st = log_step(r->log, o->log_path, s, r->cv, r->x0, r->best0, err);
    if (!st) st = update_log_step(r->ulog, o->update_log_path, s, err);
    if (!st && o->best_path && s->best_s < last_best && s->best_placement)
        st = dp_placement_write_file(o->best_path, o->g, o->ds, s->best_placement, err);
    if (st) return st;
    r->since_ck++;
    double every_s = o->checkpoint_every_s > 0 ? o->checkpoint_every_s : 600.0;
    int64_t every = o->checkpoint_every > 0 ? o->checkpoint_every : 50;
    if (o->checkpoint_path && (r->since_ck >= every || (r->since_ck > 0 && dp_now_s() - r->last_ck >= every_s))) {
        if ((st = r->m.ops->save(r->m.self, o->checkpoint_path, err))) return st;
        r->since_ck = 0, r->last_ck = dp_now_s();
    }
    return DP_STATUS_OK;
}

/* The end: the last checkpoint; the method's final answer unless the run
 * was cancelled (after the checkpoint, so that a resumed run with a larger
 * budget ends as one that was never stopped; a point on the curve); the
 * best placement; the plot. */
static dp_status finish(run_ctx *r, dp_error *err) {
    const dp_run_options *o = r->o;
    const dp_run_state *s = r->m.ops->state(r->m.self);
    dp_status st = DP_STATUS_OK;
    if (o->checkpoint_path && (r->since_ck || cancelled(o))) st = r->m.ops->save(r->m.self, o->checkpoint_path, err);
    if (!st && r->m.ops->final && !cancelled(o)) {
        st = r->m.ops->final(r->m.self, err);
        if (!st && isfinite(s->final_s) &&
            curve_add(r->cv, r->x0 + (double)s->samples + 1, s->final_s, 1, fmin(s->best_s, r->best0)))
            st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory for the training curve");
    }
    if (!st && o->best_path && s->best_placement)
        st = dp_placement_write_file(o->best_path, o->g, o->ds, s->best_placement, err);
    if (!st && o->plot_path) st = write_plot(o, r->cv, err);
    return st;
}

dp_status dp_run(dp_method m, const dp_run_options *o, const dp_run_hooks *hooks, dp_run_result *out,
                 dp_error *err) {
    double start = dp_now_s(); /* the time budget counts the preparation too */
    run_ctx r = {m, o, hooks, NULL, NULL, {0}, NULL, 0, INFINITY, 0, 0, start};
    r.own.end_best = INFINITY;
    r.cv = o->curve ? o->curve : &r.own;
    r.x0 = r.cv->end_x, r.best0 = r.cv->end_best, r.m0 = r.cv->nm;
    dp_run_result res = {0, 0, 0, 0, NAN, NAN};
    const dp_run_state *s = m.ops->state(m.self);
    const char *resume = o->resume_path ? o->resume_path : o->resume ? o->checkpoint_path : NULL;
    dp_status st = resume ? m.ops->load(m.self, resume, err) : DP_STATUS_OK;
    if (!st) st = log_open(o, s, resume != NULL, r.cv, &r.log, err);
    if (!st) st = update_log_open(o->update_log_path, s, resume != NULL, &r.ulog, err);
    int64_t prepared = s->prep_done;
    if (!st) st = prepare(m, o, hooks, start, err);
    if (!st && o->checkpoint_path && s->prep_done > prepared)
        st = m.ops->save(m.self, o->checkpoint_path, err);
    r.last_ck = dp_now_s();
    double last_step_s = 0; /* the step before, outputs and hook included */
    while (!st && budget_left(o, s, start, last_step_s)) {
        double last_best = s->best_s, t0 = dp_now_s();
        if ((st = m.ops->step(m.self, err))) break;
        res.steps++;
        st = after_step(&r, last_best, err);
        if (!st && hooks && hooks->stepped) hooks->stepped(hooks->user, s);
        last_step_s = dp_now_s() - t0;
    }
    if (r.log && fclose(r.log) && !st) st = dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log", o->log_path);
    if (r.ulog && fclose(r.ulog) && !st)
        st = dp_error_set(err, DP_STATUS_IO, "%s: cannot write the log", o->update_log_path);
    if (!st) st = finish(&r, err);
    tenths(r.cv, r.m0, &res);
    curve_free(&r.own);
    res.interrupted = cancelled(o);
    res.wall_s = dp_now_s() - start;
    if (out) *out = res;
    return st;
}

/* ---- lower bound ------------------------------------------------------------ */

/* The fan-out bound of a pair of distinct consumers a, b of one tensor
 * (ready at fu, fastest transfer tr): both on the producer's device run one
 * after the other when that device has one stream (serial), else one of
 * them waits for the transfer. e, d, t: earliest start, fastest duration,
 * longest fastest path after the end. */
static double fanout_pair(double fu, double tr, int serial, double ea, double da, double ta, double eb, double db,
                          double tb) {
    double both;
    if (serial) {
        double a_first = fmax(ea + da + ta, fmax(ea + da, eb) + db + tb);
        double b_first = fmax(eb + db + tb, fmax(eb + db, ea) + da + ta);
        both = fmin(a_first, b_first);
    } else {
        both = fmax(ea + da + ta, eb + db + tb);
    }
    double a_off = fmax(ea, fu + tr) + da + ta, b_off = fmax(eb, fu + tr) + db + tb;
    return fmin(both, fmin(a_off, b_off));
}

/* Streams of device d (at least one). */
static double device_streams(const dp_devices *ds, int32_t d) {
    return ds->devices[d].streams > 0 ? ds->devices[d].streams : 1;
}

/* The work bound: for weights mu_d >= 0 with sum_d mu_d * streams_d = 1,
 * any placement's step time T satisfies T >= sum_d mu_d * busy_d (a
 * device's busy time is at most T times its streams) >= sum_i min_d mu_d *
 * t_id (t: op i's time on device d, infinite where not allowed). Equal
 * weights give the total fastest work over all streams (uniform); the
 * weights are then improved by multiplicative ascent toward the best such
 * bound (the fractional assignment's: a slow CPU's stream counts for the
 * work it can do). t is [n_ops x n_devices]; mu and load [n_devices] are
 * scratch. */
static double work_bound(const double *t, int32_t n_ops, const dp_devices *ds, double *mu, double *load,
                         double *uniform) {
    int32_t D = ds->n_devices;
    double total_streams = 0.0, best = 0.0;
    for (int32_t d = 0; d < D; d++) total_streams += device_streams(ds, d);
    for (int32_t d = 0; d < D; d++) mu[d] = 1.0 / total_streams;
    for (int it = 0; it < 200; it++) {
        double g = 0.0;
        for (int32_t d = 0; d < D; d++) load[d] = 0.0;
        for (int32_t i = 0; i < n_ops; i++) {
            const double *ti = &t[(size_t)i * (size_t)D];
            int32_t arg = -1;
            double m = INFINITY;
            for (int32_t d = 0; d < D; d++)
                if (mu[d] * ti[d] < m) m = mu[d] * ti[d], arg = d;
            if (arg < 0) continue; /* no allowed device: no time */
            g += m, load[arg] += ti[arg];
        }
        if (it == 0) *uniform = g;
        best = fmax(best, g);
        if (!(g > 0.0)) break;
        double eta = 0.5 / sqrt(1.0 + it), norm = 0.0;
        for (int32_t d = 0; d < D; d++) {
            double sd = device_streams(ds, d);
            mu[d] *= exp(eta * fmax(-1.0, fmin(1.0, load[d] / sd / g - 1.0)));
            norm += mu[d] * sd;
        }
        for (int32_t d = 0; d < D; d++) mu[d] /= norm;
    }
    return best;
}

/* The fan-out bound over every tensor of g: the pairs among each tensor's
 * three consumers that end latest (start + dur + tail), a transfer taking
 * at least the smallest latency plus the bytes over the largest bandwidth;
 * 0 on one device or without links. */
static double fanout_bound(const dp_graph *g, const dp_devices *ds, const double *start, const double *dur,
                           const double *tail, const uint8_t *serial) {
    double fan = 0.0, min_lat = INFINITY, max_bw = 0.0;
    for (int32_t l = 0; l < ds->n_links; l++)
        min_lat = fmin(min_lat, ds->links[l].latency_s), max_bw = fmax(max_bw, dp_devices_link_rate(&ds->links[l]));
    if (ds->n_devices < 2 || !(max_bw > 0)) return 0.0;
    for (int32_t u = 0; u < g->n_ops; u++) {
        double fu = start[u] + dur[u];
        for (int64_t x = g->tensor_at[u]; x < g->tensor_at[u + 1]; x++) {
            int32_t top[3] = {-1, -1, -1};
            double end[3] = {0, 0, 0};
            for (int64_t e = g->consumers_at[x]; e < g->consumers_at[x + 1]; e++) {
                int32_t c = g->consumers[e];
                if (c == top[0] || c == top[1] || c == top[2]) continue;
                double v = start[c] + dur[c] + tail[c];
                for (int j = 0; j < 3; j++)
                    if (top[j] < 0 || v > end[j]) {
                        for (int m = 2; m > j; m--) top[m] = top[m - 1], end[m] = end[m - 1];
                        top[j] = c, end[j] = v;
                        break;
                    }
            }
            double tr = min_lat + (double)g->outputs[x].bytes / max_bw;
            for (int j = 0; j < 3; j++)
                for (int m = j + 1; m < 3; m++) {
                    int32_t a = top[j], b = top[m];
                    if (b < 0) continue;
                    fan = fmax(fan, fanout_pair(fu, tr, serial[u], start[a], dur[a], tail[a], start[b], dur[b],
                                                tail[b]));
                }
        }
    }
    return fan;
}

dp_status dp_run_lower_bound(const dp_graph *g, const dp_devices *ds, const dp_sim *sim, dp_run_bound *out,
                             dp_error *err) {
    size_t n = (size_t)(g->n_ops ? g->n_ops : 1), D = (size_t)ds->n_devices;
    /* one allocation: dur, start, tail [n]; t [n x D]; mu, load [D]; serial [n] */
    double *dur = malloc(sizeof(double) * (3 * n + n * D + 2 * D) + n);
    if (!dur) return dp_error_set(err, DP_STATUS_NOMEM, "lower bound: out of memory");
    double *start = dur + n, *tail = start + n, *t = tail + n, *mu = t + n * D, *load = mu + D;
    uint8_t *serial = (uint8_t *)(load + D);
    double cp = 0.0;
    /* forward: earliest start and fastest duration of each op */
    for (int32_t k = 0; k < g->n_ops; k++) {
        int32_t i = g->topo[k];
        double best = INFINITY;
        serial[i] = 1;
        for (int32_t d = 0; d < (int32_t)D; d++) {
            double *tid = &t[(size_t)i * D + (size_t)d];
            *tid = INFINITY;
            if (dp_placement_allowed(g, ds, i, d)) {
                *tid = dp_sim_op_seconds(sim, i, d);
                best = fmin(best, *tid);
                if (ds->devices[d].streams > 1) serial[i] = 0;
            }
        }
        if (!isfinite(best)) best = 0.0;
        double t0 = 0.0;
        const dp_op *op = &g->ops[i];
        for (int32_t e = 0; e < op->n_inputs; e++) {
            int32_t p = g->inputs[op->inputs_at + e].op;
            t0 = fmax(t0, start[p] + dur[p]);
        }
        start[i] = t0, dur[i] = best;
        cp = fmax(cp, t0 + best);
    }
    /* backward: the longest fastest path after each op's end */
    for (int32_t k = g->n_ops - 1; k >= 0; k--) {
        int32_t i = g->topo[k];
        double after = 0.0;
        for (int64_t x = g->tensor_at[i]; x < g->tensor_at[i + 1]; x++)
            for (int64_t e = g->consumers_at[x]; e < g->consumers_at[x + 1]; e++) {
                int32_t c = g->consumers[e];
                after = fmax(after, dur[c] + tail[c]);
            }
        tail[i] = after;
    }
    out->critical_path_s = cp;
    out->fanout_s = fanout_bound(g, ds, start, dur, tail, serial);
    out->work_s = work_bound(t, g->n_ops, ds, mu, load, &out->work_uniform_s);
    out->bound_s = fmax(cp, fmax(out->work_s, out->fanout_s));
    free(dur);
    return DP_STATUS_OK;
}
