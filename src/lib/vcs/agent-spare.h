/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Spare containers.  Runs of one kind (a routed mount's of one image, a
 * `run --image` of one image) differ only in their command, their target and their
 * client's stdio; everything else of a start (the state dir, the id range,
 * the user namespace, the root filesystem and its writable layer, the
 * groups, PID 1's mounts and filters) is the same.  So once a kind has run,
 * the agent starts one container of it ahead, held before its command,
 * while nothing else waits; the next run of that kind claims it: its
 * command, env and stdio go to its PID 1 (launch_claim), its state dir is
 * renamed, and the run is answered as started.  A claimed spare is the
 * container the run would have made, with the same checks (its targets,
 * its image's tree) made for it first; only its v2 group keeps the spare's
 * name ("cgroup" in its state).  At most AGENT_SPARE_KINDS kinds (the last
 * used), one spare each, kept AGENT_SPARE_KEEP_MS unclaimed; none while runs
 * wait for their start (a burst claims them all anyway), none for a run
 * through crun or runc, none of a detached run that logs.
 *
 * A spare set up its root's mounts when it was made, so it is claimed only
 * while what its start took still holds: an image's tree in the store
 * under the same kept check of the agent's watch (tree-watch.h); a --rootfs
 * directory (the caller's), and every bind source, while their paths lead
 * to what the spare was made from and nothing moved in the root's
 * directories its mounts pass (start-pins.h: THREATS 19, /proc made a
 * symlink since, is refused as a start of its own refuses it).  An overlay
 * over a tree not in the store gets none.
 *
 * ps does not list spares; an agent that stops or restarts drops them (their
 * PID 1s end with its socket; their state goes with it, or with the next
 * agent's adoption).  KUBEMOUNT_SPARES=0 turns them off.
 */
#pragma once

#include "jansson-dl.h"

#include "agent-containers.h"

#define AGENT_SPARE_KEEP_MS 60000
/*
 * A spare is started once the loop has had nothing to do for this long and no client waits on a container
 * (agent-spare.c): the client just answered exits first (on 2 CPUs a start beside it made its exit 0.6 ms slower).
 */
#define AGENT_SPARE_IDLE_MS 2

void agent_spares_init(struct agent *a);
/*
 * The inotify instance for the pins of k's spares (start-pins.h), made once
 * and kept: closing one waits for an RCU grace period.  -errno if none.
 */
int agent_spare_inotify(struct agent *a, struct spare_kind *k);
/*
 * The spare of req's kind, ready or starting, or NULL (the kind is
 * remembered: agent_spare_refill starts one later).  tree_kept: the kept
 * check of req's image tree (check_rootfs); a spare made under another goes.
 */
struct ctr *agent_spare_take(struct agent *a, json_t *req, uint64_t tree_kept);
/* Whether a spare is due: then the loop waits at most AGENT_SPARE_IDLE_MS, and starts one when idle. */
bool agent_spare_wanted(struct agent *a);
/* The kind whose spare to start now (agent_run_spare_start), or NULL; after a failure, agent_spare_failed. */
struct spare_kind *agent_spare_due(struct agent *a);
void agent_spare_failed(struct spare_kind *k);
/* A deep copy of a run's request to write into (its id range), sharing its seccomp profile, which nothing writes. */
json_t *agent_request_copy(json_t *req);
/* Whether every container of the table is a spare (the agent may end when idle). */
bool agent_only_spares(struct agent *a);
void agent_spares_done(struct agent *a);
