/* The external measuring command: runs the user's command on a placement
 * file in a process group of its own, reads its stdout and stderr under a
 * timeout with poll(), reaps it, and parses its result line
 * (include/dplace/measure.h, docs/measure.md). */
#define _GNU_SOURCE /* pipe2: close-on-exec pipes, so a spawn on another thread cannot inherit them */
#include "dplace/measure.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

extern char **environ;

static const char *const outcome_names[] = {"ok", "oom", "failed", "cancelled"};
_Static_assert(sizeof(outcome_names) / sizeof(outcome_names[0]) == DP_MEASURE_OUTCOME_COUNT, "outcome_names");

/* How often the wait loop wakes to check the cancel flag and the child. */
#define POLL_SLICE_MS 50
/* After the main process exits, how long to wait for the pipes to close
 * (a process that left the group may still hold them). */
#define DRAIN_S 1.0
/* The protocol's grammar, quoted in failure reasons. */
#define EXPECTED "expected \"step_time_s SECONDS\" or \"oom [REASON]\" as the last line"

const char *dp_measure_outcome_name(dp_measure_outcome o) {
    return (unsigned)o < DP_MEASURE_OUTCOME_COUNT ? outcome_names[o] : "?";
}

dp_measure_options dp_measure_options_default(double timeout_s) {
    dp_measure_options o;
    memset(&o, 0, sizeof o);
    o.timeout_s = timeout_s;
    return o;
}

/* ---- reasons: one line of printable ASCII ------------------------------ */

/* Copies n bytes of src into dst (capacity cap > max) as one line: control
 * characters become spaces, bytes outside ASCII become '?', runs of spaces
 * collapse, the ends are trimmed. A result longer than max bytes is cut and
 * ends in "...". Returns the length written. */
static size_t sanitize(char *dst, size_t cap, const char *src, size_t n, size_t max) {
    assert(max >= 8 && max + 1 <= cap);
    size_t len = 0;
    int cut = 0, space = 1; /* space: drops leading and repeated spaces */
    for (size_t i = 0; i < n && !cut; i++) {
        unsigned char ch = (unsigned char)src[i];
        char c = ch < 0x20 || ch == 0x7f ? ' ' : ch >= 0x80 ? '?' : (char)ch;
        if (c == ' ') {
            if (space) continue;
            space = 1;
        } else {
            space = 0;
        }
        if (len < max) dst[len++] = c;
        else if (c != ' ') cut = 1;
    }
    while (len > 0 && dst[len - 1] == ' ') len--;
    if (cut) {
        if (len > max - 3) len = max - 3;
        while (len > 0 && dst[len - 1] == ' ') len--;
        memcpy(dst + len, "...", 3);
        len += 3;
    }
    dst[len] = '\0';
    return len;
}

/* Sets res->reason from a printf-style message, sanitised and bounded. */
static void set_reason(dp_measure_result *res, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_reason(dp_measure_result *res, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = k < 0 ? 0 : (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1;
    sanitize(res->reason, sizeof res->reason, buf, n, sizeof res->reason - 1);
}

/* Writes the last non-blank line of buf (n bytes), sanitised, at most max
 * bytes, into dst; returns its length (0: none). */
static size_t last_line(char *dst, size_t cap, const char *buf, size_t n, size_t max) {
    size_t end = n;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && buf[start - 1] != '\n') start--;
        size_t len = sanitize(dst, cap, buf + start, end - start, max);
        if (len) return len;
        if (start == 0) break;
        end = start - 1;
    }
    dst[0] = '\0';
    return 0;
}

/* ---- the result line --------------------------------------------------- */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Accepts exactly [+-]?(D+(.D*)?|.D+)([eE][+-]?D+)? in s[0..n) and stores
 * its value; returns 0 on success, -1 when s is not such a number. */
static int parse_decimal(const char *s, size_t n, double *v) {
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && is_digit(s[i])) i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) i++, digits++;
    }
    if (!digits) return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t ed = 0;
        while (i < n && is_digit(s[i])) i++, ed++;
        if (!ed) return -1;
    }
    if (i != n || n >= 64) return -1;
    char buf[64];
    memcpy(buf, s, n);
    buf[n] = '\0';
    *v = strtod(buf, NULL); /* the grammar above is what strtod reads in the C locale */
    return 0;
}

