/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's children that answer a client later: exec jobs and workers.
 * Below the operations that start them (agent-ops.c, agent-gc.c) and the
 * loop that takes their events (agent.c); above the table (agent-containers.h).
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <sys/types.h>

#include "agent-containers.h"

/* A command run in a container by exec: its client is answered {"exit": N} when it ends. */
struct job {
        struct watch w; /* first */
        struct job *next;
        pid_t pid;
        int pidfd, conn;
        char ctr[sizeof(((struct ctr *)0)->name)]; /* the container it runs in */
};

int agent_job_add(struct agent *a, pid_t pid, int conn, const char *ctr);

/*
 * Path work that may block -- a stopped FUSE daemon, a FIFO or a symlink in
 * a container -- never runs in the loop (THREATS 30): a forked worker does
 * it, holding only its socket and the fds it is given, and answers with one
 * message on the socket (proto_send).  The loop takes the answer when the
 * worker exits, or kills it at its timeout, and then calls done with the
 * answer (NULL: none came) and its fds (done may take them, leaving -EBADF).
 * done returns > 0 if conn stays open (answered later), else the loop closes
 * it.  A client that hangs up meanwhile gets no done: its worker is killed.
 * A worker started with conn < 0 serves no client: its done is always called.
 */
typedef int (*agent_work_fn)(struct agent *a, json_t *ctx, int sock);
typedef int (*agent_done_fn)(struct agent *a, int conn, json_t *ctx, json_t *answer, int *fds, size_t n_fds);

struct worker {
        struct watch w; /* first: the worker's pidfd */
        struct watch timer_w;
        struct worker *next;
        pid_t pid;
        int pidfd, sock, timer;
        int conn; /* the client done answers; -EBADF once it is gone */
        bool answered, reaped;
        bool clientless; /* started with no client (conn < 0): done is called with conn -EBADF */
        json_t *ctx;     /* what done needs of the request */
        agent_done_fn done;
};

/* fn(a, ctx, sock) in a worker that holds only sock and keep[]; takes ctx.  Its answer: done, within timeout_ms. */
int agent_worker_start(struct agent *a, int conn, json_t *ctx, int timeout_ms, agent_work_fn fn, agent_done_fn done,
                       const int *keep, size_t n_keep);
/* Off the list, its fds closed (a live worker is killed first by the caller). */
void agent_worker_free(struct agent *a, struct worker *w);
