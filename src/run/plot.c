/* The training-curve picture: sampled step times, the best-so-far line and
 * reference lines as an SVG written atomically (include/dplace/plot.h). */
#include "dplace/plot.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Canvas, plot area (PL..PR x PT..PB) and legend column, in pixels. */
enum { W = 1056, H = 560, PL = 96, PR = 736, PT = 84, PB = 496, LEGEND_X = 760 };
/* The strip above the plot area where invalid samples are drawn. */
#define INVALID_Y (PT - 9.0)
/* At most this many dots; more samples are thinned per pixel column. */
#define MAX_DOTS 5000
/* Legend labels and the title are cut to these many characters. */
#define LABEL_CHARS 30
#define TITLE_CHARS 100

#define COLOR_DOTS "#1f77b4"
#define COLOR_BEST "#ff7f0e"
#define COLOR_INVALID "#d62728"
#define COLOR_MEAN "#222222"

static const char *const line_colors[] = {"#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"};
static const char *const line_dashes[] = {"7 4", "2 3", "9 3 2 3", "4 4", "12 4", "1 2", "6 2 2 2 2 2"};
_Static_assert(sizeof line_colors / sizeof line_colors[0] == sizeof line_dashes / sizeof line_dashes[0], "styles");
#define N_STYLES ((int)(sizeof line_colors / sizeof line_colors[0]))

/* ---- text --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p that XML allows (1..4), or 0. */
static int utf8_len(const unsigned char *p) {
    unsigned c = p[0];
    if (c < 0x80) return 1;
    int n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
    else if ((c & 0xf0) == 0xe0) n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminator */
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)) return 0;
    if (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) return 0;
    return n;
}

/* Number of characters put_text shows for s (before cutting). */
static int text_chars(const char *s) {
    int count = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; count++) {
        int len = utf8_len(p);
        p += len ? len : 1;
    }
    return count;
}

/* Writes s as XML character data: markup characters escaped, control
 * characters as spaces, invalid UTF-8 as '?'; more than max characters are
 * cut to max - 1 and an ellipsis. */
static void put_text(FILE *f, const char *s, int max) {
    int limit = text_chars(s) > max ? max - 1 : max;
    const unsigned char *p = (const unsigned char *)s;
    for (int count = 0; *p; count++) {
        if (count == limit) {
            fputs("\xe2\x80\xa6", f); /* U+2026 */
            return;
        }
        int len = utf8_len(p);
        if (len == 0) {
            fputc('?', f);
            p++;
        } else if (len > 1) {
            fwrite(p, 1, (size_t)len, f);
            p += len;
        } else {
            unsigned char ch = *p++;
            switch (ch) {
            case '&': fputs("&amp;", f); break;
            case '<': fputs("&lt;", f); break;
            case '>': fputs("&gt;", f); break;
            case '"': fputs("&quot;", f); break;
            case '\'': fputs("&apos;", f); break;
            default: fputc(ch < 0x20 || ch == 0x7f ? ' ' : ch, f);
            }
        }
    }
}

