/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path resolution that holds an fd at every step, so that a pod cannot send
 * a mount below the kubelet dir elsewhere through a symlink (THREATS 1).
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "resolve.h"
#include "syscalls.h"

#define MAX_LINKS 40

/*
 * Cached attributes only: a dead FUSE daemon or a hung NFS server can neither
 * fail nor block the walk (a corrupted mount must stay reachable for umount).
 */
#define stat_cached(fd, st) fstat_sync(fd, AT_STATX_DONT_SYNC, st)

/* The walk (re)starts at "/". */
static int open_root(int *ret_fd, struct stat *ret_st) {
        *ret_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*ret_fd < 0)
                return -errno;
        return stat_cached(*ret_fd, ret_st);
}

static bool same_inode(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The walk; where (may be NULL) gets where the last component was found and whether the walk entered confine. */
static int walk(const char *path, const char *confine, struct resolved *where, const char **ret_why,
                char *ret_component, size_t component_size) {
        _cleanup_close_ int fd = -EBADF, parent = -EBADF;
        _cleanup_free_ char *todo = NULL;
        struct stat cst, st;
        bool have_confine = false, inside = false;
        char last[NAME_MAX + 1] = "";
        unsigned links = 0;
        int r;

        *ret_why = NULL;
        if (!path || path[0] != '/')
                return -EINVAL;
        if (confine && path_is_below(path, confine)) {
                /* Fail closed: a target below a confining dir that cannot be looked at. */
                if (stat(confine, &cst) < 0)
                        return -errno;
                have_confine = true;
        } else if (confine && stat(confine, &cst) == 0)
                have_confine = true;
        todo = strdup(path);
        if (!todo)
                return -ENOMEM;
        r = open_root(&fd, &st);
        if (r < 0)
                return r;
        inside = have_confine && same_inode(&st, &cst);

        for (char *p = todo;;) {
                char *c, *slash;
                int next;

                p += strspn(p, "/");
                if (!*p)
                        break;
                c = p;
                slash = strchr(p, '/');
                if (slash)
                        *slash = '\0';
                p = slash ? slash + 1 : p + strlen(p);
                snprintf(ret_component, component_size, "%s", c);

                if (streq(c, "."))
                        continue;
                if (streq(c, "..") && inside) {
                        *ret_why = "'..' is not allowed below";
                        return -EPERM;
                }
                next = openat(fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                r = stat_cached(next, &st);
                if (r < 0) {
                        close(next);
                        return r;
                }
                if (S_ISLNK(st.st_mode)) {
                        char link[PATH_MAX];
                        ssize_t n;
                        char *rest;

                        if (inside) {
                                close(next);
                                *ret_why = "is a symlink, refused below";
                                return -ELOOP;
                        }
                        n = readlinkat(next, "", link, sizeof(link) - 1);
                        close(next);
                        if (n < 0)
                                return -errno;
                        if (++links > MAX_LINKS)
                                return -ELOOP;
                        link[n] = '\0';
                        /* Continue with the link's text followed by what was left. */
                        if (asprintf(&rest, "%s/%s", link, p) < 0)
                                return -ENOMEM;
                        free(todo);
                        todo = rest;
                        p = todo;
                        if (link[0] == '/') {
                                closep(&fd);
                                r = open_root(&fd, &st);
                                if (r < 0)
                                        return r;
                                inside = have_confine && same_inode(&st, &cst);
                        }
                        /* Found again by the rest of the walk, if anything follows. */
                        closep(&parent);
                        last[0] = '\0';
                        continue;
                }
                /* ".." names no entry of its own: no place to look at again. */
                closep(&parent);
                if (!streq(c, "..")) {
                        parent = TAKE_FD(fd);
                        snprintf(last, sizeof(last), "%s", c);
                } else
                        last[0] = '\0';
                closep(&fd);
                fd = next;
                inside = inside || (have_confine && same_inode(&st, &cst));
        }
        if (where) {
                where->parent_fd = last[0] ? TAKE_FD(parent) : -EBADF;
                snprintf(where->name, sizeof(where->name), "%s", last);
                where->inside = inside;
        }
        return TAKE_FD(fd);
}

int resolve_confined(const char *path, const char *confine, const char **ret_why, char *ret_component,
                     size_t component_size) {
        return walk(path, confine, NULL, ret_why, ret_component, component_size);
}

int resolve_confined_at(const char *path, const char *confine, struct resolved *ret, const char **ret_why,
                        char *ret_component, size_t component_size) {
        *ret = (struct resolved){ .parent_fd = -EBADF };
        return walk(path, confine, ret, ret_why, ret_component, component_size);
}

void resolved_done(struct resolved *r) {
        closep(&r->parent_fd);
        r->name[0] = '\0';
}

/* No symlink, no "..", no absolute path: the walk of resolve_beneath() where openat2() is missing. */
static int walk_beneath(int dirfd, const char *rel) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *todo = strdup(rel);
        struct stat st;

        if (!todo)
                return -ENOMEM;
        fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (char *p = todo, *c; (c = strsep(&p, "/"));) {
                int next, r;

                if (!*c || streq(c, "."))
                        continue;
                if (streq(c, ".."))
                        return -EXDEV;
                next = openat(fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                r = stat_cached(next, &st);
                if (r < 0 || S_ISLNK(st.st_mode)) {
                        close(next);
                        return r < 0 ? r : -ELOOP;
                }
                closep(&fd);
                fd = next;
        }
        return TAKE_FD(fd);
}

int resolve_beneath(int dirfd, const char *rel) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        if (rel[0] == '/')
                return -EXDEV;
        /* Kernels without the mount API (KUBEMOUNT_COMPAT=no-mount-api) have no openat2 either. */
        if (feature_available(KM_FEATURE_MOUNT_API)) {
                fd = sys_openat2(dirfd, *rel ? rel : ".", how.flags, how.resolve);
                if (fd >= 0 || (fd != -ENOSYS && fd != -E2BIG && fd != -EPERM))
                        return fd;
        }
        return walk_beneath(dirfd, rel);
}
