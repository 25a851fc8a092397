/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's operations on a client's request: run, exec, ps, stop, rm, logs, gc (agent-gc.h). */
#pragma once

#include "jansson-dl.h"

#include "agent-containers.h"

/* Handles one request: > 0 when the client stays (answered later), else it is closed. */
int agent_dispatch(struct agent *a, int conn, json_t *req, const int *fds, size_t n_fds);