void dp_measure_parse_output(const char *out, size_t len, dp_measure_result *res) {
    res->outcome = DP_MEASURE_OUTCOME_FAILED;
    res->step_time_s = 0;
    res->reason[0] = '\0';
    /* the last line holding anything but blanks */
    const char *line = NULL;
    size_t n = 0, end = len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && out[start - 1] != '\n') start--;
        size_t a = start, b = end;
        while (a < b && is_blank(out[a])) a++;
        while (b > a && is_blank(out[b - 1])) b--;
        if (a < b) {
            line = out + a;
            n = b - a;
            break;
        }
        if (start == 0) break;
        end = start - 1;
    }
    if (!line) {
        set_reason(res, "printed nothing on stdout (%s)", EXPECTED);
        return;
    }
    size_t k = 0;
    while (k < n && !is_blank(line[k])) k++;
    size_t r = k;
    while (r < n && is_blank(line[r])) r++;
    char shown[96];
    sanitize(shown, sizeof shown, line, n, 80);
    if (k == 3 && !memcmp(line, "oom", 3)) {
        res->outcome = DP_MEASURE_OUTCOME_OOM;
        if (r < n) sanitize(res->reason, sizeof res->reason, line + r, n - r, sizeof res->reason - 1);
        else snprintf(res->reason, sizeof res->reason, "out of memory");
        return;
    }
    if (k == 11 && !memcmp(line, "step_time_s", 11)) {
        double v;
        if (r == n || parse_decimal(line + r, n - r, &v)) {
            set_reason(res, "result line \"%s\": step_time_s is not followed by one decimal number", shown);
        } else if (!isfinite(v)) {
            set_reason(res, "result line \"%s\": the step time is not finite", shown);
        } else if (v <= 0) {
            set_reason(res, "result line \"%s\": the step time is not positive", shown);
        } else if (v > DP_MEASURE_MAX_STEP_S) {
            set_reason(res, "result line \"%s\": the step time is over the limit of %g s", shown,
                       DP_MEASURE_MAX_STEP_S);
        } else {
            res->outcome = DP_MEASURE_OUTCOME_OK;
            res->step_time_s = v;
        }
        return;
    }
    set_reason(res, "unrecognised result line \"%s\" (%s)", shown, EXPECTED);
}

/* ---- the child --------------------------------------------------------- */

/* Short name of a signal for reasons (strsignal is not thread-safe). */
static const char *signal_name(int sig) {
    switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGBUS: return "SIGBUS";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return "signal";
    }
}

/* Length of the name part of "NAME=value" (the whole string without '='). */
static size_t env_name_len(const char *s) {
    const char *eq = strchr(s, '=');
    return eq ? (size_t)(eq - s) : strlen(s);
}

/* Builds the child's environment: environ without the names that extra and
 * DPLACE_PLACEMENT set, then extra, then DPLACE_PLACEMENT=path (stored in a
 * malloc'd *owned). Returns a malloc'd array, or NULL on OOM. */
