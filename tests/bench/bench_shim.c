/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, P5: nsenter-compat's nsenter on the kubelet's
 * findmnt --target probe, against util-linux nsenter + findmnt.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/*
 * P5: the legacy kubelet's mount-point probe, run from B into A,
 *   nsenter --mount=HOSTNS -- findmnt -o target,fstype --noheadings --first-only --target PATH
 * through nsenter-compat's nsenter (answered in-process with statx +
 * statmount) vs util-linux nsenter + findmnt (which reads A's whole mount
 * table), for PATH = a mount point and PATH = a directory inside a mount.
 * Neither PATH exists in B, so an answer from the wrong namespace fails.
 */
static double p5_first_shim[2] = { NAN, NAN }, p5_first_real[2] = { NAN, NAN };
static long p5_first_mounts;

static void p5_argv(char **argv, const char *nsenter, const char *path) {
        char *const a[] = { (char *)nsenter,
                            nsenter_opt,
                            (char *)"--",
                            FINDMNT,
                            (char *)"-o",
                            (char *)"target,fstype",
                            (char *)"--noheadings",
                            (char *)"--first-only",
                            (char *)"--target",
                            (char *)path,
                            NULL };
        memcpy(argv, a, sizeof(a));
}

/* execve calls (attempts included) of argv and its children, by strace -f; -1 on error. */
static long count_execs(char *const argv[]) {
        char log[600], buf[4096],
                *sa[24] = { (char *)"strace", (char *)"-f", (char *)"-qq", (char *)"-e", (char *)"trace=execve",
                            (char *)"-o",     log };
        size_t k = 7;
        long n = 0;
        FILE *f;

        snprintf(log, sizeof(log), "%s/strace-execve.log", workdir);
        unlink(log);
        for (size_t j = 0; argv[j] && k < 23; j++)
                sa[k++] = argv[j];
        sa[k] = NULL;
        if (run_env(sa, env_plain, -1) != 0)
                return -1;
        f = fopen(log, "re");
        if (!f)
                return -1;
        while (fgets(buf, sizeof(buf), f))
                n += strstr(buf, "execve(") != NULL;
        fclose(f);
        unlink(log);
        return n;
}

/* Once: the shim prints byte for byte what nsenter + findmnt print, and execs nothing. */
static void p5_audit(const char *label, char *argv[4][12], const char *const paths[2]) {
        char name[160], shown[2][600];
        long shim_execs[2], real_execs[2];
        struct result *r;

        say("P5 audit %s: shim output vs nsenter + findmnt output, execve count (strace) ...", label);
        for (int p = 0; p < 2; p++) {
                char *ours, *peer;
                size_t n = strlen(tree_leaf);

                enter(ns_b);
                ours = capture(argv[2 * p], env_plain);
                peer = capture(argv[2 * p + 1], env_plain);
                shim_execs[p] = count_execs(argv[2 * p]);
                real_execs[p] = count_execs(argv[2 * p + 1]);
                enter(ns_a);
                if (!ours || !peer || strcmp(ours, peer) != 0) {
                        fail("P5: for %s the shim printed \"%s\", nsenter + findmnt \"%s\"", paths[p],
                             ours ? ours : "?", peer ? peer : "?");
                        show_errlog();
                } else if (strncmp(peer, tree_leaf, n) != 0 || peer[n] != ' ' || !strchr(peer, '\n')) {
                        /* Both paths are on the leaf mount, which exists in A only. */
                        fail("P5: for %s both printed \"%s\", expected \"%s tmpfs\"", paths[p], peer, tree_leaf);
                        show_errlog();
                }
                snprintf(shown[p], sizeof(shown[p]), "%.*s", ours ? (int)strcspn(ours, "\n") : 0, ours ? ours : "");
                free(ours);
                free(peer);
                if (shim_execs[p] < 0 || real_execs[p] < 0)
                        fail("P5: strace -f -e trace=execve failed");
        }
        snprintf(name, sizeof(name), "P5 audit %s: shim output == real output; execve (strace)", label);
        r = add_result(name, NAN, NAN);
        snprintf(r->goal, sizeof(r->goal), "identical, 1 execve");
        r->verdict = shim_execs[0] == 1 && shim_execs[1] == 1 ? PASS : MISS;
        note(r, "byte-identical for the mount point and a dir inside it: \"%s\"", shown[0]);
        if (strcmp(shown[0], shown[1]) != 0)
                fail("P5: the mount point and the dir inside it gave different answers");
        note(r, "execve: shim %ld / %ld, nsenter + findmnt %ld / %ld (mount point / dir)", shim_execs[0], shim_execs[1],
             real_execs[0], real_execs[1]);
}

