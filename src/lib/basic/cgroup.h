/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroups of kubemount's own, below $KUBEMOUNT_CGROUP_PARENT (default
 * "kubemount") in every hierarchy under /sys/fs/cgroup, v1 and v2: a process
 * there does not die with the cgroup of whoever asked for it (a kubelet
 * container).  Paths go through a held fd of /sys/fs/cgroup, so the agent can
 * use them from its small mount namespace.
 */
#pragma once

#include <sys/types.h>

#include "util.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/* An O_DIRECTORY fd of /sys/fs/cgroup. */
int cgroup_root_open(struct km_error *err);
/*
 * Moves pid into PARENT/NAME of every hierarchy (made if missing); stale empty
 * siblings with NAME's prefix go.  A group another caller's clean-up removed
 * between its mkdir and the move is made again.  Every hierarchy is tried;
 * the error names the first group pid could not enter.
 */
int cgroup_enter(int root_fd, pid_t pid, const char *name, struct km_error *err);
/* Removes PARENT/NAME from every hierarchy; -EBUSY while processes are in it. */
int cgroup_remove(int root_fd, const char *name);
/*
 * Removes PARENT's empty groups whose names start with PREFIX (up to its first
 * '-', e.g. "mount-") in every hierarchy: those of processes that have ended.
 */
void cgroup_prune(int root_fd, const char *prefix);
/* Whether PARENT/NAME has processes in any hierarchy (0/1), -ENOENT when it is nowhere. */
int cgroup_populated(int root_fd, const char *name);
