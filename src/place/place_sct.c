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
 * keeps at most one favourite child and one favourite parent.
 *
 * A memo (place_sct_memo) keeps solved LPs by their inputs, bit for bit:
 * the memory retries of dp_place_evaluate change the memory fraction and the
 * backward pass's reservation, neither of which is in the LP, so they make
 * the same LP and take its solution from the memo instead of solving it
 * again. An LP is looked up by its full inputs rather than by the options
 * that made them, so an option that does change the LP (the rule set, the
 * units) can never be given another's solution. */
#include <coin/Clp_C_Interface.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "place/place_internal.h"

#define DP_SCT_MAX_LP_EDGES 2000000 /* edges of the largest LP m-sct solves */
#define SCT_US 1e6                   /* the LP in microseconds: better scaled */

/* The LP as it is built: the op graph (borrowed), its columns, the matrix
 * as triplets and then by column, CLP's model. Columns and rows are 1-based
 * until CLP takes them. */
typedef struct sct_lp {
    int32_t n_ops;
    int64_t n_edges;
    const int32_t *from, *to;
    const double *comm_s, *op_s;
    int32_t *outdeg, *indeg;   /* paid edges out of and into each op (later: CSR fill counts) */
    int32_t *n_in;             /* in-edges of each op (all) */
    int64_t *last_in;          /* an op's last in-edge */
    uint8_t *has_succ;         /* whether an op has an out-edge */
    int *xcol;                 /* each edge's x column, 0: no x */
    int32_t *col;              /* each op's start-time column (-1: none) ... */
    double *off;               /* ... and its offset from that column's start */
    int32_t *order, *parent;   /* a topological order; the favourite parents */
    int64_t *out_at, *in_at;   /* CSR of the out- and in-edges (out_e, in_e) */
    int64_t *out_e, *in_e;
    double w_min;              /* the longest op: the makespan's lower bound */
    int ncol, nx, wcol, nrow;  /* columns (the x's are 1..nx), w's column, rows */
    int *ia, *ja;              /* the matrix as triplets (row, column, value), from 1 */
    double *ar;
    int64_t nz;
    double *rlo, *rup, *clo, *cup, *obj; /* row and column bounds, objective */
    CoinBigIndex *start;       /* the matrix by column, 0-based */
    int *index;
    double *val;
    Clp_Simplex *model;
} sct_lp;

/* The out-of-memory error of the m-sct LP. */
static dp_status sct_nomem(const sct_lp *lp, dp_error *err) {
    return dp_error_set(err, DP_STATUS_NOMEM, "out of memory (m-sct LP of %lld edges)", (long long)lp->n_edges);
}

/* Allocates the per-op and per-edge arrays and the triplets (degrees, in
 * counts and flags zeroed). */
static dp_status sct_alloc(sct_lp *lp, dp_error *err) {
    size_t n_ops = (size_t)lp->n_ops, n_edges = (size_t)lp->n_edges;
    lp->outdeg = calloc(n_ops, sizeof(int32_t)), lp->indeg = calloc(n_ops, sizeof(int32_t));
    lp->col = malloc(n_ops * sizeof(int32_t)), lp->parent = malloc(n_ops * sizeof(int32_t));
    lp->order = malloc(n_ops * sizeof(int32_t)), lp->n_in = calloc(n_ops, sizeof(int32_t));
    lp->off = calloc(n_ops, sizeof(double));
    lp->last_in = malloc(n_ops * sizeof(int64_t));
    lp->has_succ = calloc(n_ops, 1);
    lp->xcol = calloc(n_edges + 1, sizeof(int));
    int64_t nz_max = 3 * lp->n_edges + 2 * lp->n_edges + 2 * (int64_t)lp->n_ops + 1;
    lp->ia = malloc((size_t)(nz_max + 1) * sizeof(int)), lp->ja = malloc((size_t)(nz_max + 1) * sizeof(int));
    lp->ar = malloc((size_t)(nz_max + 1) * sizeof(double));
    lp->out_at = calloc(n_ops + 1, sizeof(int64_t)), lp->in_at = calloc(n_ops + 1, sizeof(int64_t));
    lp->out_e = malloc((n_edges + 1) * sizeof(int64_t)), lp->in_e = malloc((n_edges + 1) * sizeof(int64_t));
    if (!lp->outdeg || !lp->indeg || !lp->col || !lp->parent || !lp->has_succ || !lp->xcol || !lp->ia || !lp->ja ||
        !lp->ar || !lp->out_at || !lp->in_at || !lp->out_e || !lp->in_e || !lp->order || !lp->n_in || !lp->off ||
        !lp->last_in)
        return sct_nomem(lp, err);
    return DP_STATUS_OK;
}

