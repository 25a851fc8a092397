/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `exec -t`: the command gets a pseudo-terminal of the container's own devpts
 * (so ttyname() works inside), made by the agent; its master comes back to
 * the caller, and a child process relays it to the caller's terminal, which
 * is raw meanwhile so keys reach the command.  As `kubectl exec -it` gives.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#include "util.h"

struct tty_relay {
        int in; /* the caller's terminal, restored at the end */
        pid_t pid;
        struct termios saved;
        bool restore;
};

/* Starts relaying master <-> (in, out); takes master. */
int tty_relay_start(struct tty_relay *t, int master, int in, int out);
void tty_relay_stop(struct tty_relay *t);

/*
 * run and exec without -t: a container never gets a terminal of the host
 * (it could type into it with TIOCSTI: THREATS 28).  A terminal among the
 * caller's fds 0-2 is replaced by a pipe that a child process relays; stdout
 * and stderr on one terminal share one pipe, so their order is kept.
 */
struct stdio_relay {
        int fds[3];  /* for the container: the caller's fd, or our pipe's end */
        int ends[3]; /* those pipe ends (-EBADF where none): ours to close */
        int stop;    /* closed to tell the relay to copy what is left and end */
        int done;    /* hangs up when the relay has ended */
        pid_t pid;
};
#define STDIO_RELAY_INIT                                                                                               \
        {                                                                                                              \
                .fds = { -EBADF, -EBADF, -EBADF }, .ends = { -EBADF, -EBADF, -EBADF }, .stop = -EBADF, .done = -EBADF, \
                .pid = -1                                                                                              \
        }

/* Whether fd is a terminal (TCGETS works on it); asks no filesystem (a hung FUSE file cannot block it). */
bool fd_is_terminal(int fd);
/* Sets r->fds: fds itself when none is a terminal (then nothing runs), else pipes and a relay. */
int stdio_relay_start(struct stdio_relay *r, const int fds[3]);
/* After the command ended: what it wrote reaches the caller (for at most a few seconds), then the relay ends. */
void stdio_relay_stop(struct stdio_relay *r);

/*
 * A new terminal in the devpts the container's /dev/pts is (from its root,
 * /proc/PID/root, refusing symlinks and anything but a devpts); pidfd: its
 * PID 1's, or -1.  May block in a hung file system of the container: the
 * agent calls it in a worker.
 */
int tty_open_in(int proc_fd, pid_t pid, int pidfd, int *ret_master, int *ret_slave, struct km_error *err);
/* A new terminal of the caller's /dev/ptmx. */
int tty_open_host(int *ret_master, int *ret_slave);