void bench_p5(const char *label, long mounts, long n, bool large) {
        static const char *const what[2] = { "mount point", "dir in a mount" };
        char name[160], dir[600], *argv[4][12];
        const char *paths[2] = { tree_leaf, dir };
        char *ns_true[] = { NSENTER, nsenter_opt, (char *)"--", (char *)"/bin/true", NULL };
        char *true_argv[] = { (char *)"/bin/true", NULL };
        double *v[6], m[6];
        struct result *r;

        wait_quiet();
        enter(ns_a);
        snprintf(dir, sizeof(dir), "%s/p5", tree_leaf);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                fail("mkdir %s: %m", dir);
                return;
        }
        snprintf(dir, sizeof(dir), "%s/p5/dir", tree_leaf);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                fail("mkdir %s: %m", dir);
                return;
        }
        for (int p = 0; p < 2; p++) {
                p5_argv(argv[2 * p], opt.shim, paths[p]);
                p5_argv(argv[2 * p + 1], NSENTER, paths[p]);
        }
        for (int k = 0; k < 6; k++)
                v[k] = calloc(n, sizeof(double));
        say("P5 %s: findmnt --target probe via the nsenter-compat shim vs nsenter + findmnt, %ld runs each ...", label,
            n);
        /*
         * Kinds: 0/1 shim/real on the mount point, 2/3 on the dir, 4 nsenter
         * -m -- /bin/true, 5 /bin/true (the exec floor).  Interleaved, each
         * round: the two findmnt runs, one untimed round of the light
         * commands, then the light commands timed (orders rotated).  A
         * command right after a 20,000-mount findmnt pays ~0.2-0.3 ms for
         * the caches findmnt evicted (measured: it lasts about two execs);
         * a kubelet using the shim runs no findmnt in between.
         */
        enter(ns_b);
        for (long i = 0; i < n; i++) {
                static const int heavy[] = { 1, 3 }, light[] = { 0, 2, 4, 5 };
                for (int step = 0; step < 2 + 4 + 4; step++) {
                        int which = step < 2 ? heavy[(i + step) % 2] : light[(i + step) % 4];
                        char **a = which < 4 ? argv[which] : which == 4 ? ns_true : true_argv;
                        double t = now();
                        int st = run_env(a, env_plain, -1);
                        if (step < 2 || step >= 6)
                                v[which][i] = now() - t;
                        if (st != 0) {
                                fail("P5: %s %s ... exited %d", a[0], a[1] ? a[1] : "", st);
                                show_errlog();
                                goto out;
                        }
                }
        }
        enter(ns_a);
        for (int k = 0; k < 6; k++)
                m[k] = median(v[k], n);

        for (int p = 0; p < 2; p++) {
                snprintf(name, sizeof(name), "P5 %s: shim findmnt -T probe (%s) vs nsenter+findmnt", label, what[p]);
                r = add_result(name, m[2 * p], m[2 * p + 1]);
                note(r, "%.0f× faster; %ld runs; run from a child mount namespace with --mount=HOSTNS",
                     m[2 * p + 1] / m[2 * p], n);
                if (large) {
                        snprintf(r->goal, sizeof(r->goal), "≤ 1 ms");
                        r->verdict = m[2 * p] <= 1e-3 ? PASS : MISS;
                        if (!isnan(p5_first_shim[p]))
                                note(r, "from %ld to %ld mounts: shim %.2f×, nsenter+findmnt %.1f×", p5_first_mounts,
                                     mounts, m[2 * p] / p5_first_shim[p], m[2 * p + 1] / p5_first_real[p]);
                } else {
                        p5_first_shim[p] = m[2 * p];
                        p5_first_real[p] = m[2 * p + 1];
                        p5_first_mounts = mounts;
                }
        }
        snprintf(name, sizeof(name), "P5 %s: shim probe (mount point) vs nsenter -m /bin/true", label);
        r = add_result(name, m[0], m[4]);
        note(r, "peer = the least the real path can cost: nsenter + one trivial exec");
        snprintf(name, sizeof(name), "P5 %s: shim probe (mount point) vs /bin/true exec", label);
        r = add_result(name, m[0], m[5]);
        note(r, "peer = one exec, the floor of any command; the shim's own work is the difference");

        if (large && !opt.no_audit && have_program("strace"))
                p5_audit(label, argv, paths);
out:
        enter(ns_a);
        for (int k = 0; k < 6; k++)
                free(v[k]);
}
