/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw system calls with feature switches.  The mount API's fallbacks are its
 * callers' (they take libmount or mount(2)); the process ones are here.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <stdlib.h>

#include "syscalls.h"

static unsigned disabled;
static bool disabled_loaded;

static unsigned parse_compat(const char *s) {
        static const struct {
                const char *name;
                unsigned mask;
        } names[] = {
                { "old-kernel",
                  KM_FEATURE_STATX_MNT | KM_FEATURE_STATMOUNT | KM_FEATURE_MOUNT_SETATTR | FEATURE_CLOSE_RANGE },
                { "no-mount-api", KM_FEATURE_ALL | FEATURE_CLOSE_RANGE },
                { "statx", KM_FEATURE_STATX_MNT },
                { "statmount", KM_FEATURE_STATMOUNT },
                { "mount_setattr", KM_FEATURE_MOUNT_SETATTR },
                { "mount_api", KM_FEATURE_MOUNT_API },
                { "close_range", FEATURE_CLOSE_RANGE },
                { "clone3", FEATURE_CLONE3 },
                { "execveat", FEATURE_EXECVEAT },
                { "detached-layers", FEATURE_DETACHED_LAYERS },
                { "fuse-clone-userns", FEATURE_FUSE_CLONE_USERNS },
                { "af-alg", FEATURE_AF_ALG },
                { "clone-into-cgroup", FEATURE_CLONE_INTO_CGROUP },
        };
        unsigned mask = 0;

        while (s && *s) {
                size_t n = strcspn(s, ",");
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        if (strlen(names[i].name) == n && strncmp(s, names[i].name, n) == 0)
                                mask |= names[i].mask;
                s += n;
                if (*s == ',')
                        s++;
        }
        return mask;
}

static void load_disabled(void) {
        if (!disabled_loaded) {
                disabled |= parse_compat(getenv("KUBEMOUNT_COMPAT"));
                disabled_loaded = true;
        }
}

KM_EXPORT void km_features_disable(unsigned mask) {
        load_disabled();
        disabled |= mask;
}

KM_EXPORT unsigned km_features_enabled(void) {
        load_disabled();
        return KM_FEATURE_ALL & ~disabled;
}

bool feature_available(unsigned feature) {
        load_disabled();
        return !(disabled & feature);
}

void feature_refused(unsigned feature) {
        load_disabled();
        __atomic_or_fetch(&disabled, feature, __ATOMIC_RELAXED); /* the agent's threads may race: a bit is only set */
}

int sys_statmount(uint64_t mnt_id, uint64_t mask, struct sys_statmount **ret) {
        struct mnt_id_req req = { .size = 24, .mnt_id = mnt_id, .param = mask };
        size_t size = sizeof(struct sys_statmount) + 512;

        if (!feature_available(KM_FEATURE_STATMOUNT))
                return -ENOSYS;
        for (;;) {
                _cleanup_free_ struct sys_statmount *sm = malloc(size);
                if (!sm)
                        return -ENOMEM;
                if (syscall(__NR_statmount, &req, sm, size, 0) == 0) {
                        *ret = TAKE_PTR(sm);
                        return 0;
                }
                if (errno != EOVERFLOW || size > 1024 * 1024)
                        return -errno;
                size *= 4;
        }
}

int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr) {
        if (!feature_available(KM_FEATURE_MOUNT_SETATTR))
                return -ENOSYS;
        if (syscall(__NR_mount_setattr, dfd, path, flags, attr, sizeof(*attr)) < 0)
                return -errno;
        return 0;
}

int sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve) {
        struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };

        for (int i = 0; i < 16; i++) {
                int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                /* EAGAIN: a rename raced RESOLVE_IN_ROOT's walk; with RESOLVE_CACHED, "not in the cache" (final). */
                if (errno != EAGAIN || (resolve & RESOLVE_CACHED))
                        return -errno;
        }
        return -EAGAIN;
}

/* open_tree, move_mount, fsopen and fsmount date from 5.2. */
int sys_open_tree(int dfd, const char *path, unsigned flags) {
        int fd;

        if (!feature_available(KM_FEATURE_MOUNT_API))
                return -ENOSYS;
        fd = (int)syscall(__NR_open_tree, dfd, path, flags);
        return fd < 0 ? -errno : fd;
}

int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags) {
        if (syscall(__NR_move_mount, from_dfd, from, to_dfd, to, flags) < 0)
                return -errno;
        return 0;
}

int sys_fsopen(const char *fstype, unsigned flags) {
        int fd;

        if (!feature_available(KM_FEATURE_MOUNT_API))
                return -ENOSYS;
        fd = (int)syscall(__NR_fsopen, fstype, flags);
        return fd < 0 ? -errno : fd;
}

int sys_fsconfig(int fsfd, unsigned cmd, const char *key, const char *value) {
        if (syscall(__NR_fsconfig, fsfd, cmd, key, value, 0) < 0)
                return -errno;
        return 0;
}

int sys_fsmount(int fsfd, unsigned flags, unsigned attr_flags) {
        int fd = (int)syscall(__NR_fsmount, fsfd, flags, attr_flags);
        return fd < 0 ? -errno : fd;
}

int sys_pidfd_open(pid_t pid, unsigned flags) {
        int fd = (int)syscall(__NR_pidfd_open, pid, flags);
        return fd < 0 ? -errno : fd;
}

int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags) {
        if (syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags) < 0)
                return -errno;
        return 0;
}

int sys_pidfd_getfd(int pidfd, int targetfd) {
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
        long r = syscall(__NR_pidfd_getfd, pidfd, targetfd, 0);

        return r < 0 ? -errno : (int)r;
}

