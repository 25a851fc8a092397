/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A container's own writable layer over an image's root filesystem (see overlay.h). */
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "overlay.h"
#include "rm-rf.h"
#include "syscalls.h"

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

void overlay_dirs_done(struct overlay_dirs *d) {
        closep(&d->layer);
        closep(&d->lower);
        closep(&d->upper);
        closep(&d->work);
        free(d->lower_path);
        d->lower_path = NULL;
}

int overlay_dirs_idmap(struct overlay_dirs *d, int userns_fd) {
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd };
        _cleanup_close_ int tree = -EBADF;
        struct stat st;
        int r;

        tree = sys_open_tree(d->lower, "", AT_EMPTY_PATH | AT_RECURSIVE | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0)
                return tree;
        r = sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr);
        if (r < 0)
                return r == -EINVAL ? -EOPNOTSUPP : r;
        /* The upper root is the merged root: owned as the image's root now looks. */
        if (fstat(tree, &st) < 0 || fchownat(d->upper, "", st.st_uid, st.st_gid, AT_EMPTY_PATH) < 0)
                return -errno;
        closep(&d->lower);
        d->lower = TAKE_FD(tree);
        return 0;
}

/* Where fd is, for messages. */
static const char *fd_path(int fd, char *buf, size_t size) {
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, size - 1);
        if (n < 0)
                snprintf(buf, size, "(fd %d)", fd);
        else
                buf[n] = '\0';
        return buf;
}