static void sct_free(sct_lp *lp) {
    if (lp->model) Clp_deleteModel(lp->model);
    free(lp->rlo), free(lp->rup), free(lp->clo), free(lp->cup), free(lp->obj), free(lp->start), free(lp->index);
    free(lp->val), free(lp->outdeg), free(lp->indeg), free(lp->col), free(lp->parent), free(lp->has_succ);
    free(lp->xcol), free(lp->ia), free(lp->ja), free(lp->ar), free(lp->out_at), free(lp->in_at), free(lp->out_e);
    free(lp->in_e), free(lp->order), free(lp->n_in), free(lp->off), free(lp->last_in);
}

/* Degrees over the paid edges, each op's in-edges and successors, and a
 * column for the x of every paid edge in a degree row (1..nx). */
static void sct_paid_edges(sct_lp *lp) {
    const int32_t *from = lp->from, *to = lp->to;
    lp->w_min = 0;
    for (int32_t i = 0; i < lp->n_ops; i++) {
        lp->col[i] = -1;
        if (lp->op_s[i] > lp->w_min) lp->w_min = lp->op_s[i];
    }
    for (int64_t e = 0; e < lp->n_edges; e++) {
        lp->has_succ[from[e]] = 1;
        lp->n_in[to[e]]++;
        lp->last_in[to[e]] = e;
        if (lp->comm_s[e] > 0) lp->outdeg[from[e]]++, lp->indeg[to[e]]++;
    }
    lp->ncol = 0;
    for (int64_t e = 0; e < lp->n_edges; e++)
        if (lp->comm_s[e] > 0 && (lp->outdeg[from[e]] > 1 || lp->indeg[to[e]] > 1)) lp->xcol[e] = ++lp->ncol;
    lp->nx = lp->ncol;
}

/* The start-time columns, in a topological order of all edges: an op on an
 * edge has its own, unless its one in-edge has no x: then it shares its
 * producer's (col, off). Then w's column. DP_STATUS_INVALID on a cycle. */
static dp_status sct_op_columns(sct_lp *lp, dp_error *err) {
    const int32_t *from = lp->from, *to = lp->to;
    int32_t n_ops = lp->n_ops;
    int64_t *out_at = lp->out_at, *in_at = lp->in_at;
    for (int64_t e = 0; e < lp->n_edges; e++) out_at[from[e] + 1]++;
    for (int32_t i = 0; i < n_ops; i++) out_at[i + 1] += out_at[i];
    for (int64_t e = 0; e < lp->n_edges; e++) lp->out_e[out_at[from[e]]++] = e;
    for (int32_t i = n_ops; i > 0; i--) out_at[i] = out_at[i - 1];
    out_at[0] = 0;
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n_ops; i++) {
        in_at[i] = lp->n_in[i]; /* inputs left, for the order */
        if (!lp->n_in[i]) lp->order[tail++] = i;
    }
    for (; head < tail; head++) {
        int32_t i = lp->order[head];
        int64_t e = lp->n_in[i] == 1 ? lp->last_in[i] : -1;
        if (e >= 0 && !lp->xcol[e]) {
            lp->col[i] = lp->col[from[e]];
            lp->off[i] = lp->off[from[e]] + lp->op_s[from[e]];
        } else if (lp->n_in[i] || lp->has_succ[i]) {
            lp->col[i] = ++lp->ncol;
        }
        for (int64_t k = out_at[i]; k < out_at[i + 1]; k++)
            if (--in_at[to[lp->out_e[k]]] == 0) lp->order[tail++] = to[lp->out_e[k]];
    }
    if (tail != n_ops) return dp_error_set(err, DP_STATUS_INVALID, "m-sct: the LP's op graph has a cycle");
    lp->wcol = ++lp->ncol;
    for (int32_t i = 0; i <= n_ops; i++) out_at[i] = in_at[i] = 0;
    return DP_STATUS_OK;
}

