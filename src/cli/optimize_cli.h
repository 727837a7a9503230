/* The parts of `dplace optimize`: the command line (cmd_optimize.c), the
 * job on this process or on rank 0 (optimize_run.c), the progress on stderr
 * (optimize_progress.c), the summary (optimize_report.c) and the other
 * ranks of a distributed run (optimize_mpi.c). The job itself is the
 * library's (dplace/optimize.h). */
#ifndef DPLACE_CLI_OPTIMIZE_H
#define DPLACE_CLI_OPTIMIZE_H

#include <signal.h>

#include "cli/cli.h"
#include "dplace/dist.h"
#include "dplace/optimize.h"

/* Set by SIGINT and SIGTERM (and SIGUSR1 under mpirun): the job stops
 * after writing its checkpoint. */
extern volatile sig_atomic_t opt_stop;
void opt_on_signal(int sig);

/* Everything the command line says. */
typedef struct opt_args {
    const char *devices, *agent_name, *out, *log_path, *plot_path, *trace_path, *ck_path, *resume_path;
    const char *measure, *baselines, *init_path, *init_placement, *mpi;
    const char *units;       /* --units (NULL: auto)                           */
    long updates, placements, seed, threads, ck_every, controllers;
    double time_budget, measure_timeout, search_after; /* --search-after (<= 0: the preset's) */
    cli_protocol proto;
    int json, quiet, no_cache;
    cli_graph_source src;
    cli_list sets;           /* --set KEY=VALUE (key NULL) and the component
                                flags, in order                              */
    /* the settings as the job takes them (--set help left out) */
    dp_optimize_set set_list[CLI_LIST_MAX];
    char set_keys[CLI_LIST_MAX][64];
    int n_set_list;
    dp_optimize_plan plan;   /* the library's judgement of it all: the
                                settings, the budgets, the notes          */
} opt_args;

/* The job's options from the command line for g on ds (NULL before they
 * are loaded; init: the start placement read, or NULL), passed through
 * for the library to judge. */
dp_optimize_options opt_job_options(const opt_args *o, const dp_graph *g, const dp_devices *ds, const int32_t *init);
/* Reads --init-placement (NULL: none given) into *out. */
dp_status opt_read_init_placement(const opt_args *o, const dp_graph *g, const dp_devices *ds, int32_t **out,
                                  dp_error *err);
/* The job on this process, or on rank 0 of a distributed run (dist NULL
 * when none): builds it, shows progress, prints the summary. Returns the
 * exit status. */
int opt_run(const opt_args *o, dp_dist *dist);

/* ---- progress (optimize_progress.c) ----------------------------------------- */

typedef struct opt_progress {
    int tty, quiet, quiet_prep;
    double every_s, last_s, start_s;
    const dp_run_state *st; /* set once the method exists */
    double flight_s;        /* the last line about an update in flight */
    double update_s;        /* when the last update ended (or the run began) */
    int64_t total_updates;  /* the phase's budgets, for the time left */
    double time_budget;
    double after_s;         /* search-after's seconds                   */
    /* the last 200 to 400 samples: the window being filled and the one before */
    int64_t n[2], valid[2];
    double sum[2];
} opt_progress;

void opt_progress_init(opt_progress *p, const opt_args *o);
/* The agent's callback during an update (dp_agent_eval_options.progress). */
void opt_progress_in_update(void *user, const char *phase, int64_t done, int64_t total);
/* The job's hooks, printing on p. */
dp_optimize_hooks opt_progress_hooks(opt_progress *p);
/* "1m05s", "12.3s", "?" */
void opt_format_duration(double s, char *buf, size_t size);

/* ---- the summary (optimize_report.c) ----------------------------------------- */

/* Prints the job's summary on stdout: the table, or the JSON object with
 * --json (interrupted: the job was stopped by a signal). */
void opt_report(const opt_args *o, const dp_optimize *op, const dp_graph *g, const dp_devices *ds, int interrupted);

/* ---- a distributed run (optimize_mpi.c) --------------------------------------- */

/* --mpi: this rank's part of a distributed run. Returns the exit status. */
int opt_mpi(const opt_args *o, int *argc, char ***argv);

#ifdef DPLACE_HAVE_MPI
/* The line on the ranks of a distributed run (rank 0, stderr). */
void opt_mpi_print_ranks(const opt_args *o, const dp_dist *dist);
/* The job's wrap hook on rank 0 (user: an opt_mpi_wrap_ctx): the
 * distributed method around the search, or the parameter server's around
 * an async run's agent. */
typedef struct opt_mpi_wrap_ctx {
    dp_dist *dist;
    const dp_graph *g;
} opt_mpi_wrap_ctx;
dp_status opt_mpi_wrap(void *user, dp_agent *agent, dp_search *search, dp_method *m, dp_error *err);
#endif

#endif
