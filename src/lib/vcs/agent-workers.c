/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's children that answer a client later (see agent-workers.h): exec jobs and workers. */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

#include "agent-workers.h"

/* ---- exec jobs ---------------------------------------------------------------- */

int agent_job_add(struct agent *a, pid_t pid, int conn, const char *ctr) {
        struct job *j = calloc(1, sizeof(*j));
        int r;

        if (!j)
                return -ENOMEM;
        j->w.kind = WATCH_JOB;
        j->pid = pid;
        j->conn = conn;
        snprintf(j->ctr, sizeof(j->ctr), "%s", ctr);
        j->pidfd = agent_watch_pid(a, pid, &j->w);
        if (j->pidfd < 0) {
                r = j->pidfd;
                free(j);
                return r;
        }
        j->next = a->jobs;
        a->jobs = j;
        return 0;
}

/* ---- workers ----------------------------------------------------------------- */

void agent_worker_free(struct agent *a, struct worker *w) {
        for (struct worker **p = &a->workers; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        break;
                }
        agent_unwatch_close(a, &w->pidfd);
        agent_unwatch_close(a, &w->timer);
        closep(&w->sock);
        json_decref(w->ctx);
        free(w);
}

static _Noreturn void worker_main(struct agent *a, json_t *ctx, agent_work_fn fn, int sock, const int *keep,
                                  size_t n_keep) {
        int *all = calloc(n_keep + 1, sizeof(int));

        /* Not the agent's socket, lock or clients: an agent that dies takes its workers along. */
        if (!all || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(1);
        memcpy(all, keep, n_keep * sizeof(int));
        all[n_keep] = sock;
        close_all_but(all, n_keep + 1);
        _exit(fn(a, ctx, sock) < 0 ? 1 : 0);
}

int agent_worker_start(struct agent *a, int conn, json_t *ctx, int timeout_ms, agent_work_fn fn, agent_done_fn done,
                       const int *keep, size_t n_keep) {
        struct worker *w = calloc(1, sizeof(*w));
        int sv[2], r;

        if (!w) {
                json_decref(ctx);
                return -ENOMEM;
        }
        *w = (struct worker){ .w.kind = WATCH_WORKER,
                              .timer_w.kind = WATCH_WORKER_TIMER,
                              .pid = -1,
                              .pidfd = -EBADF,
                              .sock = -EBADF,
                              .timer = -EBADF,
                              .conn = conn,
                              .clientless = conn < 0,
                              .ctx = ctx,
                              .done = done };
        w->next = a->workers;
        a->workers = w;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                r = -errno;
                agent_worker_free(a, w);
                return r;
        }
        w->pid = fork();
        if (w->pid == 0) {
                close(sv[0]);
                worker_main(a, ctx, fn, sv[1], keep, n_keep);
        }
        close(sv[1]);
        w->sock = sv[0];
        struct itimerspec t = { .it_value = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L } };
        r = w->pid < 0 || fcntl(w->sock, F_SETFL, O_NONBLOCK) < 0 ? -errno
                                                                  : (w->pidfd = agent_watch_pid(a, w->pid, &w->w));
        if (r >= 0 && ((w->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
                       timerfd_settime(w->timer, 0, &t, NULL) < 0))
                r = -errno;
        if (r >= 0)
                r = agent_watch(a, w->timer, &w->timer_w);
        if (r < 0) {
                if (w->pid > 0) {
                        (void)kill(w->pid, SIGKILL);
                        (void)waitpid(w->pid, NULL, 0);
                }
                w->conn = -EBADF;
                agent_worker_free(a, w);
                return r;
        }
        return 0;
}
