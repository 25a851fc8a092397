/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tiocsti: a container that tries to type into its caller's terminal
 * (THREATS 28), built static into the test rootfs by tests/lib/rootfs.sh.
 *
 *   tiocsti [TEXT]     for each of fds 0, 1, 2: tty.N=yes|no (whether
 *                      TCGETS works on it); sti.N=OK|ERRNO: ioctl(TIOCSTI)
 *                      of every byte of TEXT (default "KM-INJECTED\n");
 *                      sti_high.N=OK|ERRNO: the same request number with
 *                      bit 32 set, which the kernel ignores (a seccomp filter
 *                      that compares all 64 bits would let it through; only
 *                      tried when sti.N was refused, with the first byte);
 *                      linux.N=OK|ERRNO: ioctl(TIOCLINUX) with the read-only
 *                      subcode TIOCL_GETSHIFTSTATE.
 *
 * The lines are written after every attempt, so that they never mix with
 * injected input.  Exit status 0 (the output is the result).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static const char *errname(int e) {
        static char buf[4][32];
        static int k;
        const char *n = e ? strerrorname_np(e) : "OK";

        if (n)
                return n;
        k = (k + 1) % 4;
        snprintf(buf[k], sizeof(buf[k]), "E%d", e);
        return buf[k];
}

int main(int argc, char **argv) {
        const char *text = argc > 1 ? argv[1] : "KM-INJECTED\n";
        char lines[3][256];

        for (int fd = 0; fd < 3; fd++) {
                struct termios t;
                int sti = 0, high = -1, lin;
                char sub = 6; /* TIOCL_GETSHIFTSTATE */
                bool tty = ioctl(fd, TCGETS, &t) == 0;

                for (const char *p = text; *p && sti == 0; p++)
                        sti = syscall(SYS_ioctl, fd, (unsigned long)TIOCSTI, p) < 0 ? errno : 0;
                if (sti != 0)
                        high = syscall(SYS_ioctl, fd, (unsigned long)TIOCSTI | (1UL << 32), text) < 0 ? errno : 0;
                lin = syscall(SYS_ioctl, fd, (unsigned long)TIOCLINUX, &sub) < 0 ? errno : 0;
                snprintf(lines[fd], sizeof(lines[fd]), "tty.%d=%s\nsti.%d=%s\nsti_high.%d=%s\nlinux.%d=%s\n", fd,
                         tty ? "yes" : "no", fd, errname(sti), fd, high < 0 ? "-" : errname(high), fd, errname(lin));
        }
        for (int fd = 0; fd < 3; fd++)
                fputs(lines[fd], stdout);
        return 0;
}