int overlay_dirs_open(const char *lower_path, int state_dir_fd, struct overlay_dirs *d, struct km_error *err) {
        char shown[4096], why[64];
        struct statfs sfs;
        struct stat st;
        int r;

        *d = (struct overlay_dirs)OVERLAY_DIRS_INIT;
        if (!(d->lower_path = strdup(lower_path)))
                return error_set(err, -ENOMEM, "rootfs %s", lower_path);
        d->lower = open(lower_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (d->lower < 0 || fstat(d->lower, &st) < 0)
                return error_set(err, -errno, "rootfs %s", lower_path);
        if (fstatfs(state_dir_fd, &sfs) < 0)
                return error_set(err, -errno, "rootfs %s: writable layer in %s", lower_path,
                                 fd_path(state_dir_fd, shown, sizeof(shown)));
        if (sfs.f_type == OVERLAYFS_SUPER_MAGIC)
                return error_set_plain(err, -EOPNOTSUPP,
                                       "rootfs %s: writable layer in %s: that is on overlayfs, which cannot hold "
                                       "an overlay's upper dir (put the state directory, KUBEMOUNT_STATE_DIR, on "
                                       "tmpfs or a disk filesystem)",
                                       lower_path, fd_path(state_dir_fd, shown, sizeof(shown)));
        /* Fresh: a container never sees what an earlier one of the same name wrote. */
        r = rm_rf_at(state_dir_fd, OVERLAY_LAYER_DIR, why, sizeof(why));
        if (r < 0)
                return error_set(err, r, "rootfs %s: remove the old writable layer %s/%s (%s)", lower_path,
                                 fd_path(state_dir_fd, shown, sizeof(shown)), OVERLAY_LAYER_DIR, why);
        if (mkdirat(state_dir_fd, OVERLAY_LAYER_DIR, 0700) < 0 ||
            (d->layer = openat(state_dir_fd, OVERLAY_LAYER_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
            mkdirat(d->layer, "upper", 0700) < 0 || mkdirat(d->layer, "work", 0700) < 0 ||
            /* The upper root is the merged root: the image's mode and owner, not ours. */
            fchownat(d->layer, "upper", st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchmodat(d->layer, "upper", st.st_mode & 07777, 0) < 0 ||
            (d->upper = openat(d->layer, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
            (d->work = openat(d->layer, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return error_set(err, -errno, "rootfs %s: writable layer %s/%s", lower_path,
                                 fd_path(state_dir_fd, shown, sizeof(shown)), OVERLAY_LAYER_DIR);
        return 0;
}

/* Key and value pairs, the three directories first. */
struct option_pair {
        const char *key;
        char value[32];
};

/* The directories as d's fds, or as the paths dirs names (lower, upper, work) where there is no /proc. */
static void option_pairs(const struct overlay_dirs *d, const char *const *dirs, struct option_pair p[6]) {
        const struct option_pair fixed[] = {
                { "lowerdir", "" }, { "upperdir", "" },    { "workdir", "" },
                { "index", "off" }, { "metacopy", "off" }, { "redirect_dir", "nofollow" },
        };
        const int fds[3] = { d->lower, d->upper, d->work };

        memcpy(p, fixed, sizeof(fixed));
        for (int i = 0; i < 3; i++)
                if (dirs)
                        snprintf(p[i].value, sizeof(p[i].value), "%s", dirs[i]);
                else
                        snprintf(p[i].value, sizeof(p[i].value), "/proc/self/fd/%d", fds[i]);
}

char *overlay_options(const struct overlay_dirs *d) {
        struct option_pair p[6];
        char buf[512];
        size_t n = 0;

        option_pairs(d, NULL, p);
        for (int i = 0; i < 6; i++)
                n += snprintf(buf + n, sizeof(buf) - n, "%s%s=%s", i ? "," : "", p[i].key, p[i].value);
        return strdup(buf);
}

/* The kernel's reason from the context's log ("e overlay: ..."), else strerror. */
static int fs_error(int fsfd, int r, const struct overlay_dirs *d, struct km_error *err) {
        char upper[4096];

        for (int i = 0; i < 16; i++) {
                char buf[512];
                ssize_t n = read(fsfd, buf, sizeof(buf) - 1);

                if (n <= 0)
                        break;
                buf[n] = '\0';
                buf[strcspn(buf, "\n")] = '\0';
                if (n > 2 && buf[0] == 'e' && buf[1] == ' ')
                        return error_set_plain(err, r, "rootfs %s: writable layer in %s: %s: %s", d->lower_path,
                                               fd_path(d->upper, upper, sizeof(upper)), buf + 2, strerror(-r));
        }
        return error_set(err, r, "rootfs %s: writable layer in %s: overlay", d->lower_path,
                         fd_path(d->upper, upper, sizeof(upper)));
}

static int fsmount_with(const struct overlay_dirs *d, const char *const *dirs, struct km_error *err) {
        _cleanup_close_ int fs = sys_fsopen("overlay", FSOPEN_CLOEXEC);
        struct option_pair p[6];
        int r;

        if (fs == -ENOSYS)
                return fs;
        if (fs == -ENODEV)
                return error_set_plain(err, fs,
                                       "rootfs %s: writable layer: this kernel has no overlay "
                                       "filesystem (modprobe overlay)",
                                       d->lower_path);
        if (fs < 0)
                return error_set(err, fs, "rootfs %s: writable layer: fsopen overlay", d->lower_path);
        option_pairs(d, dirs, p);
        if ((r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "source", "overlay")) < 0)
                return fs_error(fs, r, d, err);
        for (int i = 0; i < 6; i++)
                if ((r = sys_fsconfig(fs, FSCONFIG_SET_STRING, p[i].key, p[i].value)) < 0)
                        return fs_error(fs, r, d, err);
        if ((r = sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL)) < 0)
                return fs_error(fs, r, d, err);
        r = sys_fsmount(fs, FSMOUNT_CLOEXEC, 0);
        return r < 0 ? fs_error(fs, r, d, err) : r;
}

int overlay_fsmount(const struct overlay_dirs *d, struct km_error *err) {
        return fsmount_with(d, NULL, err);
}

int overlay_dirs_detach_layer(struct overlay_dirs *d) {
        /* Cloned here: a kernel that wants attached layers clones only mounts of the caller's namespace. */
        int tree = sys_open_tree(d->layer, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

        if (tree < 0)
                return tree;
        closep(&d->layer);
        d->layer = tree;
        return 0;
}

int overlay_fsmount_attached(struct overlay_dirs *d, const char *lower_at, const char *layer_at, struct km_error *err) {
        char upper[64], work[64];
        int r;

        r = sys_move_mount(d->lower, "", AT_FDCWD, lower_at, MOVE_MOUNT_F_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "rootfs %s: attach its idmapped tree on %s", d->lower_path, lower_at);
        r = sys_move_mount(d->layer, "", AT_FDCWD, layer_at, MOVE_MOUNT_F_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "rootfs %s: attach its writable layer on %s", d->lower_path, layer_at);
        snprintf(upper, sizeof(upper), "%s/upper", layer_at);
        snprintf(work, sizeof(work), "%s/work", layer_at);
        return fsmount_with(d, (const char *const[]){ lower_at, upper, work }, err);
}

int overlay_mount(const struct overlay_dirs *d, const char *target, struct km_error *err) {
        _cleanup_free_ char *options = overlay_options(d);
        char upper[4096];

        if (!options)
                return error_set(err, -ENOMEM, "rootfs %s: writable layer", d->lower_path);
        if (mount("overlay", target, "overlay", 0, options) < 0)
                return error_set(err, -errno,
                                 "rootfs %s: writable layer in %s: mount overlay on %s (dmesg may "
                                 "say more)",
                                 d->lower_path, fd_path(d->upper, upper, sizeof(upper)), target);
        return 0;
}
