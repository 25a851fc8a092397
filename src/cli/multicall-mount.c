/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount called as mount or umount (the multi-call form, cli.h): a placeholder until routing lands. */
#include "cli.h"

int multicall_mount(int argc _unused_, char **argv _unused_) {
        cli_error("mount/umount multi-call: not built yet");
        return 1;
}

int multicall_umount(int argc _unused_, char **argv _unused_) {
        cli_error("mount/umount multi-call: not built yet");
        return 1;
}
