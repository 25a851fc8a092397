/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A test driver of a container's writable layer (src/lib/container/overlay.h), as the
 * launchers make it: LOWER under a fresh STATE_DIR/layer/{upper,work},
 * mounted on TARGET.  "new": a detached overlay (fsopen, fsmount) attached
 * with move_mount; "old": the new mount API disabled, as on kernels without
 * it, so mount(2) makes it.  Used by vcs-rootfs.sh.
 *
 *   vcs-layer LOWER STATE_DIR TARGET new|old
 *
 * Errors: one line "vcs-layer: MESSAGE" on stderr, exit 1; usage: 2.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "overlay.h"
#include "syscalls.h"

int main(int argc, char **argv) {
        struct overlay_dirs d = OVERLAY_DIRS_INIT;
        struct km_error err = {};
        int state, mnt, target, r;

        if (argc != 5 || (strcmp(argv[4], "new") != 0 && strcmp(argv[4], "old") != 0)) {
                fprintf(stderr, "usage: vcs-layer LOWER STATE_DIR TARGET new|old\n");
                return 2;
        }
        if (strcmp(argv[4], "old") == 0)
                km_features_disable(KM_FEATURE_MOUNT_API);
        state = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
        target = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (state < 0 || target < 0) {
                fprintf(stderr, "vcs-layer: %s: %s\n", state < 0 ? argv[2] : argv[3], strerror(errno));
                return 1;
        }
        r = overlay_dirs_open(argv[1], state, &d, &err);
        mnt = r < 0 ? r : overlay_fsmount(&d, &err);
        if (mnt == -ENOSYS)
                r = overlay_mount(&d, argv[3], &err);
        else if (mnt >= 0)
                r = sys_move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        else
                r = mnt;
        if (r < 0) {
                fprintf(stderr, "vcs-layer: %s\n", err.message[0] ? err.message : strerror(-r));
                return 1;
        }
        fprintf(stderr, "%s\n", mnt == -ENOSYS ? "mount(2)" : "fsmount");
        overlay_dirs_done(&d);
        return 0;
}