static char **build_env(const char *path, const char *const *extra, char **owned) {
    size_t n_env = 0, n_extra = 0;
    while (environ && environ[n_env]) n_env++;
    while (extra && extra[n_extra]) n_extra++;
    char **envp = malloc((n_env + n_extra + 2) * sizeof *envp);
    size_t plen = strlen(path);
    *owned = malloc(plen + sizeof "DPLACE_PLACEMENT=");
    if (!envp || !*owned) {
        free(envp);
        free(*owned);
        *owned = NULL;
        return NULL;
    }
    memcpy(*owned, "DPLACE_PLACEMENT=", sizeof "DPLACE_PLACEMENT=" - 1);
    memcpy(*owned + sizeof "DPLACE_PLACEMENT=" - 1, path, plen + 1);
    size_t m = 0;
    for (size_t i = 0; i < n_env; i++) {
        const char *e = environ[i];
        size_t nl = env_name_len(e);
        int drop = nl == 16 && !memcmp(e, "DPLACE_PLACEMENT", 16);
        for (size_t j = 0; j < n_extra && !drop; j++)
            drop = env_name_len(extra[j]) == nl && !memcmp(extra[j], e, nl);
        if (!drop) envp[m++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++) envp[m++] = (char *)extra[j];
    envp[m++] = *owned;
    envp[m] = NULL;
    return envp;
}

/* Moves a close-on-exec descriptor to 3 or above (so that dup2 onto 1 and 2
 * in the child cannot clobber it); returns the descriptor or -1. */
static int fd_high(int fd) {
    if (fd >= 3) return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return nfd;
}

/* The reading side of one call: stdout up to the cap, the tail of stderr. */
typedef struct io_state {
    int fd[2]; /* stdout, stderr read ends; -1 once at EOF */
    char *out;
    size_t out_len;
    char err[2 * DP_MEASURE_STDERR_TAIL];
    size_t err_len;
    int flood; /* stdout passed DP_MEASURE_MAX_OUTPUT */
} io_state;

/* Waits up to ms for output and reads what is there; keep == 0 discards it. */
static void io_pump(io_state *io, int ms, int keep) {
    struct pollfd pfd[2];
    int map[2], np = 0;
    for (int i = 0; i < 2; i++)
        if (io->fd[i] >= 0) {
            pfd[np].fd = io->fd[i];
            pfd[np].events = POLLIN;
            pfd[np].revents = 0;
            map[np++] = i;
        }
    int r = poll(np ? pfd : NULL, (nfds_t)np, ms);
    if (r <= 0) return; /* timeout, or EINTR: the caller loops */
    for (int k = 0; k < np; k++) {
        if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) continue;
        int i = map[k];
        char scratch[4096];
        char *dst = scratch;
        size_t room = sizeof scratch;
        if (keep && i == 0) {
            dst = io->out + io->out_len;
            room = DP_MEASURE_MAX_OUTPUT + 1 - io->out_len; /* one byte more than allowed shows a flood */
        } else if (keep && i == 1) {
            if (io->err_len > DP_MEASURE_STDERR_TAIL) { /* keep the last TAIL bytes */
                memmove(io->err, io->err + io->err_len - DP_MEASURE_STDERR_TAIL, DP_MEASURE_STDERR_TAIL);
                io->err_len = DP_MEASURE_STDERR_TAIL;
            }
            dst = io->err + io->err_len;
            room = sizeof io->err - io->err_len;
        }
        ssize_t got = read(io->fd[i], dst, room);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) { /* EOF, or an error that ends this pipe */
            close(io->fd[i]);
            io->fd[i] = -1;
            continue;
        }
        if (keep && i == 0) {
            io->out_len += (size_t)got;
            if (io->out_len > DP_MEASURE_MAX_OUTPUT) io->flood = 1;
        } else if (keep && i == 1) {
            io->err_len += (size_t)got;
        }
    }
}

/* 1 when the child has exited (left unreaped, so its pid and process group
 * id stay reserved); -1 when it cannot be waited for (ECHILD); 0 otherwise. */
static int child_exited(pid_t pid) {
    siginfo_t info;
    for (;;) {
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0) return info.si_pid == pid;
        if (errno != EINTR) return -1;
    }
}

dp_status dp_measure_run(const char *cmd, const char *placement_path, double timeout_s, dp_measure_result *res,
                         dp_error *err) {
    dp_measure_options o = dp_measure_options_default(timeout_s);
    return dp_measure_run_opts(cmd, placement_path, &o, res, err);
}

/* Fails the call for dplace's own reason: res gets err's message. */
static dp_status own_failure(dp_measure_result *res, dp_error *err, dp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static dp_status own_failure(dp_measure_result *res, dp_error *err, dp_status st, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    res->outcome = DP_MEASURE_OUTCOME_FAILED;
    set_reason(res, "%s", buf);
    return dp_error_set(err, st, "%s", buf);
}

/* One call's child: its process, when it ran, why it was stopped and how it
 * ended. */
typedef enum stop_reason { STOP_NONE, STOP_TIMEOUT, STOP_FLOOD, STOP_CANCEL } stop_reason;
typedef struct child_state {
    pid_t pid;
    double t0, t_end; /* started; exited (or stopped) */
    int exited;       /* has exited (unreaped until reap_child) */
    int lost;         /* cannot be waited for: its exit status is lost */
    int status;       /* waitpid's status, once reaped */
    stop_reason stop;
} child_state;

/* Two close-on-exec pipes for the child's stdout (po) and stderr (pe), every
 * descriptor at 3 or above; 0, or errno with none left open. */
static int open_pipes(int po[2], int pe[2]) {
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || (po[0] = fd_high(po[0])) < 0 ||
        (po[1] = fd_high(po[1])) < 0 || (pe[0] = fd_high(pe[0])) < 0 || (pe[1] = fd_high(pe[1])) < 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (po[i] >= 0) close(po[i]);
            if (pe[i] >= 0) close(pe[i]);
        }
        return e;
    }
    return 0;
}

