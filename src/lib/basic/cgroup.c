/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroups of kubemount's own (see cgroup.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <signal.h>
#include <linux/sched.h>

#include "cgroup.h"
#include "fileio.h"
#include "syscalls.h"

#define CGROUP_RECORD "cgroup-parent" /* in the state dir: the agent's delegated group */

/* The agent's delegated group, once cgroup_delegate() found it. */
static char delegated_self[PATH_MAX / 2];

static bool group_name_ok(const char *g) {
        return g && *g && g[0] != '/' && !strstr(g, "..") && !strchr(g, '\n') && strlen(g) < sizeof(delegated_self);
}

/* The hierarchy systemd tracks units in, where it marks delegation: v2 (the root or "unified"), else name=systemd. */
static const char *tracking_hierarchy(int root_fd) {
        static const struct {
                const char *dir;
                long magic;
        } cand[] = { { ".", CGROUP2_SUPER_MAGIC },
                     { "unified", CGROUP2_SUPER_MAGIC },
                     { "systemd", CGROUP_SUPER_MAGIC } };

        for (size_t i = 0; i < ELEMENTSOF(cand); i++) {
                _cleanup_close_ int fd = openat(root_fd, cand[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                struct statfs sfs;

                if (fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == cand[i].magic)
                        return cand[i].dir;
        }
        return NULL;
}

/* Whether GROUP exists in the tracking hierarchy and systemd (>= 251) marked it delegated (Delegate=yes). */
static bool group_is_delegated(int root_fd, const char *group) {
        static const char *const marks[] = { "trusted.delegate", "user.delegate" };
        const char *hier = tracking_hierarchy(root_fd);
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];

        if (!hier || !group_name_ok(group))
                return false;
        snprintf(path, sizeof(path), "%s/%s", hier, group);
        fd = openat(root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        for (size_t i = 0; fd >= 0 && i < ELEMENTSOF(marks); i++) {
                char v[8];
                if (fgetxattr(fd, marks[i], v, sizeof(v)) == 1 && v[0] == '1')
                        return true;
        }
        return false;
}

/* What the agent recorded in the state dir, if it is still a delegated group (a stopped unit's goes with it). */
static bool recorded_parent(int root_fd, char *buf, size_t size) {
        const char *dir = getenv("KUBEMOUNT_STATE_DIR");
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX];
        struct stat st;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/" CGROUP_RECORD, dir && *dir ? dir : STATE_DIR_DEFAULT);
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & (S_IWGRP | S_IWOTH)) || (n = read(fd, buf, size - 1)) <= 0)
                return false;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return group_is_delegated(root_fd, buf);
}

/* $KUBEMOUNT_CGROUP_PARENT, else the agent's delegated group (its own, or the one it recorded), else "kubemount". */
static const char *cgroup_parent(int root_fd, char *buf, size_t size) {
        const char *parent = getenv("KUBEMOUNT_CGROUP_PARENT");

        if (parent && *parent)
                return group_name_ok(parent) ? parent : "kubemount";
        if (delegated_self[0])
                return delegated_self;
        return recorded_parent(root_fd, buf, size) ? buf : "kubemount";
}

/* Our own group in the tracking hierarchy, from /proc/self/cgroup, without its leading '/'. */
static int own_group(int root_fd, char *buf, size_t size) {
        const char *hier = tracking_hierarchy(root_fd);
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        char line[PATH_MAX + 64];

        if (!hier || !f)
                return -ENOENT;
        while (fgets(line, sizeof(line), f)) {
                char *path = strchr(line, ':');
                bool v2 = path && startswith(path, "::");

                if (!path || (streq(hier, "systemd") ? !startswith(path, ":name=systemd:") : !v2))
                        continue;
                path = strchr(path + 1, ':') + 1;
                path[strcspn(path, "\n")] = '\0';
                while (*path == '/')
                        path++;
                snprintf(buf, size, "%s", path);
                return *buf ? 0 : -ENOENT;
        }
        return -ENOENT;
}

