/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount table, parsed only through libmount; mountinfo path injectable. */
#include "libmount-dl.h"
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mount-flags.h"
#include "hostns.h"
#include "mount-identity.h"
#include "mounttable.h"
#include "util.h"

DEFINE_CLEANUP(struct libmnt_iter, sym_mnt_free_iter)

struct km_mount_table {
        struct libmnt_table *tb;
        size_t n;
        struct libmnt_fs **fs; /* index for O(1) access, in mountinfo order */
        int bad_line;
};

static int parser_errcb(struct libmnt_table *tb, const char *filename _unused_, int line) {
        struct km_mount_table *t = sym_mnt_table_get_userdata(tb);

        if (t && !t->bad_line)
                t->bad_line = line;
        return -EBADMSG; /* a malformed table is an error, not something to skip */
}

KM_EXPORT void km_mount_table_free(struct km_mount_table *t) {
        if (!t)
                return;
        if (t->tb)
                sym_mnt_unref_table(t->tb);
        free(t->fs);
        free(t);
}
int mount_table_load(const char *mountinfo, struct km_mount_table **ret, struct km_error *err) {
        _cleanup_(km_mount_table_freep) struct km_mount_table *t = NULL;
        _cleanup_(sym_mnt_free_iterp) struct libmnt_iter *it = NULL;
        struct libmnt_fs *fs;
        const char *path = mountinfo ? mountinfo : "/proc/thread-self/mountinfo";
        size_t i = 0;
        int r;

        if (dlopen_libmount() < 0)
                return error_set(err, -EOPNOTSUPP, "mount table %s: cannot load libmount", path);
        t = calloc(1, sizeof(*t));
        if (!t || !(t->tb = sym_mnt_new_table()) || !(it = sym_mnt_new_iter(MNT_ITER_FORWARD)))
                return error_set(err, -ENOMEM, "mount table %s", path);
        sym_mnt_table_set_userdata(t->tb, t);
        sym_mnt_table_set_parser_errcb(t->tb, parser_errcb);
        r = sym_mnt_table_parse_file(t->tb, path);
        if (t->bad_line)
                return error_set(err, -EBADMSG, "mount table %s: line %d is malformed", path, t->bad_line);
        if (r < 0)
                return error_set(err, r, "mount table %s", path);

        t->n = sym_mnt_table_get_nents(t->tb);
        if (t->n == 0) /* every mount namespace has a root: an empty file is not a mount table */
                return error_set(err, -EBADMSG, "mount table %s: no mounts in it", path);
        t->fs = calloc(t->n, sizeof(*t->fs));
        if (!t->fs)
                return error_set(err, -ENOMEM, "mount table %s", path);
        while (i < t->n && sym_mnt_table_next_fs(t->tb, it, &fs) == 0) {
                /* libmount guesses the format from the first line; fstab or utab lines have no root. */
                if (!sym_mnt_fs_get_root(fs))
                        return error_set(err, -EBADMSG, "mount table %s: entry %zu is not in mountinfo format", path,
                                         i + 1);
                t->fs[i++] = fs;
        }
        t->n = i;
        *ret = TAKE_PTR(t);
        return 0;
}

KM_EXPORT size_t km_mount_table_size(const struct km_mount_table *t) {
        return t ? t->n : 0;
}

KM_EXPORT const struct km_mount *km_mount_table_at(const struct km_mount_table *t, size_t i) {
        return t && i < t->n ? (const struct km_mount *)t->fs[i] : NULL;
}

KM_EXPORT const struct km_mount *km_mount_table_find_target(const struct km_mount_table *t, const char *path) {
        for (size_t i = t->n; i > 0; i--) {
                const char *target = sym_mnt_fs_get_target(t->fs[i - 1]);
                if (target && streq(target, path))
                        return (const struct km_mount *)t->fs[i - 1];
        }
        return NULL;
}

static struct libmnt_fs *FS(const struct km_mount *m) {
        return (struct libmnt_fs *)m;
}

KM_EXPORT unsigned km_mount_id(const struct km_mount *m) {
        return (unsigned)sym_mnt_fs_get_id(FS(m));
}
KM_EXPORT unsigned km_mount_parent_id(const struct km_mount *m) {
        return (unsigned)sym_mnt_fs_get_parent_id(FS(m));
}
dev_t mount_devno(const struct km_mount *m) {
        return sym_mnt_fs_get_devno(FS(m));
}
KM_EXPORT const char *km_mount_target(const struct km_mount *m) {
        return sym_mnt_fs_get_target(FS(m));
}
KM_EXPORT const char *km_mount_source(const struct km_mount *m) {
        return sym_mnt_fs_get_source(FS(m));
}
KM_EXPORT const char *km_mount_fstype(const struct km_mount *m) {
        return sym_mnt_fs_get_fstype(FS(m));
}
KM_EXPORT const char *km_mount_root(const struct km_mount *m) {
        return sym_mnt_fs_get_root(FS(m));
}
KM_EXPORT const char *km_mount_vfs_options(const struct km_mount *m) {
        return sym_mnt_fs_get_vfs_options(FS(m));
}
KM_EXPORT const char *km_mount_fs_options(const struct km_mount *m) {
        return sym_mnt_fs_get_fs_options(FS(m));
}