/* Formats a count with thousands separators: 12,345. */
static void fmt_count(char *buf, size_t cap, int64_t v) {
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
    size_t k = 0;
    if (v < 0 && k + 1 < cap) buf[k++] = '-';
    for (int i = 0; i < n && k + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
}

/* ---- axes --------------------------------------------------------------- */

typedef struct axis {
    double lo, hi, step;
} axis;

/* A round step (1, 2 or 5 times a power of ten) near span / target. */
static double nice_step(double span, int target) {
    double raw = span / target;
    double p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

/* An axis over [lo, hi] (finite, lo <= hi) ending on round ticks, padded
 * by pad of its span on each side but not below zero when lo >= 0; with
 * integer set, ticks are whole numbers. */
static axis make_axis(double lo, double hi, int target, double pad, int integer) {
    int nonneg = lo >= 0;
    if (!(hi > lo)) {
        double d = lo != 0 ? fabs(lo) * 0.1 : 1.0;
        lo -= d;
        hi += d;
    }
    double d = (hi - lo) * pad;
    lo -= d;
    hi += d;
    if (nonneg && lo < 0) lo = 0;
    axis a;
    a.step = nice_step(hi - lo, target);
    if (integer && a.step < 1) a.step = 1;
    a.lo = floor(lo / a.step + 1e-9) * a.step;
    a.hi = ceil(hi / a.step - 1e-9) * a.step;
    if (!(a.hi > a.lo)) a.hi = a.lo + a.step;
    return a;
}

/* Formats a tick value with as many decimals as the step needs. */
static void fmt_tick(char *buf, size_t cap, double v, double step) {
    if (fabs(v) < step * 1e-6) v = 0;
    if (step >= 1e5 && fabs(v) >= 1e6) snprintf(buf, cap, "%gM", v / 1e6);
    else if (step >= 1e3 && fabs(v) >= 1e3) snprintf(buf, cap, "%gk", v / 1e3);
    else if (step >= 1) snprintf(buf, cap, "%.0f", v);
    else {
        int dec = (int)ceil(-log10(step) - 1e-9);
        if (dec <= 7) snprintf(buf, cap, "%.*f", dec, v);
        else snprintf(buf, cap, "%.3g", v);
    }
}

static double map_x(const axis *a, double v) { return PL + (v - a->lo) / (a->hi - a->lo) * (PR - PL); }
static double map_y(const axis *a, double v) { return PB - (v - a->lo) / (a->hi - a->lo) * (PB - PT); }

/* ---- the picture -------------------------------------------------------- */

static double x_of(const dp_plot_curve *c, int64_t i) { return c->x ? c->x[i] : (double)(i + 1); }
static int valid_of(const dp_plot_curve *c, int64_t i) { return !c->valid || c->valid[i]; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Everything the writer needs, computed before the file is opened. */
typedef struct layout {
    axis ax, ay;
    int64_t n_valid, n_invalid, n_clipped;
    double best_final, best_x; /* NaN when there is no best */
    double *ys;                /* finite valid y (with finite x), sorted */
    int64_t m;
    unsigned char *off_scale;  /* per reference line */
} layout;

/* Chooses both axes: x over the finite x values, y over the valid points
 * (robust to outliers) and the reference lines; counts what is drawn. */
static dp_status plan(const dp_plot_curve *c, layout *L) {
    int64_t n = c->n;
    L->ys = malloc((size_t)(n > 0 ? n : 1) * sizeof *L->ys);
    L->off_scale = calloc((size_t)(c->n_lines > 0 ? c->n_lines : 1), 1);
    if (!L->ys || !L->off_scale) return DP_STATUS_NOMEM;
    double xlo = INFINITY, xhi = -INFINITY;
    int x_integer = 1; /* whole-number x (sample counts): whole-number ticks */
    L->m = 0;
    L->best_final = L->best_x = NAN;
    for (int64_t i = 0; i < n; i++) {
        double x = x_of(c, i);
        if (!isfinite(x)) continue;
        xlo = fmin(xlo, x);
        xhi = fmax(xhi, x);
        x_integer &= x == floor(x);
        if (!valid_of(c, i)) {
            L->n_invalid++;
            continue;
        }
        L->n_valid++;
        if (isfinite(c->y[i])) L->ys[L->m++] = c->y[i];
    }
    if (c->best) { /* the last best, and where it was first reached */
        int64_t last = -1;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(c->best[i]) && isfinite(x_of(c, i))) last = i;
        if (last >= 0) {
            L->best_final = c->best[last];
            for (int64_t j = 0; j <= last && isnan(L->best_x); j++)
                if (c->best[j] == L->best_final && isfinite(x_of(c, j))) L->best_x = x_of(c, j);
        }
    }
    qsort(L->ys, (size_t)L->m, sizeof *L->ys, cmp_double);
    if (!(xlo <= xhi)) xlo = 0, xhi = 1;
    L->ax = make_axis(xlo, xhi, 6, 0.0, x_integer);

    double lo = INFINITY, hi = -INFINITY;
    if (L->m) {
        lo = L->ys[0];
        hi = L->ys[L->m - 1];
        if (L->m >= 10) { /* outliers above: stop the view at the fence */
            double q = L->ys[(int64_t)floor(0.99 * (double)(L->m - 1))];
            double fence = q + 2 * (q - lo) + 0.25 * fabs(q);
            int64_t k = L->m - 1;
            while (k > 0 && L->ys[k] > fence) k--;
            hi = L->ys[k];
        }
    }
    if (c->best)
        for (int64_t i = 0; i < n; i++)
            if (isfinite(c->best[i]) && isfinite(x_of(c, i))) lo = fmin(lo, c->best[i]);
    double dlo = lo, dhi = hi;
    for (int k = 0; k < c->n_lines; k++) {
        double v = c->lines[k].value;
        if (!isfinite(v)) continue;
        if (dlo <= dhi) { /* within reach of the samples, or off scale */
            double reach = 3 * fmax(dhi - dlo, fmax(fabs(dhi), fabs(dlo)));
            if (v > dhi + reach || v < dlo - reach) {
                L->off_scale[k] = 1;
                continue;
            }
        }
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    if (!(lo <= hi)) lo = 0, hi = 1;
    L->ay = make_axis(lo, hi, 6, 0.04, 0);
    for (int64_t i = 0; i < L->m; i++) L->n_clipped += L->ys[i] > L->ay.hi;
    return DP_STATUS_OK;
}

static void put_axes(FILE *f, const dp_plot_curve *c, const layout *L) {
    char buf[64];
    fputs("<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n", f);
    for (double v = L->ay.lo; v <= L->ay.hi + L->ay.step * 1e-6; v += L->ay.step)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PL, map_y(&L->ay, v), PR, map_y(&L->ay, v));
    for (double v = L->ax.lo; v <= L->ax.hi + L->ax.step * 1e-6; v += L->ax.step)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", map_x(&L->ax, v), PT, map_x(&L->ax, v), PB);
    fputs("</g>\n<g font-size=\"11\" fill=\"#333\">\n", f);
    for (double v = L->ay.lo; v <= L->ay.hi + L->ay.step * 1e-6; v += L->ay.step) {
        fmt_tick(buf, sizeof buf, v, L->ay.step);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PL - 6, map_y(&L->ay, v) + 4, buf);
    }
    for (double v = L->ax.lo; v <= L->ax.hi + L->ax.step * 1e-6; v += L->ax.step) {
        fmt_tick(buf, sizeof buf, v, L->ax.step);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", map_x(&L->ax, v), PB + 17, buf);
    }
    fputs("</g>\n<g font-size=\"13\" fill=\"#222\">\n", f);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (PL + PR) / 2, PB + 42);
    put_text(f, c->x_label ? c->x_label : "samples", TITLE_CHARS);
    fprintf(f, "</text>\n<text transform=\"translate(20 %d) rotate(-90)\" text-anchor=\"middle\">", (PT + PB) / 2);
    put_text(f, c->y_label ? c->y_label : "step time (s)", TITLE_CHARS);
    fputs("</text>\n</g>\n", f);
}

