/* Ranks and roles (include/dplace/dist.h): MPI's start and end, who is a
 * controller, a worker or the parameter server. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"

static const char *const mode_names[] = {"sync", "async"};
_Static_assert(sizeof mode_names / sizeof *mode_names == DP_DIST_MODE_COUNT, "a name per mode");
static const char *const role_names[] = {"controller", "worker", "server"};
_Static_assert(sizeof role_names / sizeof *role_names == DP_DIST_ROLE_COUNT, "a name per role");

const char *dp_dist_mode_name(dp_dist_mode m) { return m >= 0 && m < DP_DIST_MODE_COUNT ? mode_names[m] : "?"; }
const char *dp_dist_role_name(dp_dist_role r) { return r >= 0 && r < DP_DIST_ROLE_COUNT ? role_names[r] : "?"; }

int dp_dist_mode_parse(const char *name) {
    for (int m = 0; m < DP_DIST_MODE_COUNT; m++)
        if (name && !strcmp(name, mode_names[m])) return m;
    return -1;
}

/* The controller of worker rank r: rank 0 in sync mode; in async mode the
 * workers K+1, K+2, ... go to controllers 1..K in turn. */
static int controller_of(const dp_dist *d, int r) {
    return d->mode == DP_DIST_MODE_SYNC ? 0 : 1 + (r - d->K - 1) % d->K;
}

/* The role of this rank and, for a controller, its workers; -1 when out
 * of memory. */
static int assign_roles(dp_dist *d) {
    int first_worker = d->mode == DP_DIST_MODE_SYNC ? 1 : d->K + 1;
    if (d->mode == DP_DIST_MODE_SYNC) d->role = d->rank == 0 ? DP_DIST_ROLE_CONTROLLER : DP_DIST_ROLE_WORKER;
    else d->role = d->rank == 0 ? DP_DIST_ROLE_SERVER : d->rank <= d->K ? DP_DIST_ROLE_CONTROLLER : DP_DIST_ROLE_WORKER;
    if (d->role == DP_DIST_ROLE_WORKER) d->controller = controller_of(d, d->rank);
    if (d->role != DP_DIST_ROLE_CONTROLLER) return 0;
    d->controller = d->rank;
    d->workers = malloc(sizeof(int) * (size_t)(d->size > 0 ? d->size : 1));
    if (!d->workers) return -1;
    for (int r = first_worker; r < d->size; r++)
        if (controller_of(d, r) == d->rank) d->workers[d->n_workers++] = r;
    d->reqs = malloc(sizeof *d->reqs * (size_t)(d->n_workers ? d->n_workers : 1));
    return d->reqs ? 0 : -1;
}

dp_dist *dp_dist_init(int *argc, char ***argv, dp_dist_mode mode, int32_t controllers, int32_t *rank,
                      dp_error *err) {
    int started = 0, provided = 0;
    MPI_Initialized(&started);
    if (!started && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        dp_error_set(err, DP_STATUS_UNSUPPORTED, "MPI: cannot start (MPI_Init_thread failed)");
        return NULL;
    }
    dp_dist *d = calloc(1, sizeof *d);
    if (!d) {
        dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory");
        if (!started) MPI_Finalize();
        return NULL;
    }
    d->we_init = !started;
    d->mode = mode;
    d->K = mode == DP_DIST_MODE_ASYNC ? controllers : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    *rank = d->rank;
    if (mode == DP_DIST_MODE_ASYNC && (controllers < 1 || d->size < controllers + 1)) {
        dp_error_set(err, DP_STATUS_INVALID,
                     "--mpi async --controllers %d needs at least %d ranks (a parameter server and the controllers), "
                     "not %d",
                     (int)controllers, (int)controllers + 1, d->size);
        dp_dist_free(d);
        return NULL;
    }
    if (assign_roles(d)) {
        dp_error_set(err, DP_STATUS_NOMEM, "dist: out of memory");
        dp_dist_free(d);
        return NULL;
    }
    return d;
}

void dp_dist_free(dp_dist *d) {
    if (!d) return;
    if (d->server) dist_server_free(d);
    if (d->search) dist_search_free(d);
    if (d->role == DP_DIST_ROLE_CONTROLLER)
        for (int w = 0; w < d->n_workers; w++) MPI_Send(NULL, 0, MPI_BYTE, d->workers[w], DIST_TAG_STOP, MPI_COMM_WORLD);
    if (d->we_init) MPI_Finalize();
    free(d->workers), free(d->reqs), free(d->slots), free(d->job);
    free(d);
}

void dp_dist_abort(dp_dist *d, int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int32_t dp_dist_rank(const dp_dist *d) { return d->rank; }
int32_t dp_dist_size(const dp_dist *d) { return d->size; }
dp_dist_role dp_dist_get_role(const dp_dist *d) { return d->role; }
int32_t dp_dist_n_workers(const dp_dist *d) { return d->role == DP_DIST_ROLE_CONTROLLER ? d->n_workers : 0; }
