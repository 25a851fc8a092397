/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench, VCS containers:
 *   P2   `kubemount run --rootfs R -- true` (the whole command, agent warm)
 *        against `crun run` and `runc run` of a bundle with the same rootfs
 *        and the config `kubemount run --print-spec` prints (bench_peers.c
 *        changes it where a peer refuses it), and `run --privileged -- true`;
 *   P2b  the same with the large mount tree in the host namespace;
 *   P6   memory of kubemount's own processes per detached container.
 *
 * The agent is the one `kubemount run` starts (in A, the sandbox's host;
 * /proc/1 is the driver), with KUBEMOUNT_STATE_DIR in the work directory and
 * KUBEMOUNT_CGROUP_PARENT=kubemount-bench-<pid>.  crun 1.8 refuses to start
 * on a hybrid cgroup host, so it runs in "C", a child namespace of A made for
 * the occasion with /sys/fs/cgroup/unified unmounted (in C only).  At the
 * end the containers, the agent and every cgroup we (or crun/runc) made are
 * removed; vcs_cleanup_outer() sweeps again after an interrupted run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define CGROUP_FS "/sys/fs/cgroup"
#define UNIFIED CGROUP_FS "/unified"
#define P6_NAME "kmb-p6-"

static char cg_parent[64];   /* KUBEMOUNT_CGROUP_PARENT, named after our pid outside the sandbox */
static char peer_prefix[64]; /* crun/runc container ids, hence their cgroups */
static char state_dir[600];  /* KUBEMOUNT_STATE_DIR */
static char bundle_orig[600], bundle_peer[2][600], crun_root[600], runc_root[600]; /* [0] crun, [1] runc */
static char **env_vcs;
static char *CRUN, *RUNC;
static pid_t agent_pid = -1;
static long peer_seq;
static bool ready, config_checked;
static char config_change[2][400]; /* what each peer's config differs in, "" when nothing */
static char config_errors[400];    /* how a peer rejected the generated config */
static bool unified_in_a;          /* A has the cgroup2 mount (C must not take it from A) */
static double first_small = NAN;   /* the first run on the small host: agent auto-start included */

/* ------------------------------------------------------------------ */
/* helpers */

static bool km_ok(char *const argv[]) {
        int st = run_fds(argv, env_vcs, -1, -1);
        if (st != 0) {
                fail("kubemount %s %s ... exited %d", argv[1], argv[2] ? argv[2] : "", st);
                show_errlog();
        }
        return st == 0;
}

/* The first line of a small file (an error message, /proc/PID/comm), or "". */
static char *read_line(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

        if (fd >= 0)
                close(fd);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return buf;
}

/* Before the sandbox: the names, from our real pid. */
void vcs_init(void) {
        snprintf(cg_parent, sizeof(cg_parent), "kubemount-bench-%d", (int)getpid());
        snprintf(peer_prefix, sizeof(peer_prefix), "kmbench-%d-", (int)getpid());
}

/* After the sandbox (every process in it is gone): what an interrupted run left. */
void vcs_cleanup_outer(void) {
        int left = opt.rootfs ? bench_cgroup_sweep(cg_parent, peer_prefix) : 0;

        if (left)
                fprintf(stderr, "kubemount-bench: %d cgroup(s) %s* / %s* left under %s\n", left, cg_parent, peer_prefix,
                        CGROUP_FS);
}

/* ------------------------------------------------------------------ */
/* the agent */

/* The `kubemount agent` in the sandbox (argv[0] "kubemount", argv[1] "agent"), or -1. */
static pid_t find_agent(void) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        pid_t found = -1;

        while (d && (e = readdir(d))) {
                char path[300], buf[256];
                ssize_t n;
                int fd;

                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                {
                        const char *base = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
                        size_t len = strlen(buf);
                        if (strcmp(base, "kubemount") == 0 && (ssize_t)len + 1 < n &&
                            strcmp(buf + len + 1, "agent") == 0)
                                found = atoi(e->d_name);
                }
        }
        if (d)
                closedir(d);
        return found;
}

/* One `kubemount run -- true`; the seconds it took, or -1. */
static double run_true(void) {
        char *argv[] = { (char *)km(),   (char *)"run", (char *)"--rootfs", (char *)opt.rootfs, (char *)"--",
                         (char *)"true", NULL };
        double t = now();
        return km_ok(argv) ? now() - t : -1;
}