static void put_lines(FILE *f, const dp_plot_curve *c, const layout *L) {
    for (int k = 0; k < c->n_lines; k++) {
        double v = c->lines[k].value;
        if (!isfinite(v) || L->off_scale[k]) continue;
        double y = map_y(&L->ay, v);
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.6\" "
                "stroke-dasharray=\"%s\"/>\n",
                PL, y, PR, y, line_colors[k % N_STYLES], line_dashes[k % N_STYLES]);
    }
}

/* The vertical markers within the x range, each with its label at the top. */
static void put_markers(FILE *f, const dp_plot_curve *c, const layout *L) {
    for (int k = 0; k < c->n_markers; k++) {
        double v = c->markers[k].x;
        if (!isfinite(v) || v < L->ax.lo || v > L->ax.hi) continue;
        double x = map_x(&L->ax, v);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\" stroke-width=\"1.2\" "
                "stroke-dasharray=\"3 3\"/>\n<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#333\">",
                x, PT, x, PB, x + 4, PT + 14);
        put_text(f, c->markers[k].label ? c->markers[k].label : "", LABEL_CHARS);
        fputs("</text>\n", f);
    }
}

/* Pixel column (0 .. PR-PL-1) of an x value. */
static int column_of(const layout *L, double x) {
    int col = (int)floor(map_x(&L->ax, x) - PL);
    return col < 0 ? 0 : col >= PR - PL ? PR - PL - 1 : col;
}

