/* The external measuring command (dp_measure_run): the protocol's parser,
 * well-behaved and misbehaving commands (tests/data/measure/), timeouts
 * that leave no process behind, cancellation, two threads at once, no
 * leaked descriptors or zombies, and scripts/measure-example.sh end to end.
 * Runs in tests/ (WORKING_DIRECTORY); DPLACE_BIN names the CLI. */
#define _GNU_SOURCE /* usleep */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "dplace/measure.h"
#include "test_util.h"

static char placement_path[128];

#define CHECK_OUTCOME(res, want)                                                                          \
    do {                                                                                                  \
        if ((res).outcome != (want)) {                                                                    \
            TEST_WHERE_();                                                                                \
            fprintf(stderr, "outcome %s, expected %s (reason \"%s\")\n", dp_measure_outcome_name((res).outcome), \
                    dp_measure_outcome_name(want), (res).reason);                                         \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)

/* The reason is one line of printable ASCII that fits its buffer. */
static void check_reason_clean(const dp_measure_result *r) {
    size_t n = strnlen(r->reason, sizeof r->reason);
    CHECK(n < sizeof r->reason);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)r->reason[i];
        if (c < 0x20 || c > 0x7e) {
            fprintf(stderr, "reason \"%s\": byte %zu is 0x%02x\n", r->reason, i, c);
            exit(1);
        }
    }
    if (n) CHECK(r->reason[0] != ' ' && r->reason[n - 1] != ' ');
}

static dp_measure_result run_env(const char *cmd, double timeout, const char *const *env) {
    dp_measure_options o = dp_measure_options_default(timeout);
    o.env = env;
    dp_measure_result r;
    dp_error err;
    dp_status st = dp_measure_run_opts(cmd, placement_path, &o, &r, &err);
    if (st) fprintf(stderr, "dp_measure_run_opts(%s): %s\n", cmd, err.msg);
    CHECK_INT_EQ(st, DP_STATUS_OK);
    check_reason_clean(&r);
    CHECK(r.wall_s >= 0);
    return r;
}

static dp_measure_result run(const char *cmd, double timeout) { return run_env(cmd, timeout, NULL); }

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* No child of ours remains, running or zombie. */
static void check_no_children(void) {
    errno = 0;
    pid_t w = waitpid(-1, NULL, WNOHANG);
    if (w != -1 || errno != ECHILD) {
        fprintf(stderr, "a child is left behind: waitpid(-1) = %d (errno %d)\n", (int)w, errno);
        exit(1);
    }
}

