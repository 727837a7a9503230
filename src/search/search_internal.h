/* The search's private state (include/dplace/search.h): shared by
 * search.c (init, starts, steps, threads), search_units.c (unit levels),
 * search_moves.c (proposals) and search_ckpt.c (checkpoints). */
#ifndef DPLACE_SEARCH_INTERNAL_H
#define DPLACE_SEARCH_INTERNAL_H

#include "dplace/search.h"
#include "dplace/units.h"

/* The kinds of unit level, finest first (docs/search.md, "Units"). */
typedef enum search_level_kind {
    SEARCH_LEVEL_OP = 0, /* TensorFlow's colocation unit                          */
    SEARCH_LEVEL_CHAIN,  /* single-consumer chains (the colocation grouper's rule) */
    SEARCH_LEVEL_SCOPE,  /* a layer's forward scope                               */
    SEARCH_LEVEL_PARENT, /* its parent scope                                      */
    SEARCH_LEVEL_TYPED,  /* a parent scope's ops of one phase and type            */
    SEARCH_LEVEL_COUNT
} search_level_kind;

#define SEARCH_MAX_LEVELS SEARCH_LEVEL_COUNT
#define SEARCH_MAX_STARTS 16

/* One level of units: the ops that move together, and where each may go. */
typedef struct search_level {
    dp_units u;
    dp_mask *mask; /* [u.n_units] */
} search_level;

/* One Markov chain: its delta evaluator (whose base is the chain's current
 * placement), its random state, temperature and best. */
typedef struct search_chain {
    dp_sim_delta *d;
    dp_rng rng;
    double cur_score;      /* the current placement's score (dp_sim_score) */
    double temp;           /* relative temperature now                      */
    int64_t since_better;  /* steps since the chain's own best improved     */
    double best_s;         /* the chain's best valid step time (inf: none)  */
    int32_t *best;         /* [n_ops] its placement                         */
    /* critical path of the current placement (cached until the next accept) */
    int path_ok;
    int32_t path_n, path_cap;
    dp_sim_path_step *path;
    /* the step's work */
    int32_t *mv_op, *mv_dev;   /* [n_ops] the move being proposed          */
    int32_t *tmp;              /* [n_ops] scratch for swaps                 */
    dp_run_sample *samples;    /* [moves] the step's simulated moves        */
    int32_t n_samples;
    int32_t step_best_k;       /* sample that improved best_s this step (-1) */
    dp_search_stats stats;     /* this chain's counts                       */
    dp_status st;
    dp_error err;
} search_chain;

struct dp_search {
    const dp_graph *g;
    const dp_devices *ds;
    const dp_sim *sim;
    dp_search_options opt;
    int32_t n;                  /* ops                                       */
    int32_t n_levels;
    search_level level[SEARCH_MAX_LEVELS];
    search_level_kind level_kind[SEARCH_MAX_LEVELS];
    dp_mask *op_mask;           /* [n] devices each op allows                */
    int32_t n_chains;
    search_chain *chain;
    /* starts, best first (by dp_sim_score; the first of equals kept) */
    dp_sim_workspace *ws;       /* evaluates starts                          */
    int32_t n_starts;
    int32_t next_start;         /* the next start a restarting chain takes   */
    int32_t *start;             /* [SEARCH_MAX_STARTS * n]                   */
    double start_score[SEARCH_MAX_STARTS];
    dp_sim_result start_res[SEARCH_MAX_STARTS];
    char start_name[SEARCH_MAX_STARTS][64];
    int begun;                  /* chains hold their placements              */
    /* the run driver's view */
    int32_t *best;              /* [n] the best valid placement              */
    int have_best;
    dp_run_state state;
    dp_run_sample *last;        /* [threads * moves]                         */
    double *sorted;             /* [threads * moves] scratch for the median  */
    int64_t restarts;           /* chains restarted (sync and stagnation)    */
};

/* Builds s's unit levels (op, chain, scope, parent scope; a level equal to
 * the one before or whose units cannot all be placed is left out) and
 * op_mask. DP_STATUS_NOMEM; other failures drop the level. */
dp_status search_units_build(dp_search *s, dp_error *err);
void search_units_free(dp_search *s);

/* Proposes one move from chain c's current placement into c->mv_op/mv_dev:
 * returns the ops changed (0: no move found this time); *critical is set
 * when the move came from the critical path. Uses c's random state only.
 * DP_STATUS errors (the critical path's NOMEM) go to c->st. */
int32_t search_propose(dp_search *s, search_chain *c, int *critical);

/* Makes placement chain c's current one (its delta base), its score and
 * path cache follow. */
dp_status search_chain_set(dp_search *s, search_chain *c, const int32_t *placement, dp_error *err);

/* The method's save and load (search_ckpt.c). */
dp_status search_save(const void *self, const char *path, dp_error *err);
dp_status search_load(void *self, const char *path, dp_error *err);

#endif