static void put_dot(FILE *f, double x, double y) { fprintf(f, "M%.1f %.1fh0.01", x, y); }

/* The samples: dots (thinned per pixel column when there are more than
 * MAX_DOTS) and triangles on the top edge for those above the view; marks
 * the columns of invalid samples in invalid[] (PR - PL bytes, zeroed). */
static dp_status put_points(FILE *f, const dp_plot_curve *c, const layout *L, unsigned char *invalid) {
    const int ncol = PR - PL;
    int64_t n = c->n;
    int64_t *start = calloc((size_t)ncol + 1, sizeof *start);
    unsigned char *mark = calloc((size_t)ncol, 1); /* columns with samples above the view */
    double *py = malloc((size_t)(L->m > 0 ? L->m : 1) * sizeof *py);
    if (!start || !mark || !py) {
        free(start);
        free(mark);
        free(py);
        return DP_STATUS_NOMEM;
    }
    int64_t shown = L->m - L->n_clipped;
    int thin = shown > MAX_DOTS;
    if (thin) { /* bucket the pixel y of every shown dot by column */
        for (int64_t i = 0; i < n; i++)
            if (valid_of(c, i) && isfinite(x_of(c, i)) && isfinite(c->y[i]) && c->y[i] <= L->ay.hi)
                start[column_of(L, x_of(c, i)) + 1]++;
        for (int k = 0; k < ncol; k++) start[k + 1] += start[k];
    }
    fprintf(f,
            "<path fill=\"none\" stroke=\"%s\" stroke-opacity=\"0.6\" stroke-width=\"3.6\" stroke-linecap=\"round\" "
            "d=\"",
            COLOR_DOTS);
    for (int64_t i = 0; i < n; i++) {
        double x = x_of(c, i);
        if (!isfinite(x)) continue;
        int col = column_of(L, x);
        if (!valid_of(c, i)) {
            invalid[col] = 1;
            continue;
        }
        double y = c->y[i];
        if (!isfinite(y)) continue;
        if (y > L->ay.hi) mark[col] = 1;
        else if (thin) py[start[col]++] = map_y(&L->ay, y);
        else put_dot(f, map_x(&L->ax, x), map_y(&L->ay, y));
    }
    if (thin) { /* per column: the minimum, the maximum, evenly spaced ranks between */
        const int per = MAX_DOTS / ncol > 2 ? MAX_DOTS / ncol : 2;
        int64_t begin = 0;
        for (int col = 0; col < ncol; col++) {
            int64_t end = start[col], cnt = end - begin; /* start[col] now ends the column */
            if (cnt > 0) {
                double *v = py + begin;
                qsort(v, (size_t)cnt, sizeof *v, cmp_double);
                int64_t last = -1;
                for (int j = 0; j < per; j++) {
                    int64_t r = (int64_t)llround((double)j * (double)(cnt - 1) / (per - 1));
                    if (r == last) continue;
                    last = r;
                    put_dot(f, PL + col + 0.5, v[r]);
                }
            }
            begin = end;
        }
    }
    fputs("\"/>\n", f);
    if (L->n_clipped) {
        fprintf(f, "<path fill=\"%s\" d=\"", COLOR_DOTS);
        for (int col = 0; col < ncol; col++)
            if (mark[col]) fprintf(f, "M%.1f %dl3.5 6h-7z", PL + col + 0.5, PT);
        fputs("\"/>\n", f);
    }
    free(start);
    free(mark);
    free(py);
    return DP_STATUS_OK;
}

