/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, the cost of one mount+umount: start-up (exec of
 * kubemount vs /bin/true), P1 (the commands, across namespaces) and P1b
 * (the library, in-process).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kubemount.h"

#include "bench.h"

/* Checks once that kubemount really mounts in A when run from B. */
static bool check_cross_ns(const char *target) {
        char *m[] = { (char *)km(),    nsopt,          (char *)"mount", (char *)"-t",
                      (char *)"tmpfs", (char *)"none", (char *)target,  NULL };
        char *u[] = { (char *)km(), nsopt, (char *)"umount", (char *)target, NULL };
        bool in_a, in_b;

        enter(ns_b);
        if (!run_ok(m))
                return false;
        in_b = is_mount_point_raw(target);
        enter(ns_a);
        in_a = is_mount_point_raw(target);
        enter(ns_b);
        if (!run_ok(u))
                return false;
        enter(ns_a);
        if (!in_a || in_b || is_mount_point_raw(target)) {
                fail("kubemount mount from the caller namespace did not land in the host namespace only "
                     "(host: %d, caller: %d)",
                     in_a, in_b);
                return false;
        }
        return true;
}

/* P1: the commands, kubemount from B vs nsenter from B vs mount(8) in A. */
void bench_p1(const char *label, long n) {
        char target[512], name[160];
        double *ours = calloc(n, sizeof(double)), *ns = calloc(n, sizeof(double)), *same = calloc(n, sizeof(double));
        char *km_m[] = { (char *)km(),    nsopt,          (char *)"mount", (char *)"-t",
                         (char *)"tmpfs", (char *)"none", target,          NULL };
        char *km_u[] = { (char *)km(), nsopt, (char *)"umount", target, NULL };
        char *ns_m[] = { NSENTER,         nsenter_opt,    (char *)"--", MOUNT, (char *)"-t",
                         (char *)"tmpfs", (char *)"none", target,       NULL };
        char *ns_u[] = { NSENTER, nsenter_opt, (char *)"--", UMOUNT, target, NULL };
        char *mm[] = { MOUNT, (char *)"-t", (char *)"tmpfs", (char *)"none", target, NULL };
        char *mu[] = { UMOUNT, target, NULL };
        char *fl_m[] = { (char *)opt.floor, hostns, (char *)"mount", target, NULL };
        char *fl_u[] = { (char *)opt.floor, hostns, (char *)"umount", target, NULL };
        char *bl_m[] = { (char *)opt.baseline, nsopt,          (char *)"mount", (char *)"-t",
                         (char *)"tmpfs",      (char *)"none", target,          NULL };
        char *bl_u[] = { (char *)opt.baseline, nsopt, (char *)"umount", target, NULL };
        double *fl = calloc(n, sizeof(double)), *bl = calloc(n, sizeof(double));
        /* What is timed, in an order rotated each round: 0 ours, 1 nsenter, 2 same ns, 3 floor, 4 baseline. */
        int kind[5] = { 0, 1, 2 }, kinds = 3;
        struct result *r;

        if (opt.floor)
                kind[kinds++] = 3;
        if (opt.baseline)
                kind[kinds++] = 4;
        wait_quiet();
        snprintf(target, sizeof(target), "%s/p1", workdir);
        mkdir(target, 0755);
        say("P1 %s: kubemount mount+umount from a child namespace, %ld runs each ...", label, n);
        if (!check_cross_ns(target))
                goto out;
        for (long i = 0; i < n; i++) {
                double t;
                for (int k = 0; k < kinds; k++) {
                        int which = kind[(i + k) % kinds];
                        if (which == 0) {
                                enter(ns_b);
                                t = now();
                                if (!run_ok(km_m) || !run_ok(km_u))
                                        goto out;
                                ours[i] = now() - t;
                        } else if (which == 1) {
                                enter(ns_b);
                                t = now();
                                if (!run_ok(ns_m) || !run_ok(ns_u))
                                        goto out;
                                ns[i] = now() - t;
                        } else if (which == 2) {
                                enter(ns_a);
                                t = now();
                                if (!run_ok(mm) || !run_ok(mu))
                                        goto out;
                                same[i] = now() - t;
                        } else if (which == 3) {
                                enter(ns_b);
                                t = now();
                                if (!run_ok(fl_m) || !run_ok(fl_u))
                                        goto out;
                                fl[i] = now() - t;
                        } else {
                                enter(ns_b);
                                t = now();
                                if (!run_ok(bl_m) || !run_ok(bl_u))
                                        goto out;
                                bl[i] = now() - t;
                        }
                }
        }
        enter(ns_a);
        double o = median(ours, n);
        snprintf(name, sizeof(name), "P1 %s: kubemount mount+umount vs nsenter -m mount+umount", label);
        r = add_result(name, o, median(ns, n));
        goal_ratio_max(r, 0.5);
        note(r, "%ld runs; kubemount and nsenter run from a child mount namespace", n);
        snprintf(name, sizeof(name), "P1 %s: kubemount mount+umount vs mount+umount (same ns)", label);
        r = add_result(name, o, median(same, n));
        goal_ratio_max(r, 1.0);
        if (opt.floor) {
                snprintf(name, sizeof(name), "P1 %s: floor (libc-only setns+mount exec pair) vs nsenter", label);
                r = add_result(name, median(fl, n), median(ns, n));
                note(r, "what two execs can do at best: kubemount-bench-floor, no library but libc");
        }
        if (opt.baseline) {
                double b = median(bl, n);

                snprintf(name, sizeof(name), "P1 %s: baseline kubemount mount+umount vs nsenter -m mount+umount",
                         label);
                r = add_result(name, b, median(ns, n));
                note(r, "--baseline %s, interleaved with the runs above", opt.baseline);
                snprintf(name, sizeof(name), "P1 %s: baseline kubemount mount+umount vs mount+umount (same ns)", label);
                add_result(name, b, median(same, n));
                snprintf(name, sizeof(name), "P1 %s: kubemount mount+umount vs baseline kubemount", label);
                add_result(name, o, b);
        }
out:
        enter(ns_a);
        free(bl);
        free(fl);
        free(ours);
        free(ns);
        free(same);
}

