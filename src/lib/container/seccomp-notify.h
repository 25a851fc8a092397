/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount broker's filter: a second seccomp filter on an unprivileged
 * container's processes that traps mount(2) and umount2(2) for a supervisor
 * (SECCOMP_RET_USER_NOTIF, Linux 5.0) and fails the new mount API (fsopen,
 * fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr) with
 * ENOSYS, so that clients fall back to mount(2).  The kernel applies the
 * strictest verdict of all filters, so the profile's ALLOW of mount loses to
 * this filter's NOTIFY.
 */
#pragma once

#include "seccomp-filter.h"

/*
 * trap_fuse_open: also traps open(2) and openat(2) with flags O_RDWR or
 * O_RDWR|O_CLOEXEC (how libfuse and glusterfs open /dev/fuse), for a kernel
 * that refuses FUSE_DEV_IOC_CLONE across user namespaces (fuse-probe.h):
 * the broker hands such an open of /dev/fuse the host's, and lets the
 * others go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 */
int seccomp_broker_compile(struct seccomp_program *ret, bool trap_fuse_open, struct km_error *err);

/*
 * Installs p in the calling thread and returns the listener fd of its
 * notifications (SECCOMP_FILTER_FLAG_NEW_LISTENER, O_CLOEXEC), or -errno.
 * Async-signal-safe, as seccomp_filter_load().
 */
int seccomp_filter_load_listener(const struct seccomp_program *p);
