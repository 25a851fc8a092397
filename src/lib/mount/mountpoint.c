/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount-point queries in O(1): statx(STATX_ATTR_MOUNT_ROOT) and statmount(2)
 * where the kernel has them; fdinfo mount ids and one mountinfo read on old
 * kernels.  Both paths give the same answers (tests force the fallbacks).
 */
#include <fcntl.h>
#include <libmount.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "mount-flags.h"
#include "hostns.h"
#include "mount-identity.h"
#include "mounttable.h"
#include "mountpoint.h"
#include "syscalls.h"

KM_EXPORT bool km_error_is_corrupted_mount(int r) {
        switch (-r) {
        case ENOTCONN:
        case ESTALE:
        case EIO:
        case EACCES:
        case EHOSTDOWN:
        case EWOULDBLOCK:
        case ENODEV:
                return true;
        default:
                return false;
        }
}

int fd_mount_id(int fd, unsigned *ret) {
        struct statx stx;

        if (feature_available(KM_FEATURE_STATX_MNT) &&
            statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
            (stx.stx_mask & STATX_MNT_ID)) {
                *ret = (unsigned)stx.stx_mnt_id;
                return 0;
        }
        return fdinfo_mnt_id(fd, ret);
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

uint64_t fd_mount_unique_id(int fd) {
        struct statx stx;

        /* The same kernels as statmount(2), and disabled with it (KUBEMOUNT_COMPAT=statmount). */
        if (feature_available(KM_FEATURE_STATMOUNT) &&
            statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
            (stx.stx_mask & STATX_MNT_ID_UNIQUE))
                return stx.stx_mnt_id;
        return 0;
}

int fd_mount_ident(int fd, struct mount_ident *ret) {
        int r = fd_mount_id(fd, &ret->id);

        ret->unique = r >= 0 ? fd_mount_unique_id(fd) : 0;
        return r;
}

bool mount_ident_same(const struct mount_ident *recorded, const struct mount_ident *now) {
        if (recorded->unique && now->unique)
                return recorded->unique == now->unique;
        return recorded->id == 0 || recorded->id == now->id;
}

/* The directory that holds the non-directory open at fd (which has no ".."). */
static int open_parent_of_file(int fd) {
        char link[64], path[PATH_MAX];
        char *slash;
        ssize_t n;
        int parent;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n < 0)
                return -errno;
        path[n] = '\0';
        slash = strrchr(path, '/');
        if (path[0] != '/' || !slash)
                return -ENOENT; /* not reachable from our root */
        if (slash == path)
                slash[1] = '\0';
        else
                *slash = '\0';
        parent = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return parent < 0 ? -errno : parent;
}

/* Fallback: compare the mount ids of path and its parent (kernels before 5.8). */
static int is_mount_point_fallback(const char *path) {
        _cleanup_close_ int fd = -EBADF, parent = -EBADF;
        struct stat st, pst;
        unsigned id, pid;
        int r;

        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* Ask the filesystem: a dead FUSE daemon answers ENOTCONN, its attribute cache would not. */
        r = fstat_sync(fd, AT_STATX_FORCE_SYNC, &st);
        if (r < 0)
                return r;
        /* Files can be mount points too (bind-mounted subPath files, /etc/hostname). */
        if (S_ISDIR(st.st_mode)) {
                parent = openat(fd, "..", O_PATH | O_CLOEXEC);
                if (parent < 0)
                        return -errno;
        } else {
                parent = open_parent_of_file(fd);
                if (parent < 0)
                        return parent;
        }
        if (fstat(parent, &pst) < 0)
                return -errno;
        if (st.st_dev == pst.st_dev && st.st_ino == pst.st_ino)
                return 1; /* the root directory */
        if (fdinfo_mnt_id(fd, &id) < 0 || fdinfo_mnt_id(parent, &pid) < 0)
                return st.st_dev != pst.st_dev; /* no /proc: bind mounts go unseen */
        return id != pid;
}

int is_mount_point(const char *path, struct km_error *err) {
        struct statx stx;
        int r;

        if (!path || !*path)
                return error_set(err, -EINVAL, "empty path");
        if (feature_available(KM_FEATURE_STATX_MNT)) {
                if (statx(AT_FDCWD, path, AT_STATX_FORCE_SYNC, STATX_TYPE, &stx) < 0) {
                        r = -errno;
                        if (km_error_is_corrupted_mount(r))
                                return error_set(err, r, "%s: corrupted mount", path);
                        return error_set(err, r, "%s", path);
                }
                if (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
                        return !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
        }
        r = is_mount_point_fallback(path);
        if (r < 0)
                return error_set(err, r, km_error_is_corrupted_mount(r) ? "%s: corrupted mount" : "%s", path);
        return r;
}

static int info_from_statmount(const char *path, struct km_mount_info *ret) {
        _cleanup_free_ struct sys_statmount *sm = NULL;
        struct statx stx;
        int r;

        if (!feature_available(KM_FEATURE_STATX_MNT))
                return -ENOSYS;
        if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_MNT_ID_UNIQUE, &stx) < 0)
                return -errno;
        if (!(stx.stx_mask & STATX_MNT_ID_UNIQUE))
                return -ENOSYS;
        r = sys_statmount(stx.stx_mnt_id, KM_STATMOUNT_MNT_BASIC | KM_STATMOUNT_MNT_POINT, &sm);
        if (r < 0)
                return r;
        if (!(sm->mask & KM_STATMOUNT_MNT_POINT))
                return -ENOSYS;
        ret->mount_id = sm->mnt_id_old;
        ret->propagation = propagation_from_ms(sm->mnt_propagation);
        ret->peer_group = (unsigned)sm->mnt_peer_group;
        ret->master = (unsigned)sm->mnt_master;
        snprintf(ret->target, sizeof(ret->target), "%s", sm->str + sm->mnt_point);
        return 0;
}

