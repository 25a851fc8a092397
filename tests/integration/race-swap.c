/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * race-swap A B: exchanges the directory entries A and B (renameat2
 * RENAME_EXCHANGE: a directory and a symlink trade places atomically) as fast
 * as it can until SIGTERM (waiting while either is a mount point: EBUSY),
 * then prints how many times.  race-swap --once A B exchanges them once.  mount-race.sh runs it
 * against a path kubemount is asked to mount on or unmount (THREATS 2, 33).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile sig_atomic_t stop;

static void on_term(int sig) {
        (void)sig;
        stop = 1;
}

int main(int argc, char **argv) {
        struct sigaction sa = { .sa_handler = on_term };
        unsigned long n = 0;
        bool once = argc == 4 && strcmp(argv[1], "--once") == 0;

        if (once) {
                argv++;
                argc--;
        }
        if (argc != 3) {
                fprintf(stderr, "usage: race-swap [--once] A B\n");
                return 2;
        }
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        while (!stop) {
                if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0) {
                        /* A mount point cannot move: wait until it is unmounted again. */
                        if (errno == EBUSY && !once)
                                continue;
                        fprintf(stderr, "race-swap: exchange %s %s: %s\n", argv[1], argv[2], strerror(errno));
                        return 1;
                }
                n++;
                if (once)
                        return 0;
        }
        printf("%lu\n", n);
        return 0;
}