/* 1 while process pid runs (a zombie or a missing pid counts as gone). */
static int alive(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return kill(pid, 0) == 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* Reads the pid in file path, waits up to 1 s for that process to be gone. */
static void check_gone(const char *pidfile) {
    FILE *f = fopen(pidfile, "r");
    CHECK(f);
    int pid = 0;
    CHECK_INT_EQ(fscanf(f, "%d", &pid), 1);
    fclose(f);
    remove(pidfile);
    CHECK(pid > 1);
    for (int i = 0; i < 100 && alive(pid); i++) usleep(10000);
    if (alive(pid)) {
        fprintf(stderr, "process %d outlived the measuring command\n", pid);
        kill(pid, SIGKILL);
        exit(1);
    }
}

/* Each output the protocol can meet parses to its outcome, time and
 * reason, the reason one clean line. */
static void test_parse_outputs(void) {
    static const struct {
        const char *out;
        dp_measure_outcome want;
        double time;
        const char *reason;
    } cases[] = {
        {"step_time_s 0.5\n", DP_MEASURE_OUTCOME_OK, 0.5, ""},
        {"step_time_s 0.5", DP_MEASURE_OUTCOME_OK, 0.5, ""},
        {"log line 1\nstep_time_s 2.5e-3\n", DP_MEASURE_OUTCOME_OK, 2.5e-3, ""},
        {"  \tstep_time_s\t +1.25E+1 \r\n \n\n", DP_MEASURE_OUTCOME_OK, 12.5, ""},
        {"step_time_s .5\n", DP_MEASURE_OUTCOME_OK, 0.5, ""},
        {"step_time_s 7.\n", DP_MEASURE_OUTCOME_OK, 7.0, ""},
        {"step_time_s 86400", DP_MEASURE_OUTCOME_OK, 86400.0, ""},
        {"oom\n", DP_MEASURE_OUTCOME_OOM, 0, "out of memory"},
        {"oom   gpu:0  \t full\n", DP_MEASURE_OUTCOME_OOM, 0, "gpu:0 full"},
        {"step_time_s 1\noom\n", DP_MEASURE_OUTCOME_OOM, 0, "out of memory"},
        {"", DP_MEASURE_OUTCOME_FAILED, 0, "printed nothing on stdout"},
        {" \n\t\r\n", DP_MEASURE_OUTCOME_FAILED, 0, "printed nothing on stdout"},
        {"0.5\n", DP_MEASURE_OUTCOME_FAILED, 0, "unrecognised result line \"0.5\""},
        {"step_time_s 1\nlog after the result\n", DP_MEASURE_OUTCOME_FAILED, 0, "unrecognised result line"},
        {"STEP_TIME_S 1\n", DP_MEASURE_OUTCOME_FAILED, 0, "unrecognised"},
        {"OOM\n", DP_MEASURE_OUTCOME_FAILED, 0, "unrecognised"},
        {"oomph\n", DP_MEASURE_OUTCOME_FAILED, 0, "unrecognised"},
        {"step_time_s\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s 1.5 s\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s 1 2\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s 0x10\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s nan\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s inf\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s 1e\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s .\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s 1,5\n", DP_MEASURE_OUTCOME_FAILED, 0, "not followed by one decimal number"},
        {"step_time_s 1e999\n", DP_MEASURE_OUTCOME_FAILED, 0, "not finite"},
        {"step_time_s 0\n", DP_MEASURE_OUTCOME_FAILED, 0, "not positive"},
        {"step_time_s -0.5\n", DP_MEASURE_OUTCOME_FAILED, 0, "not positive"},
        {"step_time_s 1e-400\n", DP_MEASURE_OUTCOME_FAILED, 0, "not positive"},
        {"step_time_s 86401\n", DP_MEASURE_OUTCOME_FAILED, 0, "over the limit of 86400 s"},
        {"\033[1mstep_time_s 1\033[0m\n", DP_MEASURE_OUTCOME_FAILED, 0, "unrecognised result line \"[1mstep_time_s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CASE("output %zu", i);
        dp_measure_result r;
        memset(&r, 0x5a, sizeof r);
        dp_measure_parse_output(cases[i].out, strlen(cases[i].out), &r);
        if (r.outcome != cases[i].want) fprintf(stderr, "case %zu: \"%s\": reason \"%s\"\n", i, cases[i].out, r.reason);
        CHECK_INT_EQ(r.outcome, cases[i].want);
        CHECK_NEAR(r.step_time_s, cases[i].time, 1e-12);
        CHECK_STR_CONTAINS(r.reason, cases[i].reason);
        if (!cases[i].reason[0]) CHECK_INT_EQ(strlen(r.reason), 0);
        check_reason_clean(&r);
    }
}

/* A NUL byte is garbage; the length, not a terminator, bounds the input. */
static void test_parse_bounded_by_length(void) {
    dp_measure_result r;
    dp_measure_parse_output("step_time_s 1\0\n", 15, &r);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    dp_measure_parse_output("step_time_s 1.5XXXX", 15, &r);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 1.5, 1e-12);
}

/* A long garbage line and a long oom reason are cut to fit, marked
 * "...". */
static void test_parse_long_lines_cut(void) {
    dp_measure_result r;
    char big[2000];
    memset(big, 'g', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    dp_measure_parse_output(big, strlen(big), &r);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "...");
    check_reason_clean(&r);
    memcpy(big, "oom ", 4);
    dp_measure_parse_output(big, strlen(big), &r);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OOM);
    CHECK_INT_EQ(strlen(r.reason), sizeof r.reason - 1);
    CHECK(!strcmp(r.reason + sizeof r.reason - 4, "..."));
    check_reason_clean(&r);
}

/* The outcomes have names. */
static void test_outcome_names(void) {
    CHECK(!strcmp(dp_measure_outcome_name(DP_MEASURE_OUTCOME_CANCELLED), "cancelled"));
}

/* Bad arguments (no command, no placement file, a timeout not positive)
 * are refused, saying which. */
