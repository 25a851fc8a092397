/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A child process in cgroups of its own (see detach.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "detach.h"

#define CGROUP_ROOT "/sys/fs/cgroup"

static int write_file(const char *path, const char *value) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        size_t n = strlen(value);

        if (fd < 0)
                return -errno;
        return write(fd, value, n) == (ssize_t)n ? 0 : -errno;
}

/* cpuset (v1) refuses tasks until cpus and mems are set: take the parent's. */
static void cpuset_inherit(const char *dir, const char *parent) {
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                char path[PATH_MAX], value[4096] = "";
                _cleanup_close_ int fd = -EBADF;
                ssize_t n;

                snprintf(path, sizeof(path), "%s/%s", parent, files[i]);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || (n = read(fd, value, sizeof(value) - 1)) <= 0)
                        continue;
                value[n] = '\0';
                snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
                (void)write_file(path, value);
        }
}

/* Best effort: groups of daemons that have ended are empty and go. */
static void remove_empty_siblings(const char *parent) {
        DIR *d = opendir(parent);
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d)))
                if (e->d_type == DT_DIR && startswith(e->d_name, "mount-"))
                        (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        closedir(d);
}

/* Moves this process into PARENT/NAME of one hierarchy (v1 or v2). */
static int enter_cgroup(const char *hierarchy, bool v1, const char *parent, const char *name, struct km_error *err) {
        char pdir[PATH_MAX], dir[PATH_MAX + 64], procs[PATH_MAX + 96], pid[32];
        int r;

        snprintf(pdir, sizeof(pdir), "%s/%s", hierarchy, parent);
        snprintf(dir, sizeof(dir), "%s/%s", pdir, name);
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
        snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        remove_empty_siblings(pdir);
        if ((mkdir(pdir, 0755) < 0 && errno != EEXIST) || (mkdir(dir, 0755) < 0 && errno != EEXIST))
                return km_error_set(err, -errno, "cgroup %s", dir);
        if (v1) {
                cpuset_inherit(pdir, hierarchy);
                cpuset_inherit(dir, pdir);
        }
        r = write_file(procs, pid);
        return r < 0 ? km_error_set(err, r, "move into cgroup %s", dir) : 0;
}

/* Into PARENT/NAME of every hierarchy mounted under /sys/fs/cgroup (or of the v2 one mounted there). */
static int enter_own_cgroups(const char *name, struct km_error *err) {
        const char *parent = getenv("KUBEMOUNT_CGROUP_PARENT");
        char hierarchy[PATH_MAX];
        struct statfs sfs;
        struct dirent *e;
        DIR *d;
        int moved = 0, r = 0;

        if (!parent || !*parent || strstr(parent, ".."))
                parent = "kubemount";
        if (statfs(CGROUP_ROOT, &sfs) < 0)
                return km_error_set(err, -errno, "cgroups: %s", CGROUP_ROOT);
        if (sfs.f_type == CGROUP2_SUPER_MAGIC)
                return enter_cgroup(CGROUP_ROOT, false, parent, name, err);

        d = opendir(CGROUP_ROOT);
        if (!d)
                return km_error_set(err, -errno, "cgroups: %s", CGROUP_ROOT);
        while (r == 0 && (e = readdir(d))) {
                if (e->d_name[0] == '.' || e->d_type != DT_DIR)
                        continue; /* cpu,cpuacct-style symlinks name a hierarchy twice */
                snprintf(hierarchy, sizeof(hierarchy), CGROUP_ROOT "/%s", e->d_name);
                if (statfs(hierarchy, &sfs) < 0 || (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC))
                        continue;
                r = enter_cgroup(hierarchy, sfs.f_type == CGROUP_SUPER_MAGIC, parent, name, err);
                moved += r == 0;
        }
        closedir(d);
        if (r == 0 && moved == 0)
                r = km_error_set_plain(err, -ENOENT, "cgroups: no hierarchy under %s", CGROUP_ROOT);
        return r;
}

struct answer {
        int r, excode;
        struct km_error err;
};

int run_in_own_cgroup(const char *name, int (*fn)(void *userdata, int *excode, struct km_error *err),
                      void *userdata, int *excode, struct km_error *err) {
        _cleanup_close_ int rd = -EBADF;
        struct answer a = { 0 };
        int fds[2], status;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return km_error_set(err, -errno, "%s: pipe", name);
        rd = fds[0];
        pid = fork();
        if (pid < 0) {
                close(fds[1]);
                return km_error_set(err, -errno, "%s: fork", name);
        }
        if (pid == 0) {
                /* The host's cgroup namespace, so that its hierarchy roots are reachable. */
                int ns = open("/proc/1/ns/cgroup", O_RDONLY | O_CLOEXEC);
                if (ns >= 0) {
                        (void)setns(ns, CLONE_NEWCGROUP);
                        close(ns);
                }
                char group[32];
                snprintf(group, sizeof(group), "mount-%d", (int)getpid());
                /* Without its own cgroups the mount still works; only the survival is lost: say so. */
                if (enter_own_cgroups(group, &a.err) < 0)
                        km_log(KM_LOG_WARNING, "%s: %s; its daemon stays in the caller's cgroup", name, a.err.message);
                a.err = (struct km_error){ 0 };
                a.r = fn(userdata, &a.excode, &a.err);
                _exit(write(fds[1], &a, sizeof(a)) != sizeof(a));
        }
        close(fds[1]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (read(rd, &a, sizeof(a)) != sizeof(a))
                return km_error_set(err, -EIO, "%s: the process in its own cgroup died", name);
        if (excode)
                *excode = a.excode;
        if (err && a.r < 0)
                *err = a.err;
        return a.r;
}
