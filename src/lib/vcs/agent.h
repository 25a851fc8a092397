/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent: a small long-lived process in the host's mount, pid and cgroup
 * namespaces that makes every VCS container.  A containerized kubelet cannot
 * make a process outside its own pid namespace and cgroup, so it asks the
 * agent (STATE_DIR/agent.sock) and its daemons outlive it.  The agent holds
 * the template mount namespace, places each container in cgroups of its own,
 * reaps PID 1s, enforces timeouts, and keeps STATE_DIR (written by it alone).
 */
#pragma once

#include "util.h"

struct agent_options {
        const char *state_dir;
        int idle_exit_s; /* > 0: exit after this long without containers or clients */
        int ready_fd;    /* >= 0: "1" is written there once the socket listens */
};

int agent_run(const struct agent_options *o, struct km_error *err);
