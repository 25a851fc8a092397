/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PID 1 of a container: reaps every orphan, forwards signals to the command,
 * copies a detached command's output into a bounded log, and exits with the
 * command's status or 128 + its signal.  The namespace dies with it.  A held
 * command's (exit_fd >= 0) status is sent there too; one that stays stays
 * for what the command left running (a FUSE daemon) until a SIGTERM,
 * SIGINT, SIGHUP or SIGQUIT, then exits with 128 + that signal.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define INIT_LOG_MAX (1024 * 1024) /* log rotates to log.1 past this: at most twice that is kept */

struct init_config {
        pid_t child;    /* the command */
        int log_fd;     /* -EBADF, or the read end of the command's stdout/stderr pipe */
        int log_dir_fd; /* where "log" and "log.1" are written */
        int exit_fd;    /* -EBADF, or held: the command's exit code (an int) is sent there */
        bool stays;     /* with exit_fd: PID 1 stays after the command */
};

/*
 * A forked helper's name in ps and /proc/PID/cmdline: it would show the
 * agent's command line, and `pkill -f "kubemount agent"` would kill every
 * container.  init_title_prepare() finds where the command line lies (once,
 * with /proc); init_title() rewrites it in place and sets the comm name.
 */
void init_title_prepare(void);
void init_title(const char *title);
/*
 * Zeroes the environment strings the process started with (where
 * init_title_prepare() found them): in a forked helper they are the agent's,
 * and /proc/PID/environ shows them to a process with CAP_SYS_ADMIN (which a
 * VCS container has) whether or not we are dumpable (measured on 6.18).
 * getenv() finds nothing afterwards.
 */
void init_scrub_environ(void);

/* Call with every signal blocked; never returns. */
_Noreturn void init_run(const struct init_config *c);
/*
 * A held command's wait for its go (a byte on fd), every signal blocked:
 * 0 once it came; 125 when fd closed; 128 + the signal when a stop
 * (SIGTERM, SIGINT, SIGHUP, SIGQUIT) came first, which PID 1 obeys at once.
 */
int init_wait_go(int fd);

/*
 * A spare's claim (launch.h), on the same fd before its go: a header, then
 * argc and envc NUL-terminated strings (envc 0: the spec's environment),
 * and the command's stdin, stdout and stderr as three fds.
 */
#define INIT_CLAIM_MAX (64 * 1024)
struct init_claim_header {
        uint32_t argc, envc;
        bool stays;
};
struct init_claim {
        char **args, **env; /* into one buffer of INIT_CLAIM_MAX; env NULL: the spec's */
        bool stays;
        int stdio[3];
};
/* 0 once it came (*ret filled); 125 when fd closed or the claim is malformed; 128 + a stop signal that came first. */
int init_wait_claim(int fd, struct init_claim *ret);
