/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pseudo-terminals for exec -t (see tty-relay.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "tty-relay.h"
#include "util.h"

static void relay(int master, int in, int out) {
        struct pollfd p[2] = { { .fd = in, .events = POLLIN }, { .fd = master, .events = POLLIN } };
        char buf[4096];

        while (poll(p, 2, -1) >= 0) {
                for (int i = 0; i < 2; i++) {
                        ssize_t n;

                        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        n = read(p[i].fd, buf, sizeof(buf));
                        if (n <= 0) {
                                if (i == 1)
                                        return; /* the command's side is closed */
                                p[0].fd = -1;  /* our input ended: keep showing output */
                                continue;
                        }
                        if (write(i == 0 ? master : out, buf, n) != n)
                                return;
                }
        }
}

int tty_relay_start(struct tty_relay *t, int master, int in, int out) {
        struct winsize ws;
        struct termios raw;

        *t = (struct tty_relay){ .in = in, .pid = -1 };
        if (ioctl(in, TIOCGWINSZ, &ws) == 0)
                (void)ioctl(master, TIOCSWINSZ, &ws);
        if (tcgetattr(in, &t->saved) == 0) {
                raw = t->saved;
                cfmakeraw(&raw);
                t->restore = tcsetattr(in, TCSANOW, &raw) == 0;
        }
        t->pid = fork();
        if (t->pid == 0) {
                relay(master, in, out);
                _exit(0);
        }
        close(master);
        return t->pid < 0 ? -errno : 0;
}

void tty_relay_stop(struct tty_relay *t) {
        if (t->pid > 0) {
                /* The command is gone: let the relay copy its last output, briefly. */
                for (int i = 0; i < 50 && waitpid(t->pid, NULL, WNOHANG) == 0; i++)
                        usleep(2000);
                (void)kill(t->pid, SIGKILL);
                (void)waitpid(t->pid, NULL, 0);
                t->pid = -1;
        }
        if (t->restore)
                (void)tcsetattr(t->in, TCSANOW, &t->saved);
        t->restore = false;
}

static int tty_open_at(int dirfd, const char *ptmx, int *ret_master, int *ret_slave) {
        int unlock = 0, master, slave;

        master = openat(dirfd, ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return -errno;
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || (slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
                int r = -errno;
                close(master);
                return r;
        }
        *ret_master = master;
        *ret_slave = slave;
        return 0;
}

int tty_open_in(int proc_fd, pid_t pid, int *ret_master, int *ret_slave) {
        char path[64];

        snprintf(path, sizeof(path), "%d/root/dev/pts/ptmx", (int)pid);
        return tty_open_at(proc_fd, path, ret_master, ret_slave);
}

int tty_open_host(int *ret_master, int *ret_slave) {
        return tty_open_at(AT_FDCWD, "/dev/ptmx", ret_master, ret_slave);
}
