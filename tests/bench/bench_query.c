/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, reading the mount table: P3 (is this a mount point?
 * with many mounts present) and the audit of how often each command opens
 * a mount table.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubemount.h"

#include "bench.h"

/* Per-call time of km_is_mount_point, in batches; run in a child when compat. */
static double time_is_mount_point(const char *path, long calls, bool compat) {
        double *shared = mmap(NULL, sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        double result = NAN;
        pid_t pid;
        int status;

        if (shared == MAP_FAILED)
                return NAN;
        *shared = NAN;
        pid = fork(); /* km_features_disable() cannot be undone: keep it out of this process */
        if (pid == 0) {
                enum { BATCH = 100 };
                long batches = calls / BATCH < 5 ? 5 : calls / BATCH;
                double *v = calloc(batches, sizeof(double));
                struct km_error err = { 0 };

                if (compat)
                        km_features_disable(KM_FEATURE_ALL);
                for (long b = 0; b < batches; b++) {
                        double t = now();
                        for (int i = 0; i < BATCH; i++)
                                if (km_is_mount_point(NULL, path, &err) != 1) {
                                        fprintf(stderr, "km_is_mount_point(%s) != 1: %s\n", path, err.message);
                                        _exit(1);
                                }
                        v[b] = (now() - t) / BATCH;
                }
                *shared = median(v, batches);
                _exit(0);
        }
        if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                result = *shared;
        else
                fail("km_is_mount_point benchmark failed");
        munmap(shared, sizeof(double));
        return result;
}

static double time_command(char *const argv[], char **envp, long n, int expect) {
        double *v = calloc(n, sizeof(double)), m;
        for (long i = 0; i < n; i++) {
                double t = now();
                int r = run_env(argv, envp, -1);
                v[i] = now() - t;
                if (r != expect) {
                        fail("%s %s ... exited %d, expected %d", argv[0], argv[1], r, expect);
                        show_errlog();
                        free(v);
                        return NAN;
                }
        }
        m = median(v, n);
        free(v);
        return m;
}

/* P3: mount-point queries with many mounts present (in A). */
void bench_p3(const char *label, long mounts) {
        char name[160];
        char *findmnt[] = { FINDMNT, (char *)"-M", tree_leaf, NULL };
        char *cmd[] = { (char *)km(), nsopt, (char *)"is-mountpoint", tree_leaf, NULL };
        double lib, libold, peer, c, cold;
        struct result *r;

        wait_quiet();
        say("P3 %s: km_is_mount_point vs findmnt -M ...", label);
        enter(ns_a);
        lib = time_is_mount_point(tree_leaf, iters(20000), false);
        libold = time_is_mount_point(tree_leaf, iters(20000), true);
        peer = time_command(findmnt, env_plain, iters(15), 0);
        enter(ns_b);
        c = time_command(cmd, env_plain, iters(50), 0);
        cold = time_command(cmd, env_compat, iters(50), 0);
        enter(ns_a);

        snprintf(name, sizeof(name), "P3 %s: km_is_mount_point() vs findmnt -M TARGET", label);
        r = add_result(name, lib, peer);
        snprintf(r->goal, sizeof(r->goal), "≤ 1/1000× & ≤ 50 µs");
        r->verdict = r->ratio <= 1e-3 && lib <= 50e-6 ? PASS : MISS;
        note(r, "%.0f× faster; statx(STATX_ATTR_MOUNT_ROOT), %ld mounts in the namespace", peer / lib, mounts);
        snprintf(name, sizeof(name), "P3 %s: same, old-kernel fallback (features disabled)", label);
        r = add_result(name, libold, peer);
        snprintf(r->goal, sizeof(r->goal), "≤ 1/1000× & ≤ 50 µs");
        r->verdict = r->ratio <= 1e-3 && libold <= 50e-6 ? PASS : MISS;
        note(r, "%.0f× faster; km_features_disable(KM_FEATURE_ALL): fdinfo mnt_id of path and path/..", peer / libold);
        snprintf(name, sizeof(name), "P3 %s: kubemount is-mountpoint (exec) vs findmnt -M", label);
        r = add_result(name, c, peer);
        note(r, "run from the child namespace with --host-mount-ns");
        snprintf(name, sizeof(name), "P3 %s: same, KUBEMOUNT_COMPAT=old-kernel", label);
        r = add_result(name, cold, peer);
}

/* How often each command reads a mount table (strace), with many mounts. */
void bench_audit(void) {
        char target[512], log[600], m[96];
        char line[1024] = "";
        struct {
                const char *what;
                bool in_b;
                char *argv[16];
        } cmds[] = {
                { "kubemount mount",
                  true,
                  { (char *)km(), nsopt, (char *)"mount", (char *)"-t", (char *)"tmpfs", (char *)"none", target } },
                { "kubemount umount", true, { (char *)km(), nsopt, (char *)"umount", target } },
                { "kubemount is-mountpoint", true, { (char *)km(), nsopt, (char *)"is-mountpoint", tree_leaf } },
                { "mount(8)", false, { MOUNT, (char *)"-t", (char *)"tmpfs", (char *)"none", target } },
                { "umount(8)", false, { UMOUNT, target } },
                { "findmnt -M", false, { FINDMNT, (char *)"-M", tree_leaf } },
        };

        if (opt.no_audit || !have_program("strace"))
                return;
        snprintf(target, sizeof(target), "%s/audit", workdir);
        snprintf(log, sizeof(log), "%s/strace.log", workdir);
        mkdir(target, 0755);
        say("audit: mount-table reads per command (strace) ...");
        for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
                char *argv[24] = { (char *)"strace",
                                   (char *)"-f",
                                   (char *)"-qq",
                                   (char *)"-e",
                                   (char *)"trace=open,openat,openat2",
                                   (char *)"-o",
                                   log };
                size_t k = 7, reads = 0;
                for (size_t j = 0; cmds[i].argv[j]; j++)
                        argv[k++] = cmds[i].argv[j];
                argv[k] = NULL;
                enter(cmds[i].in_b ? ns_b : ns_a);
                run_env(argv, env_plain, -1);
                enter(ns_a);
                FILE *f = fopen(log, "re");
                char buf[4096];
                while (f && fgets(buf, sizeof(buf), f))
                        reads += strstr(buf, "/mountinfo") || strstr(buf, "/proc/mounts") || strstr(buf, "/etc/mtab") ||
                                 strstr(buf, "self/mounts\"");
                if (f)
                        fclose(f);
                snprintf(m, sizeof(m), "%s%s %zu", *line ? ", " : "", cmds[i].what, reads);
                strncat(line, m, sizeof(line) - strlen(line) - 1);
        }
        umount2(target, MNT_DETACH);
        struct result *r = add_result("audit: mount-table opens per command (strace -f)", NAN, NAN);
        snprintf(r->note, sizeof(r->note), "%s", line);
}