/* Column bounds and the objective (minimise w); the paid edges of each op
 * as producer and as consumer (CSR by counting); the number of rows. */
static dp_status sct_columns(sct_lp *lp, dp_error *err) {
    int ncol = lp->ncol;
    int32_t n_ops = lp->n_ops;
    lp->clo = calloc((size_t)ncol, sizeof(double)), lp->cup = malloc((size_t)ncol * sizeof(double));
    lp->obj = calloc((size_t)ncol, sizeof(double));
    lp->start = calloc((size_t)ncol + 1, sizeof(CoinBigIndex));
    if (!lp->clo || !lp->cup || !lp->obj || !lp->start) return sct_nomem(lp, err);
    for (int c = 0; c < ncol; c++) lp->cup[c] = c < lp->nx ? 1.0 : DBL_MAX;
    lp->clo[lp->wcol - 1] = lp->w_min * SCT_US;
    lp->obj[lp->wcol - 1] = 1.0;
    int32_t *outdeg = lp->outdeg, *indeg = lp->indeg;
    for (int32_t i = 0; i < n_ops; i++)
        lp->out_at[i + 1] = lp->out_at[i] + outdeg[i], lp->in_at[i + 1] = lp->in_at[i] + indeg[i];
    for (int32_t i = 0; i < n_ops; i++) outdeg[i] = indeg[i] = 0;
    for (int64_t e = 0; e < lp->n_edges; e++) {
        if (!(lp->comm_s[e] > 0)) continue;
        lp->out_e[lp->out_at[lp->from[e]] + outdeg[lp->from[e]]++] = e;
        lp->in_e[lp->in_at[lp->to[e]] + indeg[lp->to[e]]++] = e;
    }
    int nrow = 0;
    for (int64_t e = 0; e < lp->n_edges; e++) nrow += lp->col[lp->to[e]] != lp->col[lp->from[e]];
    for (int32_t i = 0; i < n_ops; i++)
        nrow += (outdeg[i] > 1) + (indeg[i] > 1) + (lp->col[i] > 0 && !lp->has_succ[i]);
    lp->nrow = nrow;
    lp->rlo = malloc(((size_t)nrow + 1) * sizeof(double)), lp->rup = malloc(((size_t)nrow + 1) * sizeof(double));
    if (!lp->rlo || !lp->rup) return sct_nomem(lp, err);
    return DP_STATUS_OK;
}

/* The rows as triplets: precedence per edge between two columns, at most
 * one favourite child and one favourite parent per op, the makespan. */
