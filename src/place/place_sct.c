/* m-SCT's favourite children (Baechi, Jeon et al., SoCC 2020, after Hanen
 * and Munier's SCT): the LP relaxation of "which consumer of each op runs on
 * the op's device", solved by COIN-OR CLP's dual simplex (coinor-libclp-dev:
 * on these LPs it took 0.6 s where GLPK's simplex took 13 s, nmt4, and 2.2 s
 * where GLPK took 335 s, nmt8; docs/baselines.md). Only this file sees
 * Clp_C_Interface.h.
 *
 * The LP (Baechi's FavoriteChildLPSolver): x_e in [0, 1] per edge e = (i, j)
 * of the op graph (0: j is i's favourite child, no transfer; 1: a transfer of
 * c_e seconds), a start time s_i >= 0 per op, the makespan w. Minimise w
 * subject to
 *   s_i + p_i + c_e x_e <= s_j       for every edge e = (i, j)
 *   sum_j x_(i,j) >= outdeg(i) - 1   (at most one favourite child)
 *   sum_i x_(i,j) >= indeg(j) - 1    (at most one favourite parent)
 *   s_i + p_i <= w.
 * Solved in an equivalent, smaller form:
 *   - an edge without a transfer (c_e = 0: inside a unit) has no x (an x
 *     there could be 1 at no cost), so it counts in no degree: the degrees
 *     are over the paid edges (c_e > 0);
 *   - a paid edge in no degree row (its producer has one paid out-edge and
 *     its consumer one paid in-edge) has x = 0, optimal since x appears in
 *     its precedence row alone;
 *   - an op on no edge is no column: w >= p_i is w's lower bound; the
 *     makespan row s_i + p_i <= w is kept for the ops without successors
 *     only (every other op's follows from its successors');
 *   - an op j whose only in-edge e = (i, j) has no x starts, in some optimal
 *     solution, right when i ends (s_j appears in no other lower bound and
 *     in upper bounds only), so s_j = s_i + p_i: j is no column, its edge
 *     no row, and its other rows use s_i with the offset (in topological
 *     order, a chain shares its first op's column).
 * An edge is a favourite when x_e < threshold (Baechi's rounding); the
 * rounded edges are then matched greedily in edge order so that every op
 * keeps at most one favourite child and one favourite parent. */
#include <coin/Clp_C_Interface.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

#define DP_SCT_MAX_LP_EDGES 2000000 /* edges of the largest LP m-sct solves */

