/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench: times kubemount (the command and the library), and
 * nsenter-compat's nsenter, against the tools they replace, on this machine,
 * in one run, and prints medians, ratios and whether each goal is met.
 *
 * Everything happens in a throwaway mount+PID namespace sandbox (sandbox.c);
 * this file reads the options and runs the benchmarks in order.  bench.h
 * lists what the other files hold.
 *
 * Exit status: 0 when every benchmark ran (missed goals included), 1 on a
 * real error (a command failed, a check failed), 77 when not root.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

struct bench_options opt = {
        .mounts = 20000,
        .peer_sizes = { 1000, 2000 },
        .n_peer_sizes = 2,
        .scale = 1.0,
};

/* Whether benchmark name (startup, p1, p1b, p2, p2b, p2c, p3, p4, p5, p6, p7, p8, p5c, p12, audit, helper) is selected.
 */
static bool want(const char *name) {
        size_t n = strlen(name);
        for (const char *p = opt.only; p && *p;) {
                size_t k = strcspn(p, ",");
                if (k == n && strncmp(p, name, n) == 0)
                        return true;
                /* "shim" is another name for p5 (the nsenter-compat probe). */
                if (strcmp(name, "p5") == 0 && k == 4 && strncmp(p, "shim", 4) == 0)
                        return true;
                p += k + (p[k] == ',');
        }
        return !opt.only;
}

/* Runs inside the sandbox (namespaces A and B set up); returns the exit status. */
static int run_benchmarks(void) {
        bool vcs = false;
        long base;

        print_header();
        base = count_mounts();

        /* ---- the small host ---- */
        {
                char label[64];
                snprintf(label, sizeof(label), "[%ld mounts]", base);
                if (want("startup"))
                        bench_startup();
                if (want("p1"))
                        bench_p1(label, iters(100));
                if (want("p1b"))
                        bench_p1b(label, iters(2000));
                if (!errors && (want("p2") || want("p2b") || want("p2c") || want("p6") || want("p8") || want("p5c") ||
                                want("p12")))
                        vcs = vcs_setup();
                if (!errors && vcs && (want("p2") || want("p2b")))
                        bench_p2(label, iters(100), false);
                if (!errors && vcs && want("p6"))
                        bench_p6(20);
                if (!errors && vcs && want("p8"))
                        bench_p8(iters(20));
                if (!errors && vcs && want("p5c"))
                        bench_p5c(200);
                if (!errors && vcs && want("p12"))
                        bench_p12(iters(30));
                /* After the others: the kernel tears down its 800 containers for a while after. */
                if (!errors && vcs && want("p2c"))
                        bench_p2c(iters(40), 200);
                if (!errors && want("p7"))
                        bench_p7(iters(7) < 5 ? 5 : iters(7)); /* ≥ 5 cold runs: medians of few are noise */
        }
        if (!errors && want("p5") && !opt.shim) {
                if (opt.only)
                        fail("P5 needs nsenter-compat's nsenter (--nsenter-compat PATH)");
                else
                        say("P5: skipped (no nsenter-compat nsenter; pass --nsenter-compat PATH)");
        }
        /* ---- P5 with ~1,000 mounts on the host ---- */
        if (!errors && want("p5") && opt.shim) {
                char root[512], label[64];
                long n = opt.mounts >= 2000 ? 1000 : opt.mounts / 2;

                snprintf(root, sizeof(root), "%s/p5tree", workdir);
                say("building %ld host mounts ...", n);
                if (tree_build(root, n) < 0)
                        fail("building %ld mounts: %m", n);
                else {
                        long total = count_mounts();
                        snprintf(label, sizeof(label), "[%ld mounts]", total);
                        bench_p5(label, total, iters(100), false);
                }
                tree_drop(root);
        }
        if (errors)
                goto done;

        /* ---- the large host ---- */
        if (want("p1") || want("p1b") || want("p3") || want("audit") || want("helper") || (want("p5") && opt.shim) ||
            (vcs && want("p2b"))) {
                char root[512], label[64];
                double t;

                snprintf(root, sizeof(root), "%s/many", workdir);
                say("building %ld host mounts ...", opt.mounts);
                t = tree_build(root, opt.mounts);
                if (t < 0) {
                        fail("building %ld mounts: %m", opt.mounts);
                        goto done;
                }
                say("  %ld mounts in %.2f s (%.1f µs each)", opt.mounts, t, t * 1e6 / (double)opt.mounts);
                snprintf(label, sizeof(label), "[%ld mounts]", count_mounts());
                if (want("p1"))
                        bench_p1(label, iters(opt.quick ? 10 : 25));
                if (!errors && want("p1b"))
                        bench_p1b(label, iters(500));
                if (!errors && want("p3"))
                        bench_p3(label, count_mounts());
                if (!errors && want("audit"))
                        bench_audit();
                if (!errors && want("p5") && opt.shim)
                        bench_p5(label, count_mounts(), iters(opt.quick ? 10 : 30), true);
                if (!errors && vcs && want("p2b"))
                        bench_p2(label, iters(opt.quick ? 10 : 40), true);
                if (!errors && want("helper") && helper_on()) {
                        snprintf(label, sizeof(label), "[%ld mounts, umount.* helper on host]", count_mounts());
                        bench_p1b(label, iters(opt.quick ? 5 : 15));
                        if (!errors)
                                bench_p1(label, iters(opt.quick ? 3 : 8));
                        helper_off();
                }
                tree_drop(root);
                sleep(1); /* let the kernel free the detached tree before P4 times unmounts */
        }
        if (errors)
                goto done;

        if (want("p4"))
                bench_p4();
        if (!errors && want("p4") && want("helper"))
                bench_p4_helper();

done:
        vcs_teardown();
        print_report();
        fflush(stdout);
        return errors ? 1 : 0;
}

