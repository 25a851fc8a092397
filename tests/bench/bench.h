/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to kubemount-bench: what its files share.
 *
 *   kmbench.c         options, main(), the order the benchmarks run in
 *   sandbox.c         the PID/mount namespace sandbox, mount trees, helper overlay
 *   commands.c        spawning the commands being timed, finding util-linux
 *   report.c          timing statistics, the results table, progress and errors
 *   bench_mount.c     start-up, P1 (mount+umount commands), P1b (the library)
 *   bench_query.c     P3 (mount-point queries), the mount-table read audit
 *   bench_umount_r.c  P4 (umount -R), also with an umount helper installed
 *   bench_shim.c      P5 (nsenter-compat's findmnt --target probe)
 *   bench_vcs.c       P2, P2b (kubemount run vs crun/runc run), P6 (memory per container)
 *   bench_crowd.c     P2c (kubemount run with 200 containers running vs none)
 *   bench_cgroups.c   the sweep of the cgroups a run left (named after our pid)
 *   bench_peers.c     P2's peers: changes that make crun or runc accept kubemount's config
 *   bench_pull.c      P7 (kubemount pull vs skopeo copy + umoci unpack, local registry)
 *   bench_route.c     P8 (routed mount+umount vs the host's client), P5c (200 concurrent routed mounts)
 *   bench_broker.c    P12 (a FUSE mount through the mount broker vs in a --privileged container)
 */
#ifndef KUBEMOUNT_BENCH_H
#define KUBEMOUNT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/*
 * The pause after each P8 cycle, before the next: what a mount leaves to do
 * in the background (a spare container's start, a daemon's exit) is done
 * before the next one is timed, whichever way it is.  Back to back is a row
 * of its own.  (P2 runs no spares: its runs are from a --rootfs directory.)
 */
#define BENCH_SETTLE_US 20000

/* ---- options (kmbench.c) ---- */

struct bench_options {
        const char *kubemount;
        const char *floor;      /* kubemount-bench-floor, libc only */
        const char *baseline;   /* another kubemount (e.g. main's), timed next to ours in start-up and P1 */
        const char *shim;       /* nsenter-compat's nsenter (P5) */
        const char *markdown;   /* also write the table as markdown here */
        const char *rootfs;     /* a container root filesystem (P2, P2b, P6), NULL: skip them */
        const char *fuse_tools; /* the fuse-tools image's OCI layout (P8, P5c), NULL: skip them */
        long mounts;            /* the large case: host mounts / tree size */
        long peer_sizes[4];     /* util-linux umount -R tree sizes */
        size_t n_peer_sizes;
        double scale; /* iteration multiplier */
        bool quick;
        bool no_audit;
        const char *only; /* comma list of benchmarks to run, NULL: all */
        bool verbose;
};

extern struct bench_options opt;

static inline const char *km(void) {
        return opt.kubemount;
}

/* ---- timing, results and messages (report.c) ---- */

/* Inline: it brackets every timed region, so it should cost no call. */
static inline double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum verdict { INFO, PASS, MISS };

struct result {
        char name[160];
        double ours, peer, ratio;
        char goal[48];
        enum verdict verdict;
        char note[400];
};

extern int errors; /* real errors so far (fail()); missed goals are not errors */

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double median(double *v, size_t n); /* sorts v */
long iters(long base);              /* base scaled by --scale, at least 3 */
double wait_quiet(void);
struct result *add_result(const char *name, double ours, double peer);
void goal_ratio_max(struct result *r, double max);
void note(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void print_header(void);
void print_report(void);

/* ---- running commands (commands.c) ---- */

extern int errlog_fd; /* stderr of every spawned command goes here */
extern char **env_plain, **env_compat;
extern char *NSENTER, *MOUNT, *UMOUNT, *FINDMNT; /* util-linux, absolute paths */

char **make_env(const char *extra1, const char *extra2);
void show_errlog(void);
int run_env(char *const argv[], char **envp, int out_fd);
/* The same with stderr to err_fd (-1: the log); stdin is /dev/null. */
int run_fds(char *const argv[], char **envp, int out_fd, int err_fd);
/* The absolute path of a program in $PATH (malloc'ed), or NULL. */
char *find_program(const char *name);
/* base with the entries a and b (if not NULL) added (a new array; the strings of base are shared). */
char **env_with(char **base, const char *a, const char *b);
bool run_ok(char *const argv[]);
char *capture(char *const argv[], char **envp);
bool have_program(const char *name);
bool find_peers(void);

/* ---- the sandbox and what is built in it (sandbox.c) ---- */

extern int ns_a, ns_b;       /* fds of the host-like and the caller namespace */
extern char hostns[64];      /* /proc/<holder of A>/ns/mnt */
extern char workdir[256];    /* private tmpfs in A; all test mounts go below it */
extern char nsopt[96];       /* --host-mount-ns=... */
extern char nsenter_opt[96]; /* --mount=... */
extern char tree_leaf[512];  /* a mount point deep in the last tree built */

int sandbox_run(int (*body)(void));
void enter(int fd);
long count_mounts(void);
bool is_mount_point_raw(const char *path);
double tree_build(const char *root, long n);
void tree_drop(const char *root);
bool helper_on(void);
void helper_off(void);

/* ---- the benchmarks ---- */

void bench_startup(void); /* bench_mount.c */
void bench_p1(const char *label, long n);
void bench_p1b(const char *label, long n);
void bench_p3(const char *label, long mounts); /* bench_query.c */
void bench_audit(void);
void bench_p4(void); /* bench_umount_r.c */
void bench_p4_helper(void);
void bench_p5(const char *label, long mounts, long n, bool large); /* bench_shim.c */
void vcs_init(void);                                               /* bench_vcs.c; before the sandbox */
void vcs_cleanup_outer(void);                                      /* after it: cgroups an interrupted run left */
bool vcs_setup(void);                                              /* in the sandbox: bundles, the agent */
void vcs_teardown(void);                                           /* containers, the agent, cgroups */
void bench_p2(const char *label, long n, bool large);
void bench_p6(int n);
void bench_p2c(long n, int size); /* bench_crowd.c; after vcs_setup() */
struct json_t;
/* bench_peers.c: applies to config the next change a peer's error calls for (not in *applied); false: none. */
bool peer_config_fix(struct json_t *config, const char *error, unsigned *applied, char *desc, size_t size);
void bench_p7(long n); /* bench_pull.c; cold runs of each side */
char **vcs_env(void);  /* bench_vcs.c: the environment of VCS commands (state dir, cgroups, agent binary) */
void bench_p8(long n); /* bench_route.c; after vcs_setup() */
void bench_p5c(int n);
bool route_setup(void);              /* the fuse-tools image imported, an rshared kubelet dir in the work dir */
const char *route_kubelet_dir(void); /* that kubelet dir; its export/ holds a file "data" */
char **route_env(void);              /* vcs_env() with the store and the kubelet dir */
void bench_p12(long n);              /* bench_broker.c; after vcs_setup() */

/*
 * Removes the cgroups a run left at the top of /sys/fs/cgroup and up to 4
 * levels down: PARENT (kubemount's, KUBEMOUNT_CGROUP_PARENT) and PREFIX*
 * (crun's and runc's container ids).  Returns how many are left.
 */
int bench_cgroup_sweep(const char *parent, const char *prefix);

#endif
