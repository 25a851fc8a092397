/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench: times kubemount (the command and the library), and
 * nsenter-compat's nsenter, against the tools they replace, on this machine,
 * in one run, and prints medians, ratios and whether each goal is met.
 *
 * Everything happens in a throwaway sandbox:
 *   - a new PID namespace whose init is this program (when it exits, the
 *     kernel kills every process left in it, so nothing can keep the
 *     namespaces below alive);
 *   - a new mount namespace "A" whose / is made MS_REC|MS_SLAVE first (the
 *     real / is never touched), with its own /proc;  A plays the host;
 *   - a private tmpfs work directory in A, under which all mounts are made
 *     (20,000 of them for the large cases);
 *   - a child mount namespace "B" of A, which plays the kubelet's container:
 *     kubemount and nsenter are run from B with --host-mount-ns /
 *     --mount= pointing at /proc/<holder of A>/ns/mnt.
 * The work directory is a private mount, so mounts made in A never propagate
 * anywhere.  The empty directory left in /tmp is removed by the outer process.
 *
 * Exit status: 0 when every benchmark ran (missed goals included), 1 on a
 * real error (a command failed, a check failed), 77 when not root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kubemount.h"

extern char **environ;

/* ------------------------------------------------------------------ */
/* options */

static struct {
        const char *kubemount;
        const char *floor; /* kubemount-bench-floor, libc only */
        const char *shim;  /* nsenter-compat's nsenter (P5) */
        const char *markdown; /* also write the table as markdown here */
        long mounts;          /* the large case: host mounts / tree size */
        long peer_sizes[4];   /* util-linux umount -R tree sizes */
        size_t n_peer_sizes;
        double scale; /* iteration multiplier */
        bool quick;
        bool no_audit;
        const char *only; /* comma list of benchmarks to run, NULL: all */
        bool verbose;
} opt = {
        .mounts = 20000,
        .peer_sizes = { 1000, 2000 },
        .n_peer_sizes = 2,
        .scale = 1.0,
};

