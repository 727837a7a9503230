/* Measured step times as a CSV file (docs/formats.md, "dplace-measurements"). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "dplace/calib.h"

/* Splits line (modified) at commas into at most max fields, blanks around
 * each trimmed; returns the field count (max + 1 when there are more). */
static int split_fields(char *line, char **field, int max) {
    int n = 0;
    char *s = line;
    for (;;) {
        char *comma = strchr(s, ',');
        if (comma) *comma = 0;
        while (*s == ' ' || *s == '\t')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = 0;
        if (n == max) return max + 1;
        field[n++] = s;
        if (!comma) return n;
        s = comma + 1;
    }
}

/* Reads one data row's fields into r; errors name the file and line. */
static dp_status parse_row(char **f, const char *path, int32_t line, dp_calib_row *r, dp_error *err) {
    memset(r, 0, sizeof *r);
    r->line = line;
    if (strlen(f[0]) >= sizeof r->graph)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: line %d: the graph name is longer than %zu bytes", path,
                            (int)line, sizeof r->graph - 1);
    if (!f[1][0]) return dp_error_set(err, DP_STATUS_PARSE, "%s: line %d: no placement file", path, (int)line);
    if (strlen(f[1]) >= sizeof r->placement)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: line %d: the placement path is longer than %zu bytes", path,
                            (int)line, sizeof r->placement - 1);
    snprintf(r->graph, sizeof r->graph, "%s", f[0]);
    snprintf(r->placement, sizeof r->placement, "%s", f[1]);
    char *end = NULL;
    errno = 0;
    double v = strtod(f[2], &end);
    if (!f[2][0] || !end || *end || errno == ERANGE || !isfinite(v))
        return dp_error_set(err, DP_STATUS_PARSE, "%s: line %d: seconds \"%.40s\" is not a number", path, (int)line,
                            f[2]);
    if (!(v > 0) || v > DP_CALIB_MAX_SECONDS)
        return dp_error_set(err, DP_STATUS_PARSE, "%s: line %d: seconds must be > 0 and at most %g (got %g)", path,
                            (int)line, DP_CALIB_MAX_SECONDS, v);
    r->seconds = v;
    return DP_STATUS_OK;
}

dp_status dp_calib_read_measurements(const char *path, dp_calib_row **rows, int32_t *n, dp_error *err) {
    *rows = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    dp_status st = dp_read_file(path, (size_t)1 << 28, &text, &len, err);
    if (st) return st;
    char *z = realloc(text, len + 1); /* the reader's buffer ends at len: terminate it */
    if (!z) {
        free(text);
        return dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
    }
    text = z;
    text[len] = 0;
    if (memchr(text, 0, len)) {
        free(text);
        return dp_error_set(err, DP_STATUS_PARSE, "%s: holds a NUL byte: not a CSV text file", path);
    }
    int32_t cap = 0, line = 0, header = 0;
    dp_calib_row *out = NULL;
    for (char *s = text, *next; s && *s && !st; s = next) {
        next = strchr(s, '\n');
        if (next) *next++ = 0;
        line++;
        char *t = s;
        while (*t == ' ' || *t == '\t' || *t == '\r')
            t++;
        if (!*t || *t == '#') continue;
        char *f[4];
        int nf = split_fields(t, f, 3);
        if (!header) {
            if (nf != 3 || strcmp(f[0], "graph") || strcmp(f[1], "placement_file") || strcmp(f[2], "seconds"))
                st = dp_error_set(err, DP_STATUS_PARSE,
                                  "%s: line %d: expected the header \"graph,placement_file,seconds\"", path, (int)line);
            header = 1;
            continue;
        }
        if (nf != 3) {
            st = dp_error_set(err, DP_STATUS_PARSE,
                              "%s: line %d: expected 3 fields (graph,placement_file,seconds), got %s", path, (int)line,
                              nf > 3    ? "more"
                              : nf == 2 ? "2"
                                        : "1");
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            dp_calib_row *nr = realloc(out, (size_t)cap * sizeof *nr);
            if (!nr) {
                st = dp_error_set(err, DP_STATUS_NOMEM, "%s: out of memory", path);
                break;
            }
            out = nr;
        }
        st = parse_row(f, path, line, &out[*n], err);
        if (!st) (*n)++;
    }
    if (!st && !header)
        st = dp_error_set(err, DP_STATUS_PARSE,
                          "%s: empty: expected the header "
                          "\"graph,placement_file,seconds\" and rows",
                          path);
    else if (!st && *n == 0)
        st = dp_error_set(err, DP_STATUS_PARSE, "%s: no measurements: the header and no rows", path);
    free(text);
    if (st) {
        free(out);
        *n = 0;
        return st;
    }
    *rows = out;
    return DP_STATUS_OK;
}
