/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's state, shared by its loop (agent.c) and its operations (agent-ops.c). */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <sys/types.h>

#include "agent.h"
#include "agent-protocol.h"
#include "seccomp-filter.h"
#include "spec.h"

enum watch_kind { WATCH_LISTEN, WATCH_CONN, WATCH_PID1, WATCH_TIMER, WATCH_JOB, WATCH_WORKER, WATCH_WORKER_TIMER };
struct watch {
        enum watch_kind kind;
};

struct ctr {
        struct watch w; /* first: the PID 1's pidfd */
        struct watch timer_w;
        struct ctr *next;
        char name[130];
        char cgroup[140];
        pid_t pid;
        int pidfd;     /* -EBADF once exited */
        bool ours;     /* our child: its exit status is known */
        bool detached; /* else the run's client waits, and its hang-up kills it */
        bool stopping, timed_out, remove_on_exit;
        bool forgotten; /* on agent.forgotten: freed after the loop's batch of events */
        int timer;
        int dir_fd;
        char *runtime; /* crun, runc or another OCI runtime (absolute path); NULL: embedded */
        struct container_spec *spec;
        struct seccomp_program seccomp;
        bool has_seccomp;
        json_t *state;
        int waiters[8]; /* clients answered {"exit": N} when it ends */
};

struct job {
        struct watch w; /* first */
        struct job *next;
        pid_t pid;
        int pidfd, conn;
};

/*
 * Path work that may block -- a stopped FUSE daemon, a FIFO or a symlink in
 * a container -- never runs in the loop (THREATS 30): a forked worker does
 * it, holding only its socket and the fds it is given, and answers with one
 * message on the socket (proto_send).  The loop takes the answer when the
 * worker exits, or kills it at its timeout, and then calls done with the
 * answer (NULL: none came) and its fds (done may take them, leaving -EBADF).
 * done returns > 0 if conn stays open (answered later), else the loop closes
 * it.  A client that hangs up meanwhile gets no done: its worker is killed.
 */
struct agent;
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
        json_t *ctx; /* what done needs of the request */
        agent_done_fn done;
};

struct conn {
        struct watch w; /* first */
        struct conn *next;
        int fd;
        bool closed; /* on agent.closed_conns: freed after the loop's batch of events */
};

struct agent {
        const char *state_dir;
        int state_fd, lock_fd, listen_fd, epoll;
        int host_ns, template_ns, cgroup_root, devnull, proc_fd;
        struct ctr *ctrs;
        struct job *jobs;
        struct worker *workers;
        /* Gone, but a later event of the same epoll batch may still point at them. */
        struct ctr *forgotten;
        struct conn *closed_conns;
        struct conn *conns;
        json_t *seccomp_json; /* the profile of seccomp_cached */
        struct seccomp_program seccomp_cached;
};

void agent_done(struct agent *a);
struct ctr *agent_find(struct agent *a, const char *name);
struct ctr *agent_ctr_new(struct agent *a, const char *name, struct container_spec *spec, int dir_fd,
                          struct km_error *err);
void agent_ctr_forget(struct agent *a, struct ctr *c);
int agent_ctr_watch(struct agent *a, struct ctr *c, pid_t pid, bool ours);
int agent_ctr_timer(struct agent *a, struct ctr *c, int ms);
void agent_ctr_signal(struct ctr *c, int sig);
/* The kill that ends it for sure: SIGKILL to PID 1, or through its runtime. */
void agent_ctr_kill(struct agent *a, struct ctr *c);
/* STATE_DIR/runtime: the --root of crun and runc (malloc'ed). */
char *agent_runtime_root(struct agent *a);
int agent_add_waiter(struct ctr *c, int conn);
int agent_save_state(struct agent *a, struct ctr *c);
/* A container's state with the secrets of its "command" and "env" masked, in place (secrets.h). */
int agent_state_mask(json_t *state);
int agent_job_add(struct agent *a, pid_t pid, int conn);
/* fn(a, ctx, sock) in a worker that holds only sock and keep[]; takes ctx.  Its answer: done, within timeout_ms. */
int agent_worker_start(struct agent *a, int conn, json_t *ctx, int timeout_ms, agent_work_fn fn, agent_done_fn done,
                       const int *keep, size_t n_keep);

/* Handles one request: > 0 when the client stays (answered later), else it is closed. */
int agent_dispatch(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds);
/* At start: adopt live containers from the state dir, mark the dead ones exited. */
void agent_reconcile(struct agent *a);
/* gc: stale states, unreadable state files, dead FUSE mounts below the kubelet dir. */
int agent_gc(struct agent *a, int conn, json_t *req, struct km_error *err);
