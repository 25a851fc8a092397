/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The image store (store.h), reached through directory fds held from
 * store_open.  Digests are validated before they become file names (THREATS
 * 24: "sha256:../../x" never reaches the filesystem); results appear only by
 * rename, so a killed writer leaves nothing but tmp/ entries (THREATS 9, 14).
 * Locking: an open store holds a shared flock on STORE/lock; tmp/ is emptied
 * only under the exclusive one (at open: nobody else has the store open, so
 * nothing in tmp/ is live).  gc converts to exclusive, retrying for about a
 * second, and fails with -EBUSY while others hold the store open.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "digest.h"
#include "fileio.h"
#include "store-internal.h"
#include "unpack-tree.h"
#include "unpack.h"

#define MANIFEST_MAX (4 * 1024 * 1024)
#define REF_MAX 4096
#define MANIFEST_DEPTH 2           /* an index, its manifests, and one more level */
#define GC_LOCK_TRIES 20           /* gc's tries for the exclusive lock, */
#define GC_LOCK_WAIT_NS 50000000   /* 50 ms apart: about a second in all */
#define DU_DEPTH 64                /* levels counted by gc */
#define REF_FILE_LEN (HEX_LEN + 5) /* HEX.json */

static bool has_control_chars(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

int store_invalid(struct km_error *err, const char *what, const char *value) {
        char shown[128];

        return error_set_plain(err, -EINVAL, "%s: invalid: '%s'", what,
                               value ? str_printable(value, shown, sizeof(shown)) : "(null)");
}

void store_fsync_dir(int fd, int *r) {
        /* EINVAL: a filesystem without sync for directories. */
        if (fsync(fd) < 0 && errno != EINVAL)
                keep_first(r, -errno);
}

/* Temp names are PREFIX + 6 of these, and nothing else is taken for one: a temp name leads nowhere. */
static const char tmp_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

bool store_tmp_name_is_valid(const char *name, const char *prefix) {
        size_t n = strlen(prefix);

        return name && strncmp(name, prefix, n) == 0 && strlen(name) == n + 6 && strspn(name + n, tmp_chars) == 6;
}

/* A new tmp/PREFIXXXXXXX, a file (O_RDWR) or a directory (O_DIRECTORY); its fd, the name in *ret_name. */
int store_make_tmp(struct store *s, const char *prefix, bool dir, char **ret_name, struct km_error *err) {
        static unsigned counter;
        _cleanup_close_ int fd = -EBADF;
        char name[32];
        uint64_t rnd;
        size_t n = 0;

        for (unsigned tries = 0; fd < 0; tries++) {
                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
                        rnd = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ ++counter;
                n = (size_t)snprintf(name, sizeof(name), "%s", prefix);
                for (size_t i = 0; i < 6; i++, rnd /= sizeof(tmp_chars) - 1)
                        name[n + i] = tmp_chars[rnd % (sizeof(tmp_chars) - 1)];
                name[n + 6] = '\0';
                if (dir && mkdirat(s->tmp_fd, name, 0755) >= 0)
                        fd = openat(s->tmp_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                else if (!dir)
                        fd = openat(s->tmp_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0 && (errno != EEXIST || tries >= 100))
                        return error_set(err, -errno, "store %s/tmp/%s", s->path, name);
        }
        /* A root directory is 0755 whatever the umask: the image's containers' users enter it. */
        if ((dir && fchmod(fd, 0755) < 0) || !(*ret_name = strdup(name))) {
                int r = -errno;

                (void)unpack_remove_tree(s->tmp_fd, name);
                return error_set(err, r, "store %s/tmp/%s", s->path, name);
        }
        return TAKE_FD(fd);
}

/* The entry names of directory fd but "." and "..", sorted (NULL-terminated, km_strv_free()). */
static int read_names(int fd, char ***ret, size_t *ret_n) {
        struct dirent **list = NULL;
        char **names;
        int n, r = 0;

        n = scandirat(fd, ".", &list, NULL, alphasort);
        if (n < 0)
                return -errno;
        names = calloc(n + 1, sizeof(*names));
        *ret_n = 0;
        for (int i = 0; i < n; i++) {
                if (names && r == 0 && !streq(list[i]->d_name, ".") && !streq(list[i]->d_name, "..") &&
                    !(names[(*ret_n)++] = strdup(list[i]->d_name)))
                        r = -ENOMEM;
                free(list[i]);
        }
        free(list);
        if (!names || r < 0) {
                km_strv_free(names);
                return -ENOMEM;
        }
        *ret = names;
        return 0;
}

/* ---- removing trees ---- */

/*
 * What removing DFD/NAME frees: blocks of directories, and of files shared
 * out among their links; not across mounts, and no deeper than DU_DEPTH (a
 * deeper tree is still removed, only not counted in full).
 */
static uint64_t tree_bytes(int dfd, const char *name, const struct stat *parent, unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        struct stat st;
        uint64_t sum;
        int fd;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || (parent && st.st_dev != parent->st_dev))
                return 0;
        sum = (uint64_t)st.st_blocks * 512 / (S_ISDIR(st.st_mode) || st.st_nlink < 1 ? 1 : st.st_nlink);
        if (!S_ISDIR(st.st_mode) || depth >= DU_DEPTH)
                return sum;
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && !(d = fdopendir(fd)))
                close(fd);
        while (d && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        sum += tree_bytes(dirfd(d), de->d_name, &st, depth + 1);
        return sum;
}

/*
 * Removes DFD/NAME, a file or a whole tree (unpack.c: no symlink followed, no
 * mount crossed, any depth); 0 when absent.  Adds what it freed to *freed.
 */
static int remove_tree(int dfd, const char *name, uint64_t *freed) {
        uint64_t bytes = freed ? tree_bytes(dfd, name, NULL, 0) : 0;
        int r = unpack_remove_tree(dfd, name);

        if (r == -ENOENT)
                return 0;
        if (r >= 0 && freed)
                *freed += bytes;
        return r;
}

/* ---- opening ---- */

/* DFD/NAME as a directory of ours that nobody else may write, created (0700) when missing. */
static int open_private(int dfd, const char *name, const char *shown, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
                return error_set(err, -errno, "store %s: mkdir", shown);
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
                return error_set_plain(err, -ELOOP, "store %s: is a symlink, refusing", shown);
        if (fd < 0 || fstat(fd, &st) < 0)
                return error_set(err, -errno, "store %s", shown);
        if (st.st_uid != geteuid())
                return error_set_plain(err, -EPERM, "store %s: owned by uid %u, not %u, refusing", shown,
                                       (unsigned)st.st_uid, (unsigned)geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return error_set_plain(err, -EPERM, "store %s: writable by group or others (mode %04o), refusing",
                                       shown, (unsigned)(st.st_mode & 07777));
        return TAKE_FD(fd);
}

/* Under the exclusive lock: what killed writers left (tmp/ entries, refs/ temp files ".NAME.XXXXXX"). */
static int clear_leftovers(struct store *s, uint64_t *freed) {
        const int dirs[] = { s->tmp_fd, s->refs_fd, s->sums_fd };
        int r = 0;

        for (size_t k = 0; k < ELEMENTSOF(dirs); k++) {
                char **names = NULL;
                size_t n = 0;
                int q = read_names(dirs[k], &names, &n);

                keep_first(&r, q);
                for (size_t i = 0; q >= 0 && i < n; i++)
                        if (dirs[k] == s->tmp_fd || names[i][0] == '.')
                                keep_first(&r, remove_tree(dirs[k], names[i], freed));
                km_strv_free(names);
        }
        return r;
}

int store_open(const char *dir, struct store **ret, struct km_error *err) {
        _cleanup_(store_closep) struct store *s = NULL;
        _cleanup_close_ int blobs = -EBADF;
        char shown[PATH_MAX + 32];
        int r;

        if (!dir || !*dir || !ret)
                return error_set(err, -EINVAL, "store");
        s = calloc(1, sizeof(*s));
        if (!s)
                return error_set(err, -ENOMEM, "store");
        s->fd = s->blobs_fd = s->refs_fd = s->rootfs_fd = s->sums_fd = s->tmp_fd = s->lock_fd = -EBADF;
        /* Simplified: a trailing slash would make the kernel follow a symlink despite O_NOFOLLOW. */
        s->path = path_absolute(dir);
        if (!s->path)
                return error_set(err, -ENOMEM, "store");
        if (has_control_chars(s->path) || strlen(s->path) >= PATH_MAX)
                return error_set_plain(err, -EINVAL, "store %s: invalid path",
                                       str_printable(s->path, shown, sizeof(shown)));

        s->fd = open_private(AT_FDCWD, s->path, s->path, err);
        if (s->fd < 0)
                return s->fd;
        struct {
                int *fd, parent;
                const char *name, *shown;
        } subdirs[] = {
                { &blobs, s->fd, "blobs", "blobs" },    { &s->blobs_fd, -1, "sha256", "blobs/sha256" },
                { &s->refs_fd, s->fd, "refs", "refs" }, { &s->rootfs_fd, s->fd, "rootfs", "rootfs" },
                { &s->sums_fd, s->fd, "sums", "sums" }, { &s->tmp_fd, s->fd, "tmp", "tmp" },
        };
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
                snprintf(shown, sizeof(shown), "%s/%s", s->path, subdirs[i].shown);
                *subdirs[i].fd =
                        open_private(subdirs[i].parent < 0 ? blobs : subdirs[i].parent, subdirs[i].name, shown, err);
                if (*subdirs[i].fd < 0)
                        return *subdirs[i].fd;
        }

        s->lock_fd = openat(s->fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
        if (s->lock_fd < 0)
                return error_set(err, -errno, "store %s/lock", s->path);

        /* Alone with the store: nothing in tmp/ can be live. */
        if (flock(s->lock_fd, LOCK_EX | LOCK_NB) >= 0) {
                r = clear_leftovers(s, NULL);
                if (r < 0)
                        log_msg(KM_LOG_WARNING, "store %s: clearing tmp/: %s", s->path, strerror(-r));
        } else if (errno != EWOULDBLOCK)
                return error_set(err, -errno, "store %s/lock", s->path);
        /* The downgrade is not atomic: a gc may slip in between, and then we wait for it. */
        r = flock_wait(s->lock_fd, LOCK_SH);
        if (r < 0)
                return error_set(err, r, "store %s/lock", s->path);
        *ret = TAKE_PTR(s);
        return 0;
}

void store_close(struct store *s) {
        if (!s)
                return;
        /* The lock's fd last: closing it releases the lock. */
        for (int *fd[] = { &s->fd, &s->blobs_fd, &s->refs_fd, &s->rootfs_fd, &s->sums_fd, &s->tmp_fd, &s->lock_fd },
                 i = 0;
             i < 7; i++)
                closep(fd[i]);
        free(s->path);
        free(s);
}

const char *store_path(const struct store *s) {
        return s->path;
}

/* Removes tmp/NAME; what cannot go now goes at the next exclusive open or gc. */
void store_drop_tmp(struct store *s, const char *name) {
        int r = remove_tree(s->tmp_fd, name, NULL);

        if (r < 0)
                log_msg(KM_LOG_WARNING, "store %s/tmp/%s: remove: %s", s->path, name, strerror(-r));
}

/*
 * Renames tmp/TMPNAME to DFD/HEX unless that exists already (renameat2
 * RENAME_NOREPLACE; look-then-rename where the filesystem lacks it).  When a
 * concurrent writer got there first, its result (same content by
 * construction) stays and ours goes.  WHAT and DIGEST name it in messages.
 */
static int store_place(struct store *s, const char *tmpname, int dfd, const char *hex, mode_t type, const char *what,
                       const char *digest, struct km_error *err) {
        struct stat st;
        int r = 0;

        if (renameat2(s->tmp_fd, tmpname, dfd, hex, RENAME_NOREPLACE) < 0) {
                r = -errno;
                if ((r == -EINVAL || r == -ENOSYS) && fstatat(dfd, hex, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = renameat(s->tmp_fd, tmpname, dfd, hex) < 0 ? -errno : 0;
                else if (r == -EINVAL || r == -ENOSYS)
                        r = -EEXIST;
        }
        if (r == -EEXIST || r == -ENOTEMPTY) {
                if (fstatat(dfd, hex, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return error_set(err, -errno, "%s %s", what, digest);
                if ((st.st_mode & S_IFMT) != type)
                        return error_set_plain(err, -EEXIST, "%s %s: something else is in its place", what, digest);
                store_drop_tmp(s, tmpname);
                return 0;
        }
        if (r >= 0)
                store_fsync_dir(dfd, &r);
        return r < 0 ? error_set(err, r, "%s %s: rename into the store and fsync", what, digest) : 0;
}

/* ---- blobs ---- */

int store_blob_begin(struct store *s, char **ret_tmpname, struct km_error *err) {
        return store_make_tmp(s, "blob-", false, ret_tmpname, err);
}

static int blob_mismatch(struct km_error *err, const char *digest, const char *got, uint64_t size, int64_t expected) {
        char declared[48] = "";

        if (expected >= 0 && size != (uint64_t)expected)
                snprintf(declared, sizeof(declared), ", %lld declared", (long long)expected);
        return error_set_plain(err, -EBADMSG, "blob %s: got %s (%llu bytes%s)", digest, got, (unsigned long long)size,
                               declared);
}

/* Verifies tmp/TMPNAME and moves it to blobs/sha256/HEX; the caller removes it on failure. */
static int blob_place(struct store *s, const char *tmpname, const char *digest, int64_t expected_size,
                      struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        char got[DIGEST_STRING_MAX];
        uint64_t size = 0;
        int r;

        /* Read again from the start, by a descriptor of our own: what is hashed is what is stored. */
        fd = openat(s->tmp_fd, tmpname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return error_set(err, -errno, "blob %s: temp file %s", digest, tmpname);
        r = digest_fd(fd, got, &size);
        if (r < 0)
                return error_set(err, r, "blob %s: read", digest);
        if (!streq(got, digest) || (expected_size >= 0 && size != (uint64_t)expected_size))
                return blob_mismatch(err, digest, got, size, expected_size);
        if (fchmod(fd, 0444) < 0 || fsync(fd) < 0)
                return error_set(err, -errno, "blob %s: chmod and fsync", digest);
        return store_place(s, tmpname, s->blobs_fd, hex_of(digest), S_IFREG, "blob", digest, err);
}

int store_blob_commit(struct store *s, const char *tmpname, const char *digest, int64_t expected_size,
                      struct km_error *err) {
        int r;

        if (!store_tmp_name_is_valid(tmpname, "blob-"))
                return error_set_plain(err, -EINVAL, "blob: invalid temp file name");
        if (!digest_is_valid(digest))
                r = store_invalid(err, "blob digest", digest);
        else
                r = blob_place(s, tmpname, digest, expected_size, err);
        if (r < 0)
                (void)unlinkat(s->tmp_fd, tmpname, 0);
        return r;
}

int store_blob_exists(struct store *s, const char *digest) {
        struct stat st;

        if (!digest_is_valid(digest))
                return -EINVAL;
        if (fstatat(s->blobs_fd, hex_of(digest), &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISREG(st.st_mode);
}

int store_blob_open(struct store *s, const char *digest, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!digest_is_valid(digest))
                return store_invalid(err, "blob digest", digest);
        /* O_NONBLOCK: a FIFO in its place must not hang us (cleared below for a regular file). */
        fd = openat(s->blobs_fd, hex_of(digest), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT)
                return error_set_plain(err, -ENOENT, "blob %s: not in the store", digest);
        if (fd < 0 && errno == ELOOP)
                return error_set_plain(err, -EBADMSG, "blob %s: is a symlink, not followed", digest);
        if (fd < 0)
                return error_set(err, -errno, "blob %s", digest);
        r = fd_regular_blocking(fd);
        if (r == -EBADMSG)
                return error_set_plain(err, r, "blob %s: not a regular file", digest);
        if (r < 0)
                return error_set(err, r, "blob %s", digest);
        return TAKE_FD(fd);
}

int store_blob_read(struct store *s, const char *digest, size_t max, char **ret, size_t *ret_size,
                    struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = store_blob_open(s, digest, err);
        if (fd < 0)
                return fd;
        r = read_full_fd(fd, max, ret, ret_size);
        if (r < 0) /* -EFBIG: larger than max */
                return error_set(err, r, "blob %s: read (at most %zu bytes)", digest, max);
        return 0;
}

int store_blob_put(struct store *s, const char *digest, const void *data, size_t size, struct km_error *err) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        char got[DIGEST_STRING_MAX];
        const char *p = data;
        int r = 0;

        if (!digest_is_valid(digest))
                return store_invalid(err, "blob digest", digest);
        if (!data && size > 0)
                return error_set(err, -EINVAL, "blob %s", digest);
        /* Checked before anything is written: wrong bytes leave no trace. */
        digest_buffer(data ? data : "", size, got);
        if (!streq(got, digest))
                return blob_mismatch(err, digest, got, size, -1);
        if (store_blob_exists(s, digest) > 0)
                return 0;

        fd = store_blob_begin(s, &tmp, err);
        if (fd < 0)
                return fd;
        for (size_t left = size; left > 0 && r == 0;) {
                ssize_t k = write(fd, p, left);

                if (k < 0 && errno != EINTR)
                        r = -errno;
                else if (k == 0)
                        r = -EIO;
                else if (k > 0)
                        p += k, left -= k;
        }
        if (r == 0 && close(TAKE_FD(fd)) < 0 && errno != EINTR)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(s->tmp_fd, tmp, 0);
                return error_set(err, r, "blob %s: write", digest);
        }
        return store_blob_commit(s, tmp, digest, (int64_t)size, err);
}

/* ---- references ---- */

static bool ref_is_valid(const char *ref) {
        return ref && *ref && strlen(ref) < REF_MAX && !has_control_chars(ref);
}

/* refs/HEX.json, HEX being sha256(ref): any reference maps to a plain name. */
static int ref_file_name(const char *ref, char name[REF_FILE_LEN + 1], struct km_error *err) {
        char d[DIGEST_STRING_MAX];

        if (!ref_is_valid(ref))
                return store_invalid(err, "image reference", ref);
        digest_buffer(ref, strlen(ref), d);
        snprintf(name, REF_FILE_LEN + 1, "%s.json", hex_of(d));
        return 0;
}

/* A record of ours: names the reference its file is named after, and a valid manifest digest. */
static bool record_is_valid(json_t *j, const char *file) {
        const char *ref = json_string_value(json_object_get(j, "ref"));
        char name[REF_FILE_LEN + 1];

        return digest_is_valid(json_string_value(json_object_get(j, "manifest"))) &&
               ref_file_name(ref, name, NULL) >= 0 && streq(name, file);
}

int store_ref_set(struct store *s, const char *ref, json_t *record, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *copy = NULL;
        _cleanup_free_ char *text = NULL;
        char name[REF_FILE_LEN + 1];
        const char *manifest;

        if (ref_file_name(ref, name, err) < 0)
                return -EINVAL;
        if (!json_is_object(record))
                return error_set_plain(err, -EINVAL, "image %s: record is not an object", ref);
        manifest = json_string_value(json_object_get(record, "manifest"));
        if (!digest_is_valid(manifest))
                return store_invalid(err, "image reference record: manifest digest", manifest);
        copy = json_copy(record);
        if (!copy || json_object_set_new(copy, "ref", json_string(ref)) < 0)
                return error_set_plain(err, -EINVAL, "image %s: not valid UTF-8, or out of memory", ref);
        text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return error_set(err, -ENOMEM, "image %s", ref);
        /* Temp file, fsync, rename over what was there (junk and symlinks included), fsync dir. */
        return write_file_atomic(s->refs_fd, name, text, strlen(text), 0600, err);
}

int store_ref_get(struct store *s, const char *ref, json_t **ret, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *j = NULL;
        char name[REF_FILE_LEN + 1];
        int r;

        if (ref_file_name(ref, name, err) < 0)
                return -EINVAL;
        r = read_json_file(s->refs_fd, name, &j, err);
        if (r == -ENOENT)
                return error_set_plain(err, -ENOENT, "image %s: not in the store", ref);
        if (r < 0)
                return r;
        if (!record_is_valid(j, name))
                return error_set_plain(err, -EBADMSG, "image %s: %s/refs/%s is not a record of it", ref, s->path, name);
        *ret = TAKE_PTR(j);
        return 0;
}

int store_ref_remove(struct store *s, const char *ref, struct km_error *err) {
        char name[REF_FILE_LEN + 1];
        int r;

        if (ref_file_name(ref, name, err) < 0)
                return -EINVAL;
        r = remove_tree(s->refs_fd, name, NULL); /* whatever junk is there; 0 when absent */
        store_fsync_dir(s->refs_fd, &r);
        if (r < 0)
                return error_set(err, r, "image %s: remove %s/refs/%s", ref, s->path, name);
        return 0;
}

/* The records in a stable order (by file name), junk skipped. */
int store_ref_list(struct store *s, json_t **ret, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *list = NULL;
        char **names = NULL;
        size_t n = 0;
        int r;

        r = read_names(s->refs_fd, &names, &n);
        if (r < 0 || !(list = json_array()))
                r = error_set(err, r < 0 ? r : -ENOMEM, "store %s/refs", s->path);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_t *j = NULL;

                /* Only HEX.json names can be records: temp files and strangers are not. */
                if (strlen(names[i]) != REF_FILE_LEN || !streq(names[i] + HEX_LEN, ".json"))
                        continue;
                r = read_json_file(s->refs_fd, names[i], &j, NULL);
                if (r >= 0 && record_is_valid(j, names[i]))
                        r = json_array_append_new(list, j) < 0 ? -ENOMEM : 0;
                else if (r >= 0 || r == -EBADMSG || r == -ENOENT) {
                        /* Junk (empty, garbage, a symlink, a stranger's record) or removed meanwhile: skipped. */
                        json_decref(j);
                        r = 0;
                }
                if (r < 0)
                        error_set(err, r, "store %s/refs/%s", s->path, names[i]);
        }
        km_strv_free(names);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(list);
        return 0;
}

/* ---- garbage collection ---- */

static int mark(json_t *marked, const char *hex) {
        return json_object_set_new(marked, hex, json_true()) < 0 ? -ENOMEM : 0;
}

/*
 * Marks DIGEST and, when it is a manifest or an index in the store, what it
 * references (parsed down to MANIFEST_DEPTH).  A missing or unparsable
 * manifest marks nothing more (its reference is broken and will be pulled
 * again); I/O errors stop the gc.
 */
static int mark_manifest(struct store *s, json_t *marked, const char *digest, unsigned depth, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *j = NULL;
        _cleanup_free_ char *buf = NULL;
        json_t *e;
        size_t size, i;
        int r;

        if (!digest_is_valid(digest) || json_object_get(marked, hex_of(digest)))
                return 0;
        r = mark(marked, hex_of(digest));
        if (r < 0 || depth > MANIFEST_DEPTH)
                return r;
        r = store_blob_read(s, digest, MANIFEST_MAX, &buf, &size, NULL);
        if (r == -ENOENT || r == -EFBIG || r == -EBADMSG)
                return 0;
        if (r < 0)
                return error_set(err, r, "store gc: manifest %s", digest);
        j = json_loadb(buf, size, 0, NULL);
        if (!json_is_object(j))
                return 0;

        /* Config and layers are only marked; manifests of an index are parsed in turn. */
        r = mark_manifest(s, marked, json_string_value(json_object_get(json_object_get(j, "config"), "digest")),
                          MANIFEST_DEPTH + 1, err);
        for (int k = 0; k < 2; k++)
                json_array_foreach(json_object_get(j, k ? "manifests" : "layers"), i, e) {
                        if (r >= 0)
                                r = mark_manifest(s, marked, json_string_value(json_object_get(e, "digest")),
                                                  k ? depth + 1 : MANIFEST_DEPTH + 1, err);
                }
        return r;
}

/* Marks, for every reference, its manifest's tree, its "config" and its "rootfs" (HEX, a path to it, a digest). */
static int mark_refs(struct store *s, json_t *marked, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *refs = NULL;
        json_t *rec;
        size_t i;
        int r;

        r = store_ref_list(s, &refs, err);
        if (r < 0)
                return r;
        json_array_foreach(refs, i, rec) {
                const char *config = json_string_value(json_object_get(rec, "config"));
                const char *rootfs = json_string_value(json_object_get(rec, "rootfs"));
                char d[DIGEST_STRING_MAX + 8];

                snprintf(d, sizeof(d), DIGEST_SHA256_PREFIX "%s", rootfs ? path_basename(rootfs) : "");
                r = mark_manifest(s, marked, json_string_value(json_object_get(rec, "manifest")), 0, err);
                if (r >= 0 && digest_is_valid(config))
                        r = mark(marked, hex_of(config));
                if (r >= 0 && (digest_is_valid(d) || digest_is_valid(rootfs)))
                        r = mark(marked, hex_of(digest_is_valid(d) ? d : rootfs));
                if (r < 0)
                        return r == -ENOMEM ? error_set(err, r, "store gc") : r;
        }
        return 0;
}

/*
 * Whether rootfs/NAME is (or holds) one of the keep paths, by name or by
 * inode.  A replaced tree, HEX.old-XXXXXX, is kept while the image's own
 * rootfs/HEX is: its containers may have started before the replacement.
 */
static bool rootfs_kept(struct store *s, const char *name, char *const *keep) {
        _cleanup_free_ char *dir = NULL;
        struct stat a, b;

        if (strlen(name) > HEX_LEN && startswith(name + HEX_LEN, ROOTFS_OLD_MARK)) {
                char hex[HEX_LEN + 1];

                snprintf(hex, sizeof(hex), "%.*s", HEX_LEN, name);
                return rootfs_kept(s, hex, keep);
        }
        if (asprintf(&dir, "%s/rootfs/%s", streq(s->path, "/") ? "" : s->path, name) < 0)
                return true; /* out of memory: keep rather than guess */
        if (fstatat(s->rootfs_fd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
                b.st_ino = 0;
        for (size_t i = 0; keep && keep[i]; i++) {
                _cleanup_free_ char *k = path_absolute(keep[i]);

                if (!k || path_is_below(k, dir))
                        return true;
                if (b.st_ino != 0 && stat(k, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                        return true;
        }
        return false;
}

/* Removes the entries of DFD (WHERE in messages) neither marked nor kept; the first error is returned. */
static int sweep(struct store *s, int dfd, const char *where, json_t *marked, bool rootfs, char *const *keep,
                 uint64_t *freed, struct km_error *err) {
        char **names = NULL, shown[NAME_MAX + 1];
        size_t n = 0;
        int r, q;

        r = read_names(dfd, &names, &n);
        if (r < 0)
                return error_set(err, r, "store gc: %s/%s", s->path, where);
        for (size_t i = 0; i < n; i++) {
                if (json_object_get(marked, names[i]) || (rootfs && rootfs_kept(s, names[i], keep)))
                        continue;
                q = remove_tree(dfd, names[i], freed);
                if (q < 0 && r == 0)
                        r = error_set(err, q, "store gc: %s/%s/%s", s->path, where,
                                      str_printable(names[i], shown, sizeof(shown)));
        }
        km_strv_free(names);
        return r;
}

int store_gc(struct store *s, char *const *keep_rootfs, uint64_t *ret_freed, struct km_error *err) {
        _cleanup_(json_decrefp) json_t *marked = NULL;
        uint64_t freed = 0;
        int r = 0, q;

        for (unsigned tries = 0; r >= 0 && flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0; tries++)
                if (errno != EWOULDBLOCK)
                        r = error_set(err, -errno, "store %s/lock", s->path);
                else if (tries >= GC_LOCK_TRIES)
                        r = error_set_plain(err, -EBUSY, "store %s: the store is in use", s->path);
                else
                        nanosleep(&(struct timespec){ .tv_nsec = GC_LOCK_WAIT_NS }, NULL);

        marked = r < 0 ? NULL : json_object();
        if (r >= 0)
                r = marked ? mark_refs(s, marked, err) : error_set(err, -ENOMEM, "store gc");
        if (r >= 0) {
                /* Every sweep runs; the first error is the one reported. */
                r = sweep(s, s->blobs_fd, "blobs/sha256", marked, false, NULL, &freed, err);
                /* A record goes with its tree (the tree is still there to be compared with the keep paths). */
                q = sweep(s, s->sums_fd, "sums", marked, true, keep_rootfs, &freed, r < 0 ? NULL : err);
                keep_first(&r, q);
                q = sweep(s, s->rootfs_fd, "rootfs", marked, true, keep_rootfs, &freed, r < 0 ? NULL : err);
                keep_first(&r, q);
                q = clear_leftovers(s, &freed);
                if (q < 0 && r >= 0)
                        r = error_set(err, q, "store gc: %s/tmp", s->path);
        }
        /* Back to shared; a failed conversion has dropped the shared lock too (flock(2)). */
        (void)flock_wait(s->lock_fd, LOCK_SH);
        if (ret_freed)
                *ret_freed = freed;
        return r;
}
