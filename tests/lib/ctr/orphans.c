/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * orphans N [MS]: forks N children; each forks a grandchild and exits at
 * once, and the grandchild exits MS milliseconds later (default 50), after
 * its parent is gone: N orphans for the pid namespace's init to reap.  The
 * children themselves are reaped here.  Prints orphans=N (how many were
 * made) and exits 0 if all N were, 1 if fork failed first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        int n, ms, made = 0;

        if (argc < 2 || (n = atoi(argv[1])) < 0) {
                fprintf(stderr, "usage: orphans N [MS]\n");
                return 2;
        }
        ms = argc > 2 ? atoi(argv[2]) : 50;
        for (int i = 0; i < n; i++) {
                pid_t child = fork();

                if (child < 0) {
                        fprintf(stderr, "orphans: fork: %s\n", strerror(errno));
                        break;
                }
                if (child == 0) {
                        pid_t grandchild = fork();

                        if (grandchild == 0) {
                                usleep((useconds_t)ms * 1000);
                                _exit(0);
                        }
                        _exit(grandchild < 0);
                }
                if (waitpid(child, NULL, 0) == child)
                        made++;
        }
        printf("orphans=%d\n", made);
        return made == n ? 0 : 1;
}