static void test_arguments(void) {
    dp_measure_result r;
    dp_error err;
    CHECK_INT_EQ(dp_measure_run(NULL, placement_path, 1, &r, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(r.outcome, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(err.msg, "command is empty");
    CHECK_INT_EQ(dp_measure_run("", placement_path, 1, &r, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_measure_run("true", NULL, 1, &r, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "measure command \"true\": no placement file");
    CHECK_INT_EQ(dp_measure_run("true", placement_path, 0, &r, &err), DP_STATUS_INVALID);
    CHECK_STR_CONTAINS(err.msg, "timeout 0 s is not a positive number");
    CHECK_STR_CONTAINS(r.reason, "timeout 0 s");
    CHECK_INT_EQ(dp_measure_run("true", placement_path, NAN, &r, &err), DP_STATUS_INVALID);
    CHECK_INT_EQ(dp_measure_run("true", placement_path, INFINITY, &r, &err), DP_STATUS_INVALID);
}

/* A good command's time, with no reason, well within its timeout. */
static void test_good(void) {
    dp_measure_result r = run("data/measure/good.sh \"$1\"", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 0.125, 1e-12);
    CHECK_INT_EQ(strlen(r.reason), 0);
    CHECK(r.wall_s < 5);
}

/* Extra environment reaches the command and overrides inherited names. */
static void test_env_reaches_command(void) {
    const char *env[] = {"MEASURE_TIME=3.5", NULL};
    setenv("MEASURE_TIME", "9", 1);
    dp_measure_result r = run_env("data/measure/good.sh \"$1\"", 10, env);
    unsetenv("MEASURE_TIME");
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 3.5, 1e-12);
}

/* DPLACE_PLACEMENT cannot be overridden: it is always the file. */
static void test_placement_env_not_overridable(void) {
    const char *env2[] = {"DPLACE_PLACEMENT=/elsewhere", NULL};
    dp_measure_result r = run_env("data/measure/good.sh \"$1\"", 10, env2);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
}

/* Without "$1" the script gets no argument: good.sh says so, and the
 * sample fails with its status and stderr. */
static void test_command_without_argument_fails(void) {
    dp_measure_result r = run("data/measure/good.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "exited with status 3; stderr: good.sh: expected 1 argument, got 0");
}

/* A shell one-liner works as a command. */
static void test_shell_one_liner(void) {
    dp_measure_result r = run("test -r \"$DPLACE_PLACEMENT\" && echo step_time_s 2", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 2, 1e-12);
}

/* A huge stderr is drained (no deadlock) and does not fail the sample. */
static void test_stderr_flood_drained(void) {
    dp_measure_result r = run("data/measure/stderr_flood.sh", 20);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 0.5, 1e-12);
}

/* A command that runs out of memory: the oom outcome with its reason. */
static void test_oom(void) {
    dp_measure_result r = run("data/measure/oom.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OOM);
    CHECK(!strcmp(r.reason, "gpu:1 needs 13.2 GiB, has 11.2 GiB"));
    CHECK_INT_EQ(r.step_time_s, 0);
}

/* A failing command is a failed sample whose reason says why: its exit
 * status and stderr, a signal, garbage or a bad time on stdout, nothing
 * printed, a missing or unexecutable command. */
static void test_failures(void) {
    TEST_CASE("fail.sh");
    dp_measure_result r = run("data/measure/fail.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK(!strcmp(r.reason, "exited with status 1; stderr: RuntimeError: CUDA error: device-side assert triggered"));
    CHECK_INT_EQ(r.step_time_s, 0);

    TEST_CASE("signal.sh");
    r = run("data/measure/signal.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    /* sh may exec the script (killed by the signal) or wait for it (128+11) */
    if (!strstr(r.reason, "killed by signal 11 (SIGSEGV)"))
        CHECK_STR_CONTAINS(r.reason, "exited with status 139 (a shell's code for signal 11, SIGSEGV)");

    TEST_CASE("kill -KILL $$");
    r = run("kill -KILL $$", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK(!strcmp(r.reason, "killed by signal 9 (SIGKILL)"));

    TEST_CASE("garbage.sh");
    r = run("data/measure/garbage.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "unrecognised result line \"step time: [31m1.5 [0m s caf??\"");

    TEST_CASE("negative.sh");
    r = run("data/measure/negative.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK(!strcmp(r.reason, "result line \"step_time_s -0.5\": the step time is not positive"));

    TEST_CASE("true");
    r = run("true", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "printed nothing on stdout");

    TEST_CASE("step_time_s nan");
    r = run("echo step_time_s nan; echo 'nan is all I have' >&2", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK(!strcmp(r.reason, "result line \"step_time_s nan\": step_time_s is not followed by one decimal number; "
                            "stderr: nan is all I have"));

    TEST_CASE("no-such-script.sh");
    r = run("data/measure/no-such-script.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "exited with status 127 (command not found); stderr: ");
    CHECK_STR_CONTAINS(r.reason, "no-such-script.sh");

    TEST_CASE("small_gpu.json");
    r = run("data/measure/small_gpu.json", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "exited with status 126 (command not executable)");
}

/* A command flooding stdout is killed at once, the sample failed. */
static void test_stdout_flood_killed(void) {
    double t0 = dp_now_s();
    dp_measure_result r = run("data/measure/flood.sh", 10);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK(!strcmp(r.reason, "printed more than 65536 bytes on stdout (killed)"));
    CHECK(dp_now_s() - t0 < 5);
}

/* MEASURE_PIDFILE=/tmp/dplace_measure_pid_PID for hang.sh and
 * background.sh, which write their child's pid there. */
static char pidfile[128], pid_env[160];

static void set_pidfile(void) {
    snprintf(pidfile, sizeof pidfile, "/tmp/dplace_measure_pid_%d", (int)getpid());
    snprintf(pid_env, sizeof pid_env, "MEASURE_PIDFILE=%s", pidfile);
}

/* A hanging command times out, killed with its process group (the
 * grandchild too), saying so with its stderr. */
static void test_timeout_kills_group(void) {
    set_pidfile();
    const char *env[] = {pid_env, NULL};
    double t0 = dp_now_s();
    dp_measure_result r = run_env("data/measure/hang.sh", 0.5, env);
    double took = dp_now_s() - t0;
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK(!strcmp(r.reason, "timed out after 0.5 s (killed); stderr: started the step"));
    CHECK_NEAR(r.wall_s, 0.5, 0.2);
    if (!(took < 1.0)) fprintf(stderr, "hang.sh with a 0.5 s timeout took %.3f s\n", took);
    CHECK(took < 1.0);
    check_gone(pidfile); /* the grandchild died with its group */
}

/* A command that ignores SIGTERM gets SIGKILL after the grace period. */
static void test_sigterm_ignored_gets_sigkill(void) {
    set_pidfile();
    const char *env2[] = {pid_env, "MEASURE_NOTERM=1", NULL};
    double t0 = dp_now_s();
    dp_measure_result r = run_env("data/measure/hang.sh", 0.5, env2);
    double took = dp_now_s() - t0;
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "timed out after 0.5 s (killed)");
    if (!(took < 1.25)) fprintf(stderr, "hang.sh ignoring SIGTERM took %.3f s\n", took);
    CHECK(took < 1.25);
    check_gone(pidfile);
}

/* Closing its pipes does not hide a hanging command. */
static void test_closed_pipes_still_time_out(void) {
    double t0 = dp_now_s();
    dp_measure_result r = run("exec >&- 2>&-; sleep 30", 0.3);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "timed out after 0.3 s");
    CHECK(dp_now_s() - t0 < 1.0);
}

/* A result followed by an exit is not held up by a background process
 * keeping stdout open; that process is killed. */
static void test_background_process_killed(void) {
    set_pidfile();
    const char *env[] = {pid_env, NULL};
    double t0 = dp_now_s();
    dp_measure_result r = run_env("data/measure/background.sh", 10, env);
    double took = dp_now_s() - t0;
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 0.25, 1e-12);
    CHECK(took < 0.9);
    check_gone(pidfile);
}

/* A process that left the group (setsid) and holds stdout is waited for
 * at most a second after the command exits. */
static void test_setsid_process_waited_at_most_a_second(void) {
    if (system("command -v setsid >/dev/null 2>&1") != 0) {
        test_skip("no setsid");
        return;
    }
    double t0 = dp_now_s();
    dp_measure_result r = run("setsid sleep 2 & echo step_time_s 0.75", 10);
    double took = dp_now_s() - t0;
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r.step_time_s, 0.75, 1e-12);
    CHECK(r.wall_s < 0.9);
    CHECK(took < 1.9);
}

static volatile sig_atomic_t cancel_flag;

static void *set_cancel_later(void *arg) {
    (void)arg;
    usleep(200000);
    cancel_flag = 1;
    return NULL;
}

/* A cancel flag raised while a command runs stops it: the cancelled
 * outcome, soon after. */
static void test_cancel_mid_run(void) {
    dp_measure_options o = dp_measure_options_default(30);
    o.cancel = &cancel_flag;
    cancel_flag = 0;
    pthread_t th;
    CHECK_INT_EQ(pthread_create(&th, NULL, set_cancel_later, NULL), 0);
    dp_measure_result r;
    dp_error err;
    double t0 = dp_now_s();
    CHECK_INT_EQ(dp_measure_run_opts("sleep 30", placement_path, &o, &r, &err), DP_STATUS_OK);
    double took = dp_now_s() - t0;
    pthread_join(th, NULL);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_CANCELLED);
    CHECK_STR_CONTAINS(r.reason, "cancelled after");
    CHECK(took > 0.15 && took < 1.0);
    cancel_flag = 0;
}

/* A flag already set stops the command at once. */
static void test_cancel_flag_already_set(void) {
    dp_measure_options o = dp_measure_options_default(30);
    o.cancel = &cancel_flag;
    cancel_flag = 1;
    dp_measure_result r;
    dp_error err;
    double t0 = dp_now_s();
    CHECK_INT_EQ(dp_measure_run_opts("sleep 30", placement_path, &o, &r, &err), DP_STATUS_OK);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_CANCELLED);
    CHECK(dp_now_s() - t0 < 0.6);
    cancel_flag = 0;
}

/* Two threads measure at once, each with its own commands and answers. */
typedef struct thread_job {
    int id;
    int failures;
    char msg[512];
} thread_job;

static void *thread_main(void *arg) {
    thread_job *job = arg;
    char envv[64], want[32];
    snprintf(envv, sizeof envv, "MEASURE_TIME=%d.%d", job->id + 1, job->id + 1);
    snprintf(want, sizeof want, "%d.%d", job->id + 1, job->id + 1);
    const char *env[] = {envv, NULL};
    for (int k = 0; k < 6; k++) {
        dp_measure_options o = dp_measure_options_default(k % 3 == 2 ? 0.3 : 10);
        o.env = env;
        const char *cmd = k % 3 == 0 ? "data/measure/good.sh \"$1\"" : k % 3 == 1 ? "data/measure/oom.sh"
                                                                                    : "data/measure/hang.sh";
        dp_measure_result r;
        dp_error err;
        dp_status st = dp_measure_run_opts(cmd, placement_path, &o, &r, &err);
        dp_measure_outcome expect = k % 3 == 0 ? DP_MEASURE_OUTCOME_OK : k % 3 == 1 ? DP_MEASURE_OUTCOME_OOM
                                                                                    : DP_MEASURE_OUTCOME_FAILED;
        int ok = st == DP_STATUS_OK && r.outcome == expect;
        if (ok && k % 3 == 0) ok = fabs(r.step_time_s - atof(want)) < 1e-12;
        if (ok && k % 3 == 2) ok = strstr(r.reason, "timed out after 0.3 s") != NULL;
        if (!ok) {
            snprintf(job->msg, sizeof job->msg, "thread %d call %d (%s): status %d, outcome %s, time %g, reason \"%s\"",
                     job->id, k, cmd, (int)st, dp_measure_outcome_name(r.outcome), r.step_time_s, r.reason);
            job->failures++;
        }
    }
    return NULL;
}

/* Two threads measure at once, each with its own commands and answers;
 * their timeouts overlap. */
static void test_threads(void) {
    thread_job jobs[2];
    pthread_t th[2];
    double t0 = dp_now_s();
    for (int i = 0; i < 2; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].id = i;
        CHECK_INT_EQ(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        TEST_CASE("thread %d", i);
        if (jobs[i].failures) fprintf(stderr, "%s\n", jobs[i].msg);
        CHECK_INT_EQ(jobs[i].failures, 0);
    }
    test_case_[0] = '\0';
    /* the two timeouts of each thread overlap with the other thread's */
    CHECK(dp_now_s() - t0 < 5);
}

/* Whether scripts/measure-example.sh can run (DPLACE_BIN names the CLI,
 * python3 is there); else says why the test is skipped. */
static int example_available(void) {
    const char *bin = getenv("DPLACE_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        test_skip("DPLACE_BIN is not set to the dplace binary");
        return 0;
    }
    if (system("command -v python3 >/dev/null 2>&1") != 0) {
        test_skip("no python3 for scripts/measure-example.sh");
        return 0;
    }
    return 1;
}

static const char *const example_cmd = "../scripts/measure-example.sh \"$1\"";
static const char *const example_env[] = {"DPLACE_GRAPH=data/tiny.json", "DPLACE_DEVICES=k40x2", NULL};

/* scripts/measure-example.sh on tests/data/tiny.json through dplace
 * simulate: 7.78e-5 s without noise (test_cli); the median of 5 noisy
 * steps near it. */
static void test_example_script(void) {
    if (!example_available()) return;
    dp_measure_result r = run_env(example_cmd, 30, example_env);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    CHECK(r.step_time_s > 6e-5 && r.step_time_s < 9.5e-5);
}

/* The example script measures with a fixed seed: the same answer twice. */
static void test_example_script_same_answer(void) {
    if (!example_available()) return;
    dp_measure_result r = run_env(example_cmd, 30, example_env);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OK);
    dp_measure_result r2 = run_env(example_cmd, 30, example_env); /* same seed, same answer */
    CHECK_OUTCOME(r2, DP_MEASURE_OUTCOME_OK);
    CHECK_NEAR(r2.step_time_s, r.step_time_s, 1e-9);
}

/* Arguments instead of the environment; on 64 KiB GPUs: out of memory. */
static void test_example_script_oom(void) {
    if (!example_available()) return;
    dp_measure_result r =
        run("../scripts/measure-example.sh --graph data/tiny.json --devices data/measure/small_gpu.json \"$1\"", 30);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_OOM);
    CHECK_STR_CONTAINS(r.reason, "out of memory on gpu:0");
}

/* The simulator's own rejection and errors are failed samples: a placement
 * against a constraint, a missing placement file, no devices. */
static void test_example_script_errors_fail(void) {
    if (!example_available()) return;
    const char *env_dev[] = {"DPLACE_DEVICES=k40x2", NULL};
    TEST_CASE("placement against a constraint");
    dp_measure_result r =
        run_env("../scripts/measure-example.sh --graph data/tiny.json data/measure/x_on_gpu.json", 30, env_dev);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "exited with status 1; stderr: placement rejected (constraint): op 0 \"x\"");
    TEST_CASE("missing placement file");
    r = run_env("../scripts/measure-example.sh --graph data/tiny.json /no/such/placement.json", 30, env_dev);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "exited with status 2; stderr: dplace: placement \"/no/such/placement.json\"");
    TEST_CASE("no devices");
    r = run(example_cmd, 30);
    CHECK_OUTCOME(r, DP_MEASURE_OUTCOME_FAILED);
    CHECK_STR_CONTAINS(r.reason, "exited with status 2; stderr: measure-example.sh: no devices");
}

