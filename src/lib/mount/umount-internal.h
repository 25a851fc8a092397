/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Between umount.c (a path), umount-once.c (one held mount) and umount-tree.c (umount -R). */
#pragma once

#include "resolve.h"
#include "util.h"

/*
 * What an unmount acts on: the topmost mount at PARENT/NAME, and only if its
 * mount ID is still expect_id (when set).  shown names it in messages and
 * for a umount.TYPE helper, which needs a path; parent_fd < 0: "/" only.
 */
struct utarget {
        const char *shown;
        int parent_fd;
        const char *name;
        unsigned expect_id;
};

/* True when the host has any umount.TYPE helper; then the type matters (cached while /sbin is unchanged). */
bool have_umount_helpers(void);
/* Whether one unmount asks for the mount's type: where it can be had in O(1), or where a helper is there. */
bool umount_helpers_matter(void);

/* One unmount attempt in this process (helpers: the host has umount.* helpers). */
int umount_once(const struct utarget *t, int mnt_flags, bool helpers, const char *fstype, struct km_error *err);
/* KM_UMOUNT_LAZY/FORCE right away, or with timeout_ms > 0: normal -> force -> lazy, in worker processes. */
int umount_escalating(const struct utarget *t, unsigned flags, int timeout_ms, bool helpers, const char *fstype,
                      struct km_error *err);

/*
 * Everything at or below the target held at *root_fd (found at where), from
 * one snapshot of the table, deepest first; *root_fd is closed before the
 * mounts at the target itself go (it would keep them busy).
 */
int umount_recursive(const char *shown, int *root_fd, const struct resolved *where, unsigned flags, int timeout_ms,
                     bool helpers, struct km_error *err);