static void usage(void) {
        puts("Usage: kubemount-bench --kubemount PATH [--floor PATH] [--nsenter-compat PATH] [--baseline PATH]\n"
             "                       [--mounts N] [--peer-sizes N,M] [--scale X] [--quick] [--no-audit]\n"
             "                       [--rootfs DIR] [--fuse-tools LAYOUT] [--markdown FILE]\n"
             "                       [--only startup,p1,p1b,p2,p2b,p2c,p3,p4,p5|shim,p6,p7,p8,p5c,p12,audit,helper]\n"
             "Times kubemount (and nsenter-compat's nsenter, P5) against mount(8), umount(8),\n"
             "nsenter and findmnt, kubemount run (P2, P2b, P6: with --rootfs DIR, e.g. from\n"
             "tests/lib/rootfs.sh) against crun run and runc run, and kubemount pull (P7:\n"
             "docker-registry on loopback) against skopeo copy + umoci unpack, routed mounts\n"
             "(P8, P5c: with --rootfs and --fuse-tools, the image's OCI layout) against the\n"
             "host's client, and a FUSE mount through the mount broker against one in a\n"
             "--privileged container (P12, the same), in a throwaway\n"
             "mount+PID namespace (root only).  --baseline: another kubemount binary (say, a\n"
             "build of main), timed interleaved with ours in start-up and P1.  Exit 0 when all\n"
             "benchmarks ran, 1 on an error, 77 when not root.");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "kubemount", required_argument, NULL, 'k' },
                { "floor", required_argument, NULL, 'f' },
                { "baseline", required_argument, NULL, 'b' },
                { "nsenter-compat", required_argument, NULL, 'c' },
                { "mounts", required_argument, NULL, 'n' },
                { "peer-sizes", required_argument, NULL, 'p' },
                { "scale", required_argument, NULL, 's' },
                { "quick", no_argument, NULL, 'q' },
                { "no-audit", no_argument, NULL, 'A' },
                { "only", required_argument, NULL, 'O' },
                { "markdown", required_argument, NULL, 'm' },
                { "rootfs", required_argument, NULL, 'r' },
                { "fuse-tools", required_argument, NULL, 'F' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0)
                switch (c) {
                case 'k':
                        opt.kubemount = optarg;
                        break;
                case 'f':
                        opt.floor = optarg;
                        break;
                case 'b':
                        opt.baseline = optarg;
                        break;
                case 'c':
                        opt.shim = optarg;
                        break;
                case 'n':
                        opt.mounts = strtol(optarg, NULL, 10);
                        break;
                case 'p': {
                        char *p = optarg;
                        opt.n_peer_sizes = 0;
                        while (*p && opt.n_peer_sizes < 4) {
                                opt.peer_sizes[opt.n_peer_sizes++] = strtol(p, &p, 10);
                                p += *p == ',';
                        }
                        break;
                }
                case 's':
                        opt.scale = strtod(optarg, NULL);
                        break;
                case 'q':
                        opt.quick = true;
                        opt.scale = 0.2;
                        opt.mounts = 2000;
                        opt.peer_sizes[0] = 250;
                        opt.peer_sizes[1] = 500;
                        opt.n_peer_sizes = 2;
                        break;
                case 'A':
                        opt.no_audit = true;
                        break;
                case 'O':
                        opt.only = optarg;
                        break;
                case 'm':
                        opt.markdown = optarg;
                        break;
                case 'r':
                        opt.rootfs = optarg;
                        break;
                case 'F':
                        opt.fuse_tools = optarg;
                        break;
                case 'h':
                        usage();
                        return 0;
                default:
                        usage();
                        return 2;
                }
        if (!opt.kubemount || opt.mounts < 10 || opt.scale <= 0) {
                usage();
                return 2;
        }
        for (size_t i = 0; i < opt.n_peer_sizes; i++)
                if (opt.peer_sizes[i] < 10 || opt.peer_sizes[i] > 5000) {
                        fprintf(stderr,
                                "kubemount-bench: --peer-sizes must be 10..5000 (util-linux umount -R is "
                                "quadratic: ~620 s at 20,000)\n");
                        return 2;
                }
        if (!find_peers())
                return 1;
        if (geteuid() != 0) {
                fprintf(stderr, "kubemount-bench: SKIP: needs root (mount namespaces)\n");
                return 77;
        }
        if (!opt.floor) {
                /* Next to this program in the build directory. */
                static char path[4096];
                ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
                if (n > 0) {
                        path[n] = '\0';
                        strcpy(strrchr(path, '/') + 1, "kubemount-bench-floor");
                        if (access(path, X_OK) == 0)
                                opt.floor = path;
                }
        } else if (!(opt.floor = realpath(opt.floor, NULL)) || access(opt.floor, X_OK) < 0) {
                fprintf(stderr, "kubemount-bench: --floor: not an executable\n");
                return 2;
        }
        if (!opt.shim) {
                /* build/tests/bench/kubemount-bench -> build/nsenter-compat/nsenter */
                static char path[4096];
                ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
                char *slash;
                if (n > 0) {
                        path[n] = '\0';
                        for (int i = 0; i < 3 && (slash = strrchr(path, '/')); i++)
                                *slash = '\0';
                        strcat(path, "/nsenter-compat/nsenter");
                        if (access(path, X_OK) == 0)
                                opt.shim = path;
                }
        } else if (!(opt.shim = realpath(opt.shim, NULL)) || access(opt.shim, X_OK) < 0) {
                fprintf(stderr, "kubemount-bench: --nsenter-compat: not an executable\n");
                return 2;
        }
        if (opt.rootfs) {
                struct stat st;
                char *abs = realpath(opt.rootfs, NULL);
                if (!abs || stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        fprintf(stderr, "kubemount-bench: --rootfs %s: not a directory\n", opt.rootfs);
                        return 2;
                }
                opt.rootfs = abs;
        }
        {
                char *abs = realpath(opt.kubemount, NULL);
                if (!abs || access(abs, X_OK) < 0) {
                        fprintf(stderr, "kubemount-bench: %s: not an executable\n", opt.kubemount);
                        return 2;
                }
                opt.kubemount = abs;
        }
        vcs_init();
        {
                int status = sandbox_run(run_benchmarks);
                vcs_cleanup_outer();
                return status;
        }
}