int main(int argc, char **argv) {
    test_init(argc, argv);
    signal(SIGPIPE, SIG_IGN); /* as a CLI might: the child must still get the default */
    snprintf(placement_path, sizeof placement_path, "/tmp/dplace_measure_%d.json", (int)getpid());
    FILE *f = fopen(placement_path, "w");
    CHECK(f);
    fputs("{\"format\": \"dplace-placement\", \"version\": 1, \"graph\": \"tiny\",\n"
          " \"devices\": [\"cpu:0\", \"gpu:0\", \"gpu:1\"],\n \"placement\": [0, 1, 1, 1, 1]}\n",
          f);
    CHECK_INT_EQ(fclose(f), 0);
    int fds = count_fds();
    TEST_RUN(test_parse_outputs);
    TEST_RUN(test_parse_bounded_by_length);
    TEST_RUN(test_parse_long_lines_cut);
    TEST_RUN(test_outcome_names);
    TEST_RUN(test_arguments);
    TEST_RUN(test_good);
    TEST_RUN(test_env_reaches_command);
    TEST_RUN(test_placement_env_not_overridable);
    TEST_RUN(test_command_without_argument_fails);
    TEST_RUN(test_shell_one_liner);
    TEST_RUN(test_stderr_flood_drained);
    TEST_RUN(test_oom);
    TEST_RUN(test_failures);
    TEST_RUN(test_stdout_flood_killed);
    TEST_RUN(test_timeout_kills_group);
    TEST_RUN(test_sigterm_ignored_gets_sigkill);
    TEST_RUN(test_closed_pipes_still_time_out);
    TEST_RUN(test_background_process_killed);
    TEST_RUN(test_setsid_process_waited_at_most_a_second);
    TEST_RUN(test_cancel_mid_run);
    TEST_RUN(test_cancel_flag_already_set);
    TEST_RUN(test_threads);
    TEST_RUN(test_example_script);
    TEST_RUN(test_example_script_same_answer);
    TEST_RUN(test_example_script_oom);
    TEST_RUN(test_example_script_errors_fail);
    CHECK_INT_EQ(count_fds(), fds);
    check_no_children();
    remove(placement_path);
    return test_end();
}