/* ------------------------------------------------------------------ */
/* small helpers */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static int errors;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
        va_list ap;
        fputs("kubemount-bench: ERROR: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        errors++;
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether benchmark name (startup, p1, p1b, p3, p4, p5, audit, helper) is selected. */
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

static long iters(long base) {
        long n = lround((double)base * opt.scale);
        return n < 3 ? 3 : n;
}

static const char *fmt_time(double s, char *buf, size_t size) {
        if (isnan(s))
                snprintf(buf, size, "-");
        else if (s < 1e-3)
                snprintf(buf, size, "%.1f µs", s * 1e6);
        else if (s < 1.0)
                snprintf(buf, size, "%.2f ms", s * 1e3);
        else
                snprintf(buf, size, "%.2f s", s);
        return buf;
}

static const char *fmt_ratio(double r, char *buf, size_t size) {
        if (isnan(r))
                snprintf(buf, size, "-");
        else if (r < 0.01)
                snprintf(buf, size, "1/%.0f×", 1.0 / r);
        else if (r < 0.1)
                snprintf(buf, size, "%.3f×", r); /* not "0.01×" for 1/97 */
        else
                snprintf(buf, size, "%.2f×", r);
        return buf;
}

/* CPU pressure (PSI "some avg10", %), or -1 without /proc/pressure. */
static double cpu_pressure(void) {
        FILE *f = fopen("/proc/pressure/cpu", "re");
        double v = -1;

        if (f) {
                if (fscanf(f, "some avg10=%lf", &v) != 1)
                        v = -1;
                fclose(f);
        }
        return v;
}

/*
 * Other work on this 2-CPU machine adds a constant to every exec and
 * squeezes the ratios towards 1: wait (up to 2 minutes) until the CPU
 * pressure of the last 10 s is low.  Returns the pressure we started at.
 */
static double wait_quiet(void) {
        double p = cpu_pressure();

        if (p < 0 || p <= 5.0)
                return p;
        say("  waiting for other work to finish (CPU pressure %.0f%%) ...", p);
        for (int i = 0; i < 120 && (p = cpu_pressure()) > 5.0; i++)
                sleep(1);
        return p;
}

/* ------------------------------------------------------------------ */
/* results */

enum verdict { INFO, PASS, MISS };

struct result {
        char name[160];
        double ours, peer, ratio;
        char goal[48];
        enum verdict verdict;
        char note[400];
};

static struct result results[64];
static size_t n_results;
static double section_pressure = -1; /* CPU pressure when the last result was taken */

static struct result *add_result(const char *name, double ours, double peer) {
        struct result *r = &results[n_results < 63 ? n_results++ : 63];
        memset(r, 0, sizeof(*r));
        snprintf(r->name, sizeof(r->name), "%s", name);
        r->ours = ours;
        r->peer = peer;
        r->ratio = ours / peer;
        r->verdict = INFO;
        snprintf(r->goal, sizeof(r->goal), "-");
        /* The pressure of the last 10 s, i.e. while this was measured. */
        section_pressure = cpu_pressure();
        if (section_pressure > 5.0)
                snprintf(r->note, sizeof(r->note), "noisy? CPU pressure %.0f%% during the measurement", section_pressure);
        return r;
}

static void goal_ratio_max(struct result *r, double max) {
        snprintf(r->goal, sizeof(r->goal), "≤ %.2g×", max);
        r->verdict = r->ratio <= max ? PASS : MISS;
}

static void note(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct result *r, const char *fmt, ...) {
        va_list ap;
        size_t n = strlen(r->note);
        if (n && n + 2 < sizeof(r->note)) {
                strcpy(r->note + n, "; ");
                n += 2;
        }
        va_start(ap, fmt);
        vsnprintf(r->note + n, sizeof(r->note) - n, fmt, ap);
        va_end(ap);
}

/* Text columns by display width (µ, ×, ≤ are multi-byte). */
static size_t width(const char *s) {
        size_t n = 0;
        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

/* Left-aligned: pads after s was printed; right-aligned: prints padding and s. */
static void pad(FILE *f, const char *s, size_t w, bool right) {
        for (size_t i = width(s); i < w; i++)
                fputc(' ', f);
        if (right) {
                fputc(' ', f);
                fputs(s, f);
        } else
                fputc(' ', f);
}

static void print_results(FILE *f, bool markdown) {
        static const char *verdicts[] = { "info", "PASS", "MISS" };
        char a[32], b[32], c[32];

        if (markdown) {
                fprintf(f, "| benchmark | ours (median) | peer (median) | ratio | goal | result | notes |\n");
                fprintf(f, "|---|---|---|---|---|---|---|\n");
        } else
                fprintf(f, "%-66s  %11s %11s %10s  %-20s %s\n", "benchmark", "ours", "peer", "ratio", "goal", "result");
        for (size_t i = 0; i < n_results; i++) {
                const struct result *r = &results[i];
                fmt_time(r->ours, a, sizeof(a));
                fmt_time(r->peer, b, sizeof(b));
                fmt_ratio(r->ratio, c, sizeof(c));
                if (markdown)
                        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", r->name, a, b, c, r->goal,
                                r->verdict == INFO ? "info" : r->verdict == PASS ? "**PASS**" : "**MISS**", r->note);
                else {
                        fputs(r->name, f);
                        pad(f, r->name, 66, false);
                        pad(f, a, 11, true);
                        pad(f, b, 11, true);
                        pad(f, c, 10, true);
                        fputs("  ", f);
                        fputs(r->goal, f);
                        pad(f, r->goal, 20, false);
                        fprintf(f, "%s\n", verdicts[r->verdict]);
                        if (*r->note)
                                fprintf(f, "    %s\n", r->note);
                }
        }
}

/* ------------------------------------------------------------------ */
/* running commands */

static int errlog_fd = -1; /* stderr of every spawned command goes here */
static char **env_plain, **env_compat;

static char **make_env(const char *extra1, const char *extra2) {
        size_t n = 0, k = 0;
        char **e;

        while (environ[n])
                n++;
        e = calloc(n + 4, sizeof(char *));
        if (!e)
                abort();
        for (size_t i = 0; i < n; i++)
                if (strncmp(environ[i], "KUBEMOUNT_", 10) != 0 && strncmp(environ[i], "LC_ALL=", 7) != 0)
                        e[k++] = environ[i];
        e[k++] = (char *)"LC_ALL=C";
        if (extra1)
                e[k++] = strdup(extra1);
        if (extra2)
                e[k++] = strdup(extra2);
        return e;
}

static void show_errlog(void) {
        char buf[2048];
        off_t end = lseek(errlog_fd, 0, SEEK_END);
        off_t start = end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
        ssize_t n = pread(errlog_fd, buf, sizeof(buf) - 1, start);
        if (n > 0) {
                buf[n] = '\0';
                fprintf(stderr, "---- stderr of the commands (tail) ----\n%s\n----\n", buf);
        }
}

/* Spawns argv (PATH searched), waits, returns the exit status (or -1). */
static int run_env(char *const argv[], char **envp, int out_fd) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status, r;

        posix_spawn_file_actions_init(&fa);
        if (out_fd >= 0)
                posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        else
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, errlog_fd, 2);
        r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0) {
                fail("spawn %s: %s", argv[0], strerror(r));
                return -1;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -1;
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int run(char *const argv[]) {
        return run_env(argv, env_plain, -1);
}

static bool run_ok(char *const argv[]) {
        int r = run(argv);
        if (r != 0) {
                char line[512] = "";
                for (size_t i = 0; argv[i]; i++) {
                        strncat(line, argv[i], sizeof(line) - strlen(line) - 2);
                        strcat(line, " ");
                }
                fail("command failed (exit %d): %s", r, line);
                show_errlog();
                return false;
        }
        return true;
}

/* The output of a command, for ldd and strace counts. */
static char *capture(char *const argv[], char **envp) {
        char path[] = "/tmp/kubemount-bench-out.XXXXXX";
        int fd = mkstemp(path);
        char *buf;
        off_t n;

        if (fd < 0)
                return NULL;
        unlink(path);
        run_env(argv, envp, fd);
        n = lseek(fd, 0, SEEK_END);
        buf = calloc(1, (size_t)n + 1);
        if (buf && pread(fd, buf, (size_t)n, 0) < 0)
                buf[0] = '\0';
        close(fd);
        return buf;
}

/* The absolute path of a program in $PATH (malloc'ed), or NULL. */
static char *find_program(const char *name) {
        const char *path = getenv("PATH");
        char buf[4096];

        if (!path)
                path = "/usr/sbin:/usr/bin:/sbin:/bin";
        while (*path) {
                size_t n = strcspn(path, ":");
                snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
                if (access(buf, X_OK) == 0)
                        return strdup(buf);
                path += n + (path[n] == ':');
        }
        return NULL;
}

static bool have_program(const char *name) {
        char *p = find_program(name);
        free(p);
        return p != NULL;
}

/*
 * The peers by absolute path, so that neither we nor nsenter walk $PATH
 * (a kubelet's nsenter mounter passes the host's absolute mount path too).
 */
static char *NSENTER, *MOUNT, *UMOUNT, *FINDMNT;

static bool find_peers(void) {
        NSENTER = find_program("nsenter");
        MOUNT = find_program("mount");
        UMOUNT = find_program("umount");
        FINDMNT = find_program("findmnt");
        if (!NSENTER || !MOUNT || !UMOUNT || !FINDMNT) {
                fprintf(stderr, "kubemount-bench: nsenter, mount, umount and findmnt (util-linux) are needed\n");
                return false;
        }
        return true;
}

/* ------------------------------------------------------------------ */
/* namespaces */

static int ns_a = -1, ns_b = -1; /* fds of the host-like and the caller namespace */
static pid_t holder_a, holder_b;
static char hostns[64];           /* /proc/<holder_a>/ns/mnt */
static char workdir[256];

static void enter(int fd) {
        if (setns(fd, CLONE_NEWNS) < 0) {
                /* Never carry on in a namespace we did not mean to be in. */
                perror("kubemount-bench: setns");
                _exit(1);
        }
        if (chdir("/") < 0)
                _exit(1);
}

/* A child that keeps a mount namespace alive: a new one (slave of ours) or ours. */
static pid_t spawn_holder(bool new_ns, int *ret_fd) {
        int p[2];
        char c, path[64];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (new_ns && (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0))
                        _exit(1);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        if (read(p[0], &c, 1) != 1) {
                close(p[0]);
                return -1;
        }
        close(p[0]);
        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
        *ret_fd = open(path, O_RDONLY | O_CLOEXEC);
        return *ret_fd < 0 ? -1 : pid;
}

static long count_mounts(void) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        long n = 0;
        int c;

        if (!f)
                return -1;
        while ((c = getc_unlocked(f)) != EOF)
                n += c == '\n';
        fclose(f);
        return n;
}

