/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files that a crash or a full disk may spoil (THREATS 9, 14, 15): written
 * atomically, read back refusing anything odd.  The state dir, the image
 * store's records and the OCI runtimes' bundles keep their files this way.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fileio.h"

/*
 * DIRFD/NAME for messages: the directory's path is only known to the kernel,
 * so ask /proc and fall back to NAME alone.  Error paths only; keeps errno,
 * since callers pass -errno in the same call (argument order is unspecified).
 */
const char *path_display_at(int dirfd, const char *name, char *buf, size_t size) {
        char link[64], dir[PATH_MAX], joined[PATH_MAX + NAME_MAX + 2];
        int saved_errno = errno;
        ssize_t n = -1;

        if (dirfd >= 0) {
                snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
                n = readlink(link, dir, sizeof(dir) - 1);
        }
        if (n > 0 && dir[0] == '/') {
                dir[n] = '\0';
                snprintf(joined, sizeof(joined), "%s%s%s", dir, streq(dir, "/") ? "" : "/", name);
        } else
                snprintf(joined, sizeof(joined), "%s", name);
        str_printable(joined, buf, size);
        errno = saved_errno;
        return buf;
}

/* A single path component that names an entry of a directory (temp names are derived from it). */
static bool plain_file_name(const char *name) {
        return name && *name && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..") &&
               strlen(name) <= NAME_MAX - 8;
}

/* ".NAME.XXXXXX": hidden, and never a valid container or state name. */
static void temp_name(const char *name, char *buf, size_t size) {
        static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        static unsigned counter;
        uint64_t rnd;
        char suffix[7];

        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
                rnd = ((uint64_t)getpid() << 24) ^ __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        for (size_t i = 0; i < 6; i++) {
                suffix[i] = chars[rnd % (sizeof(chars) - 1)];
                rnd /= sizeof(chars) - 1;
        }
        suffix[6] = '\0';
        snprintf(buf, size, ".%s.%s", name, suffix);
}

/* Fills the temp file, and syncs it when durable; *step says what failed. */
static int write_temp(int fd, const void *data, size_t size, bool durable, const char **step) {
        int r;

        *step = "write";
        r = write_all(fd, data, size);
        if (r < 0)
                return r;
        *step = "fsync";
        if (durable && fsync(fd) < 0)
                return -errno;
        return 0;
}

int flock_wait(int fd, int op) {
        while (flock(fd, op) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

static int write_file(int dirfd, const char *name, const void *data, size_t size, mode_t mode, bool durable,
                      struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        char tmp[NAME_MAX + 1], shown[PATH_MAX];
        const char *step = "create temp file";
        int r;

        if (!plain_file_name(name) || (!data && size > 0))
                return error_set(err, -EINVAL, "%s",
                                 name ? path_display_at(dirfd, name, shown, sizeof(shown)) : "(null)");

        for (unsigned tries = 0;; tries++) {
                temp_name(name, tmp, sizeof(tmp));
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd >= 0)
                        break;
                if (errno != EEXIST || tries >= 100)
                        return error_set(err, -errno, "%s: %s", path_display_at(dirfd, name, shown, sizeof(shown)),
                                         step);
        }

        r = write_temp(fd, data, size, durable, &step);
        if (r >= 0) {
                /* close() is where NFS and friends report deferred write errors. */
                step = "close";
                if (close(TAKE_FD(fd)) < 0 && errno != EINTR)
                        r = -errno;
        }
        if (r >= 0) {
                step = "rename";
                if (renameat(dirfd, tmp, dirfd, name) < 0)
                        r = -errno;
        }
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return error_set(err, r, "%s: %s", path_display_at(dirfd, name, shown, sizeof(shown)), step);
        }

        /* The rename is done; make it durable (EINVAL: a filesystem without sync for directories). */
        if (durable && fsync(dirfd) < 0 && errno != EINVAL)
                return error_set(err, -errno, "%s: fsync directory",
                                 path_display_at(dirfd, name, shown, sizeof(shown)));
        return 0;
}

int write_file_atomic(int dirfd, const char *name, const void *data, size_t size, mode_t mode, struct km_error *err) {
        return write_file(dirfd, name, data, size, mode, true, err);
}

int write_file_replace(int dirfd, const char *name, const void *data, size_t size, mode_t mode, struct km_error *err) {
        return write_file(dirfd, name, data, size, mode, false, err);
}

/*
 * Every kind of junk (symlink, FIFO, device, directory, too large, empty,
 * not JSON, not an object) is -EBADMSG so that callers need one rule: anything
 * but -ENOENT means "rebuild from live state".  Other errors (EACCES, EIO,
 * ENOMEM) are passed on as they are.
 */
int read_json_file(int dirfd, const char *name, json_t **ret, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *j = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        char shown[PATH_MAX];
        json_error_t jerr;
        struct stat st;
        size_t size;
        int r;

        if (!plain_file_name(name) || !ret)
                return error_set(err, -EINVAL, "%s", name ? name : "(null)");
        /* O_NONBLOCK: a FIFO must not hang us; O_NOCTTY: nor a tty become ours. */
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ELOOP)
                        return error_set_plain(err, -EBADMSG, "%s: is a symlink, not followed",
                                               path_display_at(dirfd, name, shown, sizeof(shown)));
                if (r == -ENXIO) /* a socket, or a device without a driver */
                        return error_set_plain(err, -EBADMSG, "%s: not a regular file",
                                               path_display_at(dirfd, name, shown, sizeof(shown)));
                return error_set(err, r, "%s", path_display_at(dirfd, name, shown, sizeof(shown)));
        }
        if (fstat(fd, &st) < 0)
                return error_set(err, -errno, "%s: stat", path_display_at(dirfd, name, shown, sizeof(shown)));
        if (!S_ISREG(st.st_mode))
                return error_set_plain(err, -EBADMSG, "%s: not a regular file",
                                       path_display_at(dirfd, name, shown, sizeof(shown)));
        if (st.st_size > JSON_FILE_MAX)
                return error_set_plain(err, -EBADMSG, "%s: larger than %d bytes",
                                       path_display_at(dirfd, name, shown, sizeof(shown)), JSON_FILE_MAX);

        r = read_full_fd(fd, JSON_FILE_MAX, &buf, &size);
        if (r == -EFBIG) /* it grew since fstat */
                return error_set_plain(err, -EBADMSG, "%s: larger than %d bytes",
                                       path_display_at(dirfd, name, shown, sizeof(shown)), JSON_FILE_MAX);
        if (r < 0)
                return error_set(err, r, "%s: read", path_display_at(dirfd, name, shown, sizeof(shown)));
        if (size == 0)
                return error_set_plain(err, -EBADMSG, "%s: empty", path_display_at(dirfd, name, shown, sizeof(shown)));

        /* The parser's text quotes the input, which is ours but not for messages: position only. */
        j = json_loadb(buf, size, JSON_REJECT_DUPLICATES, &jerr);
        if (!j)
                return error_set_plain(err, -EBADMSG, "%s: invalid JSON at line %d column %d",
                                       path_display_at(dirfd, name, shown, sizeof(shown)), jerr.line, jerr.column);
        if (!json_is_object(j))
                return error_set_plain(err, -EBADMSG, "%s: not a JSON object",
                                       path_display_at(dirfd, name, shown, sizeof(shown)));
        *ret = TAKE_PTR(j);
        return 0;
}
