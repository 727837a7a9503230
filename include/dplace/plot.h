/* dplace: the training-curve picture (`dplace optimize --plot FILE.svg`), an
 * SVG that dplace writes itself (docs/measure.md describes it).
 *
 * The picture: each sampled placement as a dot at (x, y) (invalid ones as
 * red crosses in a strip along the top edge), the best-so-far step line,
 * optionally the mean per update as a dark line (so that a flat or rising
 * curve is seen at a glance),
 * horizontal reference lines (single GPU, expert, best baseline), a legend
 * with the reference values, axes with round ticks, and a line of counts
 * under the title. The y range comes from the valid points and the
 * reference lines, robust to outliers: when a few samples are far above
 * the rest (with 10 or more valid samples: above the 99th percentile by
 * more than twice its distance to the minimum, plus a quarter of it) the
 * view stops there and those samples are drawn as triangles on the top
 * edge. A reference line further from
 * the samples than three times their span (or their magnitude, if larger)
 * is listed in the legend as "off scale" instead of stretching the view.
 * NaN and infinite values are skipped. Large n is thinned to at most about
 * 5,000 dots (per pixel column: the minimum, the maximum and evenly spaced
 * ranks between), so 100,000 samples give a file of about 100 KB. */
#ifndef DPLACE_PLOT_H
#define DPLACE_PLOT_H

#include <stdint.h>

#include "dplace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A horizontal reference line, e.g. {"expert", 2.1}. The legend shows it
 * as "label: value" (the label cut to 30 characters), so the label need
 * not carry the value; a NaN or infinite value shows as "n/a", undrawn. */
typedef struct dp_plot_line {
    const char *label;
    double value;
} dp_plot_line;

/* A vertical line at x, e.g. {"search after", 2001}: where a run's next
 * phase begins. Its label is drawn beside it at the top of the plot. */
typedef struct dp_plot_marker {
    const char *label;
    double x;
} dp_plot_marker;

/* The data of one picture. Strings may be NULL (then: no title, "samples",
 * "step time (s)"); they are UTF-8 (invalid bytes become '?') and are
 * escaped for XML. The legend names the dots "sampled placements" and the
 * step line "best so far". */
typedef struct dp_plot_curve {
    const char *title;
    const char *x_label;
    const char *y_label;
    int64_t n;                  /* number of sampled points, >= 0                   */
    const double *x;            /* n values in ascending order; NULL: 1..n          */
    const double *y;            /* n values (ignored where invalid); NULL only if n == 0 */
    const unsigned char *valid; /* n flags, 0 = invalid sample; NULL: all valid     */
    const double *best;         /* NULL, or n best-so-far values (NaN before the first valid sample) */
    const dp_plot_line *lines;  /* n_lines reference lines                          */
    int n_lines;
    /* optional: the mean sampled step time per update, a line through
     * (mean_x, mean_y) (x in the samples' units: where the update ended;
     * NaN y: a gap, an update without a valid sample) */
    int64_t n_mean;
    const double *mean_x, *mean_y;
    /* optional: vertical markers (x in the samples' units; those outside
     * the samples' x range are left out) */
    const dp_plot_marker *markers;
    int n_markers;
    /* optional: the final best as the caller prints it ("1.708912 s"), for
     * the legend and the line under the title (NULL: the last finite best,
     * to 4 significant digits) */
    const char *best_label;
} dp_plot_curve;

/* Writes the picture of c as an SVG file at path, atomically (a reader
 * never sees a half-written file; on failure path is left as it was and no
 * temporary file remains). n = 0 gives
 * empty axes. Errors: DP_STATUS_INVALID for inconsistent input (negative n
 * or n_lines, y or lines missing), DP_STATUS_IO when the file cannot be
 * written, DP_STATUS_NOMEM; messages name the path. */
dp_status dp_plot_write_svg(const char *path, const dp_plot_curve *c, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