/* `kubemount ps --json [-a]`: the array of containers (new reference), or NULL. */
static json_t *ps_list(bool all) {
        char *argv[] = { (char *)km(), (char *)"ps", (char *)"--json", all ? (char *)"-a" : NULL, NULL };
        char *text = capture(argv, env_vcs);
        json_t *list = text ? json_loads(text, 0, NULL) : NULL;

        free(text);
        if (list && !json_is_array(list)) {
                json_decref(list);
                list = NULL;
        }
        return list;
}

/* Auto-start (timed: the first run) and find the agent. */
static double agent_start(void) {
        double t = run_true();
        if (t < 0)
                return -1;
        agent_pid = find_agent();
        if (agent_pid < 0) {
                fail("kubemount run started no agent (no `kubemount agent` process in the sandbox)");
                return -1;
        }
        return t;
}

/* The agent reparents to us (PID 1 of the sandbox): TERM, reap, KILL after 5 s. */
static void agent_stop(void) {
        if (agent_pid <= 0)
                return;
        kill(agent_pid, SIGTERM);
        for (int i = 0; i < 500; i++) {
                pid_t p = waitpid(agent_pid, NULL, WNOHANG);
                if (p == agent_pid || (p < 0 && errno == ECHILD && kill(agent_pid, 0) < 0))
                        break;
                if (i == 499) {
                        kill(agent_pid, SIGKILL);
                        waitpid(agent_pid, NULL, 0);
                }
                usleep(10000);
        }
        agent_pid = -1;
}

/* ------------------------------------------------------------------ */
/* set-up and tear-down (in the sandbox) */

/*
 * The bundles: BUNDLE_ORIG holds the config kubemount prints, BUNDLE_PEER
 * the ones crun and runc are timed with (the same, or with config_change applied).
 */
static bool write_config(const char *dir, json_t *config) {
        char path[1300];
        mkdir(dir, 0755);
        snprintf(path, sizeof(path), "%s/config.json", dir);
        return json_dump_file(config, path, JSON_INDENT(2)) == 0;
}

char **vcs_env(void) {
        return env_vcs;
}

bool vcs_setup(void) {
        char *spec_argv[] = { (char *)km(),           (char *)"run", (char *)"--rootfs", (char *)opt.rootfs,
                              (char *)"--print-spec", (char *)"--",  (char *)"true",     NULL };
        char e1[700], e2[128], e3[4200];
        char *text;
        json_t *config;
        double t;

        if (!opt.rootfs) {
                if (opt.only)
                        fail("P2, P2b and P6 need a container rootfs (--rootfs DIR; scripts/bench builds one)");
                else
                        say("P2, P2b, P6: skipped (no --rootfs DIR; scripts/bench makes one: tests/lib/rootfs.sh)");
                return false;
        }
        enter(ns_a);
        snprintf(state_dir, sizeof(state_dir), "%s/kubemount-state", workdir);
        snprintf(bundle_peer[0], sizeof(bundle_peer[0]), "%s/p2-bundle-crun", workdir);
        snprintf(bundle_peer[1], sizeof(bundle_peer[1]), "%s/p2-bundle-runc", workdir);
        snprintf(bundle_orig, sizeof(bundle_orig), "%s/p2-bundle-as-generated", workdir);
        snprintf(crun_root, sizeof(crun_root), "%s/crun-state", workdir);
        snprintf(runc_root, sizeof(runc_root), "%s/runc-state", workdir);
        mkdir(crun_root, 0700);
        mkdir(runc_root, 0700);
        snprintf(e1, sizeof(e1), "KUBEMOUNT_STATE_DIR=%s", state_dir);
        snprintf(e2, sizeof(e2), "KUBEMOUNT_CGROUP_PARENT=%s", cg_parent);
        env_vcs = env_with(env_plain, e1, e2); /* env_plain: KUBEMOUNT_HOST_MOUNT_NS=A too */
        /* The agent that run starts is the installed kubemount unless named: this build's. */
        snprintf(e3, sizeof(e3), "KUBEMOUNT_AGENT_BINARY=%s", km());
        env_vcs = env_with(env_vcs, e3, NULL);
        CRUN = find_program("crun");
        RUNC = find_program("runc");
        if (!CRUN)
                say("  crun not found: P2's crun rows are left out");
        if (!RUNC)
                say("  runc not found: P2's runc rows are left out");

        text = capture(spec_argv, env_vcs);
        config = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        if (!config || !json_is_object(config)) {
                fail("kubemount run --print-spec printed no JSON object");
                show_errlog();
                json_decref(config);
                return false;
        }
        if (!write_config(bundle_orig, config) || !write_config(bundle_peer[0], config) ||
            !write_config(bundle_peer[1], config)) {
                fail("writing %s/config.json: %m", workdir);
                json_decref(config);
                return false;
        }
        json_decref(config);

        say("VCS containers: starting the agent (the first kubemount run) ...");
        t = agent_start();
        if (t < 0)
                return false;
        say("  first run, agent auto-start included: %.1f ms; agent pid %d (sandbox), state %s, cgroups %s/*/%s",
            t * 1e3, (int)agent_pid, state_dir, CGROUP_FS, cg_parent);
        first_small = t;
        unified_in_a = is_mount_point_raw(UNIFIED);
        ready = true;
        return true;
}

