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