/* Starts `/bin/sh -c cmd dplace-measure placement_path` with envp: stdin
 * /dev/null, stdout and stderr to out_fd and err_fd, its own process group,
 * default signal dispositions, nothing blocked. Returns 0 with *pid set and
 * *t0 the start time, or posix_spawn's error. */
static int spawn_child(const char *cmd, const char *placement_path, char **envp, int out_fd, int err_fd,
                       pid_t *pid, double *t0) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int rc_fa = posix_spawn_file_actions_init(&fa);
    int rc_at = rc_fa ? rc_fa : posix_spawnattr_init(&at);
    int rc2 = rc_at;
    if (!rc2) {
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        sigdelset(&all, SIGKILL);
        sigdelset(&all, SIGSTOP);
        rc2 = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (!rc2) rc2 = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        if (!rc2) rc2 = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
        short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
        if (!rc2) rc2 = posix_spawnattr_setflags(&at, flags);
        if (!rc2) rc2 = posix_spawnattr_setpgroup(&at, 0);
        if (!rc2) rc2 = posix_spawnattr_setsigmask(&at, &none);
        if (!rc2) rc2 = posix_spawnattr_setsigdefault(&at, &all);
    }
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, "dplace-measure", (char *)placement_path, NULL};
    *pid = -1;
    *t0 = dp_now_s();
    if (!rc2) rc2 = posix_spawn(pid, "/bin/sh", &fa, &at, argv, envp);
    if (!rc_fa) posix_spawn_file_actions_destroy(&fa);
    if (!rc_at) posix_spawnattr_destroy(&at);
    return rc2;
}

/* Reads the child's output until the main process has exited and the pipes
 * are closed, or the timeout, the cancel flag or a flood of stdout stops it
 * (c->stop). */
static void watch_child(io_state *io, child_state *c, double timeout, const volatile sig_atomic_t *cancel) {
    double deadline = c->t0 + timeout;
    c->t_end = c->t0;
    for (;;) {
        if (!c->exited) {
            int e = child_exited(c->pid);
            if (e) {
                c->exited = 1;
                c->lost = e < 0;
                c->t_end = dp_now_s();
                /* whatever it left in its group goes now; the unreaped
                 * leader keeps the group id from being reused */
                if (!c->lost) kill(-c->pid, SIGKILL);
            }
        }
        if (io->flood) {
            c->stop = STOP_FLOOD;
            return;
        }
        if (c->exited && io->fd[0] < 0 && io->fd[1] < 0) return;
        double now = dp_now_s();
        if (!c->exited && cancel && *cancel) {
            c->stop = STOP_CANCEL;
            return;
        }
        if (!c->exited && now >= deadline) {
            c->stop = STOP_TIMEOUT;
            return;
        }
        double limit = c->exited ? fmin(deadline, c->t_end + DRAIN_S) : deadline;
        if (c->exited && now >= limit) return; /* pipes held by a process outside the group */
        int slice = io->fd[0] < 0 && io->fd[1] < 0 ? 5 : POLL_SLICE_MS;
        double ms = ceil((limit - now) * 1000.0);
        io_pump(io, ms < slice ? (int)fmax(ms, 1.0) : slice, 1);
    }
}

/* A stopped child: SIGTERM to its group, up to grace seconds for it to
 * exit (its output discarded), then SIGKILL. */
static void stop_child(io_state *io, child_state *c, double grace) {
    double now = dp_now_s();
    if (!c->exited) c->t_end = now;
    if (!c->lost) kill(-c->pid, SIGTERM);
    double until = now + grace;
    while (!c->exited && dp_now_s() < until) {
        int e = child_exited(c->pid);
        if (e) {
            c->exited = 1;
            c->lost = e < 0;
            break;
        }
        io_pump(io, 5, 0);
    }
    if (!c->lost) kill(-c->pid, SIGKILL);
}

/* Closes the pipes and reaps the child (c->status; c->lost when it cannot). */
static void reap_child(io_state *io, child_state *c) {
    for (int i = 0; i < 2; i++)
        if (io->fd[i] >= 0) close(io->fd[i]);
    c->status = 0;
    if (!c->lost) {
        pid_t w;
        while ((w = waitpid(c->pid, &c->status, 0)) < 0 && errno == EINTR) {
        }
        if (w != c->pid) c->lost = 1;
    }
}

/* The outcome of a reaped child: why it was stopped or failed (with the
 * last line of its stderr), else what its stdout says. */
