/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's reconciliation: at start-up, and on `kubemount gc`. */
#pragma once

#include "jansson-dl.h"

#include "agent-containers.h"

/* At start: adopt live containers from the state dir, mark the dead ones exited. */
void agent_reconcile(struct agent *a);
/*
 * Routed mounts' containers whose target is no longer mounted (the kubelet
 * unmounted it with its own umount) are killed and removed; each is an
 * action "released-orphan" in actions (may be NULL).  gc and the loop's
 * timer (every $KUBEMOUNT_GC_INTERVAL seconds, default 60) call it.  Also
 * removes the empty cgroups of host FUSE helpers whose daemons have ended.
 */
void agent_release_orphans(struct agent *a, json_t *actions);
/* gc: stale states, unreadable state files, dead FUSE mounts below the kubelet dir. */
int agent_gc(struct agent *a, int conn, json_t *req, struct km_error *err);
