/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state directory.  Its files are hints that a crash or a full disk may
 * spoil (THREATS 9, 14, 15): writes are atomic, reads refuse anything odd,
 * and callers rebuild from the kernel's live state when a read fails.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "overlay.h"
#include "rm-rf.h"
#include "state-dir.h"
#include "vcs-route.h"

#define NAME_MAX_LEN 128

bool state_name_is_valid(const char *name) {
        size_t n;

        if (!name || !((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
                       (name[0] >= '0' && name[0] <= '9')))
                return false;
        for (n = 1; name[n]; n++) {
                char c = name[n];

                if (n >= NAME_MAX_LEN)
                        return false;
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == '-'))
                        return false;
        }
        /* The first-character rule already keeps out ".", ".." and hidden names. */
        return true;
}

/* WHAT if given, else DIRFD/NAME from /proc (only computed when a message needs it). */
static const char *dir_what(const char *what, int dirfd, const char *name, char *buf, size_t size) {
        return what ? what : path_display_at(dirfd, name, buf, size);
}

/*
 * Someone else able to create entries in a state directory could plant
 * symlinks or junk for us to trust: only ours, and writable by us alone.
 */
static int check_private_dir(int fd, int dirfd, const char *name, const char *what, struct km_error *err) {
        char shown[PATH_MAX];
        struct stat st;

        if (fstat(fd, &st) < 0)
                return error_set(err, -errno, "state dir %s: stat", dir_what(what, dirfd, name, shown, sizeof(shown)));
        if (!S_ISDIR(st.st_mode))
                return error_set_plain(err, -ENOTDIR, "state dir %s: not a directory",
                                       dir_what(what, dirfd, name, shown, sizeof(shown)));
        if (st.st_uid != geteuid())
                return error_set_plain(err, -EPERM, "state dir %s: owned by uid %u, not %u, refusing",
                                       dir_what(what, dirfd, name, shown, sizeof(shown)), (unsigned)st.st_uid,
                                       (unsigned)geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return error_set_plain(err, -EPERM, "state dir %s: writable by group or others (mode %04o), refusing",
                                       dir_what(what, dirfd, name, shown, sizeof(shown)),
                                       (unsigned)(st.st_mode & 07777));
        return 0;
}

/*
 * DIRFD/NAME as a private directory, created (0700) when missing and create
 * is set.  WHAT names it in messages (NULL: DIRFD/NAME).
 */
static int open_private_dir(int dirfd, const char *name, bool create, const char *what, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        char shown[PATH_MAX];
        struct stat st;
        int r;

        if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
                return error_set(err, -errno, "state dir %s: mkdir", dir_what(what, dirfd, name, shown, sizeof(shown)));
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                /* O_NOFOLLOW|O_DIRECTORY on a symlink gives ELOOP or ENOTDIR: look at it. */
                if ((r == -ELOOP || r == -ENOTDIR) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode))
                        return error_set_plain(err, -ELOOP, "state dir %s: is a symlink",
                                               dir_what(what, dirfd, name, shown, sizeof(shown)));
                return error_set(err, r, "state dir %s", dir_what(what, dirfd, name, shown, sizeof(shown)));
        }
        r = check_private_dir(fd, dirfd, name, what, err);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

int state_dir_open(const char *dir, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF, cfd = -EBADF;
        _cleanup_free_ char *path = NULL;
        char shown[PATH_MAX], sub[PATH_MAX + sizeof("/" CONTAINERS_DIR)];

        if (!dir || !*dir)
                return error_set(err, -EINVAL, "state dir");
        /* A trailing slash would make the kernel follow a symlink despite O_NOFOLLOW. */
        path = strdup(dir);
        if (!path)
                return error_set(err, -ENOMEM, "state dir");
        path_simplify(path);
        str_printable(path, shown, sizeof(shown));

        fd = open_private_dir(AT_FDCWD, path, true, shown, err);
        if (fd < 0)
                return fd;
        snprintf(sub, sizeof(sub), "%s/" CONTAINERS_DIR, streq(shown, "/") ? "" : shown);
        cfd = open_private_dir(fd, CONTAINERS_DIR, true, sub, err);
        if (cfd < 0)
                return cfd;
        return TAKE_FD(fd);
}

