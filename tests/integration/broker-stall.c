/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * broker-stall FILE GO: a mount(2) whose target string the mount broker
 * cannot read in time.  FILE (on a FUSE mount of the container's own)
 * holds the target path and its NUL; it is mapped but never touched, so
 * the string's page is not in memory.  Prints "ready", waits until GO
 * exists (the test stops the FUSE daemon first), then calls
 * mount("km-stall", <the mapping>, "tmpfs"): reading the string faults the
 * page in through the stopped daemon, and the broker's worker waits until
 * the agent's timeout.  Prints "mount: 0" or "mount: ERRNO-NAME"; exit 0,
 * 2 on a setup problem.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* meson sets it */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct timespec tick = { 0, 10 * 1000 * 1000 };
        const char *target;
        long r;
        int fd;

        if (argc != 3) {
                fprintf(stderr, "usage: broker-stall FILE GO\n");
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        target = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (target == MAP_FAILED) {
                fprintf(stderr, "broker-stall: %s: %s\n", argv[1], strerror(errno));
                return 2;
        }
        printf("ready\n");
        fflush(stdout);
        while (access(argv[2], F_OK) < 0)
                nanosleep(&tick, NULL);
        /* Raw: libc would not read the string first, but nothing else may touch the page either. */
        r = syscall(SYS_mount, "km-stall", target, "tmpfs", 0UL, NULL);
        printf("mount: %s\n", r == 0 ? "0" : strerrorname_np(errno));
        return 0;
}