/* P1b: the library, in-process, vs the bare syscalls; and across namespaces. */
void bench_p1b(const char *label, long n) {
        char target[512], name[160];
        double *lib = calloc(n, sizeof(double)), *raw = calloc(n, sizeof(double));
        double *host = calloc(n, sizeof(double)), *rawhost = calloc(n, sizeof(double));
        struct km_mount_spec *s = km_mount_spec_new();
        struct km_host *h = NULL;
        struct km_error err = { 0 };
        int self_b = -1;
        struct result *r;

        wait_quiet();
        snprintf(target, sizeof(target), "%s/p1b", workdir);
        mkdir(target, 0755);
        if (!s || km_mount_spec_set_source(s, "none") < 0 || km_mount_spec_set_target(s, target) < 0 ||
            km_mount_spec_set_fstype(s, "tmpfs") < 0 || km_host_new(hostns, &h, &err) < 0) {
                fail("km_mount_spec, km_host: out of memory");
                goto out;
        }
        say("P1b %s: km_mount+km_umount in-process, %ld runs each ...", label, n);
        enter(ns_a);
        for (long i = 0; i < n; i++) {
                double t;
                for (int k = 0; k < 2; k++) {
                        if ((i + k) % 2 == 0) {
                                t = now();
                                if (km_mount(NULL, s, NULL, &err) < 0 ||
                                    km_umount(NULL, target, NULL, 0, 0, NULL, &err) < 0) {
                                        fail("library: %s", err.message);
                                        goto out;
                                }
                                lib[i] = now() - t;
                        } else {
                                t = now();
                                if (mount("none", target, "tmpfs", 0, NULL) < 0 || umount2(target, 0) < 0) {
                                        fail("mount(2)/umount2(2) %s: %m", target);
                                        goto out;
                                }
                                raw[i] = now() - t;
                        }
                }
        }
        snprintf(name, sizeof(name), "P1b %s: km_mount+km_umount vs mount(2)+umount2(2)", label);
        r = add_result(name, median(lib, n), median(raw, n));
        goal_ratio_max(r, 3.0);
        note(r, "%ld runs, in-process, same namespace", n);

        /* Across namespaces: called from B, mounting in A. */
        enter(ns_b);
        self_b = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
        for (long i = 0; i < n; i++) {
                double t;
                for (int k = 0; k < 2; k++) {
                        if ((i + k) % 2 == 0) {
                                t = now();
                                if (km_mount(h, s, NULL, &err) < 0 ||
                                    km_umount(h, target, NULL, 0, 0, NULL, &err) < 0) {
                                        fail("library: %s", err.message);
                                        goto out;
                                }
                                host[i] = now() - t;
                                if (i == 0 && is_mount_point_raw(target)) {
                                        fail("km_mount with a host left a mount in the caller namespace");
                                        goto out;
                                }
                        } else {
                                /* The physical floor: setns there, mount, umount, setns back. */
                                int fd;
                                t = now();
                                fd = open(hostns, O_RDONLY | O_CLOEXEC);
                                if (fd < 0 || setns(fd, CLONE_NEWNS) < 0 ||
                                    mount("none", target, "tmpfs", 0, NULL) < 0 || umount2(target, 0) < 0 ||
                                    setns(self_b, CLONE_NEWNS) < 0) {
                                        fail("setns/mount/umount2 %s: %m", target);
                                        if (fd >= 0)
                                                close(fd);
                                        goto out;
                                }
                                close(fd);
                                rawhost[i] = now() - t;
                        }
                }
        }
        snprintf(name, sizeof(name), "P1b %s: km_{mount,umount} in a km_host vs setns+mount+umount+setns", label);
        r = add_result(name, median(host, n), median(rawhost, n));
        note(r, "called from a child namespace; peer = raw syscalls with the same setns pair");
out:
        if (self_b >= 0)
                close(self_b);
        enter(ns_a);
        km_mount_spec_free(s);
        km_host_free(h);
        free(lib);
        free(raw);
        free(host);
        free(rawhost);
}

