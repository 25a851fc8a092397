/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroups of kubemount's own, below a parent group in every hierarchy under
 * /sys/fs/cgroup, v1 and v2: a process there does not die with the cgroup of
 * whoever asked for it (a kubelet container).  The parent: $KUBEMOUNT_CGROUP_PARENT;
 * else the group of kubemount-agent.service when systemd delegated it
 * (Delegate=yes), which the agent records in the state dir for the other
 * kubemounts of the node (a mount the kubelet runs); else "kubemount".  Paths go through a held fd of /sys/fs/cgroup,
 * so the agent can use them from its small mount namespace.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

/*
 * Joins the cgroup namespace of PID 1 (the host's, in a hostPID pod or a
 * --pid=host container), best effort: from a container's own cgroup namespace
 * the kernel refuses to move a process to a group outside it, such as
 * kubemount's, and /proc/self/cgroup hides where we are.
 */
void cgroup_join_init_ns(void);
/* An O_DIRECTORY fd of /sys/fs/cgroup. */
int cgroup_root_open(struct km_error *err);
/*
 * Moves pid into PARENT/NAME of every hierarchy (made if missing).  A group
 * another caller's clean-up (cgroup_prune) removed between its mkdir and the
 * move is made again.  Its siblings are not looked at: a container's start
 * costs the same with 200 others running (each rmdir of a live group takes
 * the kernel's cgroup mutex only to fail).  Every hierarchy is tried;
 * the error names the first group pid could not enter.
 */
int cgroup_enter(int root_fd, pid_t pid, const char *name, struct km_error *err);
/*
 * The calling process, which must be single-threaded (a child just forked),
 * moves itself into PARENT/NAME of every hierarchy, but the v2 one when
 * v2_entered (clone3 made it there).  A v1 hierarchy takes it through
 * "tasks" (its one thread), which the kernel does without the threadgroup
 * lock cgroup_enter() needs (cgroup_open_v2): no wait for a grace period.
 */
int cgroup_enter_self(int root_fd, const char *name, bool v2_entered, struct km_error *err);
/*
 * PARENT/NAME (made if missing) of the v2 hierarchy, the only one on most
 * hosts, "unified" on a hybrid one, opened for clone3's CLONE_INTO_CGROUP
 * (5.7): a child made in its group never has to be moved, and a move takes
 * the kernel's threadgroup lock for writing, which waits for an RCU grace
 * period (4-19 ms measured here) and serializes every start of the node.
 * The fd, or -EOPNOTSUPP (v1 alone) or -errno; the child then enters the
 * rest with cgroup_enter_self().
 */
int cgroup_open_v2(int root_fd, const char *name);
/* clone3 as fork(), into the group of cgroup_fd when >= 0 (falling back to a plain fork where the kernel
 * has no CLONE_INTO_CGROUP: *entered says which); flags adds CLONE_NEW* flags. */
pid_t cgroup_fork_into(int cgroup_fd, uint64_t flags, bool *entered);
/*
 * For the agent, at its start: when it runs as a systemd service ($INVOCATION_ID)
 * in a group systemd delegated (the unit's, marked trusted.delegate) and
 * $KUBEMOUNT_CGROUP_PARENT is unset, that
 * group is the parent, recorded in STATE_FD's "cgroup-parent" (1).  Otherwise
 * the record is removed (0).  The caller then leaves the unit's group for a
 * child ("agent"): the unit's own group holds only groups.
 */
int cgroup_delegate(int root_fd, int state_fd, struct km_error *err);
/* Removes PARENT/NAME from every hierarchy; -EBUSY while processes are in it. */
int cgroup_remove(int root_fd, const char *name);
/*
 * Removes PARENT's empty groups whose names start with PREFIX (up to its first
 * '-', e.g. "mount-") in every hierarchy: those of processes that have ended
 * (the agent's sweep; a host FUSE helper before it enters its own).
 */
void cgroup_prune(int root_fd, const char *prefix);
/* Whether PARENT/NAME has processes in any hierarchy (0/1), -ENOENT when it is nowhere. */
int cgroup_populated(int root_fd, const char *name);
