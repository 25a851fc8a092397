/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroups of kubemount's own (see cgroup.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "cgroup.h"

static const char *cgroup_parent(void) {
        const char *parent = getenv("KUBEMOUNT_CGROUP_PARENT");

        return parent && *parent && !strstr(parent, "..") && parent[0] != '/' ? parent : "kubemount";
}

static int write_at(int dirfd, const char *path, const char *value) {
        _cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        size_t n = strlen(value);

        if (fd < 0)
                return -errno;
        return write(fd, value, n) == (ssize_t)n ? 0 : -errno;
}

/* cpuset (v1) refuses tasks until cpus and mems are set: take the parent's. */
static void cpuset_inherit(int root_fd, const char *dir, const char *parent) {
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                char path[PATH_MAX], value[4096] = "";
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

int cgroup_root_open(struct km_error *err) {
        int fd = open(CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd >= 0 ? fd : error_set(err, -errno, "cgroups: %s", CGROUP_ROOT);
}

struct enter {
        pid_t pid;
        const char *name;
        int r;                       /* the first hierarchy's error, */
        char failed[PATH_MAX + 256]; /* and its group */
};

/* A group is made empty, then entered: in between, another kubemount's remove_empty_siblings() may take it. */
#define ENTER_TRIES 16

static int enter_one(int root_fd, const char *hier, bool v1, void *u) {
        struct enter *e = u;
        char parent[PATH_MAX], dir[PATH_MAX + 256], procs[PATH_MAX + 300], pid[32];
        int r = 0;

        snprintf(parent, sizeof(parent), "%s/%s", hier, cgroup_parent());
        snprintf(dir, sizeof(dir), "%s/%s", parent, e->name);
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
        snprintf(pid, sizeof(pid), "%d\n", (int)e->pid);
        remove_empty_siblings(root_fd, parent, e->name);
        for (int i = 0; i < ENTER_TRIES; i++) {
                if ((mkdirat(root_fd, parent, 0755) < 0 && errno != EEXIST) ||
                    (mkdirat(root_fd, dir, 0755) < 0 && errno != EEXIST)) {
                        r = -errno;
                        continue; /* the parent went between the two, or mkdir failed for good */
                }
                if (v1) {
                        cpuset_inherit(root_fd, parent, hier);
                        cpuset_inherit(root_fd, dir, parent);
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

int cgroup_enter(int root_fd, pid_t pid, const char *name, struct km_error *err) {
        struct enter e = { .pid = pid, .name = name };
        int r = for_each_hierarchy(root_fd, enter_one, &e);

        if (r == -ENOENT)
                return error_set_plain(err, r, "cgroups: no hierarchy under %s", CGROUP_ROOT);
        if (r == 0)
                r = e.r;
        if (r < 0 && e.failed[0])
                return error_set(err, r, "cgroup %s/%s", CGROUP_ROOT, e.failed);
        return r < 0 ? error_set(err, r, "cgroups: %s", CGROUP_ROOT) : 0;
}

static int remove_one(int root_fd, const char *hier, bool v1, void *u) {
        char dir[PATH_MAX];

        snprintf(dir, sizeof(dir), "%s/%s/%s", hier, cgroup_parent(), (const char *)u);
        return unlinkat(root_fd, dir, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

int cgroup_remove(int root_fd, const char *name) {
        return for_each_hierarchy(root_fd, remove_one, (void *)name);
}

static int prune_one(int root_fd, const char *hier, bool v1, void *u) {
        char parent[PATH_MAX];

        (void)v1;
        snprintf(parent, sizeof(parent), "%s/%s", hier, cgroup_parent());
        remove_empty_siblings(root_fd, parent, u);
        return 0;
}

void cgroup_prune(int root_fd, const char *prefix) {
        (void)for_each_hierarchy(root_fd, prune_one, (void *)prefix);
}

static int populated_one(int root_fd, const char *hier, bool v1, void *u) {
        char path[PATH_MAX], buf[32];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%s/%s/cgroup.procs", hier, cgroup_parent(), (const char *)u);
        fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf));
        return n > 0 ? 1 : 0;
}

int cgroup_populated(int root_fd, const char *name) {
        return for_each_hierarchy(root_fd, populated_one, (void *)name);
}