static void sct_rows(sct_lp *lp) {
    const int32_t *col = lp->col;
    const double *op_s = lp->op_s, *off = lp->off;
    int *ia = lp->ia, *ja = lp->ja;
    double *ar = lp->ar, *rlo = lp->rlo, *rup = lp->rup;
#define SCT_ROW_UP(r, u) (rlo[(r) - 1] = -DBL_MAX, rup[(r) - 1] = (u))
#define SCT_ROW_LO(r, l) (rlo[(r) - 1] = (l), rup[(r) - 1] = DBL_MAX)
    int row = 0;
    int64_t nz = 0;
#define SCT_NZ(r, c, v) (nz++, ia[nz] = (r), ja[nz] = (c), ar[nz] = (v))
    for (int64_t e = 0; e < lp->n_edges; e++) { /* precedence: s_i + off_i + p_i + c x <= s_j + off_j */
        int32_t i = lp->from[e], j = lp->to[e];
        if (col[i] == col[j]) continue;
        row++;
        SCT_NZ(row, col[i], 1.0);
        SCT_NZ(row, col[j], -1.0);
        if (lp->xcol[e]) SCT_NZ(row, lp->xcol[e], lp->comm_s[e] * SCT_US);
        SCT_ROW_UP(row, (off[j] - off[i] - op_s[i]) * SCT_US);
    }
    for (int32_t i = 0; i < lp->n_ops; i++) { /* one favourite child, one favourite parent */
        if (lp->outdeg[i] > 1) {
            row++;
            for (int64_t k = lp->out_at[i]; k < lp->out_at[i + 1]; k++) SCT_NZ(row, lp->xcol[lp->out_e[k]], 1.0);
            SCT_ROW_LO(row, (double)(lp->outdeg[i] - 1));
        }
        if (lp->indeg[i] > 1) {
            row++;
            for (int64_t k = lp->in_at[i]; k < lp->in_at[i + 1]; k++) SCT_NZ(row, lp->xcol[lp->in_e[k]], 1.0);
            SCT_ROW_LO(row, (double)(lp->indeg[i] - 1));
        }
        if (col[i] > 0 && !lp->has_succ[i]) { /* makespan */
            row++;
            SCT_NZ(row, col[i], 1.0);
            SCT_NZ(row, lp->wcol, -1.0);
            SCT_ROW_UP(row, -(off[i] + op_s[i]) * SCT_US);
        }
    }
#undef SCT_NZ
#undef SCT_ROW_UP
#undef SCT_ROW_LO
    lp->nz = nz;
}

/* The matrix by column, as CLP takes it (0-based). */
static dp_status sct_by_column(sct_lp *lp, dp_error *err) {
    int64_t nz = lp->nz;
    CoinBigIndex *start = lp->start;
    lp->index = malloc(((size_t)nz + 1) * sizeof(int));
    lp->val = malloc(((size_t)nz + 1) * sizeof(double));
    if (!lp->index || !lp->val) return sct_nomem(lp, err);
    for (int64_t k = 1; k <= nz; k++) start[lp->ja[k]]++; /* column ja - 1 counted at ja */
    for (int c = 0; c < lp->ncol; c++) start[c + 1] += start[c];
    for (int64_t k = 1; k <= nz; k++) { /* start[c] walks through column c ... */
        CoinBigIndex at = start[lp->ja[k] - 1]++;
        lp->index[at] = lp->ia[k] - 1;
        lp->val[at] = lp->ar[k];
    }
    for (int c = lp->ncol; c > 0; c--) start[c] = start[c - 1]; /* ... to column c + 1's start */
    start[0] = 0;
    return DP_STATUS_OK;
}

/* Solves the LP with CLP (presolve, dual simplex); DP_STATUS_UNSUPPORTED
 * without a proven optimum. */
static dp_status sct_solve(sct_lp *lp, dp_error *err) {
    lp->model = Clp_newModel();
    if (!lp->model) return sct_nomem(lp, err);
    Clp_setLogLevel(lp->model, 0); /* the library never prints */
    Clp_setOptimizationDirection(lp->model, 1.0);
    Clp_loadProblem(lp->model, lp->ncol, lp->nrow, lp->start, lp->index, lp->val, lp->clo, lp->cup, lp->obj, lp->rlo,
                    lp->rup);
    Clp_initialDualSolve(lp->model);
    if (!Clp_isProvenOptimal(lp->model))
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "m-sct: CLP found no optimum of the LP (status %d)",
                            Clp_status(lp->model));
    return DP_STATUS_OK;
}

