/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's reconciliation: at start-up, and on `kubemount gc`. */
#pragma once

#include "jansson-dl.h"

#include "agent-containers.h"

/* At start: adopt live containers from the state dir, mark the dead ones exited. */
void agent_reconcile(struct agent *a);
/* gc: stale states, unreadable state files, dead FUSE mounts below the kubelet dir. */
int agent_gc(struct agent *a, int conn, json_t *req, struct km_error *err);