/* Containers left (a failed P6), the agent, then the cgroups. */
void vcs_teardown(void) {
        int left;

        if (!ready)
                return;
        enter(ns_a);
        {
                json_t *list = ps_list(true), *c;
                size_t i;

                json_array_foreach(list, i, c) {
                        char *rm[] = { (char *)km(), (char *)"rm", (char *)"-f",
                                       (char *)json_string_value(json_object_get(c, "name")), NULL };
                        if (rm[3])
                                run_fds(rm, env_vcs, -1, -1);
                }
                json_decref(list);
        }
        agent_stop();
        left = bench_cgroup_sweep(cg_parent, peer_prefix);
        if (left)
                fail("%d cgroup(s) of ours could not be removed (%s/*/%s, %s*)", left, CGROUP_FS, cg_parent,
                     peer_prefix);
        ready = false;
}

/* ------------------------------------------------------------------ */
/* the peers */

/* C: a child of A (taken now, with A's mounts) without the cgroup2 mount crun refuses; an fd, or -1. */
static int crun_ns_make(void) {
        int fd;

        enter(ns_a);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
                fail("crun's namespace: %m");
                enter(ns_a);
                return -1;
        }
        if (is_mount_point_raw(UNIFIED) && umount2(UNIFIED, MNT_DETACH) < 0) {
                fail("crun's namespace: umount %s: %m", UNIFIED);
                enter(ns_a);
                return -1;
        }
        fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        enter(ns_a);
        if (unified_in_a && !is_mount_point_raw(UNIFIED)) {
                fail("crun's namespace: unmounting %s there removed it from the sandbox's host namespace", UNIFIED);
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

static void peer_argv(char **argv, const char *runtime, const char *root, const char *dir, char *id) {
        char *const a[] = { (char *)runtime,    (char *)"--root", (char *)root, (char *)"run",
                            (char *)"--bundle", (char *)dir,      id,           NULL };
        memcpy(argv, a, sizeof(a));
}

/* Runs the peer once on dir's config; exit status, and the first line of its stderr in msg. */
static int peer_try(const char *runtime, const char *root, const char *dir, int ns, char *msg, size_t size) {
        char id[96], path[700], *argv[8];
        int fd, st;

        snprintf(id, sizeof(id), "%s%ld", peer_prefix, peer_seq++);
        snprintf(path, sizeof(path), "%s/peer.stderr", workdir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        peer_argv(argv, runtime, root, dir, id);
        enter(ns);
        st = run_fds(argv, env_plain, -1, fd);
        enter(ns_a);
        if (fd >= 0)
                close(fd);
        read_line(path, msg, size);
        return st;
}

/*
 * Once: do crun and runc run the config kubemount generates?  A peer that
 * does not gets the changes its errors call for (bench_peers.c), one at a
 * time, in its own bundle; what was changed is recorded in config_change.
 */
static bool check_config(int ns_c) {
        const char *names[2] = { "crun", "runc" }, *roots[2] = { crun_root, runc_root };
        char *runtimes[2] = { CRUN, RUNC };
        int nss[2] = { ns_c, ns_a };

        for (int k = 0; k < 2; k++) {
                char msg[300] = "", path[700];
                unsigned applied = 0;
                json_t *config;
                int st;

                if (!runtimes[k] || (st = peer_try(runtimes[k], roots[k], bundle_orig, nss[k], msg, sizeof(msg))) == 0)
                        continue;
                {
                        size_t n = strlen(config_errors);
                        snprintf(config_errors + n, sizeof(config_errors) - n, "%s%s exit %d: %.160s", n ? "; " : "",
                                 names[k], st, msg);
                }
                say("  %s rejects the config kubemount generates (exit %d): %s", names[k], st, msg);
                snprintf(path, sizeof(path), "%s/config.json", bundle_orig);
                config = json_load_file(path, 0, NULL);
                while (config && st != 0) {
                        char desc[300];
                        size_t n = strlen(config_change[k]);

                        if (!peer_config_fix(config, msg, &applied, desc, sizeof(desc)))
                                break;
                        if (!write_config(bundle_peer[k], config)) {
                                fail("writing %s/config.json: %m", bundle_peer[k]);
                                json_decref(config);
                                return false;
                        }
                        snprintf(config_change[k] + n, sizeof(config_change[k]) - n, "%s%s", n ? "; " : "", desc);
                        st = peer_try(runtimes[k], roots[k], bundle_peer[k], nss[k], msg, sizeof(msg));
                }
                json_decref(config);
                if (st != 0) {
                        fail("%s still rejects the config%s%s: exit %d %s", names[k],
                             config_change[k][0] ? " with " : "", config_change[k], st, msg);
                        return false;
                }
                say("  %s is timed with this change: %s", names[k], config_change[k]);
        }
        if (!config_errors[0])
                say("  crun and runc run the generated config as it is");
        return true;
}

/* After a batch: crun/runc run removes the container when it exits; delete what is left anyway. */
static void peers_tidy(int ns_c) {
        const char *roots[2] = { crun_root, runc_root };
        char *runtimes[2] = { CRUN, RUNC };

        for (int k = 0; k < 2; k++) {
                DIR *d = runtimes[k] ? opendir(roots[k]) : NULL;
                struct dirent *e;
                int left = 0;

                while (d && (e = readdir(d))) {
                        char *argv[] = { runtimes[k],
                                         (char *)"--root",
                                         (char *)roots[k],
                                         (char *)"delete",
                                         (char *)"-f",
                                         e->d_name,
                                         NULL };
                        if (e->d_name[0] == '.')
                                continue;
                        left++;
                        enter(k == 0 ? ns_c : ns_a);
                        run_fds(argv, env_plain, -1, -1);
                        enter(ns_a);
                }
                if (d)
                        closedir(d);
                if (left)
                        say("  %d %s container(s) were left after run; deleted", left, k ? "runc" : "crun");
        }
}

/* ------------------------------------------------------------------ */
/* P2, P2b */

/* K_PRIV: `run --privileged`, the container before issue 12 (no user namespace, no broker). */
enum { K_KM, K_CRUN, K_RUNC, K_TRUE, K_PRIV, N_KINDS };
static double small[N_KINDS] = { NAN, NAN, NAN, NAN, NAN };
static long small_mounts;
static char ctr_cgroup[200]; /* the cgroup `kubemount run` put its container in */

void bench_p2(const char *label, long n, bool large) {
        double *v[N_KINDS], m[N_KINDS], first = NAN;
        char name[160], id[96], *argv[N_KINDS][8];
        char *km_argv[] = { (char *)km(),   (char *)"run", (char *)"--rootfs", (char *)opt.rootfs, (char *)"--",
                            (char *)"true", NULL };
        char *priv_argv[] = { (char *)km(),           (char *)"run", (char *)"--rootfs", (char *)opt.rootfs,
                              (char *)"--privileged", (char *)"--",  (char *)"true",     NULL };
        char *true_argv[] = { (char *)"/bin/true", NULL };
        bool have[N_KINDS] = { true, CRUN != NULL, RUNC != NULL, true, true };
        long mounts = count_mounts();
        /*
         * After crun or runc exits, the kernel is busy for tens of ms tearing
         * down its namespace (with the large tree: 20,000 mount copies), and
         * whichever command came next paid for it (the first kubemount run
         * after a crun run at 20,000 mounts: 21.6 ms, the third: 10.8 ms).
         * So every command starts at least this long after a peer.
         */
        useconds_t settle_us = large ? 250000 : 50000;
        int ns_c = -1;
        struct result *r;

        if (!ready)
                return;
        wait_quiet();
        enter(ns_a);
        for (int k = 0; k < N_KINDS; k++)
                v[k] = calloc(n, sizeof(double));
        if (large) {
                /* An agent started on a host that has the mounts already (its template is made then). */
                agent_stop();
                first = agent_start();
                if (first < 0)
                        goto out;
        }
        if (CRUN && (ns_c = crun_ns_make()) < 0)
                goto out;
        if (!config_checked) {
                if (!check_config(ns_c))
                        goto out;
                config_checked = true;
        }
        memcpy(argv[K_KM], km_argv, sizeof(km_argv));
        memcpy(argv[K_TRUE], true_argv, sizeof(true_argv));
        memcpy(argv[K_PRIV], priv_argv, sizeof(priv_argv));
        if (run_true() < 0) /* warm: the agent answers, caches are hot */
                goto out;
        if (!large) {
                /* crun and runc make a cgroup per container: does kubemount run? */
                char *cat[] = { (char *)km(), (char *)"run", (char *)"--rootfs",          (char *)opt.rootfs,
                                (char *)"--", (char *)"cat", (char *)"/proc/self/cgroup", NULL };
                char *text = capture(cat, env_vcs), *path = text ? strchr(text, ':') : NULL;

                path = path ? strchr(path + 1, ':') : NULL;
                snprintf(ctr_cgroup, sizeof(ctr_cgroup), "%.*s", path ? (int)strcspn(path + 1, "\n") : 1,
                         path ? path + 1 : "?");
                free(text);
        }

        say("%s %s: kubemount run -- true vs crun run vs runc run (same rootfs and config), %ld runs each ...",
            large ? "P2b" : "P2", label, n);
        for (long i = 0; i < n; i++)
                for (int step = 0; step < N_KINDS; step++) {
                        int k = (int)((i + step) % N_KINDS), st;
                        double t;

                        if (!have[k])
                                continue;
                        if (k == K_CRUN || k == K_RUNC) {
                                snprintf(id, sizeof(id), "%s%ld", peer_prefix, peer_seq++);
                                peer_argv(argv[k], k == K_CRUN ? CRUN : RUNC, k == K_CRUN ? crun_root : runc_root,
                                          bundle_peer[k == K_RUNC], id);
                        }
                        enter(k == K_CRUN ? ns_c : ns_a);
                        t = now();
                        st = run_fds(argv[k], k == K_KM || k == K_PRIV ? env_vcs : env_plain, -1, -1);
                        v[k][i] = now() - t;
                        enter(ns_a);
                        if (k == K_CRUN || k == K_RUNC)
                                usleep(settle_us);
                        if (st != 0) {
                                fail("P2: %s ... exited %d", argv[k][0], st);
                                show_errlog();
                                goto out;
                        }
                }
        for (int k = 0; k < N_KINDS; k++)
                m[k] = have[k] ? median(v[k], n) : NAN;

        if (!large) {
                memcpy(small, m, sizeof(small));
                small_mounts = mounts;
                snprintf(name, sizeof(name), "P2 %s: kubemount run -- true vs crun run", label);
                r = add_result(name, m[K_KM], m[K_CRUN]);
                if (have[K_CRUN])
                        goal_ratio_max(r, 0.15); /* issue 23 (issue 12: ≤ 0.3×) */
                else
                        note(r, "crun is not installed");
                note(r,
                     "%ld runs, interleaved, 50 ms pause after each peer; the same rootfs and "
                     "config (kubemount run "
                     "--print-spec)%s; agent warm; crun from a child namespace without %s",
                     n, config_change[0][0] || config_change[1][0] ? ", peers with the changes below" : "", UNIFIED);
                note(r, "cgroup of kubemount's container: %s%s (crun and runc make one per container)", ctr_cgroup,
                     strcmp(ctr_cgroup, "/") == 0 ? ", its cgroup namespace's root" : "");
                snprintf(name, sizeof(name), "P2 %s: kubemount run -- true vs runc run", label);
                r = add_result(name, m[K_KM], m[K_RUNC]);
                if (have[K_RUNC])
                        goal_ratio_max(r, 0.33);
                else
                        note(r, "runc is not installed");
                if (config_errors[0])
                        note(r, "generated config rejected: %s", config_errors);
                for (int k = 0; k < 2; k++)
                        if (config_change[k][0])
                                note(r, "%s timed with: %s", k ? "runc" : "crun", config_change[k]);
                snprintf(name, sizeof(name), "P2 %s: floor: /bin/true exec vs kubemount run -- true", label);
                r = add_result(name, m[K_TRUE], m[K_KM]);
                note(r,
                     "one exec, the floor of any command; crun %.2f ms, runc %.2f ms; first run (agent "
                     "auto-start) %.1f ms",
                     m[K_CRUN] * 1e3, m[K_RUNC] * 1e3, first_small * 1e3);
                snprintf(name, sizeof(name), "P2 %s: kubemount run -- true vs run --privileged -- true", label);
                r = add_result(name, m[K_KM], m[K_PRIV]);
                note(r,
                     "the default (user and cgroup namespaces, idmapped root, the broker's filter) against the "
                     "container before issue 12");
        } else {
                snprintf(name, sizeof(name), "P2b %s: kubemount run -- true vs the same at %ld mounts", label,
                         small_mounts);
                r = add_result(name, m[K_KM], small[K_KM]);
                goal_ratio_max(r, 1.5);
                note(r,
                     "%ld runs, 250 ms pause after each peer; agent restarted once the mounts were there (first "
                     "run, auto-start: %.1f ms); /bin/true %.2f ms here, %.2f ms at %ld mounts",
                     n, first * 1e3, m[K_TRUE] * 1e3, small[K_TRUE] * 1e3, small_mounts);
                snprintf(name, sizeof(name), "P2b %s: crun run vs the same at %ld mounts", label, small_mounts);
                r = add_result(name, m[K_CRUN], small[K_CRUN]);
                note(r, "contrast (TESTBED: crun 110 ms with 20,000 mounts); crun's namespace copies the host's table");
                snprintf(name, sizeof(name), "P2b %s: runc run vs the same at %ld mounts", label, small_mounts);
                add_result(name, m[K_RUNC], small[K_RUNC]);
                snprintf(name, sizeof(name), "P2b %s: kubemount run -- true vs crun run", label);
                add_result(name, m[K_KM], m[K_CRUN]);
                snprintf(name, sizeof(name), "P2b %s: kubemount run -- true vs runc run", label);
                add_result(name, m[K_KM], m[K_RUNC]);
                snprintf(name, sizeof(name), "P2b %s: kubemount run -- true vs run --privileged -- true", label);
                add_result(name, m[K_KM], m[K_PRIV]);
        }
out:
        if (ns_c >= 0) {
                peers_tidy(ns_c);
                close(ns_c);
        }
        enter(ns_a);
        for (int k = 0; k < N_KINDS; k++)
                free(v[k]);
}

/* ------------------------------------------------------------------ */
/* P6 */

struct mem {
        long rss, pss, uss; /* KiB */
};

/* Rss, Pss and Private_Clean+Private_Dirty of pid (smaps_rollup). */
static bool mem_of(pid_t pid, struct mem *m) {
        char path[64], line[256];
        FILE *f;
        long v;

        snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return false;
        *m = (struct mem){ 0 };
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "Rss: %ld kB", &v) == 1)
                        m->rss = v;
                else if (sscanf(line, "Pss: %ld kB", &v) == 1)
                        m->pss = v;
                else if (sscanf(line, "Private_Clean: %ld kB", &v) == 1 ||
                         sscanf(line, "Private_Dirty: %ld kB", &v) == 1)
                        m->uss += v;
        }
        fclose(f);
        return m->rss > 0;
}