static int info_from_mountinfo(const char *path, struct km_mount_info *ret, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        struct km_mount_table *t = NULL;
        unsigned id;
        int r;

        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = fdinfo_mnt_id(fd, &id);
        if (r < 0)
                return r;
        r = mount_table_load(NULL, &t, err);
        if (r < 0)
                return r;
        r = -ENOENT;
        for (size_t i = km_mount_table_size(t); i > 0; i--) {
                const struct km_mount *m = km_mount_table_at(t, i - 1);
                if (km_mount_id(m) != id)
                        continue;
                ret->mount_id = id;
                ret->propagation = km_mount_propagation(m);
                ret->peer_group = km_mount_peer_group(m);
                ret->master = km_mount_master(m);
                snprintf(ret->target, sizeof(ret->target), "%s", km_mount_target(m));
                r = 0;
                break;
        }
        km_mount_table_free(t);
        return r;
}

int mount_info_of(const char *path, struct km_mount_info *ret, struct km_error *err) {
        int r;

        memset(ret, 0, sizeof(*ret));
        r = is_mount_point(path, err);
        if (r < 0)
                return r;
        ret->is_mount_point = r;
        r = info_from_statmount(path, ret);
        if (r == -ENOSYS || r == -EINVAL || r == -EOPNOTSUPP)
                r = info_from_mountinfo(path, ret, err);
        if (r < 0)
                return error_set(err, r, "mount holding %s", path);
        return 0;
}

/* ---- the public calls: in the host's namespace ---- */

static int is_mount_point_cb(const char *path, void *userdata _unused_, struct km_error *err) {
        return is_mount_point(path, err);
}

KM_EXPORT int km_is_mount_point(const struct km_host *h, const char *path, struct km_error *err) {
        return host_run_path(h, path, is_mount_point_cb, NULL, err);
}

static int mount_info_cb(const char *path, void *userdata, struct km_error *err) {
        return mount_info_of(path, userdata, err);
}

KM_EXPORT int km_mount_info_of(const struct km_host *h, const char *path, struct km_mount_info **ret,
                               struct km_error *err) {
        _cleanup_free_ struct km_mount_info *i = NULL;
        int r;

        i = malloc(sizeof(*i));
        if (!i)
                return error_set(err, -ENOMEM, "mount holding %s", path ? path : "");
        r = host_run_path(h, path, mount_info_cb, i, err);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(i);
        return 0;
}

KM_EXPORT void km_mount_info_free(struct km_mount_info *i) {
        free(i);
}
KM_EXPORT uint64_t km_mount_info_id(const struct km_mount_info *i) {
        return i->mount_id;
}
KM_EXPORT unsigned km_mount_info_propagation(const struct km_mount_info *i) {
        return i->propagation;
}
KM_EXPORT unsigned km_mount_info_peer_group(const struct km_mount_info *i) {
        return i->peer_group;
}
KM_EXPORT unsigned km_mount_info_master(const struct km_mount_info *i) {
        return i->master;
}
KM_EXPORT bool km_mount_info_is_mount_point(const struct km_mount_info *i) {
        return i->is_mount_point;
}
KM_EXPORT const char *km_mount_info_target(const struct km_mount_info *i) {
        return i->target;
}

struct refs_call {
        char ***ret;
        int n;
};

/*
 * As GetMountRefs: a path that does not exist has no refs, nor has a
 * corrupted mount (a warning says so); symlinks are followed first.
 */
static int refs_cb(const char *path, void *userdata, struct km_error *err) {
        struct refs_call *c = userdata;
        _cleanup_(km_mount_table_freep) struct km_mount_table *t = NULL;
        _cleanup_free_ char *canonical = NULL;
        struct stat st;
        int r;

        /* stat() first, as mount-utils' PathExists: realpath() alone does not ask a dead FUSE daemon. */
        if (stat(path, &st) < 0 || !(canonical = realpath(path, NULL))) {
                r = -errno;
                if (r == -ENOENT || km_error_is_corrupted_mount(r)) {
                        if (r != -ENOENT)
                                log_msg(KM_LOG_WARNING, "refs %s: corrupted mount (%s), treated as unmounted", path,
                                        strerror(-r));
                        *c->ret = calloc(1, sizeof(char *));
                        return *c->ret ? 0 : error_set(err, -ENOMEM, "refs %s", path);
                }
                return error_set(err, r, "refs %s", path);
        }
        r = mount_table_load(NULL, &t, err);
        if (r < 0)
                return r;
        c->n = km_mount_table_refs(t, canonical, c->ret, err);
        return c->n < 0 ? c->n : 0;
}

KM_EXPORT int km_mount_refs(const struct km_host *h, const char *path, char ***ret, struct km_error *err) {
        struct refs_call c = { ret, 0 };
        int r;

        *ret = NULL;
        if (!path)
                return error_set(err, -EINVAL, "refs: no path");
        r = host_run_path(h, path, refs_cb, &c, err);
        return r < 0 ? r : c.n;
}
