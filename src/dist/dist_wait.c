/* The polling waits of every role (dist_internal.h): MPI's blocking calls
 * spin on a core; these test, then sleep, so that ranks waiting for others
 * leave the cores to the ones working (a 2-core machine runs 9 ranks in
 * the scale benchmark). */
#include <time.h>

#include "dist/dist_internal.h"

/* One pause of a polling wait: none for the first tries, then sleeps
 * doubling from 20 microseconds to a millisecond. */
static void backoff(int *tries) {
    int t = (*tries)++;
    if (t < 64) return;
    long us = 20L << (t - 64 < 6 ? t - 64 : 6);
    if (us > 1000) us = 1000;
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

int dist_wait_any(int n, MPI_Request *reqs, MPI_Status *st, const volatile sig_atomic_t *cancel, int *stop) {
    int tries = 0;
    for (;;) {
        int idx = MPI_UNDEFINED, flag = 0;
        MPI_Testany(n, reqs, &idx, &flag, st);
        if (flag) return idx == MPI_UNDEFINED ? -1 : idx;
        if (cancel && *cancel) *stop = 1;
        backoff(&tries);
    }
}

int dist_probe(int src, MPI_Status *st, const volatile sig_atomic_t *cancel) {
    int tries = 0, flag = 0;
    for (;;) {
        MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
        if (flag) return 0;
        if (cancel && *cancel) return -1;
        backoff(&tries);
    }
}
