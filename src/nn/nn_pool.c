/* The nn engine's thread pool: nn_parallel runs one function on up to
 * dp_nn_set_threads threads, the caller being thread 0. Workers are created
 * on first use and live until the process exits; between jobs they spin
 * briefly, then sleep on a condition variable, and so does the caller
 * waiting for them (the machine may be shared: no long spinning). Jobs are
 * split statically. One job at a time: a caller that finds the pool busy
 * runs its job alone. */
#include <pthread.h>
#include <stdatomic.h>

#include "nn_internal.h"
#include "nn_kern.h"

/* polls of the job counter before a worker sleeps (PAUSE takes ~40-140
 * cycles: a few tens of microseconds at most) */
#define NN_POOL_SPIN 200

static struct {
    pthread_mutex_t busy; /* held by the caller running a job */
    pthread_mutex_t lock; /* guards the sleeps on wake and done */
    pthread_cond_t wake;  /* a job is posted */
    pthread_cond_t done;  /* the last worker finished it */
    int created;          /* workers started (tid 1 .. created) */
    atomic_int threads;   /* pool size set by dp_nn_set_threads, 0: not set */
    atomic_uint job;      /* bumped for every job */
    atomic_int pending;   /* workers still to finish the current job */
    void (*fn)(void *, int, int);
    void *ctx;
    int nt;
    unsigned fpmode; /* the caller's MXCSR, for the workers */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL, NULL, 1, 0};

/* the job count each worker was created at (its first job is the next) */
static unsigned start_job[NN_POOL_MAX];

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker(void *arg) {
    int tid = (int)(size_t)arg;
    unsigned seen = start_job[tid];
    for (;;) {
        for (int s = 0; s < NN_POOL_SPIN && atomic_load(&pool.job) == seen; s++) cpu_relax();
        if (atomic_load(&pool.job) == seen) {
            pthread_mutex_lock(&pool.lock);
            while (atomic_load(&pool.job) == seen) pthread_cond_wait(&pool.wake, &pool.lock);
            pthread_mutex_unlock(&pool.lock);
        }
        seen = atomic_load(&pool.job);
        if (tid < pool.nt) {
#ifdef NN_HAVE_MXCSR
            unsigned saved = _mm_getcsr();
            _mm_setcsr(pool.fpmode);
            pool.fn(pool.ctx, tid, pool.nt);
            _mm_setcsr(saved);
#else
            pool.fn(pool.ctx, tid, pool.nt);
#endif
        }
        if (atomic_fetch_sub(&pool.pending, 1) == 1) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
    }
    return NULL;
}

/* Starts workers up to tid n-1; returns how many exist. Called with busy held. */
static int grow(int n) {
    while (pool.created < n - 1 && pool.created < NN_POOL_MAX - 1) {
        pthread_attr_t at;
        pthread_t th;
        if (pthread_attr_init(&at)) break;
        start_job[pool.created + 1] = atomic_load(&pool.job);
        pthread_attr_setstacksize(&at, (size_t)1 << 20);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &at, worker, (void *)(size_t)(pool.created + 1));
        pthread_attr_destroy(&at);
        if (rc) break;
        pool.created++;
    }
    return pool.created + 1;
}

void nn_pool_set_threads(int n) {
    if (n < 1) n = 1;
    if (n > NN_POOL_MAX) n = NN_POOL_MAX;
    atomic_store(&pool.threads, n);
}

/* Until dp_nn_set_threads is called: OpenBLAS's default (OPENBLAS_NUM_THREADS
 * or the core count), so a program that never sets it gets BLAS's own. */
int nn_pool_threads(void) {
    int n = atomic_load(&pool.threads);
    if (n < 1) {
        n = openblas_get_num_threads();
        n = n < 1 ? 1 : n > NN_POOL_MAX ? NN_POOL_MAX : n;
    }
    return n;
}

void nn_parallel(int nt, void (*fn)(void *ctx, int tid, int nt), void *ctx) {
    int cap = nn_pool_threads();
    if (nt > cap) nt = cap;
    if (nt <= 1 || pthread_mutex_trylock(&pool.busy)) {
        fn(ctx, 0, 1);
        return;
    }
    int have = grow(nt);
    if (nt > have) nt = have;
    if (nt <= 1) {
        pthread_mutex_unlock(&pool.busy);
        fn(ctx, 0, 1);
        return;
    }
    pool.fn = fn;
    pool.ctx = ctx;
    pool.nt = nt;
#ifdef NN_HAVE_MXCSR
    pool.fpmode = _mm_getcsr();
#endif
    atomic_store(&pool.pending, pool.created);
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add(&pool.job, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    fn(ctx, 0, nt);
    for (int s = 0; s < NN_POOL_SPIN && atomic_load(&pool.pending) > 0; s++) cpu_relax();
    if (atomic_load(&pool.pending) > 0) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.pending) > 0) pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.busy);
}
