/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "util.h"

/* How long an agent started on demand waits without containers or clients before it exits. */
#define AGENT_IDLE_EXIT_S 300

/*
 * Starts `kubemount agent --state-dir STATE_DIR` in the host mount namespace
 * (HOST_NS, else /proc/1/ns/mnt), detached from us, with the installed binary
 * and a fixed environment, umask and rlimits (agent-spawn.c says which), and
 * waits until it listens.  0 also when another agent won the race; < 0 with
 * err naming the binary or the step that failed.
 */
int agent_spawn(const char *state_dir, const char *host_ns, struct km_error *err);
