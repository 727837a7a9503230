/* m-SCT's favourite children (Baechi, Jeon et al., SoCC 2020, after Hanen
 * and Munier's SCT): the LP relaxation of "which consumer of each op runs on
 * the op's device", solved by GLPK's simplex. Only this file sees glpk.h.
 *
 * Variables: x_e in [0, 1] per edge e = (i, j) of the op graph (0: j is i's
 * favourite child, no transfer; 1: a transfer of c_e seconds), a start time
 * s_i >= 0 per op, the makespan w. Minimise w subject to
 *   s_i + p_i + c_e x_e <= s_j   for every edge e = (i, j)
 *   sum_j x_(i,j) >= outdeg(i) - 1   (at most one favourite child)
 *   sum_i x_(i,j) >= indeg(j) - 1    (at most one favourite parent)
 *   s_i + p_i <= w.
 * An edge is a favourite when x_e < threshold (Baechi's rounding); the
 * rounded edges are then matched greedily in edge order so that every op
 * keeps at most one favourite child and one favourite parent. */
#include <glpk.h>
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

#define DP_SCT_MAX_LP_EDGES 2000 /* edges of the largest LP m-sct solves */

/* Silences GLPK's terminal output for the calling thread (it prints to
 * stdout by default; the library never prints). */
static int sct_quiet(void *info, const char *s) {
    (void)info, (void)s;
    return 1; /* non-zero: GLPK prints nothing */
}

dp_status place_sct_favourites(int32_t n_ops, int64_t n_edges, const int32_t *from, const int32_t *to,
                               const double *comm_s, const double *op_s, double threshold, int32_t *fav,
                               double *lp_makespan_s, dp_error *err) {
    for (int32_t i = 0; i < n_ops; i++) fav[i] = -1;
    *lp_makespan_s = 0;
    if (n_ops == 0) return DP_STATUS_OK;
    if (n_edges > DP_SCT_MAX_LP_EDGES)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED,
                            "m-sct: the LP would have %lld edges, over the limit of %d (GLPK's simplex takes 2 s on 3,400 "
                            "edges and 136 s on inception_v3's 33,000)",
                            (long long)n_edges, DP_SCT_MAX_LP_EDGES);
    const double us = 1e6; /* the LP in microseconds: better scaled */
    int32_t *outdeg = calloc((size_t)n_ops, sizeof(int32_t));
    int32_t *indeg = calloc((size_t)n_ops, sizeof(int32_t));
    int32_t *parent = malloc((size_t)n_ops * sizeof(int32_t));
    int64_t nz_max = 3 * n_edges + 2 * n_edges + 2 * (int64_t)n_ops + 1;
    int *ia = malloc((size_t)(nz_max + 1) * sizeof(int));
    int *ja = malloc((size_t)(nz_max + 1) * sizeof(int));
    double *ar = malloc((size_t)(nz_max + 1) * sizeof(double));
    if (!outdeg || !indeg || !parent || !ia || !ja || !ar) {
        free(outdeg), free(indeg), free(parent), free(ia), free(ja), free(ar);
        return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
    }
    for (int64_t e = 0; e < n_edges; e++) outdeg[from[e]]++, indeg[to[e]]++;

    glp_term_hook(sct_quiet, NULL);
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    /* columns: x_e (1..E), s_i (E+1..E+N), w (E+N+1) */
    int ncol = (int)n_edges + n_ops + 1, wcol = ncol;
    glp_add_cols(lp, ncol);
    for (int64_t e = 0; e < n_edges; e++) glp_set_col_bnds(lp, (int)e + 1, GLP_DB, 0.0, 1.0);
    for (int32_t i = 0; i < n_ops; i++) glp_set_col_bnds(lp, (int)n_edges + 1 + i, GLP_LO, 0.0, 0.0);
    glp_set_col_bnds(lp, wcol, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, wcol, 1.0);
    /* rows: precedence (E), one favourite child / parent (ops with edges),
     * makespan (N) */
    int nrow = (int)n_edges + n_ops;
    for (int32_t i = 0; i < n_ops; i++) nrow += (outdeg[i] > 1) + (indeg[i] > 1);
    glp_add_rows(lp, nrow);
    int row = 0;
    int64_t nz = 0;
