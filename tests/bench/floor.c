/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench-floor NSPATH mount|umount TARGET: the least a command can
 * do for P1 - libc only, setns into NSPATH, one mount(2) or umount2(2) - so
 * that the benchmark shows the exec floor next to kubemount's figure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv) {
        int fd;

        if (argc != 4)
                return 1;
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns(fd, CLONE_NEWNS) < 0)
                return 2;
        if (strcmp(argv[2], "mount") == 0)
                return mount("none", argv[3], "tmpfs", 0, NULL) < 0 ? 32 : 0;
        return umount2(argv[3], UMOUNT_NOFOLLOW) < 0 ? 32 : 0;
}