/* containers/ of an open state dir; when missing_ok, its absence is -ENOENT without a message. */
static int open_containers(int state_fd, bool missing_ok, struct km_error *err) {
        int fd = open_private_dir(state_fd, CONTAINERS_DIR, false, NULL, err);

        if (fd == -ENOENT && missing_ok && err)
                *err = (struct km_error){};
        return fd;
}

int state_container_dir(int state_fd, const char *name, bool create, struct km_error *err) {
        _cleanup_close_ int cfd = -EBADF;
        char what[PATH_MAX];

        if (!state_name_is_valid(name))
                return error_set(err, -EINVAL, "container state: invalid name '%s'",
                                 name ? str_printable(name, what, sizeof(what)) : "(null)");
        cfd = open_containers(state_fd, false, err);
        if (cfd < 0)
                return cfd;
        return open_private_dir(cfd, name, create, NULL, err);
}

int state_container_rename(int state_fd, const char *from, const char *to) {
        _cleanup_close_ int cfd = -EBADF;

        if (!state_name_is_valid(from) || !state_name_is_valid(to))
                return -EINVAL;
        cfd = open_containers(state_fd, false, NULL);
        if (cfd < 0)
                return cfd;
        return renameat2(cfd, from, cfd, to, RENAME_NOREPLACE) < 0 ? -errno : 0;
}

/* Removes one entry of a container's dir: never follows, empty subdirs only. */
static int remove_entry(int dfd, const char *name, struct km_error *err) {
        char shown[PATH_MAX];

        if (unlinkat(dfd, name, 0) >= 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR)
                return error_set(err, -errno, "state file %s: unlink",
                                 path_display_at(dfd, name, shown, sizeof(shown)));
        /* The container's writable layer (overlay.h): its tree goes too, on this filesystem only. */
        if (streq(name, OVERLAY_LAYER_DIR)) {
                char what[256];
                int r = rm_rf_at(dfd, name, what, sizeof(what));
                return r < 0 ? error_set(err, r, "state dir %s: remove %s",
                                         path_display_at(dfd, name, shown, sizeof(shown)), what)
                             : 0;
        }
        /* Other trees are not ours to write: refuse rather than recurse into them. */
        if (unlinkat(dfd, name, AT_REMOVEDIR) >= 0 || errno == ENOENT)
                return 0;
        return error_set(err, -errno, "state dir %s: rmdir", path_display_at(dfd, name, shown, sizeof(shown)));
}

