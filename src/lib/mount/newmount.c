/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mounts through the new mount API (see newmount.h). */
#include <fcntl.h>
#include <sys/stat.h>

#include "mount-flags.h"
#include "newmount.h"
#include "options.h"
#include "syscalls.h"

/* Options that only libmount (or mount(8)) knows what to do with. */
static const char *const libmount_only[] = {
        "auto",        "noauto",   "user",      "nouser",     "users",         "nousers",   "owner",
        "noowner",     "group",    "nogroup",   "nofail",     "_netdev",       "remount",   "move",
        "silent",      "loud",     "iversion",  "noiversion", "comment",       "helper",    "uhelper",
        "loop",        "offset",   "sizelimit", "encryption", "context",       "fscontext", "defcontext",
        "rootcontext", "seclabel", "atime",     "norelatime", "nostrictatime",
};

static bool is_libmount_only(const char *n, size_t nsz) {
        if (nsz >= 2 && (n[0] == 'x' || n[0] == 'X') && n[1] == '-')
                return true; /* x-systemd.*, X-mount.* */
        for (size_t i = 0; i < ELEMENTSOF(libmount_only); i++)
                if (strlen(libmount_only[i]) == nsz && strncmp(n, libmount_only[i], nsz) == 0)
                        return true;
        return false;
}

/* Applies a mount (not superblock) attribute option to *attr; NULL if n is not one. */
static const struct mount_flag *mount_attr_option(const char *n, size_t nsz, struct mount_attr *attr) {
        const struct mount_flag *f = mount_flag_lookupn(n, nsz);

        if (!f || !f->attr)
                return NULL;
        mount_attr_apply(attr, f);
        return f;
}

/* What a bind takes besides attributes: "defaults", "bind" and "rbind" (it is one already). */
static bool is_bind_word(const char *n, size_t nsz) {
        const struct mount_flag *f = mount_flag_lookupn(n, nsz);

        return f && !f->clear && !f->propagation && (f->ms & ~(unsigned long)(MS_BIND | MS_REC)) == 0;
}

/* Directories go on directories, files on files; the kernel's EINVAL says neither. */
static int types_match(int source_fd, int target_fd) {
        struct stat a, b;

        if (fstat(source_fd, &a) < 0 || fstat(target_fd, &b) < 0)
                return -errno;
        if (S_ISDIR(a.st_mode) && !S_ISDIR(b.st_mode))
                return -ENOTDIR;
        if (!S_ISDIR(a.st_mode) && S_ISDIR(b.st_mode))
                return -EISDIR;
        return 0;
}

int newmount_bind(int source_fd, const char *source, const char *options, bool recursive, int target_fd,
                  const char *target, struct km_error *err) {
        _cleanup_close_ int tree = -EBADF;
        struct mount_attr attr = {};
        const char *p = options, *n, *v;
        size_t nsz, vsz;
        int r;

        while (options_next(&p, &n, &nsz, &v, &vsz) == 0) {
                if (v || !(mount_attr_option(n, nsz, &attr) || is_bind_word(n, nsz)))
                        return -ENOSYS; /* remount, filesystem options: libmount knows */
        }
        tree = sys_open_tree(source_fd, "",
                             AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
        if (tree == -ENOSYS)
                return -ENOSYS;
        if (tree < 0)
                return error_set(err, tree, "mount: %s: bind source %s", target, source);
        r = types_match(tree, target_fd);
        if (r < 0)
                return error_set(err, r, "mount: %s: cannot bind %s onto it", target, source);
        if (attr.attr_set || attr.attr_clr) {
                r = sys_mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr);
                if (r == -ENOSYS)
                        return -ENOSYS;
                if (r < 0)
                        return error_set(err, r, "mount: %s: set flags of bind of %s", target, source);
        }
        r = sys_move_mount(tree, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "mount: %s: attach bind of %s", target, source);
        return 0;
}

/* The filesystem's own words ("tmpfs: Bad value for 'size'") from the context's log. */
static int fs_error(int fsfd, int r, const char *target, struct km_error *err) {
        char buf[256];
        ssize_t n = read(fsfd, buf, sizeof(buf) - 1);

        if (n > 2 && buf[1] == ' ') {
                buf[n] = '\0';
                buf[strcspn(buf, "\n")] = '\0';
                return error_set_plain(err, r, "mount: %s: %s", target, buf + 2);
        }
        return error_set(err, r, "mount: %s", target);
}

int newmount_fs(const char *fstype, const char *source, const char *options, int target_fd, const char *target,
                struct km_error *err) {
        _cleanup_close_ int fsfd = -EBADF, mnt = -EBADF;
        struct mount_attr attr = {};
        const char *p = options, *n, *v;
        size_t nsz, vsz;
        struct stat st;
        int r;

        while (options_next(&p, &n, &nsz, &v, &vsz) == 0)
                if (is_libmount_only(n, nsz) || (v && memchr(v, '"', vsz)))
                        return -ENOSYS; /* quoted values are libmount's to unquote */
        if (fstat(target_fd, &st) < 0)
                return error_set(err, -errno, "mount: %s", target);
        if (!S_ISDIR(st.st_mode))
                return error_set_plain(err, -ENOTDIR, "mount: %s: not a directory", target);

        fsfd = sys_fsopen(fstype, FSOPEN_CLOEXEC);
        if (fsfd == -ENOSYS)
                return -ENOSYS;
        if (fsfd == -ENODEV)
                return error_set_plain(err, fsfd, "mount: %s: unknown filesystem type '%s'.", target, fstype);
        if (fsfd < 0)
                return error_set(err, fsfd, "mount: %s: %s", target, fstype);
        if (source && (r = sys_fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source)) < 0)
                return fs_error(fsfd, r, target, err);

        for (p = options; options_next(&p, &n, &nsz, &v, &vsz) == 0;) {
                const struct mount_flag *f;
                char key[256], value[4096];

                if (nsz >= sizeof(key) || vsz >= sizeof(value))
                        return error_set_plain(err, -EINVAL, "mount: %s: option too long", target);
                snprintf(key, sizeof(key), "%.*s", (int)nsz, n);
                if (!v && streq(key, "defaults"))
                        continue;
                if (!v && (f = mount_attr_option(n, nsz, &attr)) && f->ms != MS_RDONLY)
                        continue; /* ro/rw: read-only superblock too, as mount(2) makes it */
                if (v)
                        snprintf(value, sizeof(value), "%.*s", (int)vsz, v);
                r = sys_fsconfig(fsfd, v ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, v ? value : NULL);
                explicit_bzero(value, sizeof(value));
                if (r < 0)
                        return fs_error(fsfd, r, target, err);
        }
        r = sys_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL);
        if (r < 0)
                return fs_error(fsfd, r, target, err);
        mnt = sys_fsmount(fsfd, FSMOUNT_CLOEXEC, attr.attr_set);
        if (mnt == -EINVAL && (attr.attr_set & MOUNT_ATTR_NOSYMFOLLOW))
                return -ENOSYS; /* nosymfollow is 5.10: libmount knows the older ways */
        if (mnt < 0)
                return fs_error(fsfd, mnt, target, err);
        r = sys_move_mount(mnt, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "mount: %s", target);
        return 0;
}
