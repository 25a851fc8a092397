/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container's root filesystem, made by its PID 1 before pivot_root
 * (launch-rootfs.h): the image's tree (or its overlay) attached at STAGE,
 * the spec's binds and fresh mounts on it through paths that cannot leave
 * it, the device nodes, the masked and read-only paths, then pivot_root.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "launch-rootfs.h"
#include "mount-flags.h"
#include "mount-identity.h"
#include "newmount.h"
#include "resolve.h"
#include "syscalls.h"

/* The symlink check of an opened mount point: an image whose /proc is a symlink is refused. */
static int not_a_symlink(int fd, const char *dest, struct km_error *err) {
        struct stat st;

        if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
                close(fd);
                return error_set_plain(err, -ELOOP, "rootfs: %s is a symlink; refusing to mount over it", dest);
        }
        return fd;
}

/*
 * The mount point DEST inside the root, made when missing as runc and crun
 * make it: every missing directory on the way, then a directory (or, for a
 * file bind, an empty file).  Each prefix is looked up from the root with
 * RESOLVE_IN_ROOT, so the image's symlinks resolve inside it and nothing is
 * ever made outside; the last component is never followed.  With a
 * writable layer the new entries land in the container's upper dir.
 * keep: the root's mount ID when nothing may be made on it (a spare's
 * --rootfs directory, start-pins.h: the caller's tree, not written to when
 * no run asked), else 0.
 */