int state_container_remove(int state_fd, const char *name, struct km_error *err) {
        _cleanup_close_ int cfd = -EBADF, fd = -EBADF;
        _cleanup_(closedirp) DIR *d = NULL;
        char shown[PATH_MAX], what[PATH_MAX];
        struct dirent *de;
        int r = 0;

        if (!state_name_is_valid(name))
                return error_set(err, -EINVAL, "container state: invalid name '%s'",
                                 name ? str_printable(name, what, sizeof(what)) : "(null)");
        cfd = open_containers(state_fd, true, err);
        if (cfd == -ENOENT)
                return 0;
        if (cfd < 0)
                return cfd;
        fd = openat(cfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                /* A symlink or file where the directory should be: remove that entry itself. */
                if (errno == ELOOP || errno == ENOTDIR)
                        return remove_entry(cfd, name, err);
                return error_set(err, -errno, "state dir %s", path_display_at(cfd, name, shown, sizeof(shown)));
        }
        d = fdopendir(fd);
        if (!d)
                return error_set(err, -errno, "state dir %s", path_display_at(cfd, name, shown, sizeof(shown)));
        TAKE_FD(fd);

        /* Keep going past a failure: remove as much as possible, report the first error. */
        for (;;) {
                int q;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0 && r == 0)
                                r = error_set(err, -errno, "state dir %s: readdir",
                                              path_display_at(cfd, name, shown, sizeof(shown)));
                        break;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                q = remove_entry(dirfd(d), de->d_name, r < 0 ? NULL : err);
                if (q < 0 && r == 0)
                        r = q;
        }
        if (r < 0)
                return r;
        if (unlinkat(cfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return error_set(err, -errno, "state dir %s: rmdir", path_display_at(cfd, name, shown, sizeof(shown)));
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int state_container_list(int state_fd, char ***ret, struct km_error *err) {
        _cleanup_(closedirp) DIR *d = NULL;
        char **names = NULL, shown[PATH_MAX];
        size_t n = 0, alloc = 0;
        struct dirent *de;
        int fd;

        fd = open_containers(state_fd, true, err);
        if (fd < 0 && fd != -ENOENT)
                return fd;
        if (fd >= 0) {
                d = fdopendir(fd);
                if (!d) {
                        int r = -errno;

                        close(fd);
                        return error_set(err, r, "state dir %s",
                                         path_display_at(state_fd, CONTAINERS_DIR, shown, sizeof(shown)));
                }
        }

        /* Entries of any type are listed: the caller opens each and treats failures as junk. */
        for (; d;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0) {
                                int r = -errno;

                                km_strv_free(names);
                                return error_set(err, r, "state dir %s: readdir",
                                                 path_display_at(state_fd, CONTAINERS_DIR, shown, sizeof(shown)));
                        }
                        break;
                }
                if (!state_name_is_valid(de->d_name))
                        continue;
                if (n + 2 > alloc) {
                        size_t a = alloc ? alloc * 2 : 16;
                        char **p = realloc(names, a * sizeof(*names));

                        if (!p) {
                                km_strv_free(names);
                                return error_set(err, -ENOMEM, "state dir list");
                        }
                        names = p;
                        alloc = a;
                }
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        km_strv_free(names);
                        return error_set(err, -ENOMEM, "state dir list");
                }
                names[++n] = NULL;
        }
        if (!names && !(names = calloc(1, sizeof(*names))))
                return error_set(err, -ENOMEM, "state dir list");
        qsort(names, n, sizeof(*names), cmp_str);
        *ret = names;
        return (int)n;
}

int state_proc_starttime(int proc_fd, pid_t pid, uint64_t *ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        char path[32], *p, *end;
        unsigned long long v;
        int r;

        if (pid <= 0 || !ret)
                return -EINVAL;
        snprintf(path, sizeof(path), "%d/stat", (int)pid);
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        r = read_full_fd(fd, 16384, &buf, NULL);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;

        /* comm (field 2) may hold anything, ')' included; no later field can. */
        p = strrchr(buf, ')');
        if (!p || !strchr(buf, '('))
                return -EBADMSG;
        p++;
        /* p is now before field 3; skip fields 3..21. */
        for (int field = 3; field < 22; field++) {
                p += strspn(p, " ");
                if (!*p)
                        return -EBADMSG;
                p += strcspn(p, " ");
        }
        p += strspn(p, " ");
        if (*p < '0' || *p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* dir, else $KUBEMOUNT_STATE_DIR, else the default; absolute (a runtime's bundle path is derived from it). */
char *state_dir_resolve(const char *dir) {
        const char *env = getenv("KUBEMOUNT_STATE_DIR");

        return path_absolute(dir && *dir ? dir : env && *env ? env : STATE_DIR_DEFAULT);
}

int vcs_container_exists(const char *state_dir, const char *name, struct km_error *err) {
        _cleanup_free_ char *dir = state_dir_resolve(state_dir), *path = NULL;
        struct stat st;

        /* A look only (the agent, which owns the dir, checks it properly): nothing is created. */
        if (!state_name_is_valid(name))
                return error_set_plain(err, -EINVAL, "invalid container name '%s'", name);
        if (!dir || asprintf(&path, "%s/" CONTAINERS_DIR "/%s", dir, name) < 0)
                return -ENOMEM;
        if (lstat(path, &st) == 0)
                return S_ISDIR(st.st_mode);
        return errno == ENOENT || errno == ENOTDIR ? 0 : error_set(err, -errno, "%s", path);
}

int vcs_state_lock(const char *state_dir, const char *name, int op) {
        _cleanup_free_ char *dir = state_dir_resolve(state_dir), *path = NULL;
        int fd, r;

        if (!dir || asprintf(&path, "%s/%s.lock", dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = flock_wait(fd, op);
        if (r < 0)
                close(fd);
        return r < 0 ? r : fd;
}
