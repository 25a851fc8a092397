/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New mount-API syscalls with feature switches; callers own the fallbacks. */
#include <fcntl.h>
#include <linux/openat2.h>
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
                { "old-kernel", KM_FEATURE_STATX_MNT | KM_FEATURE_STATMOUNT | KM_FEATURE_MOUNT_SETATTR },
                { "no-mount-api", KM_FEATURE_ALL },
                { "statx", KM_FEATURE_STATX_MNT },
                { "statmount", KM_FEATURE_STATMOUNT },
                { "mount_setattr", KM_FEATURE_MOUNT_SETATTR },
                { "mount_api", KM_FEATURE_MOUNT_API },
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
                if (errno != EAGAIN)
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