static bool is_mount_point_raw(const char *path) {
        struct statx stx;
        return statx(AT_FDCWD, path, 0, STATX_TYPE, &stx) == 0 && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* ------------------------------------------------------------------ */
/* mount trees (in A) */

static char tree_leaf[512]; /* a mount point deep in the last tree built */

/*
 * A tree of n tmpfs mounts at root: root, about sqrt(n) children, the rest
 * spread below them (depth 2).  Returns the seconds it took, or -1.
 */
static double tree_build(const char *root, long n) {
        long rest = n - 1, l1, l2, made = 0;
        char path[512];
        double t0 = now();

        l1 = (long)ceil(sqrt((double)rest));
        if (l1 > rest)
                l1 = rest;
        l2 = rest - l1;
        if (mkdir(root, 0755) < 0 && errno != EEXIST)
                return -1;
        if (mount("tree", root, "tmpfs", 0, "mode=755") < 0)
                return -1;
        made++;
        for (long i = 0; i < l1; i++) {
                long kids = l2 / l1 + (i < l2 % l1);
                snprintf(path, sizeof(path), "%s/d%ld", root, i);
                if (mkdir(path, 0755) < 0 || mount("tree", path, "tmpfs", 0, "mode=755") < 0)
                        return -1;
                made++;
                for (long j = 0; j < kids; j++) {
                        snprintf(path, sizeof(path), "%s/d%ld/m%ld", root, i, j);
                        if (mkdir(path, 0755) < 0 || mount("tree", path, "tmpfs", 0, "mode=755") < 0)
                                return -1;
                        made++;
                        if (i == l1 / 2 && j == kids / 2)
                                snprintf(tree_leaf, sizeof(tree_leaf), "%s", path);
                }
        }
        if (made != n)
                return -1;
        return now() - t0;
}

static void tree_drop(const char *root) {
        if (is_mount_point_raw(root))
                umount2(root, MNT_DETACH);
        rmdir(root);
}

/* ------------------------------------------------------------------ */
/* the benchmarks */

static const char *km(void) {
        return opt.kubemount;
}

static char nsopt[96]; /* --host-mount-ns=... */
static char nsenter_opt[96];

/* Checks once that kubemount really mounts in A when run from B. */
static bool check_cross_ns(const char *target) {
        char *m[] = { (char *)km(), nsopt, (char *)"mount", (char *)"-t", (char *)"tmpfs", (char *)"none",
                      (char *)target, NULL };
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
static void bench_p1(const char *label, long n) {
        char target[512], name[160];
        double *ours = calloc(n, sizeof(double)), *ns = calloc(n, sizeof(double)), *same = calloc(n, sizeof(double));
        char *km_m[] = { (char *)km(), nsopt, (char *)"mount", (char *)"-t", (char *)"tmpfs", (char *)"none", target, NULL };
        char *km_u[] = { (char *)km(), nsopt, (char *)"umount", target, NULL };
        char *ns_m[] = { NSENTER, nsenter_opt, (char *)"--", MOUNT, (char *)"-t", (char *)"tmpfs",
                         (char *)"none", target, NULL };
        char *ns_u[] = { NSENTER, nsenter_opt, (char *)"--", UMOUNT, target, NULL };
        char *mm[] = { MOUNT, (char *)"-t", (char *)"tmpfs", (char *)"none", target, NULL };
        char *mu[] = { UMOUNT, target, NULL };
        char *fl_m[] = { (char *)opt.floor, hostns, (char *)"mount", target, NULL };
        char *fl_u[] = { (char *)opt.floor, hostns, (char *)"umount", target, NULL };
        double *fl = calloc(n, sizeof(double));
        int kinds = opt.floor ? 4 : 3;
        struct result *r;

        wait_quiet();
        snprintf(target, sizeof(target), "%s/p1", workdir);
        mkdir(target, 0755);
        say("P1 %s: kubemount mount+umount from a child namespace, %ld runs each ...", label, n);
        if (!check_cross_ns(target))
                goto out;
        for (long i = 0; i < n; i++) {
                double t;
                for (int k = 0; k < kinds; k++) {
                        int which = (int)((i + k) % kinds); /* rotate the order */
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
                        } else {
                                enter(ns_b);
                                t = now();
                                if (!run_ok(fl_m) || !run_ok(fl_u))
                                        goto out;
                                fl[i] = now() - t;
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
out:
        enter(ns_a);
        free(fl);
        free(ours);
        free(ns);
        free(same);
}

/* P1b: the library, in-process, vs the bare syscalls; and across namespaces. */
static void bench_p1b(const char *label, long n) {
        char target[512], name[160];
        double *lib = calloc(n, sizeof(double)), *raw = calloc(n, sizeof(double));
        double *host = calloc(n, sizeof(double)), *rawhost = calloc(n, sizeof(double));
        struct km_mount_spec *s = km_mount_spec_new();
        struct km_error err = { 0 };
        int self_b = -1;
        struct result *r;

        wait_quiet();
        snprintf(target, sizeof(target), "%s/p1b", workdir);
        mkdir(target, 0755);
        if (!s || km_mount_spec_set_source(s, "none") < 0 || km_mount_spec_set_target(s, target) < 0 ||
            km_mount_spec_set_fstype(s, "tmpfs") < 0) {
                fail("km_mount_spec: out of memory");
                goto out;
        }
        say("P1b %s: km_mount+km_umount in-process, %ld runs each ...", label, n);
        enter(ns_a);
        for (long i = 0; i < n; i++) {
                double t;
                for (int k = 0; k < 2; k++) {
                        if ((i + k) % 2 == 0) {
                                t = now();
                                if (km_mount(s, NULL, &err) < 0 || km_umount(target, NULL, 0, 0, NULL, &err) < 0) {
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
                                if (km_mount_in_host(hostns, s, NULL, &err) < 0 ||
                                    km_umount_in_host(hostns, target, NULL, 0, 0, NULL, &err) < 0) {
                                        fail("library: %s", err.message);
                                        goto out;
                                }
                                host[i] = now() - t;
                                if (i == 0 && is_mount_point_raw(target)) {
                                        fail("km_mount_in_host left a mount in the caller namespace");
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
        snprintf(name, sizeof(name), "P1b %s: km_{mount,umount}_in_host vs setns+mount+umount+setns", label);
        r = add_result(name, median(host, n), median(rawhost, n));
        note(r, "called from a child namespace; peer = raw syscalls with the same setns pair");
out:
        if (self_b >= 0)
                close(self_b);
        enter(ns_a);
        km_mount_spec_free(s);
        free(lib);
        free(raw);
        free(host);
        free(rawhost);
}

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
                                if (km_is_mount_point(path, &err) != 1) {
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
static void bench_p3(const char *label, long mounts) {
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
        note(r, "%.0f× faster; km_features_disable(KM_FEATURE_ALL): fdinfo mnt_id of path and path/..",
             peer / libold);
        snprintf(name, sizeof(name), "P3 %s: kubemount is-mountpoint (exec) vs findmnt -M", label);
        r = add_result(name, c, peer);
        note(r, "run from the child namespace with --host-mount-ns");
        snprintf(name, sizeof(name), "P3 %s: same, KUBEMOUNT_COMPAT=old-kernel", label);
        r = add_result(name, cold, peer);
}

/* P4: recursive unmount of a tree; util-linux only at small sizes. */
struct p4_point {
        long n;
        double ours, peer;
};

static double time_recursive(const char *root, long n, bool ours, long baseline) {
        char *km_r[] = { (char *)km(), nsopt, (char *)"umount", (char *)"-R", (char *)root, NULL };
        char *ul_r[] = { UMOUNT, (char *)"-R", (char *)root, NULL };
        double t;
        bool ok;

        enter(ns_a);
        if (tree_build(root, n) < 0) {
                fail("building a tree of %ld mounts at %s: %m", n, root);
                tree_drop(root);
                return NAN;
        }
        if (ours)
                enter(ns_b);
        t = now();
        ok = run_ok(ours ? km_r : ul_r);
        t = now() - t;
        enter(ns_a);
        if (ok && (is_mount_point_raw(root) || count_mounts() != baseline)) {
                fail("%s umount -R %s left %ld mounts behind", ours ? "kubemount" : "util-linux", root,
                     count_mounts() - baseline);
                ok = false;
        }
        tree_drop(root);
        return ok ? t : NAN;
}

static void bench_p4(void) {
        char root[512], name[160];
        struct p4_point pts[4];
        long baseline;
        long big_runs = opt.quick ? 1 : 3;
        double *big = calloc(big_runs, sizeof(double)), ours_big, k = NAN, extrap = NAN;
        struct result *r;

        wait_quiet();
        snprintf(root, sizeof(root), "%s/p4", workdir);
        enter(ns_a);
        baseline = count_mounts();
        say("P4: kubemount umount -R of %ld mounts (%ld runs) ...", opt.mounts, big_runs);
        char runs[128] = "";
        for (long i = 0; i < big_runs; i++) {
                big[i] = time_recursive(root, opt.mounts, true, baseline);
                snprintf(runs + strlen(runs), sizeof(runs) - strlen(runs), "%s%.2f", i ? ", " : "", big[i]);
        }
        ours_big = median(big, big_runs);
        free(big);

        for (size_t i = 0; i < opt.n_peer_sizes; i++) {
                pts[i].n = opt.peer_sizes[i];
                say("P4: umount -R (util-linux) and kubemount umount -R of %ld mounts ...", pts[i].n);
                pts[i].peer = time_recursive(root, pts[i].n, false, baseline);
                pts[i].ours = time_recursive(root, pts[i].n, true, baseline);
                snprintf(name, sizeof(name), "P4 [%ld mounts]: kubemount umount -R vs umount -R", pts[i].n);
                r = add_result(name, pts[i].ours, pts[i].peer);
                note(r, "tree: root + %ld + %ld tmpfs mounts", (long)ceil(sqrt((double)(pts[i].n - 1))),
                     pts[i].n - 1 - (long)ceil(sqrt((double)(pts[i].n - 1))));
        }
        /*
         * util-linux's umount -R reads the whole table again for every
         * unmount: n unmounts x O(n) = quadratic.  Extrapolate n^2 from the
         * largest size measured; the exponent fitted on the two largest
         * sizes is shown as a check.
         */
        if (opt.n_peer_sizes >= 2) {
                struct p4_point *a = &pts[opt.n_peer_sizes - 2], *b = &pts[opt.n_peer_sizes - 1];
                k = log(b->peer / a->peer) / log((double)b->n / (double)a->n);
        }
        if (opt.n_peer_sizes >= 1) {
                struct p4_point *b = &pts[opt.n_peer_sizes - 1];
                extrap = b->peer * pow((double)opt.mounts / (double)b->n, 2.0);
        }
        snprintf(name, sizeof(name), "P4 [%ld mounts]: kubemount umount -R vs umount -R (extrapolated)",
                 opt.mounts);
        r = add_result(name, ours_big, extrap);
        snprintf(r->goal, sizeof(r->goal), "≤ 2 s");
        r->verdict = ours_big <= 2.0 ? PASS : MISS;
        note(r, "peer NOT run at %ld: extrapolated as n^2 from %ld mounts (measured growth %ld..%ld: n^%.2f; TESTBED: ~620 s)",
             opt.mounts, pts[opt.n_peer_sizes ? opt.n_peer_sizes - 1 : 0].n, pts[0].n,
             pts[opt.n_peer_sizes ? opt.n_peer_sizes - 1 : 0].n, k);
        note(r, "runs: %s s", runs);
        note(r, "kubemount run from the child namespace; tree: root + %ld + %ld tmpfs mounts",
             (long)ceil(sqrt((double)(opt.mounts - 1))), opt.mounts - 1 - (long)ceil(sqrt((double)(opt.mounts - 1))));
}

/*
 * A host with an umount helper installed (nfs-common's /sbin/umount.nfs,
 * udisks2's umount.udisks2 ...): an overlay on /usr/sbin in A adds
 * umount.kubemount-bench.  No filesystem has that type, so it never runs.
 */
static bool helper_on(void) {
        char upper[600], wdir[600], file[700], opts[1500];
        int fd;

        enter(ns_a);
        snprintf(upper, sizeof(upper), "%s/helper-upper", workdir);
        snprintf(wdir, sizeof(wdir), "%s/helper-work", workdir);
        snprintf(file, sizeof(file), "%s/umount.kubemount-bench", upper);
        mkdir(upper, 0755);
        mkdir(wdir, 0755);
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        if (fd < 0 || write(fd, "#!/bin/sh\nexit 32\n", 19) != 19) {
                if (fd >= 0)
                        close(fd);
                return false;
        }
        close(fd);
        snprintf(opts, sizeof(opts), "lowerdir=/usr/sbin,upperdir=%s,workdir=%s", upper, wdir);
        if (mount("overlay", "/usr/sbin", "overlay", 0, opts) < 0) {
                say("  (cannot overlay /usr/sbin: %m; skipping the umount-helper case)");
                return false;
        }
        if (access("/sbin/umount.kubemount-bench", X_OK) < 0 && access("/usr/sbin/umount.kubemount-bench", X_OK) < 0) {
                umount2("/usr/sbin", 0);
                return false;
        }
        /* Helpers are installed long before a kubelet mounts: let the dir's mtime age. */
        sleep(3);
        return true;
}

static void helper_off(void) {
        enter(ns_a);
        if (umount2("/usr/sbin", 0) < 0)
                fail("removing the /usr/sbin overlay: %m");
}

/* P4 with an umount helper installed: kubemount only, small trees, extrapolated. */
static void bench_p4_helper(void) {
        char root[512], name[160];
        long sizes[2] = { opt.peer_sizes[0], opt.n_peer_sizes > 1 ? opt.peer_sizes[1] : 2 * opt.peer_sizes[0] };
        double t[2], k, extrap;
        long baseline;
        struct result *r;

        wait_quiet();
        snprintf(root, sizeof(root), "%s/p4h", workdir);
        if (!helper_on())
                return;
        enter(ns_a);
        baseline = count_mounts();
        for (int i = 0; i < 2; i++) {
                say("P4 with an umount helper installed: kubemount umount -R of %ld mounts ...", sizes[i]);
                t[i] = time_recursive(root, sizes[i], true, baseline);
                snprintf(name, sizeof(name), "P4 [%ld mounts, umount.* helper on host]: kubemount umount -R", sizes[i]);
                r = add_result(name, t[i], NAN);
                note(r, "/usr/sbin/umount.kubemount-bench exists (as umount.nfs does with nfs-common)");
        }
        k = log(t[1] / t[0]) / log((double)sizes[1] / (double)sizes[0]);
        /* At least linear: a smaller fitted exponent is noise. */
        extrap = t[1] * pow((double)opt.mounts / (double)sizes[1], fmax(1.0, k));
        if (extrap <= 30.0) {
                long runs = opt.quick ? 1 : 3;
                double v[3];
                say("P4 with an umount helper installed: kubemount umount -R of %ld mounts (%ld runs) ...", opt.mounts,
                    runs);
                for (long i = 0; i < runs; i++)
                        v[i] = time_recursive(root, opt.mounts, true, baseline);
                snprintf(name, sizeof(name), "P4 [%ld mounts, umount.* helper on host]: kubemount umount -R",
                         opt.mounts);
                r = add_result(name, median(v, runs), NAN);
                snprintf(r->goal, sizeof(r->goal), "≤ 2 s");
                r->verdict = r->ours <= 2.0 ? PASS : MISS;
                note(r, "measured; %ld..%ld mounts grew as n^%.2f", sizes[0], sizes[1], k);
        } else {
                snprintf(name, sizeof(name),
                         "P4 [%ld mounts, umount.* helper on host]: kubemount umount -R (extrapolated)", opt.mounts);
                r = add_result(name, extrap, NAN);
                snprintf(r->goal, sizeof(r->goal), "≤ 2 s");
                r->verdict = extrap <= 2.0 ? PASS : MISS;
                note(r, "NOT run at %ld (would take ~%.0f s): extrapolated from %ld..%ld mounts as n^%.2f", opt.mounts,
                     extrap, sizes[0], sizes[1], fmax(1.0, k));
        }
        helper_off();
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

static void bench_startup(void) {
        long n = iters(300);
        double *ours = calloc(n, sizeof(double)), *peer = calloc(n, sizeof(double));
        char *v[] = { (char *)km(), (char *)"--version", NULL };
        char *t[] = { (char *)"/bin/true", NULL };
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
        }
        libs = count_libs(km());
        r = add_result("start-up: kubemount --version exec vs /bin/true exec", median(ours, n), median(peer, n));
        note(r, "%ld runs; kubemount loads %d shared libraries (ldd, without vdso/ld.so); mount(8) %d, nsenter %d",
             n, libs, count_libs(MOUNT), count_libs(NSENTER));
out:
        free(ours);
        free(peer);
}

/* How often each command reads a mount table (strace), with many mounts. */
static void audit(void) {
        char target[512], log[600], m[96];
        char line[1024] = "";
        struct {
                const char *what;
                bool in_b;
                char *argv[16];
        } cmds[] = {
                { "kubemount mount", true, { (char *)km(), nsopt, (char *)"mount", (char *)"-t", (char *)"tmpfs", (char *)"none", target } },
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
                char *argv[24] = { (char *)"strace", (char *)"-f", (char *)"-qq", (char *)"-e",
                                   (char *)"trace=open,openat,openat2", (char *)"-o", log };
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
        char *const a[] = { (char *)nsenter, nsenter_opt, (char *)"--", FINDMNT, (char *)"-o",
                            (char *)"target,fstype", (char *)"--noheadings", (char *)"--first-only",
                            (char *)"--target", (char *)path, NULL };
        memcpy(argv, a, sizeof(a));
}

/* execve calls (attempts included) of argv and its children, by strace -f; -1 on error. */
static long count_execs(char *const argv[]) {
        char log[600], buf[4096], *sa[24] = { (char *)"strace", (char *)"-f", (char *)"-qq", (char *)"-e",
                                              (char *)"trace=execve", (char *)"-o", log };
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
        note(r, "execve: shim %ld / %ld, nsenter + findmnt %ld / %ld (mount point / dir)", shim_execs[0],
             shim_execs[1], real_execs[0], real_execs[1]);
}

static void bench_p5(const char *label, long mounts, long n, bool large) {
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
        say("P5 %s: findmnt --target probe via the nsenter-compat shim vs nsenter + findmnt, %ld runs each ...",
            label, n);
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

/* ------------------------------------------------------------------ */

static void header(void) {
        struct utsname u;
        char date[64];
        time_t t = time(NULL);

        uname(&u);
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime(&t));
        printf("kubemount-bench: %s, kernel %s %s, %ld CPUs, kubemount %s\n", date, u.release, u.machine,
               sysconf(_SC_NPROCESSORS_ONLN), km_version());
        printf("kubemount: %s\n", km());
        if (opt.shim)
                printf("nsenter-compat: %s\n", opt.shim);
        {
                double load[3];
                double p = cpu_pressure();
                if (getloadavg(load, 3) == 3)
                        printf("load average at start: %.2f %.2f %.2f; CPU pressure (PSI some avg10): %.1f%%\n",
                               load[0], load[1], load[2], p);
                printf("each benchmark waits (up to 2 min) for CPU pressure <= 5%%; results measured under more "
                       "are marked \"noisy?\"\n");
        }
        printf("(medians; ratio = ours / peer; all in a throwaway mount+PID namespace)\n\n");
}

static int sandbox_main(void) {
        long base;

        /* First of all: nothing we mount may reach the real host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
                perror("kubemount-bench: make / rslave");
                return 1;
        }
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                perror("kubemount-bench: mount /proc");
                return 1;
        }
        if (mount("kubemount-bench", workdir, "tmpfs", 0, "mode=755") < 0 ||
            mount(NULL, workdir, NULL, MS_PRIVATE, NULL) < 0) {
                perror("kubemount-bench: mount the work directory");
                return 1;
        }
        {
                char path[600];
                snprintf(path, sizeof(path), "%s/commands.stderr", workdir);
                errlog_fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                if (errlog_fd < 0)
                        return 1;
        }

        ns_a = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        holder_a = spawn_holder(false, &(int){ -1 });
        holder_b = spawn_holder(true, &ns_b);
        if (ns_a < 0 || holder_a < 0 || holder_b < 0) {
                perror("kubemount-bench: namespace holders");
                return 1;
        }
        snprintf(hostns, sizeof(hostns), "/proc/%d/ns/mnt", (int)holder_a);
        snprintf(nsopt, sizeof(nsopt), "--host-mount-ns=%s", hostns);
        snprintf(nsenter_opt, sizeof(nsenter_opt), "--mount=%s", hostns);
        /* Belt and braces: a kubemount without --host-mount-ns stays in the sandbox too. */
        {
                char e[128];
                snprintf(e, sizeof(e), "KUBEMOUNT_HOST_MOUNT_NS=%s", hostns);
                env_plain = make_env(e, NULL);
                env_compat = make_env(e, "KUBEMOUNT_COMPAT=old-kernel");
        }

        header();
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
        if (want("p1") || want("p1b") || want("p3") || want("audit") || want("helper") || (want("p5") && opt.shim)) {
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
                        audit();
                if (!errors && want("p5") && opt.shim)
                        bench_p5(label, count_mounts(), iters(opt.quick ? 10 : 30), true);
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
        printf("\n");
        print_results(stdout, false);
        if (opt.markdown) {
                FILE *f = fopen(opt.markdown, "we");
                if (f) {
                        print_results(f, true);
                        fclose(f);
                }
        }
        if (errors)
                printf("\n%d ERROR(S): see above\n", errors);
        else
                printf("\nGoals: %zu met, %zu missed (benchmarks: a miss is reported, not failed)\n",
                       (size_t)({
                               size_t p = 0;
                               for (size_t i = 0; i < n_results; i++)
                                       p += results[i].verdict == PASS;
                               p;
                       }),
                       (size_t)({
                               size_t p = 0;
                               for (size_t i = 0; i < n_results; i++)
                                       p += results[i].verdict == MISS;
                               p;
                       }));
        fflush(stdout);
        kill(holder_b, SIGKILL);
        kill(holder_a, SIGKILL);
        waitpid(holder_b, NULL, 0);
        waitpid(holder_a, NULL, 0);
        umount2(workdir, MNT_DETACH);
        return errors ? 1 : 0;
}

static void on_signal(int sig) {
        _exit(128 + sig);
}

static void usage(void) {
        puts("Usage: kubemount-bench --kubemount PATH [--floor PATH] [--nsenter-compat PATH]\n"
             "                       [--mounts N] [--peer-sizes N,M] [--scale X] [--quick] [--no-audit]\n"
             "                       [--only startup,p1,p1b,p3,p4,p5|shim,audit,helper] [--markdown FILE]\n"
             "Times kubemount (and nsenter-compat's nsenter, P5) against mount(8), umount(8),\n"
             "nsenter and findmnt in a throwaway mount+PID namespace (root only).  Exit 0 when\n"
             "all benchmarks ran, 1 on an error, 77 when not root.");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "kubemount", required_argument, NULL, 'k' },
                { "floor", required_argument, NULL, 'f' },
                { "nsenter-compat", required_argument, NULL, 'c' },
                { "mounts", required_argument, NULL, 'n' },
                { "peer-sizes", required_argument, NULL, 'p' },
                { "scale", required_argument, NULL, 's' },
                { "quick", no_argument, NULL, 'q' },
                { "no-audit", no_argument, NULL, 'A' },
                { "only", required_argument, NULL, 'O' },
                { "markdown", required_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c, status;
        pid_t pid;

        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0)
                switch (c) {
                case 'k':
                        opt.kubemount = optarg;
                        break;
                case 'f':
                        opt.floor = optarg;
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
                        fprintf(stderr, "kubemount-bench: --peer-sizes must be 10..5000 (util-linux umount -R is "
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
        {
                char *abs = realpath(opt.kubemount, NULL);
                if (!abs || access(abs, X_OK) < 0) {
                        fprintf(stderr, "kubemount-bench: %s: not an executable\n", opt.kubemount);
                        return 2;
                }
                opt.kubemount = abs;
        }
        snprintf(workdir, sizeof(workdir), "/tmp/kubemount-bench.XXXXXX");
        if (!mkdtemp(workdir)) {
                perror("kubemount-bench: mkdtemp");
                return 1;
        }

        /* The sandbox: new PID namespace (its init is our child) and mount namespace. */
        if (unshare(CLONE_NEWPID) < 0) {
                perror("kubemount-bench: unshare(CLONE_NEWPID)");
                rmdir(workdir);
                return 1;
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                perror("kubemount-bench: fork");
                rmdir(workdir);
                return 1;
        }
        if (pid == 0) {
                struct sigaction sa = { .sa_handler = SIG_DFL };
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (unshare(CLONE_NEWNS) < 0) {
                        perror("kubemount-bench: unshare(CLONE_NEWNS)");
                        _exit(1);
                }
                /* As PID 1 of its namespace we would ignore ^C: die on it explicitly. */
                sa.sa_handler = on_signal;
                sigaction(SIGINT, &sa, NULL);
                sigaction(SIGTERM, &sa, NULL);
                sigaction(SIGHUP, &sa, NULL);
                _exit(sandbox_main());
        }
        signal(SIGINT, SIG_IGN); /* the child decides; we clean up after it */
        signal(SIGTERM, SIG_IGN);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        rmdir(workdir);
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 1;
}