#define SCT_NZ(r, c, v) (nz++, ia[nz] = (r), ja[nz] = (c), ar[nz] = (v))
    for (int64_t e = 0; e < n_edges; e++) {
        row++;
        SCT_NZ(row, (int)n_edges + 1 + from[e], 1.0);
        SCT_NZ(row, (int)n_edges + 1 + to[e], -1.0);
        if (comm_s[e] > 0) SCT_NZ(row, (int)e + 1, comm_s[e] * us);
        glp_set_row_bnds(lp, row, GLP_UP, 0.0, -op_s[from[e]] * us);
    }
    /* the edges of each op as producer and as consumer: CSR by counting */
    int64_t *out_at = calloc((size_t)n_ops + 1, sizeof(int64_t));
    int64_t *in_at = calloc((size_t)n_ops + 1, sizeof(int64_t));
    int64_t *out_e = malloc((size_t)(n_edges + 1) * sizeof(int64_t));
    int64_t *in_e = malloc((size_t)(n_edges + 1) * sizeof(int64_t));
    dp_status st = DP_STATUS_OK;
    if (!out_at || !in_at || !out_e || !in_e) {
        st = dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)n_edges);
        goto done;
    }
    for (int32_t i = 0; i < n_ops; i++) out_at[i + 1] = out_at[i] + outdeg[i], in_at[i + 1] = in_at[i] + indeg[i];
    for (int32_t i = 0; i < n_ops; i++) outdeg[i] = indeg[i] = 0;
    for (int64_t e = 0; e < n_edges; e++) {
        out_e[out_at[from[e]] + outdeg[from[e]]++] = e;
        in_e[in_at[to[e]] + indeg[to[e]]++] = e;
    }
    for (int32_t i = 0; i < n_ops; i++) {
        if (outdeg[i] > 1) {
            row++;
            for (int64_t k = out_at[i]; k < out_at[i + 1]; k++) SCT_NZ(row, (int)out_e[k] + 1, 1.0);
            glp_set_row_bnds(lp, row, GLP_LO, (double)(outdeg[i] - 1), 0.0);
        }
        if (indeg[i] > 1) {
            row++;
            for (int64_t k = in_at[i]; k < in_at[i + 1]; k++) SCT_NZ(row, (int)in_e[k] + 1, 1.0);
            glp_set_row_bnds(lp, row, GLP_LO, (double)(indeg[i] - 1), 0.0);
        }
    }
    for (int32_t i = 0; i < n_ops; i++) {
        row++;
        SCT_NZ(row, (int)n_edges + 1 + i, 1.0);
        SCT_NZ(row, wcol, -1.0);
        glp_set_row_bnds(lp, row, GLP_UP, 0.0, -op_s[i] * us);
    }
#undef SCT_NZ
    glp_load_matrix(lp, (int)nz, ia, ja, ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int rc = glp_simplex(lp, &parm);
    if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
        st = dp_error_set(err, DP_STATUS_UNSUPPORTED, "m-sct: GLPK's simplex found no optimum (code %d, status %d)", rc,
                          glp_get_status(lp));
        goto done;
    }
    *lp_makespan_s = glp_get_obj_val(lp) / us;
    for (int32_t i = 0; i < n_ops; i++) parent[i] = -1;
    for (int64_t e = 0; e < n_edges; e++) {
        if (!(glp_get_col_prim(lp, (int)e + 1) < threshold)) continue;
        int32_t i = from[e], j = to[e];
        if (fav[i] >= 0 || parent[j] >= 0) continue;
        fav[i] = j;
        parent[j] = i;
    }
done:
    glp_delete_prob(lp);
    glp_term_hook(NULL, NULL);
    free(outdeg), free(indeg), free(parent), free(ia), free(ja), free(ar);
    free(out_at), free(in_at), free(out_e), free(in_e);
    return st;
}
