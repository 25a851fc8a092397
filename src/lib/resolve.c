/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path resolution that holds an fd at every step, so that a pod cannot send
 * a mount below the kubelet dir elsewhere through a symlink (THREATS 1).
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "resolve.h"
#include "syscalls.h"

#define MAX_LINKS 40

/*
 * Cached attributes only: a dead FUSE daemon or a hung NFS server can neither
 * fail nor block the walk (a corrupted mount must stay reachable for umount).
 */
#define stat_cached(fd, st) km_fstat_sync(fd, AT_STATX_DONT_SYNC, st)

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

int resolve_confined(const char *path, const char *confine, const char **ret_why, char *ret_component,
                     size_t component_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *todo = NULL;
        struct stat cst, st;
        bool have_confine = false, inside = false;
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
                        continue;
                }
                closep(&fd);
                fd = next;
                inside = inside || (have_confine && same_inode(&st, &cst));
        }
        return TAKE_FD(fd);
}
