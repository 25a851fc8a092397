/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "util.h"

struct km_router;
struct vcs_entry;

/* Whether a mount of fstype with options takes NFS v3 locks (nfs, vers=3, no nolock): statd's. */
bool statd_wanted(const char *fstype, const char *options);
/*
 * A statd for the host's network (route-statd.c): the host's, when it runs
 * one, else the kept container "nfs-statd" of e's image, started unless it
 * runs and answering.  0, or -errno with err set.
 */
int statd_up(const struct km_router *r, struct km_agent *a, const struct vcs_entry *e, struct km_error *err);
/*
 * What a mount that needs statd holds from before statd_up() until its
 * mount(2) is done (shared): the teardown below does not end statd while
 * one is on its way.  An fd to close, or -errno with err set; -ENOENT (no
 * state dir yet, so no statd container to end either) is not an error: the
 * mount goes on without it.
 */
int statd_hold(const struct km_router *r, struct km_error *err);
/*
 * After a routed umount: "nfs-statd" ends when no mount of the host's takes
 * v3 locks and none is on its way (statd_hold()).
 */
void statd_down_if_unused(const struct km_router *r);
