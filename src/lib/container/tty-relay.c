/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pseudo-terminals for exec -t, and pipes instead of the caller's terminal (see tty-relay.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "syscalls.h"
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
                                p[0].fd = -1;   /* our input ended: keep showing output */
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
                int keep[] = { master, in, out };

                /* Not the agent's socket: a caller killed must look gone to the agent. */
                close_all_but(keep, ELEMENTSOF(keep));
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

/* The terminal of a new master, unlocked. */
static int tty_open_peer(int master, int *ret_slave) {
        int unlock = 0, slave;

        if (ioctl(master, TIOCSPTLCK, &unlock) < 0 ||
            (slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
                return -errno;
        *ret_slave = slave;
        return 0;
}

/*
 * The container's /dev/pts is the container's: PID 1 or anything it runs may
 * have replaced it with a symlink (to a FIFO of the host), a directory of its
 * own, or a FUSE mount.  From its root (/proc/PID/root, which the kernel
 * resolves without looking into the container), dev/pts is opened without
 * following any symlink and never above that root; it must be a devpts, and
 * ptmx is opened in that same mount, where nothing but ptmx and terminals can
 * be.  Mounts may be crossed on the way (/dev and /dev/pts are mounts), not
 * at the last step.  Run by a worker of the agent: a lookup in a hung FUSE
 * mount there blocks the worker, never the agent.
 */
int tty_open_in(int proc_fd, pid_t pid, int pidfd, int *ret_master, int *ret_slave, struct km_error *err) {
        _cleanup_close_ int root = -EBADF, pts = -EBADF;
        struct pollfd alive = { .fd = pidfd, .events = POLLIN };
        struct statfs sfs;
        char path[32];
        int master, r;

        snprintf(path, sizeof(path), "%d/root", (int)pid);
        root = openat(proc_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return error_set(err, -errno, "/proc/%s", path);
        /* PID 1 still lives: the pid was not given to another process meanwhile. */
        if (pidfd >= 0 && poll(&alive, 1, 0) != 0)
                return error_set_plain(err, -ESRCH, "its PID 1 has exited");
        pts = sys_openat2(root, "dev/pts", O_PATH | O_DIRECTORY,
                          RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (pts < 0) {
                r = pts;
                if (r == -ELOOP || r == -EXDEV)
                        return error_set_plain(err, r, "its /dev/pts is (or passes through) a symlink: refused");
                return error_set(err, r, "its /dev/pts");
        }
        if (fstatfs(pts, &sfs) < 0)
                return error_set(err, -errno, "its /dev/pts");
        if (sfs.f_type != DEVPTS_SUPER_MAGIC)
                return error_set_plain(err, -ENOTTY, "its /dev/pts is not a devpts file system (type %#lx): refused",
                                       (unsigned long)sfs.f_type);
        /* NO_XDEV only here: /dev and /dev/pts are mounts of their own. */
        master = sys_openat2(pts, "ptmx", O_RDWR | O_NOCTTY,
                             RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
        if (master < 0)
                return error_set(err, master, "its /dev/pts/ptmx");
        r = tty_open_peer(master, ret_slave);
        if (r < 0) {
                close(master);
                return error_set(err, r, "its /dev/pts/ptmx");
        }
        *ret_master = master;
        return 0;
}

int tty_open_host(int *ret_master, int *ret_slave) {
        int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC), r;

        if (master < 0)
                return -errno;
        r = tty_open_peer(master, ret_slave);
        if (r < 0) {
                close(master);
                return r;
        }
        *ret_master = master;
        return 0;
}

/* ---- run and exec without -t: pipes instead of the caller's terminal ---- */

#define STDIO_RELAY_DRAIN_MS 5000

bool fd_is_terminal(int fd) {
        struct statx stx;
        struct termios t;

        /* Only a character device can be one: no ioctl reaches a file's filesystem (FUSE). */
        if (fd < 0 || statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0 || !S_ISCHR(stx.stx_mode))
                return false;
        return ioctl(fd, TCGETS, &t) == 0;
}

static bool same_device(int a, int b) {
        struct statx x, y;

        return statx(a, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &x) == 0 &&
               statx(b, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &y) == 0 &&
               x.stx_rdev_major == y.stx_rdev_major && x.stx_rdev_minor == y.stx_rdev_minor;
}

/* One output pipe's available bytes to the caller; false at its end. */
static bool copy_out(int src, int dst, char *buf, size_t size) {
        ssize_t n = read(src, buf, size);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
        if (n <= 0)
                return false;
        (void)write_all(dst, buf, (size_t)n); /* a caller's terminal gone: the output is dropped */
        return true;
}

/*
 * The relay: src[0] (the caller's terminal) -> dst[0] (the command's stdin
 * pipe, non-blocking), src[1], src[2] (its output pipes, non-blocking) ->
 * dst[1], dst[2].  Until stop is closed; then what the pipes hold is copied.
 */
static _Noreturn void stdio_relay_main(int src[3], int dst[3], int stop, int done) {
        static char in_buf[16384], out_buf[65536];
        size_t in_len = 0, in_off = 0;
        int keep[] = { src[0], src[1], src[2], dst[0], dst[1], dst[2], stop, done };
        struct sigaction dfl = { .sa_handler = SIG_DFL }, ign = { .sa_handler = SIG_IGN };

        close_all_but(keep, ELEMENTSOF(keep));
        /* The caller's handlers are not ours; ^C ends us with it.  A command gone: EPIPE, not death. */
        for (int sig = 1; sig < NSIG; sig++) {
                struct sigaction old;
                if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN && old.sa_handler != SIG_DFL)
                        (void)sigaction(sig, &dfl, NULL);
        }
        (void)sigaction(SIGPIPE, &ign, NULL);
        for (int i = 0; i < 3; i++) {
                int fd = i == 0 ? dst[0] : src[i];
                if (fd >= 0)
                        (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        }

        for (;;) {
                struct pollfd p[4] = { { .fd = stop, .events = POLLIN } };

                if (src[0] >= 0)
                        p[1] = in_len == 0 ? (struct pollfd){ .fd = src[0], .events = POLLIN }
                                           : (struct pollfd){ .fd = dst[0], .events = POLLOUT };
                else
                        p[1].fd = -1;
                for (int i = 1; i < 3; i++)
                        p[i + 1] = (struct pollfd){ .fd = src[i], .events = POLLIN };
                if (poll(p, ELEMENTSOF(p), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[0].revents)
                        break;
                if (p[1].revents && in_len == 0) {
                        ssize_t n = read(src[0], in_buf, sizeof(in_buf));
                        if (n > 0)
                                in_len = (size_t)n, in_off = 0;
                        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
                                src[0] = -1, closep(&dst[0]); /* EOF (^D) on our stdin: EOF on the command's */
                } else if (p[1].revents) {
                        ssize_t n = write(dst[0], in_buf + in_off, in_len - in_off);
                        if (n > 0 && (in_off += (size_t)n) == in_len)
                                in_len = 0;
                        else if (n < 0 && errno != EAGAIN && errno != EINTR)
                                src[0] = -1, closep(&dst[0]); /* the command closed its stdin */
                }
                for (int i = 1; i < 3; i++)
                        if (p[i + 1].revents && !copy_out(src[i], dst[i], out_buf, sizeof(out_buf)))
                                src[i] = -1;
        }
        /* The command has ended: all it wrote is in the pipes. */
        for (int i = 1; i < 3; i++)
                while (src[i] >= 0) {
                        ssize_t n = read(src[i], out_buf, sizeof(out_buf));
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0 || write_all(dst[i], out_buf, (size_t)n) < 0)
                                break;
                }
        _exit(0);
}

int stdio_relay_start(struct stdio_relay *r, const int fds[3]) {
        int src[3] = { -EBADF, -EBADF, -EBADF }, dst[3] = { -EBADF, -EBADF, -EBADF };
        int stop[2] = { -EBADF, -EBADF }, done[2] = { -EBADF, -EBADF }, p[2];
        bool tty[3];
        int r_ = 0;

        *r = (struct stdio_relay)STDIO_RELAY_INIT;
        for (int i = 0; i < 3; i++) {
                r->fds[i] = fds[i];
                tty[i] = fd_is_terminal(fds[i]);
        }
        if (!tty[0] && !tty[1] && !tty[2])
                return 0;
        for (int i = 0; i < 3 && r_ == 0; i++) {
                if (!tty[i])
                        continue;
                if (i == 2 && tty[1] && same_device(fds[1], fds[2])) {
                        r->fds[2] = r->fds[1]; /* one pipe: stdout and stderr keep their order */
                        continue;
                }
                if (pipe2(p, O_CLOEXEC) < 0) {
                        r_ = -errno;
                        break;
                }
                /* stdin: the command reads p[0]; stdout, stderr: it writes p[1]. */
                r->fds[i] = r->ends[i] = i == 0 ? p[0] : p[1];
                src[i] = i == 0 ? fds[0] : p[0];
                dst[i] = i == 0 ? p[1] : fds[i];
        }
        if (r_ == 0 && (pipe2(stop, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0))
                r_ = -errno;
        if (r_ == 0) {
                r->pid = fork();
                if (r->pid == 0) {
                        close(stop[1]);
                        close(done[0]);
                        for (int i = 0; i < 3; i++)
                                if (r->ends[i] >= 0)
                                        close(r->ends[i]);
                        stdio_relay_main(src, dst, stop[0], done[1]);
                }
                if (r->pid < 0)
                        r_ = -errno;
        }
        /* Ours now: the command's ends, stop's write end, done's read end. */
        closep(&dst[0]);
        closep(&src[1]);
        closep(&src[2]);
        closep(&stop[0]);
        closep(&done[1]);
        r->stop = stop[1];
        r->done = done[0];
        if (r_ < 0) {
                stdio_relay_stop(r);
                memcpy(r->fds, fds, sizeof(r->fds));
        }
        return r_;
}

void stdio_relay_stop(struct stdio_relay *r) {
        /* Our copies of the command's ends first: its pipes may then end by themselves. */
        for (int i = 0; i < 3; i++)
                closep(&r->ends[i]);
        closep(&r->stop);
        if (r->pid > 0) {
                struct pollfd p = { .fd = r->done, .events = POLLIN };
                int n;

                while ((n = poll(&p, 1, STDIO_RELAY_DRAIN_MS)) < 0 && errno == EINTR)
                        ;
                if (n <= 0)
                        (void)kill(r->pid, SIGKILL); /* an output stopped (^S) for that long */
                while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        r->pid = -1;
        closep(&r->done);
}