/* Start-up: exec of kubemount --version vs /bin/true; shared libraries. */
static int count_libs(const char *program) {
        char *argv[] = { (char *)program, NULL };
        char **env = make_env("LD_TRACE_LOADED_OBJECTS=1", NULL);
        char *out = capture(argv, env);
        int n = 0;

        for (char *p = out; p && (p = strstr(p, "=>")); p += 2)
                n++;
        free(out);
        free(env);
        return n;
}

void bench_startup(void) {
        long n = iters(300);
        double *ours = calloc(n, sizeof(double)), *peer = calloc(n, sizeof(double));
        char *v[] = { (char *)km(), (char *)"--version", NULL };
        char *t[] = { (char *)"/bin/true", NULL };
        char *bv[] = { (char *)opt.baseline, (char *)"--version", NULL };
        double *base = calloc(n, sizeof(double));
        struct result *r;
        int libs;

        wait_quiet();
        say("start-up: kubemount --version vs /bin/true, %ld runs each ...", n);
        enter(ns_a);
        for (long i = 0; i < n; i++) {
                double s;
                s = now();
                if (!run_ok(v))
                        goto out;
                ours[i] = now() - s;
                s = now();
                if (!run_ok(t))
                        goto out;
                peer[i] = now() - s;
                if (opt.baseline) {
                        s = now();
                        if (!run_ok(bv))
                                goto out;
                        base[i] = now() - s;
                }
        }
        libs = count_libs(km());
        r = add_result("start-up: kubemount --version exec vs /bin/true exec", median(ours, n), median(peer, n));
        note(r, "%ld runs; kubemount loads %d shared libraries (ldd, without vdso/ld.so); mount(8) %d, nsenter %d", n,
             libs, count_libs(MOUNT), count_libs(NSENTER));
        if (opt.baseline) {
                r = add_result("start-up: baseline kubemount --version exec vs /bin/true exec", median(base, n),
                               median(peer, n));
                note(r, "--baseline %s, loads %d shared libraries", opt.baseline, count_libs(opt.baseline));
        }
out:
        free(base);
        free(ours);
        free(peer);
}