dp_status place_sct_favourites(int32_t n_ops, int64_t n_edges, const int32_t *from, const int32_t *to,
                               const double *comm_s, const double *op_s, double threshold, int32_t *fav,
                               double *lp_makespan_s, dp_error *err) {
    for (int32_t i = 0; i < n_ops; i++) fav[i] = -1;
    *lp_makespan_s = 0;
    for (int32_t i = 0; i < n_ops; i++)
        if (op_s[i] > *lp_makespan_s) *lp_makespan_s = op_s[i];
    if (n_edges == 0) return DP_STATUS_OK; /* no edge, no favourite */
    if (n_edges > DP_SCT_MAX_LP_EDGES)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "m-sct: the LP would have %lld edges, over the limit of %d",
                            (long long)n_edges, DP_SCT_MAX_LP_EDGES);
    const double us = 1e6; /* the LP in microseconds: better scaled */
    int32_t *outdeg = calloc((size_t)n_ops, sizeof(int32_t)), *indeg = calloc((size_t)n_ops, sizeof(int32_t));
    int32_t *col = malloc((size_t)n_ops * sizeof(int32_t)), *parent = malloc((size_t)n_ops * sizeof(int32_t));
    int32_t *order = malloc((size_t)n_ops * sizeof(int32_t)), *n_in = calloc((size_t)n_ops, sizeof(int32_t));
    double *off = calloc((size_t)n_ops, sizeof(double));
    int64_t *last_in = malloc((size_t)n_ops * sizeof(int64_t));
    uint8_t *has_succ = calloc((size_t)n_ops, 1);
    int *xcol = calloc((size_t)n_edges + 1, sizeof(int));
    int64_t nz_max = 3 * n_edges + 2 * n_edges + 2 * (int64_t)n_ops + 1;
    int *ia = malloc((size_t)(nz_max + 1) * sizeof(int)), *ja = malloc((size_t)(nz_max + 1) * sizeof(int));
    double *ar = malloc((size_t)(nz_max + 1) * sizeof(double));
    int64_t *out_at = calloc((size_t)n_ops + 1, sizeof(int64_t)), *in_at = calloc((size_t)n_ops + 1, sizeof(int64_t));
    int64_t *out_e = malloc((size_t)(n_edges + 1) * sizeof(int64_t)), *in_e = malloc((size_t)(n_edges + 1) * sizeof(int64_t));
    Clp_Simplex *lp = NULL;
    double *rlo = NULL, *rup = NULL, *clo = NULL, *cup = NULL, *obj = NULL, *val = NULL;
    CoinBigIndex *start = NULL;
    int *index = NULL;
    dp_status st = DP_STATUS_OK;
    if (!outdeg || !indeg || !col || !parent || !has_succ || !xcol || !ia || !ja || !ar || !out_at || !in_at ||
        !out_e || !in_e || !order || !n_in || !off || !last_in) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
        goto done;
    }
    /* degrees over the paid edges */
    double w_min = 0;
    for (int32_t i = 0; i < n_ops; i++) {
        col[i] = -1;
        if (op_s[i] > w_min) w_min = op_s[i];
    }
    for (int64_t e = 0; e < n_edges; e++) {
        has_succ[from[e]] = 1;
        n_in[to[e]]++;
        last_in[to[e]] = e;
        if (comm_s[e] > 0) outdeg[from[e]]++, indeg[to[e]]++;
    }
    int ncol = 0;
    for (int64_t e = 0; e < n_edges; e++)
        if (comm_s[e] > 0 && (outdeg[from[e]] > 1 || indeg[to[e]] > 1)) xcol[e] = ++ncol;
    int nx = ncol;
    /* the successors of each op (all edges), for a topological order */
    for (int64_t e = 0; e < n_edges; e++) out_at[from[e] + 1]++;
    for (int32_t i = 0; i < n_ops; i++) out_at[i + 1] += out_at[i];
    for (int64_t e = 0; e < n_edges; e++) out_e[out_at[from[e]]++] = e;
    for (int32_t i = n_ops; i > 0; i--) out_at[i] = out_at[i - 1];
    out_at[0] = 0;
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n_ops; i++) {
        in_at[i] = n_in[i]; /* inputs left, for the order */
        if (!n_in[i]) order[tail++] = i;
    }
    /* columns: an op on an edge has its own, unless its one in-edge has no
     * x: then it shares its producer's (col, off) */
    for (; head < tail; head++) {
        int32_t i = order[head];
        int64_t e = n_in[i] == 1 ? last_in[i] : -1;
        if (e >= 0 && !xcol[e]) {
            col[i] = col[from[e]];
            off[i] = off[from[e]] + op_s[from[e]];
        } else if (n_in[i] || has_succ[i]) {
            col[i] = ++ncol;
        }
        for (int64_t k = out_at[i]; k < out_at[i + 1]; k++)
            if (--in_at[to[out_e[k]]] == 0) order[tail++] = to[out_e[k]];
    }
    if (tail != n_ops) {
        st = dp_error_set(err, DP_STATUS_INVALID, "m-sct: the LP's op graph has a cycle");
        goto done;
    }
    int wcol = ++ncol;
    for (int32_t i = 0; i <= n_ops; i++) out_at[i] = in_at[i] = 0;

    /* columns: bounds and objective (minimise w) */
    clo = calloc((size_t)ncol, sizeof(double)), cup = malloc((size_t)ncol * sizeof(double));
    obj = calloc((size_t)ncol, sizeof(double));
    start = calloc((size_t)ncol + 1, sizeof(CoinBigIndex));
    if (!clo || !cup || !obj || !start) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
        goto done;
    }
    for (int c = 0; c < ncol; c++) cup[c] = c < nx ? 1.0 : DBL_MAX;
    clo[wcol - 1] = w_min * us;
    obj[wcol - 1] = 1.0;
    /* the paid edges of each op as producer and as consumer: CSR by counting */
    for (int32_t i = 0; i < n_ops; i++) out_at[i + 1] = out_at[i] + outdeg[i], in_at[i + 1] = in_at[i] + indeg[i];
    for (int32_t i = 0; i < n_ops; i++) outdeg[i] = indeg[i] = 0;
    for (int64_t e = 0; e < n_edges; e++) {
        if (!(comm_s[e] > 0)) continue;
        out_e[out_at[from[e]] + outdeg[from[e]]++] = e;
        in_e[in_at[to[e]] + indeg[to[e]]++] = e;
    }
    int nrow = 0;
    for (int64_t e = 0; e < n_edges; e++) nrow += col[to[e]] != col[from[e]];
    for (int32_t i = 0; i < n_ops; i++) nrow += (outdeg[i] > 1) + (indeg[i] > 1) + (col[i] > 0 && !has_succ[i]);
    rlo = malloc(((size_t)nrow + 1) * sizeof(double)), rup = malloc(((size_t)nrow + 1) * sizeof(double));
    if (!rlo || !rup) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
        goto done;
    }