/* The invalid samples: a cross per marked column (at least 3 pixels
 * apart) in the strip above the plot area. */
static void put_invalid(FILE *f, const layout *L, const unsigned char *invalid) {
    if (!L->n_invalid) return;
    fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\" d=\"", COLOR_INVALID);
    int last = -100;
    for (int col = 0; col < PR - PL; col++)
        if (invalid[col] && col - last >= 3) {
            last = col;
            fprintf(f, "M%.1f %.1fl6 6m0 -6l-6 6", PL + col + 0.5 - 3, INVALID_Y - 3);
        }
    fputs("\"/>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"%s\" text-anchor=\"end\">invalid</text>\n", PL - 6,
            INVALID_Y + 3.5, COLOR_INVALID);
}

/* The best-so-far step line through columns: per pixel column its first,
 * lowest, highest and last value in order (exact at one sample per
 * column), steps between columns, gaps where the best is not finite. */
typedef struct pen {
    FILE *f;
    int down;
    double x, y;
} pen;

static void pen_to(pen *p, double x, double y) {
    if (!p->down) {
        fprintf(p->f, "M%.1f %.1f", x, y);
        p->down = 1;
    } else {
        if (x == p->x && y == p->y) return;
        if (x != p->x && y != p->y) fprintf(p->f, "H%.1f", x); /* a step: across, then down */
        if (y != p->y) fprintf(p->f, "V%.1f", y);
        else fprintf(p->f, "H%.1f", x);
    }
    p->x = x;
    p->y = y;
}

static void put_best(FILE *f, const dp_plot_curve *c, const layout *L) {
    if (!c->best) return;
    fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2.2\" stroke-linejoin=\"round\" d=\"", COLOR_BEST);
    pen p = {f, 0, 0, 0};
    int col = -1;
    double v[4] = {0, 0, 0, 0}; /* first, min, max, last (pixel y) of the current column */
    int64_t imin = 0, imax = 0;
    for (int64_t i = 0; i <= c->n; i++) {
        int end = i == c->n;
        double x = end ? NAN : x_of(c, i), b = end ? NAN : c->best[i];
        int ok = isfinite(x) && isfinite(b);
        int k = ok ? column_of(L, x) : -1;
        if (col >= 0 && k != col) { /* flush the column */
            double cx = PL + col + 0.5;
            pen_to(&p, cx, v[0]);
            pen_to(&p, cx, imin < imax ? v[1] : v[2]);
            pen_to(&p, cx, imin < imax ? v[2] : v[1]);
            pen_to(&p, cx, v[3]);
            col = -1;
        }
        if (!ok) {
            if (!end && isfinite(x)) p.down = 0; /* a gap in the line */
            continue;
        }
        double y = map_y(&L->ay, b);
        y = y < PT ? PT : y > PB ? PB : y;
        y = round(y * 10) / 10; /* as printed, so that equal values compare equal */
        if (col < 0) {
            col = k;
            v[0] = v[1] = v[2] = v[3] = y;
            imin = imax = i;
        }
        if (y > v[1]) v[1] = y, imin = i; /* pixel y grows downwards: v[1] lowest value */
        if (y < v[2]) v[2] = y, imax = i;
        v[3] = y;
    }
    fputs("\"/>\n", f);
}

/* The mean per update: a line through the per-column averages of the
 * updates that end in each pixel column (at most one point a column),
 * broken where an update has no valid sample. */
