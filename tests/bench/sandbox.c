/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kubemount-bench: the throwaway sandbox everything runs in, and what is
 * built inside it.
 *
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
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* ------------------------------------------------------------------ */
/* namespaces */

int ns_a = -1, ns_b = -1; /* fds of the host-like and the caller namespace */
static pid_t holder_a, holder_b;
char hostns[64]; /* /proc/<holder_a>/ns/mnt */
char workdir[256];
char nsopt[96]; /* --host-mount-ns=... */
char nsenter_opt[96];

void enter(int fd) {
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

long count_mounts(void) {
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

bool is_mount_point_raw(const char *path) {
        struct statx stx;
        return statx(AT_FDCWD, path, 0, STATX_TYPE, &stx) == 0 && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* ------------------------------------------------------------------ */
/* mount trees (in A) */

char tree_leaf[512]; /* a mount point deep in the last tree built */

/*
 * A tree of n tmpfs mounts at root: root, about sqrt(n) children, the rest
 * spread below them (depth 2).  Returns the seconds it took, or -1.
 */
double tree_build(const char *root, long n) {
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

void tree_drop(const char *root) {
        if (is_mount_point_raw(root))
                umount2(root, MNT_DETACH);
        rmdir(root);
}

/*
 * A host with an umount helper installed (nfs-common's /sbin/umount.nfs,
 * udisks2's umount.udisks2 ...): an overlay on /usr/sbin in A adds
 * umount.kubemount-bench.  No filesystem has that type, so it never runs.
 */
bool helper_on(void) {
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

void helper_off(void) {
        enter(ns_a);
        if (umount2("/usr/sbin", 0) < 0)
                fail("removing the /usr/sbin overlay: %m");
}

/* ------------------------------------------------------------------ */
/* setting up and tearing down (inside the new PID namespace) */

/* Mount namespace A, its work directory, the holders of A and B, the command environment. */
static bool sandbox_setup(void) {
        /* First of all: nothing we mount may reach the real host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
                perror("kubemount-bench: make / rslave");
                return false;
        }
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                perror("kubemount-bench: mount /proc");
                return false;
        }
        if (mount("kubemount-bench", workdir, "tmpfs", 0, "mode=755") < 0 ||
            mount(NULL, workdir, NULL, MS_PRIVATE, NULL) < 0) {
                perror("kubemount-bench: mount the work directory");
                return false;
        }
        {
                char path[600];
                snprintf(path, sizeof(path), "%s/commands.stderr", workdir);
                errlog_fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                if (errlog_fd < 0)
                        return false;
        }

        ns_a = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        holder_a = spawn_holder(false, &(int){ -1 });
        holder_b = spawn_holder(true, &ns_b);
        if (ns_a < 0 || holder_a < 0 || holder_b < 0) {
                perror("kubemount-bench: namespace holders");
                return false;
        }
        snprintf(hostns, sizeof(hostns), "/proc/%d/ns/mnt", (int)holder_a);
        snprintf(nsopt, sizeof(nsopt), "--host-mount-ns=%s", hostns);
        snprintf(nsenter_opt, sizeof(nsenter_opt), "--mount=%s", hostns);
        /*
         * Belt and braces: a kubemount without --host-mount-ns stays in the sandbox too.
         * The work directory stands for the kubelet's root dir: kubemount refuses a
         * target outside a kubelet dir nobody named (it could not confine it).
         */
        {
                char e[128], kd[300];
                snprintf(e, sizeof(e), "KUBEMOUNT_HOST_MOUNT_NS=%s", hostns);
                snprintf(kd, sizeof(kd), "KUBEMOUNT_KUBELET_DIR=%s", workdir);
                env_plain = make_env(e, kd);
                env_compat = env_with(env_plain, "KUBEMOUNT_COMPAT=old-kernel", NULL);
        }
        return true;
}

static void sandbox_teardown(void) {
        kill(holder_b, SIGKILL);
        kill(holder_a, SIGKILL);
        waitpid(holder_b, NULL, 0);
        waitpid(holder_a, NULL, 0);
        umount2(workdir, MNT_DETACH);
}

static void on_signal(int sig) {
        _exit(128 + sig);
}

/*
 * Runs body in the sandbox and returns its exit status: a new PID namespace
 * (its init is our child) and mount namespace; the work directory is made
 * here and removed once the child is gone.
 */
int sandbox_run(int (*body)(void)) {
        int status;
        pid_t pid;

        snprintf(workdir, sizeof(workdir), "/tmp/kubemount-bench.XXXXXX");
        if (!mkdtemp(workdir)) {
                perror("kubemount-bench: mkdtemp");
                return 1;
        }

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
                if (!sandbox_setup())
                        _exit(1);
                status = body();
                sandbox_teardown();
                _exit(status);
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
