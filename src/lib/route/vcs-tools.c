/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tools of the multi-call form and what their arguments name (see vcs-tools.h). */
#include <errno.h>
#include <string.h>

#include "util.h"
#include "vcs-tools.h"

/* Sorted by name; the links meson installs are these (tests/unit/test-vcs-tools.c checks it). */
static const struct vcs_tool tools[] = {
        { "blkid", VCS_TOOLS_TYPE, 0 },
        { "blockdev", VCS_TOOLS_TYPE, 0 },
        { "dumpe2fs", "ext4", 0 },
        { "e2fsck", "ext4", VCS_TOOL_WRITES },
        { "fsck", VCS_TOOLS_TYPE, VCS_TOOL_WRITES },
        { "fsck.ext2", "ext2", VCS_TOOL_WRITES },
        { "fsck.ext3", "ext3", VCS_TOOL_WRITES },
        { "fsck.ext4", "ext4", VCS_TOOL_WRITES },
        { "fsck.xfs", "xfs", VCS_TOOL_WRITES },
        { "iscsiadm", "iscsi", VCS_TOOL_ISCSI },
        { "mkfs.ext2", "ext2", VCS_TOOL_WRITES },
        { "mkfs.ext3", "ext3", VCS_TOOL_WRITES },
        { "mkfs.ext4", "ext4", VCS_TOOL_WRITES },
        { "mkfs.xfs", "xfs", VCS_TOOL_WRITES },
        { "resize2fs", "ext4", VCS_TOOL_DEVICE_MOUNT },
        { "xfs_growfs", "xfs", VCS_TOOL_MOUNT_POINT },
        { "xfs_io", "xfs", VCS_TOOL_MOUNT_POINT },
        { "xfs_repair", "xfs", VCS_TOOL_WRITES },
};

const struct vcs_tool *vcs_tools(size_t *ret_n) {
        *ret_n = ELEMENTSOF(tools);
        return tools;
}

int vcs_tool_lookup(const char *name, struct vcs_tool *ret) {
        for (size_t i = 0; i < ELEMENTSOF(tools); i++)
                if (streq(name, tools[i].name)) {
                        *ret = tools[i];
                        return 1;
                }
        /* mkfs.btrfs, fsck.vfat ...: the type is the suffix, as mkfs(8) and fsck(8) find them. */
        if ((startswith(name, "mkfs.") || startswith(name, "fsck.")) && name[5] && !strchr(name + 5, '/')) {
                *ret = (struct vcs_tool){ name, name + 5, VCS_TOOL_WRITES };
                return 1;
        }
        return 0;
}

int vcs_tool_path_args(const char *const *argv, size_t *idx, size_t max) {
        size_t n = 0;

        for (size_t i = 1; argv[0] && argv[i]; i++) {
                bool seen = false;

                if (argv[i][0] != '/')
                        continue;
                for (size_t k = 0; k < n && !seen; k++)
                        seen = streq(argv[idx[k]], argv[i]);
                if (seen)
                        continue;
                if (n >= max)
                        return -E2BIG;
                idx[n++] = i;
        }
        return (int)n;
}
