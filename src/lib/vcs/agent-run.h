/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's run (agent-ops.c dispatches to it): a container's spec
 * checked against the live ones (one per target), its image's tree checked
 * (tree-watch.h), its state dir made, and its PID 1 started.  > 0 when the
 * client stays (answered later), else it is closed.
 */
#pragma once

#include "jansson-dl.h"

#include "agent-containers.h"

int agent_op_run(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds, struct km_error *err);

/*
 * A held run ("hold": {"args": [...], "env": [...], "stays": B} with
 * "detach": true and three fds): answered {"started"} once its PID 1 is set
 * up, with its command waiting; the same client then sends {"op": "go",
 * "name": N} (after checks of its own, while the name holds the container's
 * targets), and is answered {"exit": N} when the command ends: with stays,
 * while the container stays for what the command left running (a FUSE
 * daemon); else once the container is gone with it (removed), or, for a
 * spare's run with a name the agent made and no overlay root, at the
 * command's exit code, its record removed first.  The command's
 * stdio are the client's; config.json has the args the client shows (its
 * "config"), never the held ones.  A client that hangs up before its go
 * ends the container; after it, the command runs on and the container stays
 * (kubemount gc releases it once what it served is gone).
 */
int agent_op_go(struct agent *a, int conn, json_t *req, struct km_error *err);
/*
 * Its command's exit code is there (or PID 1 died): the client answered; its
 * connection (to close), or -EBADF.  *ret_code >= 0: the container's
 * waiters are to be answered with it now, its record gone already (a run
 * whose PID 1 ends with the command: answers_at_status() in agent-run.c).
 */
int agent_run_command_done(struct agent *a, struct ctr *c, int *ret_code);

/*
 * Runs start concurrently: a request returns once PID 1 is cloned, and the
 * client is answered when PID 1 reports it is set up (its report fd is in
 * the loop: agent_run_start_done).  At most agent.max_starts at once
 * (KUBEMOUNT_MAX_STARTS, default twice the CPUs): more wait, in order, with
 * their request and stdio kept (at most AGENT_DEFERRED_MAX; past that
 * EAGAIN), and ps, stop and the rest are answered meanwhile.
 */
#define AGENT_DEFERRED_MAX 4096

struct deferred_run {
        struct deferred_run *next;
        int conn;
        json_t *req;
        int fds[3];
        size_t n_fds;
};

unsigned agent_run_max_starts(void);
/* Keeps a run for later (> 0: the client stays), or -EAGAIN/-errno. */
int agent_run_defer(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds, struct km_error *err);
/* The next waiting run, if a start may begin now (the caller dispatches and frees it). */
struct deferred_run *agent_run_next_deferred(struct agent *a);
void agent_run_deferred_free(struct deferred_run *d);
/* The client hung up: its waiting run goes; a starting one is no longer answered (ended, if not detached). */
void agent_run_conn_gone(struct agent *a, int conn);
/*
 * PID 1's report is there (or it died): the client (*ret_conn, -EBADF when
 * it hung up) is answered.  > 0 when it stays (it waits for the exit), else
 * the caller closes it.
 */
int agent_run_start_done(struct agent *a, struct ctr *c, int *ret_conn);
/*
 * The config.json of each claimed spare's run (a->configs_due), written when
 * the loop is idle: dumped and written at the claim, it held up the command
 * its PID 1 had just been sent (0.3-0.7 ms of a 28 KB dump, traced), and a
 * short run is gone before.  Until then the file is the spare's, its held
 * command aside.
 */
void agent_run_configs_write(struct agent *a);

/* A spare of kind started (agent-spare.h): > 0 (its PID 1 reports later), or -errno. */
int agent_run_spare_start(struct agent *a, struct spare_kind *kind);
