/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Removing a directory tree that someone else filled (see rm-rf.h). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "rm-rf.h"

struct dir_id {
        dev_t dev;
        ino_t ino;
};

static int failed(int r, const char *name, char *what, size_t size) {
        if (what && size)
                snprintf(what, size, "%s", name);
        return r;
}

/*
 * Removes what can go from the directory dir at once.  0 when it is empty;
 * 1 with *ret_child, an fd of a subdirectory that is not empty yet (to go
 * down into); < 0 on an entry that cannot be removed.
 */
static int empty_level(int dir, dev_t dev, int *ret_child, char *what, size_t size) {
        int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        int r = 0;

        if (!d) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                return failed(r, ".", what, size);
        }
        while (r == 0 && (errno = 0, de = readdir(d))) {
                struct stat st = { .st_dev = dev };
                int child;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (unlinkat(dir, de->d_name, 0) == 0 || errno == ENOENT)
                        continue;
                if (errno != EISDIR)
                        r = failed(-errno, de->d_name, what, size);
                else if (unlinkat(dir, de->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                        continue;
                else if (errno != ENOTEMPTY && errno != EEXIST)
                        r = failed(-errno, de->d_name, what, size);
                else if ((child = openat(dir, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                        r = failed(-errno, de->d_name, what, size);
                else if (fstat(child, &st) < 0 || st.st_dev != dev) {
                        /* Another filesystem mounted here: not ours to empty. */
                        r = failed(st.st_dev != dev ? -EBUSY : -errno, de->d_name, what, size);
                        close(child);
                } else {
                        *ret_child = child;
                        r = 1;
                }
        }
        if (r == 0 && errno != 0)
                r = failed(-errno, ".", what, size);
        closedir(d);
        return r;
}

int rm_rf_at(int dirfd, const char *name, char *what, size_t size) {
        _cleanup_close_ int cur = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ struct dir_id *stack = NULL;
        size_t depth = 0, alloc = 0;
        struct stat st;
        dev_t dev;

        if (what && size)
                what[0] = '\0';
        if (cur < 0) {
                if (errno == ENOENT)
                        return 0;
                if (errno != ENOTDIR && errno != ELOOP)
                        return failed(-errno, name, what, size);
                /* A file or symlink where a tree was expected: the entry itself goes. */
                return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT ? 0 : failed(-errno, name, what, size);
        }
        if (fstat(cur, &st) < 0)
                return failed(-errno, name, what, size);
        dev = st.st_dev;
        for (;;) {
                int child = -EBADF, r;

                if (depth == alloc) {
                        struct dir_id *s = realloc(stack, sizeof(*s) * (alloc = alloc ? 2 * alloc : 16));
                        if (!s)
                                return -ENOMEM;
                        stack = s;
                }
                stack[depth++] = (struct dir_id){ st.st_dev, st.st_ino };
                while ((r = empty_level(cur, dev, &child, what, size)) == 0 && depth > 1) {
                        /* Empty: back up one level, to where we came from and nowhere else. */
                        int parent = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                        if (parent < 0 || fstat(parent, &st) < 0) {
                                r = -errno;
                                if (parent >= 0)
                                        close(parent);
                                return failed(r, "..", what, size);
                        }
                        depth--;
                        closep(&cur);
                        cur = parent;
                        if (st.st_dev != stack[depth - 1].dev || st.st_ino != stack[depth - 1].ino)
                                return failed(-ESTALE, "..", what, size);
                }
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                closep(&cur);
                cur = child;
                if (fstat(cur, &st) < 0)
                        return failed(-errno, ".", what, size);
        }
        closep(&cur);
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return failed(-errno, name, what, size);
        return 0;
}