static void close_range_one(int fd, unsigned flags) {
        if (flags & CLOSE_RANGE_CLOEXEC)
                (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        else
                (void)close(fd);
}

/* What getdents64(2) fills in. */
struct dirent64_raw {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
};

/* close_range() by hand: no malloc, no stdio (a forked child of a threaded caller runs this). */
static int close_range_fallback(unsigned first, unsigned last, unsigned flags) {
        char buf[4096] __attribute__((aligned(8)));
        struct rlimit rl;
        unsigned max;
        long len;
        int dir;

        if (flags & ~CLOSE_RANGE_CLOEXEC)
                return -EINVAL;
        dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir >= 0) {
                while ((len = syscall(__NR_getdents64, dir, buf, sizeof(buf))) > 0)
                        for (long off = 0; off < len;) {
                                struct dirent64_raw *e = (struct dirent64_raw *)(buf + off);
                                unsigned long fd = 0;
                                const char *c = e->name;

                                off += e->reclen;
                                for (; *c >= '0' && *c <= '9' && fd <= INT_MAX; c++)
                                        fd = fd * 10 + (unsigned long)(*c - '0');
                                if (!*c && c != e->name && fd >= first && fd <= last && fd != (unsigned long)dir)
                                        close_range_one((int)fd, flags);
                        }
                close(dir);
                if (len == 0)
                        return 0;
        }
        /* No /proc (a container before it mounts one): every fd the limit allows. */
        max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1U << 20) ? (unsigned)rl.rlim_cur : 1U << 20;
        for (unsigned fd = first; fd < max && fd <= last; fd++)
                close_range_one((int)fd, flags);
        return 0;
}

int sys_close_range(unsigned first, unsigned last, unsigned flags) {
        if (first > last)
                return -EINVAL;
        if (feature_available(FEATURE_CLOSE_RANGE)) {
                if (syscall(__NR_close_range, first, last, flags) == 0)
                        return 0;
                /* 5.9 and 5.10 have close_range but not CLOSE_RANGE_CLOEXEC. */
                if (errno != ENOSYS && !(errno == EINVAL && (flags & CLOSE_RANGE_CLOEXEC)))
                        return -errno;
        }
        return close_range_fallback(first, last, flags);
}

pid_t sys_clone3(const struct clone_args *args) {
        unsigned long flags;
        long pid;

        if (feature_available(FEATURE_CLONE3)) {
                pid = syscall(__NR_clone3, args, sizeof(*args));
                if (pid >= 0)
                        return (pid_t)pid;
                if (errno != ENOSYS)
                        return -errno;
        }
        /* clone(2) as fork(): no stack, tids, pidfd or cgroup to pass on. */
        if ((args->flags >> 32) || (args->flags & CSIGNAL) || args->exit_signal > CSIGNAL || args->pidfd ||
            args->child_tid || args->parent_tid || args->stack || args->stack_size || args->tls || args->set_tid ||
            args->set_tid_size || args->cgroup)
                return -ENOSYS;
        flags = (unsigned long)args->flags | (unsigned long)args->exit_signal;
#if defined(__s390__) || defined(__CRIS__)
        pid = syscall(__NR_clone, 0UL, flags, NULL, NULL, 0UL);
#else
        pid = syscall(__NR_clone, flags, 0UL, NULL, NULL, 0UL);
#endif
        return pid < 0 ? -errno : (pid_t)pid;
}

int sys_execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
        char proc[32] = "/proc/self/fd/", digits[12];
        size_t n = 0, len = strlen(proc);

        if (feature_available(FEATURE_EXECVEAT)) {
                (void)syscall(__NR_execveat, dirfd, path, argv, envp, flags);
                if (errno != ENOSYS)
                        return -errno;
        }
        if (!(flags & AT_EMPTY_PATH) || *path || dirfd < 0)
                return -ENOSYS;
        /* By hand, not snprintf(): this runs between fork() and exec. */
        do
                digits[n++] = (char)('0' + dirfd % 10);
        while ((dirfd /= 10) > 0);
        while (n > 0)
                proc[len++] = digits[--n];
        proc[len] = '\0';
        execve(proc, argv, envp);
        return -errno;
}

int sys_pivot_root(const char *new_root, const char *put_old) {
        if (syscall(__NR_pivot_root, new_root, put_old) < 0)
                return -errno;
        return 0;
}

int sys_seccomp(unsigned op, unsigned flags, void *args) {
        long r = syscall(__NR_seccomp, op, flags, args);

        if (r >= 0) /* 0, or a listener fd (SECCOMP_FILTER_FLAG_NEW_LISTENER) */
                return (int)r;
        if (errno != ENOSYS || op != SECCOMP_SET_MODE_FILTER || flags)
                return -errno;
        /* Kernels before 3.17 have no seccomp(2). */
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, args, 0, 0) < 0)
                return -errno;
        return 0;
}

int fstat_sync(int fd, int sync_flag, struct stat *ret) {
        struct statx stx;

        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | sync_flag, STATX_TYPE | STATX_INO, &stx) < 0)
                return -errno;
        ret->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
        ret->st_ino = stx.stx_ino;
        ret->st_mode = stx.stx_mode;
        return 0;
}

int fdinfo_mnt_id(int fd, unsigned *ret) {
        char path[64], buf[4096];
        _cleanup_close_ int info = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        info = open(path, O_RDONLY | O_CLOEXEC);
        if (info < 0)
                return -errno;
        n = read(info, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                if (startswith(line, "mnt_id:")) {
                        *ret = (unsigned)strtoul(line + 7, NULL, 10);
                        return 0;
                }
        return -ENODATA;
}
