/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zombies [SECS]: counts the zombie processes (state Z) in /proc, polling
 * for up to SECS seconds (default 0: once) until there are none.  Prints
 * zombies=N and procs=N (processes seen); exits 0 when N is 0, else 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int count(int *procs) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        int z = 0;

        *procs = 0;
        if (!d)
                return -1;
        while ((e = readdir(d))) {
                char path[64], buf[512], *p;
                char *end;
                long pid = strtol(e->d_name, &end, 10);
                FILE *f;

                if (pid <= 0 || *end)
                        continue;
                snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
                if (!(f = fopen(path, "re")))
                        continue;
                if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ') {
                        (*procs)++;
                        if (p[2] == 'Z')
                                z++;
                }
                fclose(f);
        }
        closedir(d);
        return z;
}

int main(int argc, char **argv) {
        double secs = argc > 1 ? atof(argv[1]) : 0;
        struct timespec start, now;
        int z, procs;

        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                z = count(&procs);
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (z == 0 || (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 >= secs)
                        break;
                usleep(10000);
        }
        printf("zombies=%d\nprocs=%d\n", z, procs);
        return z != 0;
}
