/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether the kernel lets FUSE_DEV_IOC_CLONE attach a /dev/fuse opened in
 * another user namespace to a connection: Linux 6.1 (Debian 12) refuses it
 * (EINVAL: the two files' user namespaces must match); later kernels do not
 * check.  Asked of the kernel once per process, never read off its version:
 * a child connects a /dev/fuse of its own to a FUSE superblock it never
 * mounts (fsopen, fsconfig), opens a second one in a user namespace of its
 * own and clones onto it.  Nothing is mounted; the connection ends with the
 * child.  KUBEMOUNT_COMPAT=fuse-clone-userns answers no without asking.
 *
 * When the answer is no, the mount broker's filter traps the opens a FUSE
 * client makes of /dev/fuse and hands it the host's (broker.h).
 */
#pragma once

#include <stdbool.h>

bool fuse_clone_crosses_userns(void);
