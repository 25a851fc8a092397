/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1 of a container (see pid1.h). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fdpass.h"
#include "pid1.h"
#include "util.h"

struct log {
        int in, dir, out;
        size_t size;
};

static int log_open(struct log *l) {
        l->out = openat(l->dir, "log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        l->size = 0;
        return l->out;
}

/* Copies what is there; false at end of file.  Past the limit, log becomes log.1. */
static bool log_copy(struct log *l) {
        char buf[16384];
        ssize_t n = read(l->in, buf, sizeof(buf));

        if (n < 0)
                return errno == EINTR || errno == EAGAIN;
        if (n == 0)
                return false;
        if (l->out >= 0 && l->size + (size_t)n > INIT_LOG_MAX) {
                close(l->out);
                (void)renameat(l->dir, "log", l->dir, "log.1");
                (void)log_open(l);
        }
        if (l->out >= 0 && write(l->out, buf, n) == n)
                l->size += n;
        return true;
}

static char *title_start, *env_start;
static size_t title_size, env_size;

void init_title_prepare(void) {
        char buf[2048], *p;
        unsigned long start, end, estart, eend;
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return;
        buf[n] = '\0';
        p = strrchr(buf, ')');                        /* comm may hold spaces: fields count from here (field 3 on) */
        for (int field = 2; p && field < 48; field++) /* then arg_start, arg_end, env_start, env_end */
                p = strchr(p + 1, ' ');
        if (p && sscanf(p + 1, "%lu %lu %lu %lu", &start, &end, &estart, &eend) == 4 && end > start) {
                title_start = (char *)start;
                title_size = end - start;
                if (eend > estart) {
                        env_start = (char *)estart;
                        env_size = eend - estart;
                }
        }
}

void init_scrub_environ(void) {
        if (env_start)
                memset(env_start, 0, env_size);
}

void init_title(const char *title) {
        (void)prctl(PR_SET_NAME, title);
        if (!title_start)
                return;
        memset(title_start, 0, title_size);
        memcpy(title_start, title, strnlen(title, title_size - 1));
}

static bool ends_pid1(int sig) {
        return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

/* Until fd is readable, every signal blocked: 0 then; 125 on an error; 128 + a stop signal that came first. */
static int wait_readable(int fd) {
        sigset_t stops;
        struct signalfd_siginfo si;
        int sfd, r;

        sigemptyset(&stops);
        for (int sig = 1; sig < _NSIG; sig++)
                if (ends_pid1(sig))
                        sigaddset(&stops, sig);
        sfd = signalfd(-1, &stops, SFD_CLOEXEC);
        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };

                if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = 125;
                } else if (sfd >= 0 && (p[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si))
                        r = 128 + (int)si.ssi_signo;
                else if (p[0].revents)
                        r = 0;
                else
                        continue;
                break;
        }
        if (sfd >= 0)
                close(sfd);
        return r;
}

int init_wait_go(int fd) {
        char c;
        int r = wait_readable(fd);

        return r != 0 ? r : read(fd, &c, 1) == 1 ? 0 : 125;
}

/* n NUL-terminated strings from *p (before end), as a NULL-terminated vector into it; NULL if they do not fit. */
static char **claim_strings(char **p, const char *end, uint32_t n) {
        char **v = n < INIT_CLAIM_MAX / 2 ? calloc(n + 1, sizeof(char *)) : NULL;

        for (uint32_t i = 0; v && i < n; i++) {
                char *nul = memchr(*p, '\0', end - *p);

                if (!nul) {
                        free(v);
                        return NULL;
                }
                v[i] = *p;
                *p = nul + 1;
        }
        return v;
}

int init_wait_claim(int fd, struct init_claim *ret) {
        struct init_claim_header h;
        char *buf = malloc(INIT_CLAIM_MAX), *p, *end;
        size_t n_fds = 3;
        ssize_t n;
        int r = buf ? wait_readable(fd) : 125;

        if (r != 0)
                return r;
        n = fds_recv(fd, buf, INIT_CLAIM_MAX, ret->stdio, &n_fds);
        if (n < (ssize_t)sizeof(h) || n_fds != 3)
                return 125;
        memcpy(&h, buf, sizeof(h));
        p = buf + sizeof(h);
        end = buf + n;
        ret->stays = h.stays;
        ret->args = h.argc > 0 ? claim_strings(&p, end, h.argc) : NULL;
        ret->env = h.envc > 0 ? claim_strings(&p, end, h.envc) : NULL;
        return ret->args && (h.envc == 0 || ret->env) ? 0 : 125;
}

_Noreturn void init_run(const struct init_config *c) {
        struct log l = { .in = c->log_fd, .dir = c->log_dir_fd, .out = -EBADF };
        int exit_fd = c->exit_fd, end_signal = 0;
        bool stays = exit_fd >= 0 && c->stays;
        sigset_t all;
        int sfd, status = 0;
        bool child_done = false;

        sigfillset(&all);
        sfd = signalfd(-1, &all, SFD_CLOEXEC);
        if (sfd < 0)
                _exit(125);
        if (l.in >= 0 && log_open(&l) >= 0) {
                struct stat st;
                if (fstat(l.out, &st) == 0)
                        l.size = st.st_size;
        }

        while (!child_done || l.in >= 0 || (stays && !end_signal)) {
                struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = l.in, .events = POLLIN } };
                struct signalfd_siginfo si;
                bool draining = child_done && (!stays || end_signal);
                pid_t pid;
                int st;

                /* Once the command is gone, its output is drained without waiting for holders of the pipe. */
                if (poll(p, l.in >= 0 ? 2 : 1, draining ? 0 : -1) <= 0) {
                        if (draining)
                                break;
                        continue;
                }
                if (l.in >= 0 && (p[1].revents & (POLLIN | POLLHUP)) && !log_copy(&l)) {
                        close(l.in);
                        l.in = -EBADF;
                }
                if (!(p[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
                        continue;
                if (si.ssi_signo != SIGCHLD) {
                        if (!child_done)
                                (void)kill(c->child, si.ssi_signo);
                        /* Staying: the stop of what the command left (its own ends through the command). */
                        if (stays && ends_pid1(si.ssi_signo))
                                end_signal = si.ssi_signo;
                        continue;
                }
                while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
                        if (pid == c->child) {
                                status = st;
                                child_done = true;
                        }
                if (child_done && exit_fd >= 0) {
                        int code = exit_code_from_status(status, NULL);
                        (void)send(exit_fd, &code, sizeof(code), MSG_NOSIGNAL);
                        closep(&exit_fd);
                }
        }
        _exit(stays && end_signal ? 128 + end_signal : exit_code_from_status(status, NULL));
}