static void put_mean(FILE *f, const dp_plot_curve *c, const layout *L) {
    if (c->n_mean <= 0 || !c->mean_x || !c->mean_y) return;
    fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" stroke-linejoin=\"round\" d=\"", COLOR_MEAN);
    int down = 0, col = -1, n = 0;
    double sum = 0.0;
    for (int64_t i = 0; i <= c->n_mean; i++) {
        int end = i == c->n_mean;
        double x = end ? NAN : c->mean_x[i], y = end ? NAN : c->mean_y[i];
        int k = isfinite(x) ? column_of(L, x) : -1;
        if (n && (end || k != col || !isfinite(y))) { /* flush the column */
            double py = map_y(&L->ay, sum / n);
            py = py < PT ? PT : py > PB ? PB : py;
            fprintf(f, "%c%.1f %.1f", down ? 'L' : 'M', PL + col + 0.5, py);
            down = 1, n = 0, sum = 0.0;
        }
        if (end) break;
        if (!isfinite(y) || k < 0) {
            down = 0; /* a gap */
            continue;
        }
        col = k, sum += y, n++;
    }
    fputs("\"/>\n", f);
}

/* The legend: one row per series with its marker; the reference lines
 * with their values. */
static void put_legend(FILE *f, const dp_plot_curve *c, const layout *L) {
    char buf[64];
    double y = PT + 8;
    fputs("<g font-size=\"12\" fill=\"#222\">\n", f);
    fprintf(f,
            "<path stroke=\"%s\" stroke-opacity=\"0.6\" stroke-width=\"3.6\" stroke-linecap=\"round\" "
            "d=\"M%d %.1fh0.01M%d %.1fh0.01M%d %.1fh0.01\"/>\n",
            COLOR_DOTS, LEGEND_X + 2, y + 2, LEGEND_X + 10, y - 3, LEGEND_X + 18, y + 1);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\">", LEGEND_X + 30, y + 4);
    fputs("sampled placements", f);
    fputs("</text>\n", f);
    y += 22;
    if (c->best) {
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.2\"/>\n",
                LEGEND_X, y, LEGEND_X + 22, y, COLOR_BEST);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">", LEGEND_X + 30, y + 4);
        fputs("best so far", f);
        if (c->best_label && isfinite(L->best_final)) fputs(": ", f), put_text(f, c->best_label, LABEL_CHARS);
        else if (isfinite(L->best_final)) fprintf(f, ": %.4g", L->best_final);
        fputs("</text>\n", f);
        y += 22;
    }
    if (c->n_mean > 0) {
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.6\"/>\n",
                LEGEND_X, y, LEGEND_X + 22, y, COLOR_MEAN);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">mean per update</text>\n", LEGEND_X + 30, y + 4);
        y += 22;
    }
    if (L->n_invalid) {
        fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\" d=\"M%d %.1fl6 6m0 -6l-6 6\"/>\n",
                COLOR_INVALID, LEGEND_X + 8, y - 3);
        fmt_count(buf, sizeof buf, L->n_invalid);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">invalid (%s), on the top edge</text>\n", LEGEND_X + 30, y + 4, buf);
        y += 22;
    }
    if (L->n_clipped) {
        fprintf(f, "<path fill=\"%s\" d=\"M%d %.1fl3.5 6h-7z\"/>\n", COLOR_DOTS, LEGEND_X + 11, y - 3);
        fmt_count(buf, sizeof buf, L->n_clipped);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">above the view (%s)</text>\n", LEGEND_X + 30, y + 4, buf);
        y += 22;
    }
    for (int k = 0; k < c->n_lines; k++) {
        double v = c->lines[k].value;
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.6\" "
                "stroke-dasharray=\"%s\"/>\n",
                LEGEND_X, y, LEGEND_X + 22, y, line_colors[k % N_STYLES], line_dashes[k % N_STYLES]);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">", LEGEND_X + 30, y + 4);
        put_text(f, c->lines[k].label ? c->lines[k].label : "", LABEL_CHARS);
        if (!isfinite(v)) fputs(": n/a", f);
        else fprintf(f, ": %.4g%s", v, L->off_scale[k] ? " (off scale)" : "");
        fputs("</text>\n", f);
        y += 22;
    }
    fputs("</g>\n", f);
}