/* Baechi's rounding of the solved LP: a paid edge whose x is under
 * threshold (or that has no x) is a favourite, kept when its producer has
 * no favourite child and its consumer no favourite parent yet. */
static void sct_round(sct_lp *lp, double threshold, int32_t *fav) {
    const double *x = Clp_getColSolution(lp->model);
    for (int32_t i = 0; i < lp->n_ops; i++) lp->parent[i] = -1;
    for (int64_t e = 0; e < lp->n_edges; e++) {
        if (!(lp->comm_s[e] > 0) || (lp->xcol[e] && !(x[lp->xcol[e] - 1] < threshold))) continue;
        int32_t i = lp->from[e], j = lp->to[e];
        if (fav[i] >= 0 || lp->parent[j] >= 0) continue;
        fav[i] = j;
        lp->parent[j] = i;
    }
}

/* One solved LP: its inputs as given (copied) and the favourites they gave. */
typedef struct sct_memo_entry {
    int32_t n_ops;
    int64_t n_edges;
    double threshold;
    int32_t *from, *to; /* [n_edges] */
    double *comm_s;     /* [n_edges] */
    double *op_s;       /* [n_ops] */
    int32_t *fav;       /* [n_ops] */
    double lp_makespan_s;
} sct_memo_entry;

#define SCT_MEMO_ENTRIES 4 /* LPs kept: one per rule set, and room to spare */

struct place_sct_memo {
    sct_memo_entry entry[SCT_MEMO_ENTRIES];
    int32_t n, next; /* entries filled; the one replaced next when full */
    int64_t solves;
};

place_sct_memo *place_sct_memo_new(void) { return calloc(1, sizeof(place_sct_memo)); }

/* Frees an entry's arrays and clears it. */
static void sct_memo_entry_free(sct_memo_entry *m) {
    free(m->from), free(m->to), free(m->comm_s), free(m->op_s), free(m->fav);
    memset(m, 0, sizeof *m);
}

void place_sct_memo_free(place_sct_memo *memo) {
    if (!memo) return;
    for (int32_t k = 0; k < memo->n; k++) sct_memo_entry_free(&memo->entry[k]);
    free(memo);
}

int64_t place_sct_memo_solves(const place_sct_memo *memo) { return memo ? memo->solves : 0; }

/* The entry whose inputs are these, bit for bit; NULL when none is. */
static const sct_memo_entry *sct_memo_find(const place_sct_memo *memo, int32_t n_ops, int64_t n_edges,
                                           const int32_t *from, const int32_t *to, const double *comm_s,
                                           const double *op_s, double threshold) {
    size_t ne = (size_t)n_edges, no = (size_t)n_ops;
    for (int32_t k = 0; memo && k < memo->n; k++) {
        const sct_memo_entry *m = &memo->entry[k];
        if (m->n_ops == n_ops && m->n_edges == n_edges && !memcmp(&m->threshold, &threshold, sizeof threshold) &&
            !memcmp(m->from, from, ne * sizeof *from) && !memcmp(m->to, to, ne * sizeof *to) &&
            !memcmp(m->comm_s, comm_s, ne * sizeof *comm_s) && !memcmp(m->op_s, op_s, no * sizeof *op_s))
            return m;
    }
    return NULL;
}

/* Keeps a solved LP's inputs and favourites in memo, replacing the oldest
 * entry when it is full. Out of memory keeps nothing: the next placement
 * solves the LP again, with the same result. */