#define SCT_ROW_UP(r, u) (rlo[(r) - 1] = -DBL_MAX, rup[(r) - 1] = (u))
#define SCT_ROW_LO(r, l) (rlo[(r) - 1] = (l), rup[(r) - 1] = DBL_MAX)
    int row = 0;
    int64_t nz = 0;
#define SCT_NZ(r, c, v) (nz++, ia[nz] = (r), ja[nz] = (c), ar[nz] = (v))
    for (int64_t e = 0; e < n_edges; e++) { /* precedence: s_i + off_i + p_i + c x <= s_j + off_j */
        int32_t i = from[e], j = to[e];
        if (col[i] == col[j]) continue;
        row++;
        SCT_NZ(row, col[i], 1.0);
        SCT_NZ(row, col[j], -1.0);
        if (xcol[e]) SCT_NZ(row, xcol[e], comm_s[e] * us);
        SCT_ROW_UP(row, (off[j] - off[i] - op_s[i]) * us);
    }
    for (int32_t i = 0; i < n_ops; i++) { /* one favourite child, one favourite parent */
        if (outdeg[i] > 1) {
            row++;
            for (int64_t k = out_at[i]; k < out_at[i + 1]; k++) SCT_NZ(row, xcol[out_e[k]], 1.0);
            SCT_ROW_LO(row, (double)(outdeg[i] - 1));
        }
        if (indeg[i] > 1) {
            row++;
            for (int64_t k = in_at[i]; k < in_at[i + 1]; k++) SCT_NZ(row, xcol[in_e[k]], 1.0);
            SCT_ROW_LO(row, (double)(indeg[i] - 1));
        }
        if (col[i] > 0 && !has_succ[i]) { /* makespan */
            row++;
            SCT_NZ(row, col[i], 1.0);
            SCT_NZ(row, wcol, -1.0);
            SCT_ROW_UP(row, -(off[i] + op_s[i]) * us);
        }
    }
#undef SCT_NZ
#undef SCT_ROW_UP
#undef SCT_ROW_LO
    /* the matrix by column, as CLP takes it (0-based) */
    index = malloc(((size_t)nz + 1) * sizeof(int));
    val = malloc(((size_t)nz + 1) * sizeof(double));
    if (!index || !val) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
        goto done;
    }
    for (int64_t k = 1; k <= nz; k++) start[ja[k]]++; /* column ja - 1 counted at ja */
    for (int c = 0; c < ncol; c++) start[c + 1] += start[c];
    for (int64_t k = 1; k <= nz; k++) { /* start[c] walks through column c ... */
        CoinBigIndex at = start[ja[k] - 1]++;
        index[at] = ia[k] - 1;
        val[at] = ar[k];
    }
    for (int c = ncol; c > 0; c--) start[c] = start[c - 1]; /* ... to column c + 1's start */
    start[0] = 0;
    lp = Clp_newModel();
    if (!lp) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
        goto done;
    }
    Clp_setLogLevel(lp, 0); /* the library never prints */
    Clp_setOptimizationDirection(lp, 1.0);
    Clp_loadProblem(lp, ncol, nrow, start, index, val, clo, cup, obj, rlo, rup);
    Clp_initialDualSolve(lp); /* presolve, dual simplex */
    if (!Clp_isProvenOptimal(lp)) {
        st = dp_error_set(err, DP_STATUS_UNSUPPORTED, "m-sct: CLP found no optimum of the LP (status %d)",
                          Clp_status(lp));
        goto done;
    }
    const double *x = Clp_getColSolution(lp);
    *lp_makespan_s = Clp_objectiveValue(lp) / us;
    for (int32_t i = 0; i < n_ops; i++) parent[i] = -1;
    for (int64_t e = 0; e < n_edges; e++) {
        if (!(comm_s[e] > 0) || (xcol[e] && !(x[xcol[e] - 1] < threshold))) continue;
        int32_t i = from[e], j = to[e];
        if (fav[i] >= 0 || parent[j] >= 0) continue;
        fav[i] = j;
        parent[j] = i;
    }
done:
    if (lp) Clp_deleteModel(lp);
    free(rlo), free(rup), free(clo), free(cup), free(obj), free(start), free(index), free(val);
    free(outdeg), free(indeg), free(col), free(parent), free(has_succ), free(xcol), free(ia), free(ja), free(ar);
    free(out_at), free(in_at), free(out_e), free(in_e), free(order), free(n_in), free(off), free(last_in);
    return st;
}