static void set_outcome(const io_state *io, const child_state *c, double timeout, dp_measure_result *res) {
    char tail[320]; /* the reason's own cut bounds it further */
    size_t tl = last_line(tail, sizeof tail, io->err, io->err_len, sizeof tail - 1);
    const char *sep = tl ? "; stderr: " : "";
    int status = c->status;
    if (c->stop == STOP_CANCEL) {
        res->outcome = DP_MEASURE_OUTCOME_CANCELLED;
        set_reason(res, "cancelled after %.3g s (killed)", res->wall_s);
    } else if (c->stop == STOP_TIMEOUT) {
        set_reason(res, "timed out after %g s (killed)%s%s", timeout, sep, tail);
    } else if (c->stop == STOP_FLOOD) {
        set_reason(res, "printed more than %d bytes on stdout (killed)", DP_MEASURE_MAX_OUTPUT);
    } else if (c->lost) {
        set_reason(res, "exit status lost (SIGCHLD ignored, or the child reaped elsewhere)%s%s", sep, tail);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        set_reason(res, "killed by signal %d (%s)%s%s", sig, signal_name(sig), sep, tail);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        int code = WEXITSTATUS(status);
        char note[64] = "";
        if (code == 127) snprintf(note, sizeof note, " (command not found)");
        else if (code == 126) snprintf(note, sizeof note, " (command not executable)");
        else if (code > 128 && code < 128 + 65)
            snprintf(note, sizeof note, " (a shell's code for signal %d, %s)", code - 128, signal_name(code - 128));
        set_reason(res, "exited with status %d%s%s%s", code, note, sep, tail);
    } else {
        dp_measure_parse_output(io->out, io->out_len, res);
        if (res->outcome == DP_MEASURE_OUTCOME_FAILED && tl) {
            char r[sizeof res->reason];
            memcpy(r, res->reason, sizeof r);
            set_reason(res, "%s%s%s", r, sep, tail);
        }
    }
}

dp_status dp_measure_run_opts(const char *cmd, const char *placement_path, const dp_measure_options *opts,
                              dp_measure_result *res, dp_error *err) {
    assert(res && opts);
    memset(res, 0, sizeof *res);
    res->outcome = DP_MEASURE_OUTCOME_FAILED;
    if (!cmd || !*cmd) return own_failure(res, err, DP_STATUS_INVALID, "measure command: the command is empty");
    if (!placement_path || !*placement_path)
        return own_failure(res, err, DP_STATUS_INVALID, "measure command \"%.200s\": no placement file", cmd);
    double timeout = opts->timeout_s;
    if (!(timeout > 0) || !isfinite(timeout))
        return own_failure(res, err, DP_STATUS_INVALID,
                           "measure command \"%.200s\": timeout %g s is not a positive number of seconds", cmd,
                           timeout);
    double grace = opts->kill_grace_s;
    if (!(grace > 0)) grace = fmin(1.0, fmax(0.1, timeout / 4));

    io_state io;
    memset(&io, 0, sizeof io);
    io.fd[0] = io.fd[1] = -1;
    io.out = malloc(DP_MEASURE_MAX_OUTPUT + 1);
    char *owned = NULL;
    char **envp = io.out ? build_env(placement_path, opts->env, &owned) : NULL;
    if (!envp) {
        free(io.out);
        return own_failure(res, err, DP_STATUS_NOMEM, "measure command \"%.200s\": out of memory", cmd);
    }
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    int e = open_pipes(po, pe);
    if (e) {
        free(envp);
        free(owned);
        free(io.out);
        return own_failure(res, err, DP_STATUS_IO, "measure command \"%.200s\": cannot create a pipe: %s", cmd,
                           strerror(e));
    }
    child_state c = {.stop = STOP_NONE};
    int rc = spawn_child(cmd, placement_path, envp, po[1], pe[1], &c.pid, &c.t0);
    close(po[1]);
    close(pe[1]);
    free(envp);
    free(owned);
    if (rc) {
        close(po[0]);
        close(pe[0]);
        free(io.out);
        return own_failure(res, err, rc == ENOMEM ? DP_STATUS_NOMEM : DP_STATUS_IO,
                           "measure command \"%.200s\": cannot start /bin/sh: %s", cmd, strerror(rc));
    }
    io.fd[0] = po[0];
    io.fd[1] = pe[0];
    watch_child(&io, &c, timeout, opts->cancel);
    if (c.stop != STOP_NONE) stop_child(&io, &c, grace);
    reap_child(&io, &c);
    res->wall_s = c.t_end - c.t0;
    set_outcome(&io, &c, timeout, res);
    free(io.out);
    return DP_STATUS_OK;
}