static void sct_memo_keep(place_sct_memo *memo, int32_t n_ops, int64_t n_edges, const int32_t *from,
                          const int32_t *to, const double *comm_s, const double *op_s, double threshold,
                          const int32_t *fav, double lp_makespan_s) {
    size_t ne = (size_t)n_edges, no = (size_t)n_ops;
    sct_memo_entry m = {.n_ops = n_ops, .n_edges = n_edges, .threshold = threshold, .lp_makespan_s = lp_makespan_s};
    m.from = malloc(ne * sizeof *from), m.to = malloc(ne * sizeof *to), m.comm_s = malloc(ne * sizeof *comm_s);
    m.op_s = malloc(no * sizeof *op_s), m.fav = malloc(no * sizeof *fav);
    if (!m.from || !m.to || !m.comm_s || !m.op_s || !m.fav) {
        sct_memo_entry_free(&m);
        return;
    }
    memcpy(m.from, from, ne * sizeof *from), memcpy(m.to, to, ne * sizeof *to);
    memcpy(m.comm_s, comm_s, ne * sizeof *comm_s), memcpy(m.op_s, op_s, no * sizeof *op_s);
    memcpy(m.fav, fav, no * sizeof *fav);
    int32_t k;
    if (memo->n < SCT_MEMO_ENTRIES) {
        k = memo->n++;
    } else {
        k = memo->next;
        memo->next = (k + 1) % SCT_MEMO_ENTRIES;
        sct_memo_entry_free(&memo->entry[k]);
    }
    memo->entry[k] = m;
}

/* Builds and solves the LP, then rounds it (n_edges > 0). */
static dp_status sct_solve_lp(int32_t n_ops, int64_t n_edges, const int32_t *from, const int32_t *to,
                              const double *comm_s, const double *op_s, double threshold, int32_t *fav,
                              double *lp_makespan_s, dp_error *err) {
    sct_lp lp = {.n_ops = n_ops, .n_edges = n_edges, .from = from, .to = to, .comm_s = comm_s, .op_s = op_s};
    dp_status st = sct_alloc(&lp, err);
    if (!st) {
        sct_paid_edges(&lp);
        st = sct_op_columns(&lp, err);
    }
    if (!st && !(st = sct_columns(&lp, err))) {
        sct_rows(&lp);
        st = sct_by_column(&lp, err);
    }
    if (!st && !(st = sct_solve(&lp, err))) {
        *lp_makespan_s = Clp_objectiveValue(lp.model) / SCT_US;
        sct_round(&lp, threshold, fav);
    }
    sct_free(&lp);
    return st;
}

dp_status place_sct_favourites(int32_t n_ops, int64_t n_edges, const int32_t *from, const int32_t *to,
                               const double *comm_s, const double *op_s, double threshold, place_sct_memo *memo,
                               int32_t *fav, double *lp_makespan_s, dp_error *err) {
    for (int32_t i = 0; i < n_ops; i++) fav[i] = -1;
    *lp_makespan_s = 0;
    for (int32_t i = 0; i < n_ops; i++)
        if (op_s[i] > *lp_makespan_s) *lp_makespan_s = op_s[i];
    if (n_edges == 0) return DP_STATUS_OK; /* no edge, no favourite */
    if (n_edges > DP_SCT_MAX_LP_EDGES)
        return dp_error_set(err, DP_STATUS_UNSUPPORTED, "m-sct: the LP would have %lld edges, over the limit of %d",
                            (long long)n_edges, DP_SCT_MAX_LP_EDGES);
    const sct_memo_entry *m = sct_memo_find(memo, n_ops, n_edges, from, to, comm_s, op_s, threshold);
    if (m) {
        memcpy(fav, m->fav, (size_t)n_ops * sizeof *fav);
        *lp_makespan_s = m->lp_makespan_s;
        return DP_STATUS_OK;
    }
    dp_status st = sct_solve_lp(n_ops, n_edges, from, to, comm_s, op_s, threshold, fav, lp_makespan_s, err);
    if (memo) memo->solves++;
    if (!st && memo) sct_memo_keep(memo, n_ops, n_edges, from, to, comm_s, op_s, threshold, fav, *lp_makespan_s);
    return st;
}
