/* dplace optimize's progress on stderr: a line per chunk of preparation
 * and per update (at most every few seconds; rewritten in place on a
 * terminal), and a line about an update that runs long. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/optimize_cli.h"
#include "common/util.h"

void opt_format_duration(double s, char *buf, size_t size) {
    if (!isfinite(s) || s < 0) snprintf(buf, size, "?");
    else if (s < 60) snprintf(buf, size, "%.1fs", s);
    else if (s < 3600) snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void opt_progress_init(opt_progress *p, const opt_args *o) {
    memset(p, 0, sizeof *p);
    p->tty = isatty(2);
    p->quiet = o->quiet, p->quiet_prep = o->quiet || o->json;
    p->every_s = p->tty ? 0.5 : 10.0;
    p->start_s = p->update_s = dp_now_s();
}

void opt_progress_in_update(void *user, const char *phase, int64_t done, int64_t total) {
    opt_progress *p = user;
    double now = dp_now_s();
    /* only for an update running longer than every_s, and when no line at
     * all came for every_s: update lines keep their own pace */
    if (p->quiet || !p->st || now - p->update_s < p->every_s || now - fmax(p->last_s, p->flight_s) < p->every_s)
        return;
    p->flight_s = now;
    fprintf(stderr, "%supdate %lld in flight: %s %lld/%lld%s", p->tty ? "\r\033[K" : "optimize: ",
            (long long)p->st->updates + 1, phase, (long long)done, (long long)total, p->tty ? "" : "\n");
    fflush(stderr);
}

static void recent_add(opt_progress *w, int valid, double t) {
    if (w->n[1] >= 200) { /* the current window is full: it becomes the previous one */
        w->n[0] = w->n[1], w->valid[0] = w->valid[1], w->sum[0] = w->sum[1];
        w->n[1] = w->valid[1] = 0, w->sum[1] = 0;
    }
    w->n[1]++;
    if (valid) w->valid[1]++, w->sum[1] += t;
}

/* The line after an update (at most every every_s seconds unless final). */
static void progress_show(opt_progress *p, const dp_run_state *s, int final) {
    int64_t n = p->n[0] + p->n[1], nv = p->valid[0] + p->valid[1];
    double recent_mean = nv ? (p->sum[0] + p->sum[1]) / nv : NAN, valid_pct = n ? 100.0 * nv / n : 0;
    double now = dp_now_s();
    p->update_s = now;
    if (p->quiet || (!final && now - p->last_s < p->every_s)) return;
    p->last_s = now;
    double el = now - p->start_s;
    double rate = el > 0 ? s->samples / (s->elapsed_s > 0 ? s->elapsed_s : el) : 0;
    double remain = NAN;
    if (p->total_updates > 0 && s->updates > 0)
        remain = (double)(p->total_updates - s->updates) * (s->elapsed_s / (double)s->updates);
    if (p->time_budget > 0) remain = fmin(isfinite(remain) ? remain : INFINITY, p->time_budget - el);
    char e[32], r[32], best[32], recent[32];
    opt_format_duration(s->elapsed_s, e, sizeof e);
    opt_format_duration(remain, r, sizeof r);
    if (isfinite(s->best_s)) snprintf(best, sizeof best, "%.4f s", s->best_s);
    else snprintf(best, sizeof best, "none yet");
    if (isfinite(recent_mean)) snprintf(recent, sizeof recent, "%.4f s", recent_mean);
    else snprintf(recent, sizeof recent, "-");
    const dp_run_update *d = &s->upd;
    char learn[96] = "";
    if (s->updates > 0 && isfinite(d->entropy[1]))
        snprintf(learn, sizeof learn, "  H %.3g  kl %.2g  |g| %.2g", d->entropy[1], d->kl, d->grad_norm[1]);
    char valid[16] = "-";
    if (n) snprintf(valid, sizeof valid, "%.0f%%", valid_pct);
    fprintf(stderr, "%supdate %lld  samples %lld  best %s  recent %s  valid %s%s  %.1f samples/s  %s  left %s%s",
            p->tty ? "\r\033[K" : "optimize: ", (long long)s->updates, (long long)s->samples, best, recent, valid,
            learn, rate, e, r, p->tty && !final ? "" : "\n");
    fflush(stderr);
}

/* Before a phase: what it is, its budget; the search after training starts
 * its windows afresh and says from where. */
static void on_begin(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    opt_progress *p = user;
    p->st = s;
    if (phase == DP_OPTIMIZE_SEARCH_AFTER) {
        memset(p->n, 0, sizeof p->n), memset(p->valid, 0, sizeof p->valid), memset(p->sum, 0, sizeof p->sum);
        p->total_updates = -1, p->time_budget = p->after_s, p->start_s = dp_now_s();
        if (!p->quiet_prep) {
            const char *name = NULL;
            dp_sim_result sr;
            dp_search_start(m.self, &name, &sr);
            fprintf(stderr, "optimize: searching from the learned best (%.6f s)\n", sr.step_time_s);
        }
    }
}

/* A line per chunk of preparation: what the method says it is doing. */
static void on_prepared(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    opt_progress *p = user;
    double now = dp_now_s();
    int final = s->prep_done == s->prep_total;
    p->update_s = now; /* the first update starts after the preparation */
    if (p->quiet_prep || (!final && now - p->last_s < p->every_s)) return;
    p->last_s = now;
    char e[32], line[256] = "";
    opt_format_duration(s->prep_s, e, sizeof e);
    if (m.ops->describe_prep) m.ops->describe_prep(m.self, line, sizeof line);
    fprintf(stderr, "%s%s  %s%s", p->tty ? "\r\033[K" : "optimize: ", line, e, p->tty && !final ? "" : "\n");
    fflush(stderr);
}

static void on_stepped(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    opt_progress *p = user;
    for (int32_t k = 0; k < s->n_last; k++) recent_add(p, s->last[k].valid, s->last[k].step_time_s);
    progress_show(p, s, 0);
}

static void on_end(void *user, dp_optimize_phase phase, dp_method m, const dp_run_state *s) {
    progress_show(user, s, 1);
}

dp_optimize_hooks opt_progress_hooks(opt_progress *p) {
    dp_optimize_hooks h = {p, on_begin, on_prepared, on_stepped, on_end};
    return h;
}
