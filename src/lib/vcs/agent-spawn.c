/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Starting the agent on demand, the same whoever asks (see agent-spawn.h). */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent-spawn.h"
#include "syscalls.h"

#define AGENT_START_TIMEOUT_MS 10000

/*
 * An agent started on demand must not depend on who happened to start it: a
 * kubelet (or its container) would hand it its own binary, PATH (which picks
 * the OCI runtime), umask, rlimits, LD_PRELOAD or INVOCATION_ID.  So it runs:
 *   - the installed binary, KM_BINDIR/kubemount, looked up in the host mount
 *     namespace; KUBEMOUNT_AGENT_BINARY names another one explicitly (a build
 *     tree, the test suite), never implicitly the caller's own.  Either must
 *     be a regular executable file owned by root (or by us) and writable by
 *     nobody else: a root daemon runs it;
 *   - with AGENT_PATH, KUBEMOUNT_READY_FD and those of agent_env_kept that the
 *     caller sets (settings that caller and agent must share), nothing else;
 *   - with umask 022, cwd /, no signal blocked or ignored, fds 0-2 /dev/null;
 *   - with every soft rlimit at its hard limit but RLIMIT_CORE 0 (no core
 *     dump of a process that holds secrets), RLIMIT_NOFILE at most 1048576
 *     and RLIMIT_STACK at most 8 MiB (what a fresh process gets).  Hard limits
 *     cannot be raised back without CAP_SYS_RESOURCE: they stay.
 * kubemount-agent.service is the way to choose otherwise.
 */
#define AGENT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define AGENT_NOFILE_MAX ((rlim_t)1 << 20)
#define AGENT_STACK ((rlim_t)8 << 20)
static const char *const agent_env_kept[] = { "KUBEMOUNT_CGROUP_PARENT", "KUBEMOUNT_STORE_DIR", "KUBEMOUNT_COMPAT",
                                              "KUBEMOUNT_GC_INTERVAL" };

/* What went wrong in the spawned child, for the caller's message. */
enum spawn_step { STEP_SETNS = 1, STEP_OPEN, STEP_NOT_FILE, STEP_OWNER, STEP_WRITABLE, STEP_EXEC };
struct spawn_report {
        char marker; /* 'E'; the agent writes '1' when it listens */
        unsigned char step;
        int error;
};

/* In the child: which step failed and why, to the caller through the report pipe; then exit. */
static _Noreturn void report_and_exit(int fd, enum spawn_step step, int error) {
        struct spawn_report rep = { 'E', step, error };

        (void)!write(fd, &rep, sizeof(rep));
        _exit(1);
}

/* The agent binary, in the (host) mount namespace we are in: an O_PATH fd or report_and_exit(). */
static int agent_binary(const char *path, int report) {
        struct stat st;
        int fd = open(path, O_PATH | O_CLOEXEC);

        if (fd < 0)
                report_and_exit(report, STEP_OPEN, errno);
        if (fstat(fd, &st) < 0)
                report_and_exit(report, STEP_OPEN, errno);
        if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                report_and_exit(report, STEP_NOT_FILE, S_ISDIR(st.st_mode) ? EISDIR : EACCES);
        if (st.st_uid != 0 && st.st_uid != geteuid())
                report_and_exit(report, STEP_OWNER, EPERM);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                report_and_exit(report, STEP_WRITABLE, EPERM);
        return fd;
}

static void agent_rlimits(void) {
        for (int res = 0; res < RLIM_NLIMITS; res++) {
                struct rlimit l;

                if (getrlimit(res, &l) < 0)
                        continue;
                l.rlim_cur = l.rlim_max;
                if (res == RLIMIT_CORE)
                        l.rlim_cur = 0;
                else if (res == RLIMIT_NOFILE && l.rlim_cur > AGENT_NOFILE_MAX)
                        l.rlim_cur = AGENT_NOFILE_MAX;
                else if (res == RLIMIT_STACK && l.rlim_cur > AGENT_STACK)
                        l.rlim_cur = AGENT_STACK;
                (void)setrlimit(res, &l);
        }
}

/* The process state of the comment at the top (async-signal-safe: runs after fork). */
static void agent_process_reset(void) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;

        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &dfl, NULL);
        sigemptyset(&none);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        (void)umask(022);
        (void)!chdir("/");
        agent_rlimits();
}

/* The agent's environment (km_strv_free() it), made before the fork. */
static char **agent_environment(int ready_fd) {
        char **env = calloc(ELEMENTSOF(agent_env_kept) + 3, sizeof(char *)), *e;
        size_t n = 0;

        if (!env || asprintf(&e, "%s", AGENT_PATH) < 0)
                goto fail;
        env[n++] = e;
        if (asprintf(&e, "KUBEMOUNT_READY_FD=%d", ready_fd) < 0)
                goto fail;
        env[n++] = e;
        for (size_t i = 0; i < ELEMENTSOF(agent_env_kept); i++) {
                const char *v = getenv(agent_env_kept[i]);

                if (!v)
                        continue;
                if (asprintf(&e, "%s=%s", agent_env_kept[i], v) < 0)
                        goto fail;
                env[n++] = e;
        }
        return env;
fail:
        km_strv_free(env);
        return NULL;
}