void bench_p6(int n) {
        char names[64][32];
        double *start = calloc(n, sizeof(double)), *stop = calloc(n, sizeof(double));
        struct mem agent0, agent1, sum = { 0 }, one;
        pid_t pids[64];
        int started = 0, counted = 0;
        char name[160];
        struct result *r;

        if (!ready || n > 64)
                goto out;
        wait_quiet();
        enter(ns_a);
        if (run_true() < 0 || !mem_of(agent_pid, &agent0)) {
                fail("P6: the agent (pid %d) is not there", (int)agent_pid);
                goto out;
        }
        say("P6: memory of kubemount's processes with %d detached containers (sleep 1000) ...", n);
        for (int i = 0; i < n; i++) {
                char *argv[] = { (char *)km(),       (char *)"run", (char *)"-d",
                                 (char *)"--name",   names[i],      (char *)"--rootfs",
                                 (char *)opt.rootfs, (char *)"--",  (char *)"sleep",
                                 (char *)"1000",     NULL };
                double t;
                snprintf(names[i], sizeof(names[i]), P6_NAME "%d", i);
                t = now();
                if (!km_ok(argv))
                        goto out;
                start[i] = now() - t;
                started++;
        }
        usleep(300000); /* let the inits settle (log pipes, the command's exec) */
        {
                json_t *list = ps_list(false), *c;
                size_t i;

                for (int k = 0; k < n; k++)
                        pids[k] = -1;
                json_array_foreach(list, i, c) {
                        const char *cn = json_string_value(json_object_get(c, "name"));
                        for (int k = 0; cn && k < n; k++)
                                if (strcmp(cn, names[k]) == 0)
                                        pids[k] = (pid_t)json_integer_value(json_object_get(c, "pid"));
                }
                json_decref(list);
        }
        for (int k = 0; k < n; k++) {
                char comm[64], path[64];
                snprintf(path, sizeof(path), "/proc/%d/comm", (int)pids[k]);
                if (pids[k] <= 0 || strcmp(read_line(path, comm, sizeof(comm)), "kubemount-init") != 0 ||
                    !mem_of(pids[k], &one)) {
                        fail("P6: %s: no running kubemount-init at pid %d (kubemount ps --json)", names[k],
                             (int)pids[k]);
                        goto out;
                }
                sum.rss += one.rss;
                sum.pss += one.pss;
                sum.uss += one.uss;
                counted++;
        }
        if (!mem_of(agent_pid, &agent1)) {
                fail("P6: the agent (pid %d) is gone", (int)agent_pid);
                goto out;
        }
        {
                double pss = (double)sum.pss / n + (double)agent1.pss / n;
                snprintf(name, sizeof(name), "P6 [%d containers]: per container, PSS of init + agent PSS/%d = %.0f KiB",
                         n, n, pss);
                r = add_result(name, NAN, NAN);
                snprintf(r->goal, sizeof(r->goal), "≤ 1 MiB (PSS)");
                r->verdict = pss <= 1024 ? PASS : MISS;
                note(r, "RSS %.0f + %.0f = %.0f KiB; USS %.0f + %.0f = %.0f KiB (init + agent/%d)", (double)sum.rss / n,
                     (double)agent1.rss / n, (double)(sum.rss + agent1.rss) / n, (double)sum.uss / n,
                     (double)agent1.uss / n, (double)(sum.uss + agent1.uss) / n, n);
                snprintf(name, sizeof(name), "P6 [%d containers]: init (PID 1) RSS %.0f / PSS %.0f / USS %.0f KiB", n,
                         (double)sum.rss / n, (double)sum.pss / n, (double)sum.uss / n);
                r = add_result(name, NAN, NAN);
                note(r, "mean of the %d kubemount-init processes (forks of the agent, no exec): smaps_rollup", n);
                snprintf(name, sizeof(name),
                         "P6 [%d containers]: agent RSS %ld / PSS %ld / USS %ld KiB (÷%d: %.0f / %.0f / %.0f)", n,
                         agent1.rss, agent1.pss, agent1.uss, n, (double)agent1.rss / n, (double)agent1.pss / n,
                         (double)agent1.uss / n);
                r = add_result(name, NAN, NAN);
                note(r,
                     "with no container: RSS %ld / PSS %ld / USS %ld KiB (its USS falls as the forked inits "
                     "come to share its pages)",
                     agent0.rss, agent0.pss, agent0.uss);
        }
out:
        /* stop, then rm, each container started */
        for (int i = 0; i < started; i++) {
                char *st[] = { (char *)km(), (char *)"stop", names[i], NULL };
                char *rm[] = { (char *)km(), (char *)"rm", names[i], NULL };
                double t = now();
                if (!km_ok(st) || !km_ok(rm))
                        break;
                stop[i] = now() - t;
        }
        if (started == n && counted == n && !errors) {
                json_t *list = ps_list(true);
                if (!list || json_array_size(list) != 0)
                        fail("P6: kubemount ps -a lists %zu container(s) after stop + rm", json_array_size(list));
                json_decref(list);
                snprintf(name, sizeof(name), "P6: kubemount run -d (sleep 1000), per container");
                r = add_result(name, median(start, n), NAN);
                note(r, "stop + rm afterwards: %.1f ms per container (median)", median(stop, n) * 1e3);
        }
        free(start);
        free(stop);
}