KM_EXPORT char *km_mount_options_masked(const struct km_mount *m) {
        _cleanup_free_ char *all = sym_mnt_fs_strdup_options(FS(m));
        return km_options_mask(all);
}

/* Value of "key:N" among the optional fields ("shared:1 master:2"). */
static unsigned optional_field(const struct km_mount *m, const char *key) {
        const char *s = sym_mnt_fs_get_optional_fields(FS(m));
        size_t n = strlen(key);

        while (s && *s) {
                s += strspn(s, " ");
                if (strncmp(s, key, n) == 0 && s[n] == ':')
                        return (unsigned)strtoul(s + n + 1, NULL, 10);
                s += strcspn(s, " ");
        }
        return 0;
}

KM_EXPORT unsigned km_mount_peer_group(const struct km_mount *m) {
        return optional_field(m, "shared");
}
KM_EXPORT unsigned km_mount_master(const struct km_mount *m) {
        return optional_field(m, "master");
}

KM_EXPORT unsigned km_mount_propagation(const struct km_mount *m) {
        unsigned long flags = 0;

        if (sym_mnt_fs_get_propagation(FS(m), &flags) < 0)
                return 0;
        return propagation_from_ms(flags);
}

/*
 * GetMountRefs (k8s.io/mount-utils SearchMountPoints): the mount holding path
 * is the last one in table order at or above it (later mounts cover earlier
 * ones); path names root + the rest of path in its filesystem.  Every other
 * mount showing that same directory of the same device refers to it: for a
 * mount point its other binds, for a directory inside a mount the binds of it
 * (a subPath source), for a plain directory usually none.
 */
KM_EXPORT int km_mount_table_refs(const struct km_mount_table *t, const char *path, char ***ret, struct km_error *err) {
        struct libmnt_fs *self = NULL;
        _cleanup_free_ char *root_path = NULL;
        const char *target, *root, *rest;
        char **refs;
        size_t n = 0, len;
        dev_t dev;

        *ret = NULL;
        if (!path || path[0] != '/')
                return error_set(err, -EINVAL, "refs %s: not an absolute path", path ? path : "");
        for (size_t i = t->n; i > 0 && !self; i--) {
                target = sym_mnt_fs_get_target(t->fs[i - 1]);
                if (target && path_is_below(path, target))
                        self = t->fs[i - 1];
        }
        if (!self || !(root = sym_mnt_fs_get_root(self)))
                return error_set_plain(err, -ENOENT, "refs %s: no mount holds it", path);
        /* What path_is_below matched: the target without its trailing slashes ("/" stays). */
        target = sym_mnt_fs_get_target(self);
        len = strlen(target);
        while (len > 1 && target[len - 1] == '/')
                len--;
        rest = len == 1 ? path : path + len;
        if (asprintf(&root_path, "%s/%s", root, rest) < 0)
                return error_set(err, -ENOMEM, "refs %s", path);
        path_simplify(root_path);

        refs = calloc(t->n + 1, sizeof(char *));
        if (!refs)
                return error_set(err, -ENOMEM, "refs %s", path);
        dev = sym_mnt_fs_get_devno(self);
        for (size_t i = 0; i < t->n; i++) {
                const char *r = sym_mnt_fs_get_root(t->fs[i]);
                target = sym_mnt_fs_get_target(t->fs[i]);
                /* The holding mount itself is left out by its id, as mount-utils does. */
                if (t->fs[i] == self || sym_mnt_fs_get_id(t->fs[i]) == sym_mnt_fs_get_id(self) ||
                    sym_mnt_fs_get_devno(t->fs[i]) != dev || !r || !streq(r, root_path) || !target)
                        continue;
                if (!(refs[n++] = strdup(target))) {
                        km_strv_free(refs);
                        return error_set(err, -ENOMEM, "refs %s", path);
                }
        }
        *ret = refs;
        return (int)n;
}

static int table_load_cb(const char *mountinfo, void *userdata, struct km_error *err) {
        return mount_table_load(mountinfo, userdata, err);
}

KM_EXPORT int km_mount_table_load(const struct km_host *h, const char *mountinfo, struct km_mount_table **ret,
                                  struct km_error *err) {
        return host_run_path(h, mountinfo, table_load_cb, ret, err);
}