static int spawn_error(const struct spawn_report *rep, const char *binary, struct km_error *err) {
        static const char *const what[] = {
                [STEP_SETNS] = "enter the host mount namespace",
                [STEP_OPEN] = "",
                [STEP_NOT_FILE] = ": not an executable file",
                [STEP_OWNER] = ": not owned by root, refusing to run it as the agent",
                [STEP_WRITABLE] = ": writable by group or others, refusing to run it as the agent",
                [STEP_EXEC] = ": exec",
        };
        const char *w = rep->step < ELEMENTSOF(what) && what[rep->step] ? what[rep->step] : "";
        int r = rep->error > 0 ? -rep->error : -EIO;

        if (rep->step == STEP_SETNS)
                return error_set(err, r, "start the agent: %s", w);
        if (rep->step == STEP_NOT_FILE || rep->step == STEP_OWNER || rep->step == STEP_WRITABLE)
                return error_set_plain(err, r, "start the agent: %s%s", binary, w);
        if (rep->step == STEP_OPEN && r == -ENOENT)
                return error_set_plain(err, r,
                                       "start the agent: %s: not installed in the host (install kubemount, or run "
                                       "`kubemount agent` there, or name a binary in KUBEMOUNT_AGENT_BINARY)",
                                       binary);
        return error_set(err, r, "start the agent: %s%s", binary, w);
}

int agent_spawn(const char *state_dir, const char *host_ns, struct km_error *err) {
        const char *override = getenv("KUBEMOUNT_AGENT_BINARY");
        _cleanup_free_ char *binary = NULL;
        _cleanup_close_ int ns = -EBADF, rd = -EBADF, wr = -EBADF;
        char idle[16], **env = NULL;
        char *argv[] = { (char *)"kubemount",
                         (char *)"agent",
                         (char *)"--state-dir",
                         (char *)state_dir,
                         (char *)"--idle-exit",
                         idle,
                         NULL };
        struct spawn_report rep = {};
        int fds[2], status;
        ssize_t n;
        pid_t pid;

        if (override && *override && override[0] != '/')
                return error_set_plain(err, -EINVAL, "KUBEMOUNT_AGENT_BINARY=%s: not an absolute path (of the host)",
                                       override);
        binary = strdup(override && *override ? override : KM_BINDIR "/kubemount");
        ns = open(host_ns ? host_ns : "/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC);
        if (!binary)
                return error_set(err, -ENOMEM, "start the agent");
        if (ns < 0)
                return error_set(err, -errno, "start the agent: %s", host_ns ? host_ns : "/proc/1/ns/mnt");
        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "start the agent");
        rd = fds[0], wr = fds[1];
        snprintf(idle, sizeof(idle), "%d", AGENT_IDLE_EXIT_S);
        /* Everything the children need is ready before the fork: a caller may have threads. */
        env = agent_environment(wr);
        if (!env)
                return error_set(err, -ENOMEM, "start the agent");
        pid = fork();
        if (pid == 0) {
                int bin, r, null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (setns(ns, CLONE_NEWNS) < 0)
                        report_and_exit(wr, STEP_SETNS, errno);
                bin = agent_binary(binary, wr);
                if (setsid() < 0 || null < 0)
                        report_and_exit(wr, STEP_EXEC, errno);
                if (fork() != 0)
                        _exit(0); /* the agent is nobody's child but init's */
                agent_process_reset();
                dup2(null, 0), dup2(null, 1), dup2(null, 2);
                /* Nothing of the caller's but the ready pipe: fds it leaked without O_CLOEXEC included. */
                (void)sys_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
                (void)fcntl(wr, F_SETFD, 0);
                r = sys_execveat(bin, "", argv, env, AT_EMPTY_PATH);
                (void)fcntl(wr, F_SETFD, FD_CLOEXEC);
                report_and_exit(wr, STEP_EXEC, -r);
        }
        if (pid < 0) {
                int r = -errno;
                km_strv_free(env);
                return error_set(err, r, "start the agent: fork");
        }
        km_strv_free(env);
        closep(&wr);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        struct pollfd p = { .fd = rd, .events = POLLIN };
        /* "1" once it listens; a report if we could not start it; EOF if it died or lost the race to
         * another agent (which then serves us). */
        if (poll(&p, 1, AGENT_START_TIMEOUT_MS) == 1 && (n = read(rd, &rep, sizeof(rep))) == (ssize_t)sizeof(rep) &&
            rep.marker == 'E')
                return spawn_error(&rep, binary, err);
        return 0;
}