int cgroup_delegate(int root_fd, int state_fd, struct km_error *err) {
        const char *parent = getenv("KUBEMOUNT_CGROUP_PARENT");
        char own[sizeof(delegated_self)];
        int r;

        /*
         * Only as a service's main process (systemd sets INVOCATION_ID; an agent started on demand never has it):
         * the delegated group of a kubelet's container (a docker scope) must not become ours.
         */
        if ((parent && *parent) || !getenv("INVOCATION_ID") || own_group(root_fd, own, sizeof(own)) < 0 ||
            !group_is_delegated(root_fd, own)) {
                /* Not delegated (or told otherwise): a record of an earlier agent's unit must not mislead. */
                if (unlinkat(state_fd, CGROUP_RECORD, 0) < 0 && errno != ENOENT)
                        return error_set(err, -errno, "cgroups: remove the record %s", CGROUP_RECORD);
                return 0;
        }
        char line[sizeof(own) + 1];

        snprintf(delegated_self, sizeof(delegated_self), "%s", own);
        snprintf(line, sizeof(line), "%s\n", own);
        r = write_file_replace(state_fd, CGROUP_RECORD, line, strlen(line), 0644, err);
        return r < 0 ? r : 1;
}

static int write_at(int dirfd, const char *path, const char *value) {
        _cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        size_t n = strlen(value);

        if (fd < 0)
                return -errno;
        return write(fd, value, n) == (ssize_t)n ? 0 : -errno;
}

/* cpuset (v1) refuses tasks until cpus and mems are set: take the parent's. */
static void cpuset_inherit(int root_fd, const char *dir, const char *parent) { /* paths < PATH_MAX + 256 */
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                char path[PATH_MAX + 300], value[4096] = "";
                _cleanup_close_ int fd = -EBADF;
                ssize_t n;

                snprintf(path, sizeof(path), "%s/%s", parent, files[i]);
                fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || (n = read(fd, value, sizeof(value) - 1)) <= 0)
                        continue;
                value[n] = '\0';
                snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
                (void)write_at(root_fd, path, value);
        }
}

