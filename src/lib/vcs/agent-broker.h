/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's side of the mount broker (broker.h): the user namespace and
 * the filter an unprivileged container is launched with, its listeners in
 * the loop, and one worker per trapped call (a mount may block for as long
 * as its server does, the loop never).  Above the workers and the table.
 */
#pragma once

#include "agent-workers.h"

/*
 * For launching c (spec->broker or a user namespace): the user namespace of
 * its id map (kept by the agent, made on first use) and the broker's filter
 * (NULL unless spec->broker).  kubelet_dir: its policy's.
 */
/*
 * The broker's refusals and failures logged per container: BROKER_LOG_BURST a
 * window, then only a count of those left out (a flood of refused calls must
 * not fill the disk nor the journal); mounts and unmounts are always logged.
 */
#define BROKER_LOG_WINDOW_MS 1000
#define BROKER_LOG_BURST 20

/* The count of lines the window left out, if any, logged now (at its end, or the container's). */
void agent_broker_log_flush(struct ctr *c);

int agent_broker_prepare(struct agent *a, struct ctr *c, const char *kubelet_dir, int *ret_userns,
                         const struct seccomp_program **ret_filter, struct km_error *err);

/* Watches a listener of c's (taken, even on failure). */
int agent_broker_listen(struct agent *a, struct ctr *c, int fd);

/* A listener is readable (a call to serve) or hung up (its processes are gone). */
void agent_broker_event(struct agent *a, struct broker_listener *l, uint32_t events);

/*
 * The container's kept worker, forked once (a routed mount's after it
 * started, any other's at its first call; again after one ended): an idle
 * one serves the next call without a fork, a busy one
 * (a mount waiting on its server) leaves the next to a worker of its own.
 * It is a worker in all else: it holds only its socket and the listener's
 * fd of the call, is killed at the call's timeout (ETIMEDOUT) and with the
 * agent, and ends with the container (agent_ctr_server_end).
 */
void agent_broker_server_start(struct agent *a, struct ctr *c);
/* Its answer (or hang-up), or the timeout of its call (timer). */
void agent_broker_server_event(struct agent *a, struct ctr *c, bool timer);

/* An adopted container's listener (from its PID 1, LAUNCH_BROKER_FD) and what the broker mounted for it. */
void agent_broker_adopt(struct agent *a, struct ctr *c);

/* The agent's own: its user namespace and filter. */
void agent_broker_done(struct agent *a);