static int mount_point(int root, unsigned keep, const char *dest, bool file, struct km_error *err) {
        _cleanup_free_ char *prefix = strdup(dest);
        _cleanup_close_ int parent = -EBADF;
        int fd = rootfs_openat2(root, dest, O_PATH | O_NOFOLLOW);

        if (fd >= 0)
                return not_a_symlink(fd, dest, err);
        /* Missing, or something on the way is not what it must be: the walk finds what, and names it. */
        if (!prefix)
                return -ENOMEM;
        parent = rootfs_openat2(root, "/", O_PATH | O_DIRECTORY);
        if (parent < 0)
                return error_set(err, parent, "rootfs: /");
        for (char *c = prefix + strspn(prefix, "/"); *c;) {
                size_t len = strcspn(c, "/"), next = len + strspn(c + len, "/");
                bool last = c[next] == '\0';
                int flags = O_PATH | (last ? O_NOFOLLOW : O_DIRECTORY);
                char saved = c[len];
                struct stat st;

                c[len] = '\0'; /* prefix: the path up to this component, c: the component */
                fd = rootfs_openat2(root, prefix, flags);
                if (fd == -ENOENT && keep) {
                        unsigned on = 0;

                        if (fd_mount_id(parent, &on) < 0 || on == keep)
                                return error_set_plain(err, -ENOENT,
                                                       "rootfs: mount point %s: %s is missing (a spare makes "
                                                       "nothing in a --rootfs directory)",
                                                       dest, prefix);
                }
                if (fd == -ENOENT) {
                        int r = 0;

                        if (last && file) {
                                int f = openat(parent, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                                r = f < 0 ? -errno : 0;
                                if (f >= 0)
                                        close(f);
                        } else if (mkdirat(parent, c, 0755) < 0)
                                r = -errno;
                        if (r == -EEXIST && fstatat(parent, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                                return error_set_plain(err, -ENOENT,
                                                       "rootfs: mount point %s: %s is a symlink "
                                                       "to nothing in the image",
                                                       dest, prefix);
                        if (r < 0 && r != -EEXIST)
                                return error_set(err, r, "rootfs: mount point %s: cannot create %s", dest, prefix);
                        fd = rootfs_openat2(root, prefix, flags);
                }
                if (fd < 0)
                        return error_set(err, fd, "rootfs: mount point %s: %s", dest, prefix);
                if (last)
                        return not_a_symlink(fd, dest, err);
                closep(&parent);
                parent = fd;
                c[len] = saved;
                c += next;
        }
        return TAKE_FD(parent); /* dest was "/" (opened above, so not reached) */
}

/* Sets propagation (MS_SHARED ...) of the mount now at DEST. */
static int set_propagation(int root, const char *dest, unsigned long propagation, struct km_error *err) {
        struct mount_attr attr = { .propagation = propagation & ~MS_REC };
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!attr.propagation)
                return 0;
        fd = rootfs_openat2(root, dest, O_PATH | O_NOFOLLOW);
        if (fd < 0)
                return error_set(err, fd, "rootfs: %s", dest);
        r = sys_mount_setattr(fd, "", AT_EMPTY_PATH | (propagation & MS_REC ? AT_RECURSIVE : 0), &attr);
        return r < 0 ? error_set(err, r, "rootfs: %s: set propagation", dest) : 0;
}

/*
 * For a user namespace: a device node bound from the host is host root's,
 * which the container's root cannot open.  A node of the same device in
 * the container's /dev, owned by its root, is bound there instead.
 */
static int own_device_node(int root, const struct container_spec *s, const struct stat *st, struct km_error *err) {
        _cleanup_close_ int dev = rootfs_openat2(root, "/dev", O_PATH | O_DIRECTORY);
        char name[64];

        if (dev < 0)
                return error_set(err, dev, "rootfs: /dev");
        snprintf(name, sizeof(name), ".kubemount-%c%u-%u", S_ISBLK(st->st_mode) ? 'b' : 'c', major(st->st_rdev),
                 minor(st->st_rdev));
        if ((mknodat(dev, name, (st->st_mode & S_IFMT) | 0660, st->st_rdev) < 0 && errno != EEXIST) ||
            fchownat(dev, name, s->host_uid, s->host_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return error_set(err, -errno, "device /dev/%s", name);
        return sys_open_tree(dev, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
}

static int attach_tree(int tree, int root, unsigned keep, const struct container_spec *s, const struct spec_mount *m,
                       struct km_error *err) {
        struct mount_attr attr = mount_attr_from_ms(m->flags);
        _cleanup_close_ int dest = -EBADF, own = -EBADF;
        struct stat st;
        int r;

        if (fstat(tree, &st) < 0)
                return error_set(err, -errno, "bind %s", m->source);
        if (s->id_count && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))) {
                own = own_device_node(root, s, &st, err);
                if (own < 0)
                        return own;
                tree = own;
        }
        dest = mount_point(root, keep, m->destination, !S_ISDIR(st.st_mode), err);
        if (dest < 0)
                return dest;
        if ((attr.attr_set || attr.attr_clr) &&
            (r = sys_mount_setattr(tree, "", AT_EMPTY_PATH | (m->flags & MS_REC ? AT_RECURSIVE : 0), &attr)) < 0)
                return error_set(err, r, "bind %s: set flags", m->source);
        r = sys_move_mount(tree, "", dest, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "bind %s on %s", m->source, m->destination);
        return set_propagation(root, m->destination, m->propagation, err);
}

static int mount_fresh(int root, unsigned keep, const struct spec_mount *m, struct km_error *err) {
        _cleanup_free_ char *options = mount_options_from_ms(m->flags, m->data);
        _cleanup_close_ int dest = mount_point(root, keep, m->destination, false, err);
        char what[4200];
        int r;

        if (dest < 0)
                return dest;
        if (!options)
                return -ENOMEM;
        snprintf(what, sizeof(what), "%s", m->destination);
        r = newmount_fs(m->type, m->source, options, dest, what, err);
        if (r == -ENOSYS)
                return error_set_plain(err, r, "mount %s on %s: needs the new mount API (Linux 5.2)", m->type,
                                       m->destination);
        return r < 0 ? r : set_propagation(root, m->destination, m->propagation, err);
}

static int make_devices(int root, unsigned keep, const struct container_spec *s, struct km_error *err) {
        static const char *const links[][2] = {
                { "/dev/fd", "/proc/self/fd" },       { "/dev/stdin", "/proc/self/fd/0" },
                { "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
                { "/dev/ptmx", "pts/ptmx" },
        };

        for (size_t i = 0; i < s->n_devices; i++) {
                const struct spec_device *d = &s->devices[i];
                _cleanup_free_ char *parent = strdup(d->path);
                _cleanup_close_ int pfd = -EBADF;
                mode_t type = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
                char *slash;

                if (!parent)
                        return -ENOMEM;
                slash = strrchr(parent, '/');
                *slash = '\0';
                pfd = mount_point(root, keep, parent, false, err);
                if (pfd < 0)
                        return pfd;
                pfd = ({
                        int o = rootfs_openat2(root, parent, O_PATH | O_DIRECTORY);
                        close(pfd);
                        o;
                });
                if (pfd < 0)
                        return error_set(err, pfd, "rootfs: %s", parent);
                (void)unlinkat(pfd, slash + 1, 0); /* a file or link the image put there */
                if (mknodat(pfd, slash + 1, type | (d->mode & 07777), makedev(d->major, d->minor)) < 0)
                        return error_set(err, -errno, "device %s", d->path);
                /* The spec's ids are the container's: in a user namespace, its map's host ids. */
                if (fchownat(pfd, slash + 1, d->uid + (s->id_count && d->uid < s->id_count ? s->host_uid : 0),
                             d->gid + (s->id_count && d->gid < s->id_count ? s->host_gid : 0),
                             AT_SYMLINK_NOFOLLOW) < 0 ||
                    fchmodat(pfd, slash + 1, d->mode & 07777, 0) < 0)
                        return error_set(err, -errno, "device %s", d->path);
        }
        if (s->n_devices == 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                _cleanup_close_ int dev = rootfs_openat2(root, "/dev", O_PATH | O_DIRECTORY);
                if (dev >= 0)
                        (void)symlinkat(links[i][1], dev, links[i][0] + 5);
        }
        return 0;
}

/* maskedPaths: /dev/null over files, an empty read-only tmpfs over directories; readonlyPaths: ro binds. */
static int restrict_paths(int root, const struct container_spec *s, struct km_error *err) {
        _cleanup_close_ int null = rootfs_openat2(root, "/dev/null", O_PATH | O_NOFOLLOW);

        for (char **p = s->masked_paths; p && *p; p++) {
                _cleanup_close_ int fd = rootfs_openat2(root, *p, O_PATH | O_NOFOLLOW);
                _cleanup_close_ int tree = -EBADF;
                struct stat st;
                int r;

                if (fd < 0 || fstat(fd, &st) < 0)
                        continue; /* absent: nothing to hide */
                if (S_ISDIR(st.st_mode))
                        r = newmount_fs("tmpfs", "tmpfs", "ro,nosuid,nodev,noexec,size=0", fd, *p, err);
                else if (null < 0)
                        r = error_set_plain(err, -ENOENT, "masked path %s: no /dev/null to put over it", *p);
                else if ((tree = sys_open_tree(null, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0)
                        r = error_set(err, tree, "masked path %s", *p);
                else
                        r = sys_move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
                if (r < 0)
                        return error_set(err, r, "masked path %s", *p);
        }
        for (char **p = s->readonly_paths; p && *p; p++) {
                _cleanup_close_ int fd = rootfs_openat2(root, *p, O_PATH | O_NOFOLLOW);
                _cleanup_close_ int tree = -EBADF;
                struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
                int r;

                if (fd < 0)
                        continue;
                tree = sys_open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
                if (tree < 0)
                        return error_set(err, tree, "read-only path %s", *p);
                r = sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro);
                if (r >= 0)
                        r = sys_move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
                if (r < 0)
                        return error_set(err, r, "read-only path %s", *p);
        }
        return 0;
}

/* Makes NEW_ROOT (an fd of a mount point) this namespace's root and drops the old one. */
int rootfs_pivot_into(int new_root, struct km_error *err) {
        int r;

        if (fchdir(new_root) < 0)
                return error_set(err, -errno, "pivot_root: chdir");
        r = sys_pivot_root(".", ".");
        if (r < 0)
                return error_set(err, r, "pivot_root");
        if (umount2(".", MNT_DETACH) < 0)
                return error_set(err, -errno, "pivot_root: detach the old root");
        return chdir("/") < 0 ? error_set(err, -errno, "chdir /") : 0;
}

void trees_done(struct trees *t) {
        closep(&t->root);
        overlay_dirs_done(&t->overlay);
        for (size_t i = 0; t->binds && i < t->n; i++)
                closep(&t->binds[i]);
        free(t->binds);
}

bool launch_is_bind(const struct spec_mount *m) {
        return (m->flags & MS_BIND) || (m->type && streq(m->type, "bind"));
}

/* The container's mount namespace, set up by its PID 1 from the template copy. */
int rootfs_setup(const struct container_spec *s, struct trees *t, struct km_error *err) {
        _cleanup_close_ int stage = open(STAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int root = -EBADF;
        struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
        unsigned keep = 0;
        int r;

        if (stage < 0)
                return error_set(err, -errno, "template: %s", STAGE);
        if (t->root < 0 && (t->root = overlay_fsmount_attached(&t->overlay, LOWER_AT, LAYER_AT, err)) < 0)
                return t->root;
        r = sys_move_mount(t->root, "", stage, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
        if (r < 0)
                return error_set(err, r, "rootfs %s: attach", s->root_path);
        root = open(STAGE, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return error_set(err, -errno, "rootfs %s", s->root_path);
        /* A private root: what is mounted on it here (its /proc) must not reach the host's copy of the image. */
        r = set_propagation(root, "/", s->rootfs_propagation == (MS_SLAVE | MS_REC) ? MS_SLAVE : MS_PRIVATE, err);
        if (r < 0)
                return r;
        if (t->keep_root && (r = fd_mount_id(root, &keep)) < 0)
                return error_set(err, r, "rootfs %s: its mount", s->root_path);
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct spec_mount *m = &s->mounts[i];

                r = launch_is_bind(m) ? attach_tree(t->binds[i], root, keep, s, m, err)
                                      : mount_fresh(root, keep, m, err);
                if (r < 0)
                        return r;
        }
        r = make_devices(root, keep, s, err);
        if (r < 0)
                return r;
        r = restrict_paths(root, s, err);
        if (r < 0)
                return r;
        r = rootfs_pivot_into(root, err);
        if (r < 0)
                return r;
        if (s->root_readonly && (r = sys_mount_setattr(AT_FDCWD, "/", 0, &ro)) < 0)
                return error_set(err, r, "rootfs: make read-only");
        return 0;
}