/* Best effort: groups of processes that have ended are empty and go. */
static void remove_empty_siblings(int root_fd, const char *parent, const char *name) {
        size_t prefix = strcspn(name, "-") + 1;
        int fd = openat(root_fd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *e;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((e = readdir(d)))
                if (e->d_type == DT_DIR && strncmp(e->d_name, name, prefix) == 0 && !streq(e->d_name, name))
                        (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        closedir(d);
}

/* Calls fn for each hierarchy (a relative path below root_fd, "" for a v2 root); stops at an error. */
static int for_each_hierarchy(int root_fd, int (*fn)(int root_fd, const char *hier, bool v1, void *u), void *u) {
        struct statfs sfs;
        struct dirent *e;
        DIR *d;
        int fd, r = 0, seen = 0;

        if (fstatfs(root_fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type == CGROUP2_SUPER_MAGIC)
                return fn(root_fd, ".", false, u);
        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return r;
        }
        while (r == 0 && (e = readdir(d))) {
                _cleanup_close_ int hfd = -EBADF;

                if (e->d_name[0] == '.' || e->d_type != DT_DIR)
                        continue; /* cpu,cpuacct-style symlinks name a hierarchy twice */
                hfd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (hfd < 0 || fstatfs(hfd, &sfs) < 0 ||
                    (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC))
                        continue;
                r = fn(root_fd, e->d_name, sfs.f_type == CGROUP_SUPER_MAGIC, u);
                seen++;
        }
        closedir(d);
        return r != 0 ? r : seen > 0 ? 0 : -ENOENT;
}

void cgroup_join_init_ns(void) {
        _cleanup_close_ int ns = open("/proc/1/ns/cgroup", O_RDONLY | O_CLOEXEC);

        if (ns >= 0)
                (void)setns(ns, CLONE_NEWCGROUP);
}

int cgroup_root_open(struct km_error *err) {
        int fd = open(CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd >= 0 ? fd : error_set(err, -errno, "cgroups: %s", CGROUP_ROOT);
}

/* A v1 cpuset group DIR takes its parent's cpus and mems (the same values again cost no rebuild). */
static void cpuset_level(int root_fd, const char *hier, const char *dir, bool v1) {
        char up[PATH_MAX + 256];

        if (!v1 || !strstr(hier, "cpuset"))
                return; /* only that hierarchy has them: no failing opens in the others */
        snprintf(up, sizeof(up), "%s", dir);
        *strrchr(up, '/') = '\0';
        cpuset_inherit(root_fd, dir, up);
}

/*
 * Makes DIR below HIER, and each missing level above it (a delegated unit's
 * group is several levels deep; in a v1 hierarchy systemd does not manage,
 * such as cpuset or freezer, we make them as runc does); v1 cpuset levels
 * take their parent's cpus and mems.  The leaf first: but for a node's first
 * container its parents are there.  -1 with errno set on failure.
 */
static int mkdir_levels(int root_fd, const char *hier, const char *dir, bool v1) {
        char path[PATH_MAX + 256];
        size_t start = strlen(hier) + 1;

        if (mkdirat(root_fd, dir, 0755) == 0 || errno == EEXIST) {
                cpuset_level(root_fd, hier, dir, v1);
                return 0;
        }
        if (errno != ENOENT)
                return -1;
        snprintf(path, sizeof(path), "%s", dir);
        for (char *p = path + start;; p++) {
                bool last = *p == '\0';

                if (*p != '/' && !last)
                        continue;
                *p = '\0';
                if (mkdirat(root_fd, path, 0755) < 0 && errno != EEXIST)
                        return -1;
                cpuset_level(root_fd, hier, path, v1);
                if (last)
                        return 0;
                *p = '/';
        }
}

struct enter {
        pid_t pid;    /* 0: the caller itself, single-threaded */
        bool skip_v2; /* a self move whose v2 group clone3 gave already */
        const char *parent, *name;
        int r;                       /* the first hierarchy's error, */
        char failed[PATH_MAX + 256]; /* and its group */
};

/* A group is made empty, then entered: in between, another kubemount's cgroup_prune() may take it. */
#define ENTER_TRIES 16

static int enter_one(int root_fd, const char *hier, bool v1, void *u) {
        struct enter *e = u;
        char parent[PATH_MAX], dir[PATH_MAX + 256], procs[PATH_MAX + 300], pid[32];
        int r = 0;

        if (e->skip_v2 && !v1)
                return 0;
        snprintf(parent, sizeof(parent), "%s/%s", hier, e->parent);
        snprintf(dir, sizeof(dir), "%s/%s", parent, e->name);
        /*
         * A v1 hierarchy moves the one thread of a caller that moves itself through "tasks" without the
         * kernel's threadgroup lock, so without its RCU grace period (0.08 against 9.6 ms measured here).
         */
        snprintf(procs, sizeof(procs), "%s/%s", dir, e->pid == 0 && v1 ? "tasks" : "cgroup.procs");
        snprintf(pid, sizeof(pid), "%d\n", (int)e->pid);
        for (int i = 0; i < ENTER_TRIES; i++) {
                if (mkdir_levels(root_fd, hier, dir, v1) < 0) {
                        r = -errno;
                        continue; /* a level went between two mkdirs, or mkdir failed for good */
                }
                r = write_at(root_fd, procs, pid);
                /* ENOENT: gone before the open; ENODEV: removed while open.  Make it again. */
                if (r != -ENOENT && r != -ENODEV)
                        break;
        }
        /* Every hierarchy is tried: a group missed in one must not cost the others. */
        if (r < 0 && e->r == 0) {
                e->r = r;
                snprintf(e->failed, sizeof(e->failed), "%s", dir);
        }
        return 0;
}

/* The v2 hierarchy: the root, or "unified" beside the v1 ones (hybrid); NULL on v1 alone. */
static const char *v2_hierarchy(int root_fd) {
        const char *hier = tracking_hierarchy(root_fd);

        return hier && !streq(hier, "systemd") ? hier : NULL;
}

int cgroup_open_v2(int root_fd, const char *name) {
        char buf[sizeof(delegated_self)], dir[PATH_MAX + 256];
        const char *hier = v2_hierarchy(root_fd);
        int r = -EOPNOTSUPP;

        if (!hier)
                return -EOPNOTSUPP;
        snprintf(dir, sizeof(dir), "%s/%s/%s", hier, cgroup_parent(root_fd, buf, sizeof(buf)), name);
        for (int i = 0; i < ENTER_TRIES; i++) {
                int fd;

                if (mkdir_levels(root_fd, hier, dir, false) < 0) {
                        r = -errno;
                        continue;
                }
                fd = openat(root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0)
                        return fd;
                r = -errno; /* pruned between the two: made again */
        }
        return r;
}

static int enter(int root_fd, struct enter *e, struct km_error *err) {
        char buf[sizeof(delegated_self)];
        int r;

        e->parent = cgroup_parent(root_fd, buf, sizeof(buf));
        r = for_each_hierarchy(root_fd, enter_one, e);

        if (r == -ENOENT)
                return error_set_plain(err, r, "cgroups: no hierarchy under %s", CGROUP_ROOT);
        if (r == 0)
                r = e->r;
        if (r < 0 && e->failed[0])
                return error_set(err, r, "cgroup %s/%s", CGROUP_ROOT, e->failed);
        return r < 0 ? error_set(err, r, "cgroups: %s", CGROUP_ROOT) : 0;
}

int cgroup_enter(int root_fd, pid_t pid, const char *name, struct km_error *err) {
        return enter(root_fd, &(struct enter){ .pid = pid, .name = name }, err);
}

int cgroup_enter_self(int root_fd, const char *name, bool v2_entered, struct km_error *err) {
        return enter(root_fd, &(struct enter){ .pid = 0, .skip_v2 = v2_entered, .name = name }, err);
}

struct group {
        const char *parent, *name;
};

static int remove_one(int root_fd, const char *hier, bool v1, void *u) {
        const struct group *g = u;
        char dir[PATH_MAX];

        snprintf(dir, sizeof(dir), "%s/%s/%s", hier, g->parent, g->name);
        return unlinkat(root_fd, dir, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

int cgroup_remove(int root_fd, const char *name) {
        char buf[sizeof(delegated_self)];
        struct group g = { cgroup_parent(root_fd, buf, sizeof(buf)), name };

        return for_each_hierarchy(root_fd, remove_one, &g);
}

static int prune_one(int root_fd, const char *hier, bool v1, void *u) {
        char parent[PATH_MAX], buf[sizeof(delegated_self)];

        (void)v1;
        snprintf(parent, sizeof(parent), "%s/%s", hier, cgroup_parent(root_fd, buf, sizeof(buf)));
        remove_empty_siblings(root_fd, parent, u);
        return 0;
}

void cgroup_prune(int root_fd, const char *prefix) {
        (void)for_each_hierarchy(root_fd, prune_one, (void *)prefix);
}

static int populated_one(int root_fd, const char *hier, bool v1, void *u) {
        char path[PATH_MAX], buf[32];
        _cleanup_close_ int fd = -EBADF;
        const struct group *g = u;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%s/%s/cgroup.procs", hier, g->parent, g->name);
        fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf));
        return n > 0 ? 1 : 0;
}

int cgroup_populated(int root_fd, const char *name) {
        char buf[sizeof(delegated_self)];
        struct group g = { cgroup_parent(root_fd, buf, sizeof(buf)), name };

        return for_each_hierarchy(root_fd, populated_one, &g);
}

/*
 * Whether a child cloned into a group lives.  6.18 kills one at birth
 * (cgroup_post_fork) when the kill count of the parent's group, read at the
 * fork's start, differs from its new group's: a parent whose group was once
 * killed with cgroup.kill (systemd stops units so) loses every child it makes
 * into a new group.  Probed once per process, with a child that only exits.
 */
static bool clone_into_lives(int cgroup_fd) {
        static bool probed;
        struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgroup_fd };
        int status = 0;
        pid_t pid;

        if (probed || !feature_available(FEATURE_CLONE_INTO_CGROUP))
                return feature_available(FEATURE_CLONE_INTO_CGROUP);
        probed = true;
        pid = sys_clone3(&args);
        if (pid == 0)
                _exit(0);
        if (pid < 0)
                return true; /* the call itself finds out (no clone3, no such flag) */
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
                feature_refused(FEATURE_CLONE_INTO_CGROUP);
                log_msg(KM_LOG_NOTICE,
                        "cgroup: the kernel kills a child cloned into its group (this process's group "
                        "was killed with cgroup.kill once): children are moved into their groups");
                return false;
        }
        return true;
}

pid_t cgroup_fork_into(int cgroup_fd, uint64_t flags, bool *entered) {
        struct clone_args args = { .flags = flags, .exit_signal = SIGCHLD };
        pid_t pid;

        *entered = false;
        if (cgroup_fd >= 0 && clone_into_lives(cgroup_fd)) {
                args.flags |= CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t)cgroup_fd;
                pid = sys_clone3(&args);
                /* E2BIG: clone3 before 5.7 (no cgroup field); EINVAL, ENOSYS: no clone3 or no such flag. */
                if (pid >= 0 || (pid != -E2BIG && pid != -EINVAL && pid != -ENOSYS))
                        return *entered = pid >= 0, pid;
                args.flags = flags;
                args.cgroup = 0;
        }
        return sys_clone3(&args);
}
