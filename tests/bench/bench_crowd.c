/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, P2c (issue 23): container start against the number of
 * containers running.  `kubemount run -- true` with CROWD detached
 * containers (`run -d -- sleep 1000`) running against the same with none,
 * the two interleaved in blocks so that drift hits both; and the start of
 * each of the CROWD, the last tenth against the first.  After vcs_setup().
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define P2C_NAME "km-bench-crowd-"

static int km_run(char *const argv[]) {
        int st = run_fds(argv, vcs_env(), -1, -1);

        if (st != 0) {
                fail("P2c: kubemount %s %s ... exited %d", argv[1], argv[2] ? argv[2] : "", st);
                show_errlog();
        }
        return st;
}

/* n runs of `run -- true` into v (seconds); false on a failure. */
static bool time_runs(double *v, long n) {
        char *argv[] = { (char *)km(),   (char *)"run", (char *)"--rootfs", (char *)opt.rootfs, (char *)"--",
                         (char *)"true", NULL };

        for (long i = 0; i < n; i++) {
                double t = now();
                if (km_run(argv) != 0)
                        return false;
                v[i] = now() - t;
        }
        return true;
}

/* The crowd's containers from..to-1 started (each start timed into start[]) or, with start NULL, removed. */
static bool crowd(int from, int to, double *start) {
        for (int i = from; i < to; i++) {
                char name[48];
                char *run[] = { (char *)km(),       (char *)"run", (char *)"-d",
                                (char *)"--name",   name,          (char *)"--rootfs",
                                (char *)opt.rootfs, (char *)"--",  (char *)"sleep",
                                (char *)"1000",     NULL };
                char *rm[] = { (char *)km(), (char *)"rm", (char *)"-f", name, NULL };
                double t = now();

                snprintf(name, sizeof(name), P2C_NAME "%d", i);
                if (km_run(start ? run : rm) != 0)
                        return false;
                if (start)
                        start[i] = now() - t;
        }
        return true;
}

void bench_p2c(long n, int size) {
        long blocks = 4, per = n / blocks > 0 ? n / blocks : 1;
        double *none = calloc((size_t)(blocks * per), sizeof(double));
        double *full = calloc((size_t)(blocks * per), sizeof(double));
        double *start = calloc((size_t)size, sizeof(double)), m_none, m_full;
        int tenth = size / 10 > 0 ? size / 10 : 1, started = 0;
        char name[160];
        struct result *r;

        if (!none || !full || !start)
                goto out;
        wait_quiet();
        enter(ns_a);
        say("P2c: kubemount run -- true with %d containers running vs none, %ld runs each ...", size, blocks * per);
        if (!time_runs(none, 1)) /* warm */
                goto out;
        /* Blocks: none, the crowd started, full, the crowd removed, ... */
        for (long b = 0; b < blocks; b++) {
                if (!time_runs(none + b * per, per) || !crowd(0, size, start))
                        goto out;
                started = size;
                if (!time_runs(full + b * per, per) || !crowd(0, size, NULL))
                        goto out;
                started = 0;
        }
        m_none = median(none, (size_t)(blocks * per));
        m_full = median(full, (size_t)(blocks * per));
        snprintf(name, sizeof(name), "P2c: kubemount run -- true with %d running vs none", size);
        r = add_result(name, m_full, m_none);
        goal_ratio_max(r, 1.2);
        note(r, "%ld runs each, in %ld blocks; the crowd: run -d -- sleep 1000, started and removed (rm -f) each block",
             blocks * per, blocks);
        {
                double first = median(start, (size_t)tenth), last = median(start + size - tenth, (size_t)tenth);
                snprintf(name, sizeof(name), "P2c: run -d, the last %d of the %d vs the first %d", tenth, size, tenth);
                r = add_result(name, last, first);
                goal_ratio_max(r, 1.2);
                note(r, "each start's time as the crowd grows (the last block's), medians");
        }
out:
        if (started)
                (void)crowd(0, started, NULL);
        free(none);
        free(full);
        free(start);
}
