/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "util.h"

/*
 * Runs fn in a child process that first moves into cgroups of its own (one
 * per hierarchy, v1 and v2, below $KUBEMOUNT_CGROUP_PARENT, default
 * "kubemount", of the host's cgroup namespace), so that a daemon it starts -
 * a FUSE daemon a mount helper leaves behind - survives when the caller's
 * cgroup (a kubelet container) is killed: what systemd-run --scope gave the
 * kubelet.  The caller's pid namespace is kept.  If the cgroups cannot be
 * made, fn still runs (with a warning logged).  fn's result, excode and
 * error come back through a pipe.
 */
int run_in_own_cgroup(const char *name, int (*fn)(void *userdata, int *excode, struct km_error *err), void *userdata,
                      int *excode, struct km_error *err);
