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

struct tty_relay {
        int in; /* the caller's terminal, restored at the end */
        pid_t pid;
        struct termios saved;
        bool restore;
};

/* Starts relaying master <-> (in, out); takes master. */
int tty_relay_start(struct tty_relay *t, int master, int in, int out);
void tty_relay_stop(struct tty_relay *t);

/* In the agent: a new terminal in the devpts the container's /dev/pts is (through /proc/PID/root). */
int tty_open_in(int proc_fd, pid_t pid, int *ret_master, int *ret_slave);
/* A new terminal of the caller's /dev/ptmx. */
int tty_open_host(int *ret_master, int *ret_slave);
