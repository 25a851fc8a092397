/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mount propagation: set it (mount_setattr, else mount(2)) and ensure rshared. */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "mount-flags.h"
#include "hostns.h"
#include "mount-spec.h"
#include "mountpoint.h"
#include "syscalls.h"

/* "rshared" ... for messages. */
static const char *kind_name(enum km_propagation_kind kind, bool recursive) {
        return mount_propagation_word(mount_propagation_ms(kind) | (recursive ? MS_REC : 0)) ?: "?";
}

int propagation_set_fd(int fd, const char *shown, enum km_propagation_kind kind, bool recursive, struct km_error *err) {
        struct mount_attr attr = { .propagation = mount_propagation_ms(kind) };
        char path[64];
        int r;

        if (!attr.propagation)
                return error_set_plain(err, -EINVAL, "make %s: unknown propagation kind %d", shown, (int)kind);
        r = sys_mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr);
        if (r == -ENOSYS || r == -EINVAL) {
                /* No mount_setattr (before 5.12), or disabled: mount(2) through the fd's magic link. */
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                r = mount(NULL, path, NULL, attr.propagation | (recursive ? MS_REC : 0), NULL) < 0 ? -errno : 0;
        }
        if (r < 0)
                return error_set(err, r, "make %s %s", kind_name(kind, recursive), shown);
        log_msg(KM_LOG_INFO, "made %s %s", shown, kind_name(kind, recursive));
        return 0;
}

static int propagation_set_path(const char *path, enum km_propagation_kind kind, bool recursive, struct km_error *err) {
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);

        if (fd < 0)
                return error_set(err, -errno, "make %s %s", kind_name(kind, recursive), path);
        return propagation_set_fd(fd, path, kind, recursive, err);
}

struct propagation_call {
        enum km_propagation_kind kind;
        bool recursive;
};

static int propagation_cb(const char *path, void *userdata, struct km_error *err) {
        struct propagation_call *c = userdata;
        return propagation_set_path(path, c->kind, c->recursive, err);
}

KM_EXPORT int km_propagation_set(const struct km_host *h, const char *path, enum km_propagation_kind kind,
                                 bool recursive, struct km_error *err) {
        struct propagation_call c = { kind, recursive };

        if (!path)
                return error_set(err, -EINVAL, "make %s: no path", kind_name(kind, recursive));
        return host_run_path(h, path, propagation_cb, &c, err);
}

static int ensure_shared(const char *path, void *userdata _unused_, struct km_error *err) {
        struct km_mount_info info;
        int r;

        if (!path || !*path)
                return error_set(err, -EINVAL, "ensure shared: empty path");
        r = mkdir_p(path, 0755);
        if (r < 0)
                return error_set(err, r, "create %s", path);
        r = mount_info_of(path, &info, err);
        if (r < 0)
                return r;
        if (info.propagation & KM_PROPAGATION_SHARED) {
                log_msg(KM_LOG_DEBUG, "%s is on shared mount %s, nothing to do", path, info.target);
                return 0;
        }
        if (!info.is_mount_point) {
                if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
                        return error_set(err, -errno, "bind %s onto itself", path);
                log_msg(KM_LOG_INFO, "bound %s onto itself", path);
        }
        r = propagation_set_path(path, KM_MAKE_SHARED, true, err);
        return r < 0 ? r : 1;
}

KM_EXPORT int km_ensure_shared(const struct km_host *h, const char *path, struct km_error *err) {
        return host_run_path(h, path, ensure_shared, NULL, err);
}
