/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The block-device tools kubemount runs from VCS images when it is called by
 * their names (issue 11, point 4): what mount-utils' SafeFormatAndMount and
 * its resizer run in the kubelet's own container (blkid -p -s TYPE -s PTTYPE
 * -o export DEV, mkfs.TYPE, fsck -a DEV, resize2fs DEV, xfs_growfs -d MNT,
 * xfs_repair, dumpe2fs -h DEV, xfs_io -c statfs MNT, blockdev --getsize64).
 * Each tool has a filesystem type whose entry in the vcs-map table picks the
 * image: mkfs.T and fsck.T serve T, the e2fsprogs tools ext4, the xfs_*
 * tools xfs, and blkid, blockdev and plain fsck, which serve every type, the
 * pseudo-type "block-tools" (no filesystem has that name).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define VCS_TOOLS_TYPE "block-tools"
/* Path arguments a tool may name (devices and mount points): a bound on the container's binds. */
#define VCS_TOOL_PATHS_MAX 8

enum {
        /* A directory argument is a mounted filesystem it works on (xfs_growfs -d MNT, xfs_io -c statfs MNT). */
        VCS_TOOL_MOUNT_POINT = 1u << 0,
        /* A device argument's mounted filesystem is needed too (resize2fs grows a mounted ext4 online). */
        VCS_TOOL_DEVICE_MOUNT = 1u << 1,
        /* It writes to its device (mkfs, fsck, repair): one mounted or in use is refused (cli/tool-devices.c). */
        VCS_TOOL_WRITES = 1u << 2,
        /* iscsiadm: with iscsid kept running, both in the host's network (cli/multicall-iscsi.c). */
        VCS_TOOL_ISCSI = 1u << 3,
};

struct vcs_tool {
        const char *name; /* as called: "mkfs.ext4" */
        const char *type; /* whose mapping serves it: "ext4", "block-tools" */
        unsigned flags;
};

/*
 * 1 with *ret filled when name is a tool: one of the table, or mkfs.TYPE or
 * fsck.TYPE for any other TYPE (a link an administrator adds); else 0.
 * ret's strings are the table's or point into name.
 */
int vcs_tool_lookup(const char *name, struct vcs_tool *ret);

/* The table's tools, for the links to install and the help: *ret_n entries. */
const struct vcs_tool *vcs_tools(size_t *ret_n);

/*
 * The arguments (argv[1] on) that may name a device or a mount point: the
 * absolute paths, each text once, in order.  Their indexes go to idx;
 * returns how many, or -E2BIG when there are more than max.
 */
int vcs_tool_path_args(const char *const *argv, size_t *idx, size_t max);