static void put_svg(FILE *f, const dp_plot_curve *c, const layout *L, dp_status *st) {
    char a[32], b[32];
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"Helvetica, Arial, sans-serif\">\n",
            W, H, W, H);
    fputs("<title>", f);
    put_text(f, c->title ? c->title : "dplace training curve", TITLE_CHARS);
    fprintf(f, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    if (c->title) {
        fprintf(f, "<text x=\"%d\" y=\"30\" font-size=\"16\" font-weight=\"bold\" fill=\"#111\">", PL);
        put_text(f, c->title, TITLE_CHARS);
        fputs("</text>\n", f);
    }
    fmt_count(a, sizeof a, c->n);
    fmt_count(b, sizeof b, L->n_valid);
    fprintf(f, "<text x=\"%d\" y=\"52\" font-size=\"12\" fill=\"#555\">%s sample%s", PL, a, c->n == 1 ? "" : "s");
    if (c->n) fprintf(f, ", %s valid (%.1f%%)", b, 100.0 * (double)L->n_valid / (double)c->n);
    if (isfinite(L->best_final)) {
        if (c->best_label) fputs(", best ", f), put_text(f, c->best_label, LABEL_CHARS);
        else fprintf(f, ", best %.4g", L->best_final);
        if (isfinite(L->best_x)) fprintf(f, " found at %.6g", L->best_x);
    }
    fputs("</text>\n", f);
    put_axes(f, c, L);
    fprintf(f,
            "<clipPath id=\"plot\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/></clipPath>\n"
            "<g clip-path=\"url(#plot)\">\n",
            PL - 3, PT - 3, PR - PL + 6, PB - PT + 6);
    put_lines(f, c, L);
    unsigned char *invalid = calloc(PR - PL, 1);
    *st = invalid ? put_points(f, c, L, invalid) : DP_STATUS_NOMEM;
    put_mean(f, c, L);
    put_best(f, c, L);
    put_markers(f, c, L);
    fputs("</g>\n", f);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", PL, PT,
            PR - PL, PB - PT);
    if (invalid) put_invalid(f, L, invalid);
    free(invalid);
    put_legend(f, c, L);
    fputs("</svg>\n", f);
}

dp_status dp_plot_write_svg(const char *path, const dp_plot_curve *c, dp_error *err) {
    if (!path || !*path) return dp_error_set(err, DP_STATUS_INVALID, "plot: no output path");
    if (!c) return dp_error_set(err, DP_STATUS_INVALID, "%s: plot: no curve", path);
    if (c->n < 0) return dp_error_set(err, DP_STATUS_INVALID, "%s: plot: n is negative (%lld)", path, (long long)c->n);
    if (c->n > 0 && !c->y)
        return dp_error_set(err, DP_STATUS_INVALID, "%s: plot: %lld points but no y values", path, (long long)c->n);
    if (c->n_lines < 0 || (c->n_lines > 0 && !c->lines))
        return dp_error_set(err, DP_STATUS_INVALID, "%s: plot: %d reference lines but no array of them", path,
                            c->n_lines);
    if (c->n_markers < 0 || (c->n_markers > 0 && !c->markers))
        return dp_error_set(err, DP_STATUS_INVALID, "%s: plot: %d markers but no array of them", path, c->n_markers);
    layout L;
    memset(&L, 0, sizeof L);
    dp_status st = plan(c, &L);
    if (st) {
        free(L.ys);
        free(L.off_scale);
        return dp_error_set(err, st, "%s: plot: out of memory", path);
    }
    dp_atomic_file af;
    st = dp_atomic_open(&af, path, err);
    if (!st) {
        put_svg(af.f, c, &L, &st);
        if (st) {
            dp_atomic_abort(&af);
            dp_error_set(err, st, "%s: plot: out of memory", path);
        } else {
            st = dp_atomic_commit(&af, err);
        }
    }
    free(L.ys);
    free(L.off_scale);
    return st;
}
