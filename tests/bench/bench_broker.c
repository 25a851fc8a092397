/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, the mount broker (issue 12):
 *   P12  a FUSE mount made through the broker against the same mount made
 *        directly.  Two detached containers of the fuse-tools image, each
 *        with the kubelet dir bound (rshared: rslave in the default one):
 *        the default (unprivileged, --allow-mount fuse --allow-mount
 *        fuse.bindfs), whose mount(2) the agent makes in the host namespace,
 *        and a --privileged one, which mounts by itself.  Timed in each,
 *        interleaved: `kubemount exec NAME -- bindfs SRC T` until T is a
 *        mount point in A, `kubemount exec NAME -- umount T` until it is
 *        not, and `kubemount exec NAME -- true` (the exec's own cost).
 * In A with the agent vcs_setup() started and the image route_setup() imported.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define NAME_BROKER "kmb-p12-broker"
#define NAME_PRIV "kmb-p12-priv"
#define IN_SOURCE "/var/lib/kubelet/export"
#define IN_TARGET "/var/lib/kubelet/plugins/kmbench/p12" /* a plugin's dir: a valid --mount-target */

enum { OP_MOUNT, OP_UMOUNT, OP_TRUE, N_OPS };

static bool ctr_start(const char *name, bool privileged) {
        char bind[800], target[800], *argv[24];
        size_t k = 0;

        snprintf(target, sizeof(target), "%s/plugins/kmbench/p12", route_kubelet_dir());
        argv[k++] = (char *)km();
        argv[k++] = (char *)"run";
        argv[k++] = (char *)"-d";
        argv[k++] = (char *)"--name";
        argv[k++] = (char *)name;
        argv[k++] = (char *)"--image";
        argv[k++] = (char *)"fuse-tools:latest";
        argv[k++] = (char *)"--mount";
        argv[k++] = bind;
        if (privileged)
                argv[k++] = (char *)"--privileged";
        else {
                argv[k++] = (char *)"--allow-mount";
                argv[k++] = (char *)"fuse";
                argv[k++] = (char *)"--allow-mount";
                argv[k++] = (char *)"fuse.bindfs";
                argv[k++] = (char *)"--mount-target";
                argv[k++] = (char *)target;
        }
        argv[k++] = (char *)"--";
        argv[k++] = (char *)"sleep";
        argv[k++] = (char *)"1000000";
        argv[k] = NULL;
        snprintf(bind, sizeof(bind), "%s:/var/lib/kubelet:rshared", route_kubelet_dir());
        if (run_fds(argv, route_env(), -1, -1) != 0) {
                fail("P12: kubemount run -d --name %s%s failed", name, privileged ? " --privileged" : "");
                show_errlog();
                return false;
        }
        return true;
}

static void ctr_remove(const char *name) {
        char *argv[] = { (char *)km(), (char *)"rm", (char *)"-f", (char *)name, NULL };
        run_fds(argv, route_env(), -1, -1);
}

/* Until target's mount state in A is `mounted` (polled every 100 µs), at most 5 s. */
static bool wait_mount_state(const char *target, bool mounted) {
        double t0 = now();

        while (is_mount_point_raw(target) != mounted) {
                if (now() - t0 > 5.0)
                        return false;
                usleep(100);
        }
        return true;
}

/* One timed op in container name; the seconds it took, or -1. */
static double timed(const char *name, int op, const char *host_target) {
        char *mount_argv[] = { (char *)km(),     (char *)"exec",    (char *)name,      (char *)"--",
                               (char *)"bindfs", (char *)IN_SOURCE, (char *)IN_TARGET, NULL };
        char *umount_argv[] = { (char *)km(),     (char *)"exec",    (char *)name, (char *)"--",
                                (char *)"umount", (char *)IN_TARGET, NULL };
        char *true_argv[] = { (char *)km(), (char *)"exec", (char *)name, (char *)"--", (char *)"true", NULL };
        char *const *argv = op == OP_MOUNT ? mount_argv : op == OP_UMOUNT ? umount_argv : true_argv;
        double t = now();
        int st = run_fds(argv, route_env(), -1, -1);

        if (st != 0 || (op != OP_TRUE && !wait_mount_state(host_target, op == OP_MOUNT))) {
                fail("P12: kubemount exec %s -- %s failed (exit %d%s)", name, argv[4], st,
                     st == 0 ? ", the host did not see it" : "");
                show_errlog();
                return -1;
        }
        return now() - t;
}

static double p90(const double *sorted, long n) {
        return sorted[(size_t)ceil(0.9 * (double)n) - 1];
}

void bench_p12(long n) {
        static const char *op_name[N_OPS] = { "mount", "umount", "true" };
        double *v[2][N_OPS] = { { NULL } }, m[2][N_OPS];
        char target[700], name[160];
        bool started[2] = { false, false };
        struct result *r;

        for (int s = 0; s < 2; s++)
                for (int op = 0; op < N_OPS; op++)
                        if (!(v[s][op] = calloc((size_t)n, sizeof(double))))
                                goto out;
        if (!route_setup())
                goto out;
        snprintf(target, sizeof(target), "%s/plugins", route_kubelet_dir());
        (void)mkdir(target, 0755);
        snprintf(target, sizeof(target), "%s/plugins/kmbench", route_kubelet_dir());
        (void)mkdir(target, 0755);
        snprintf(target, sizeof(target), "%s/plugins/kmbench/p12", route_kubelet_dir());
        if (mkdir(target, 0755) < 0 && errno != EEXIST) {
                fail("P12: mkdir %s: %m", target);
                goto out;
        }
        say("P12: a bindfs mount through the mount broker vs in a --privileged container, %ld runs each ...", n);
        if (!(started[0] = ctr_start(NAME_BROKER, false)) || !(started[1] = ctr_start(NAME_PRIV, true)))
                goto out;
        /* Warm: each container's first exec, mount and umount (page cache, the agent's heap). */
        for (int s = 0; s < 2; s++)
                for (int op = 0; op < N_OPS; op++)
                        if (timed(s ? NAME_PRIV : NAME_BROKER, op, target) < 0)
                                goto out;
        wait_quiet();
        for (long i = 0; i < n && !errors; i++)
                for (int k = 0; k < 2; k++) {
                        int s = (int)((i + k) % 2); /* 0: the broker's; each side first half the time */

                        for (int op = 0; op < N_OPS; op++)
                                if ((v[s][op][i] = timed(s ? NAME_PRIV : NAME_BROKER, op, target)) < 0)
                                        goto out;
                }
        for (int s = 0; s < 2; s++)
                for (int op = 0; op < N_OPS; op++)
                        m[s][op] = median(v[s][op], (size_t)n); /* sorts */

        snprintf(name, sizeof(name), "P12 bindfs mount through the broker vs in a --privileged container (%ld)", n);
        r = add_result(name, m[0][OP_MOUNT], m[1][OP_MOUNT]);
        goal_ratio_max(r, 1.1); /* issue 23 (issue 12: ≤ 1.5×) */
        note(r,
             "`kubemount exec NAME -- bindfs SRC T` until T is mounted in the host; p90 %.2f vs %.2f ms; "
             "beyond `exec -- true`: %.2f vs %.2f ms",
             p90(v[0][OP_MOUNT], n) * 1e3, p90(v[1][OP_MOUNT], n) * 1e3, (m[0][OP_MOUNT] - m[0][OP_TRUE]) * 1e3,
             (m[1][OP_MOUNT] - m[1][OP_TRUE]) * 1e3);
        for (int op = OP_UMOUNT; op < N_OPS; op++) {
                snprintf(name, sizeof(name), "P12 `exec -- %s`: default container vs --privileged", op_name[op]);
                r = add_result(name, m[0][op], m[1][op]);
                note(r, "p90 %.2f vs %.2f ms%s", p90(v[0][op], n) * 1e3, p90(v[1][op], n) * 1e3,
                     op == OP_UMOUNT ? "; until T is no longer a mount point in the host" : "");
        }
out:
        if (started[0])
                ctr_remove(NAME_BROKER);
        if (started[1])
                ctr_remove(NAME_PRIV);
        for (int s = 0; s < 2; s++)
                for (int op = 0; op < N_OPS; op++)
                        free(v[s][op]);
}
