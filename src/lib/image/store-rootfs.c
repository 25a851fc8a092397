/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Root filesystems of the store (store.h): rootfs/HEX, the tree unpacked
 * from manifest HEX, and sums/HEX, its record, written when the tree was put
 * in place: a sha256 over every entry's path, type and mode, owner, size,
 * link count, inode number, and modification and change times, in a fixed
 * order.  A tree is handed out only while it matches its record (THREATS 29):
 * whatever is written into it through the filesystem - a file added, changed,
 * replaced, removed, chmod'ed, an xattr set - changes a change time (which no
 * caller can set back) or an inode number, so the next check fails and the
 * next import, pull or run --image unpacks the image again from its verified
 * blobs.  The record is a fingerprint of the kernel's metadata, not a second
 * hash of the contents: it costs one fstatat per entry (a few ms for a
 * 3,000-entry image), not a read of every byte; a rewrite of the disk under
 * the filesystem is out of its reach.
 *
 * Replacing a tree that differs: the new one is unpacked in tmp/ and swapped
 * in with renameat2(RENAME_EXCHANGE), so rootfs/HEX is always a whole tree;
 * the old one is set aside as rootfs/HEX.old-XXXXXX, for the containers that
 * may still run from it, and gc removes it once none of the image is left.  A writer holds flock(LOCK_EX) on the
 * tree's directory from the moment it is in place until its record is
 * written, and a writer that finds a tree in place decides to keep or
 * replace it under the same lock, so two writers never throw away each
 * other's verified tree.  Readers take no lock: one that checks a tree in
 * the instant before its record is written only unpacks once more.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "fileio.h"
#include "store-internal.h"
#include "syscalls.h"
#include "unpack.h"

#define SUM_FORMAT 1
#define LOCK_TRIES 1000       /* a tree's lock: tries */
#define LOCK_WAIT_NS 10000000 /* 10 ms apart: about 10 s in all */
#define PLACE_TRIES 16

/* ---- the record: a fingerprint of a tree ---- */

/* What one entry contributes after its path and a NUL: fixed-width, in this order. */
struct sum_fields {
        uint64_t mode, uid, gid, size, nlink, ino, mtime_s, mtime_ns, ctime_s, ctime_ns;
};

static void sum_entry(struct digest_ctx *c, const char *path, const struct stat *st) {
        struct sum_fields f = {
                st->st_mode,
                st->st_uid,
                st->st_gid,
                (uint64_t)st->st_size,
                st->st_nlink,
                st->st_ino,
                (uint64_t)st->st_mtim.tv_sec,
                (uint64_t)st->st_mtim.tv_nsec,
                (uint64_t)st->st_ctim.tv_sec,
                (uint64_t)st->st_ctim.tv_nsec,
        };

        digest_update(c, path, strlen(path) + 1);
        digest_update(c, &f, sizeof(f));
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry names of directory fd but "." and "..", sorted bytewise. */
static int sorted_names(int fd, char ***ret, size_t *ret_n) {
        int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* a description of its own for readdir */
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int r = 0;

        if (!d) {
                r = -errno;
                if (dfd >= 0)
                        close(dfd);
                return r;
        }
        while (r == 0 && (errno = 0, de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n + 1 >= cap) {
                        char **grown = reallocarray(names, cap = cap ? cap * 2 : 64, sizeof(char *));
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        names = grown;
                }
                if (!(names[n] = strdup(de->d_name)))
                        r = -ENOMEM;
                else
                        names[++n] = NULL;
        }
        if (r == 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r < 0) {
                km_strv_free(names);
                return r;
        }
        if (n > 1)
                qsort(names, n, sizeof(char *), cmp_names);
        *ret = names;
        *ret_n = n;
        return 0;
}

/* A directory of the tree, by its path from the root: no symlink, no mount, never above the root. */
static int open_tree_dir(int root, const char *path) {
        int fd;

        if (!*path) {
                fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                return fd >= 0 ? fd : -errno;
        }
        return sys_openat2(root, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
                           RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
}

/*
 * The fingerprint of the tree at directory fd root: the root's own entry,
 * then every directory's entries in bytewise order, depth first.  Nothing
 * is opened but directories, nothing followed, no mount crossed (-EXDEV).
 */
static int tree_sum(int root, const struct tree_visitor *v, char out[DIGEST_STRING_MAX], uint64_t *ret_entries) {
        _cleanup_(digest_freep) struct digest_ctx *c = digest_new();
        char **stack = NULL;
        size_t depth = 0, cap = 0;
        uint64_t entries = 1;
        struct stat rst;
        int r = 0;

        if (!c)
                return -ENOMEM;
        if (v)
                v->visit(v->userdata, root, "");
        if (fstat(root, &rst) < 0)
                return -errno;
        sum_entry(c, "", &rst);
        if (!(stack = calloc(cap = 64, sizeof(char *))) || !(stack[depth++] = strdup("")))
                r = -ENOMEM;
        while (r == 0 && depth > 0) {
                _cleanup_free_ char *dir = stack[--depth];
                _cleanup_close_ int fd = open_tree_dir(root, dir);
                char **names = NULL;
                size_t n = 0;

                r = fd < 0 ? fd : sorted_names(fd, &names, &n);
                for (size_t i = 0; r == 0 && i < n; i++) {
                        _cleanup_free_ char *path = NULL;
                        struct stat st;

                        if (v)
                                v->visit(v->userdata, fd, names[i]);
                        if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
                                r = -errno;
                        else if (st.st_dev != rst.st_dev)
                                r = -EXDEV;
                        else if (asprintf(&path, "%s%s%s", dir, *dir ? "/" : "", names[i]) < 0)
                                r = -ENOMEM;
                        if (r < 0)
                                break;
                        sum_entry(c, path, &st);
                        entries++;
                        if (!S_ISDIR(st.st_mode))
                                continue;
                        if (depth == cap) {
                                char **grown = reallocarray(stack, cap * 2, sizeof(char *));
                                if (!grown) {
                                        r = -ENOMEM;
                                        break;
                                }
                                stack = grown;
                                cap *= 2;
                        }
                        stack[depth++] = TAKE_PTR(path);
                }
                km_strv_free(names);
        }
        while (depth > 0)
                free(stack[--depth]);
        free(stack);
        if (r < 0)
                return r;
        digest_final(c, out);
        *ret_entries = entries;
        return 0;
}

/* Whether the tree at fd matches sums/HEX: 1 yes, 0 no (*why says what differs), or -errno. */
static int tree_matches(struct store *s, int fd, const char *hex, const struct tree_visitor *v, const char **why) {
        _cleanup_(json_decrefp) json_t *rec = NULL;
        char got[DIGEST_STRING_MAX];
        uint64_t entries = 0;
        const char *want;
        int r;

        r = read_json_file(s->sums_fd, hex, &rec, NULL);
        if (r == -ENOENT || r == -EBADMSG)
                return *why = r == -ENOENT ? "it has no record" : "its record is damaged", 0;
        if (r < 0)
                return r;
        want = json_string_value(json_object_get(rec, "tree"));
        if (json_integer_value(json_object_get(rec, "format")) != SUM_FORMAT || !digest_is_valid(want))
                return *why = "its record is of another format", 0;
        r = tree_sum(fd, v, got, &entries);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return *why = r == -EXDEV ? "a mount inside it" : "it cannot be walked", 0;
        if (!streq(got, want))
                return *why = "it differs from its record", 0;
        return 1;
}

/* Writes sums/HEX for the tree at fd (in place, under its lock). */
static int seal(struct store *s, int fd, const char *hex, const char *digest, struct km_error *err) {
        _cleanup_free_ char *text = NULL;
        char sum[DIGEST_STRING_MAX];
        uint64_t entries = 0;
        int r = 0;

        store_fsync_dir(s->rootfs_fd, &r);
        if (r < 0)
                return error_set(err, r, "rootfs %s: fsync %s/rootfs", digest, s->path);
        r = tree_sum(fd, NULL, sum, &entries);
        if (r < 0)
                return error_set(err, r, "rootfs %s: record of the unpacked tree", digest);
        if (asprintf(&text, "{\"format\":%d,\"tree\":\"%s\",\"entries\":%llu}\n", SUM_FORMAT, sum,
                     (unsigned long long)entries) < 0)
                return error_set(err, -ENOMEM, "rootfs %s", digest);
        r = write_file_atomic(s->sums_fd, hex, text, strlen(text), 0600, err);
        if (r >= 0)
                snprintf(s->verified, sizeof(s->verified), "%s", hex);
        return r;
}

/* flock on a tree's directory, waiting about 10 s at most (a process that never lets go must not hang us). */
static int lock_tree(int fd) {
        for (unsigned tries = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; tries++) {
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return -errno;
                if (tries >= LOCK_TRIES)
                        return -EBUSY;
                nanosleep(&(struct timespec){ .tv_nsec = LOCK_WAIT_NS }, NULL);
        }
        return 0;
}

static bool same_inode(int dfd, const char *name, int fd) {
        struct stat a, b;

        return fstatat(dfd, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
}

/*
 * Moves DFD/NAME, a tree that was replaced (or junk in its place), to
 * rootfs/HEX.old-XXXXXX: containers started from it may still run from it.
 * gc removes it once no live container of the image is left (store.c).
 */
static int retire(struct store *s, int dfd, const char *name, const char *hex, const char *digest,
                  struct km_error *err) {
        static unsigned counter;
        char old[HEX_LEN + sizeof(ROOTFS_OLD_MARK) + 8];
        struct stat st;

        for (unsigned tries = 0;; tries++) {
                uint64_t rnd = 0;

                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
                        rnd = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ ++counter;
                snprintf(old, sizeof(old), "%s" ROOTFS_OLD_MARK "%06llx", hex, (unsigned long long)(rnd & 0xffffff));
                if (renameat2(dfd, name, s->rootfs_fd, old, RENAME_NOREPLACE) == 0)
                        break;
                /* No RENAME_NOREPLACE here: look, then rename. */
                if ((errno == EINVAL || errno == ENOSYS) && fstatat(s->rootfs_fd, old, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
                    errno == ENOENT && renameat(dfd, name, s->rootfs_fd, old) == 0)
                        break;
                if ((errno != EEXIST && errno != ENOTEMPTY && errno != EINVAL && errno != ENOSYS) || tries >= 100)
                        return error_set(err, -errno, "rootfs %s: set the old tree aside as %s/rootfs/%s", digest,
                                         s->path, old);
        }
        log_msg(KM_LOG_INFO, "store %s: the old tree is rootfs/%s until no container of the image is left", s->path,
                old);
        return 0;
}

/* Renames tmp/TMPNAME to rootfs/HEX unless something is there: 1 done, 0 something is there, or -errno. */
static int place_new(struct store *s, const char *tmpname, const char *hex) {
        struct stat st;

        if (renameat2(s->tmp_fd, tmpname, s->rootfs_fd, hex, RENAME_NOREPLACE) == 0)
                return 1;
        if (errno == EEXIST || errno == ENOTEMPTY)
                return 0;
        if (errno != EINVAL && errno != ENOSYS)
                return -errno;
        /* A filesystem without RENAME_NOREPLACE: look, then rename. */
        if (fstatat(s->rootfs_fd, hex, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        if (errno != ENOENT)
                return -errno;
        return renameat(s->tmp_fd, tmpname, s->rootfs_fd, hex) < 0 ? -errno : 1;
}

/*
 * Puts tmp/TMPNAME (fd ours, locked) at rootfs/HEX and writes its record,
 * unless a tree that matches its record is there already (a concurrent
 * writer's): then ours goes.  A tree there that does not match is replaced.
 */
static int rootfs_place(struct store *s, int ours, const char *tmpname, const char *digest, struct km_error *err) {
        const char *hex = hex_of(digest), *why = NULL;

        for (unsigned tries = 0; tries < PLACE_TRIES; tries++) {
                _cleanup_close_ int theirs = -EBADF;
                int r = place_new(s, tmpname, hex);

                if (r > 0)
                        return seal(s, ours, hex, digest, err);
                if (r < 0)
                        return error_set(err, r, "rootfs %s: rename into %s/rootfs", digest, s->path);

                /* One is there: kept if it matches its record, decided under its lock. */
                theirs = openat(s->rootfs_fd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (theirs < 0 && errno == ENOENT)
                        continue; /* gone meanwhile */
                if (theirs < 0 && errno != ENOTDIR && errno != ELOOP)
                        return error_set(err, -errno, "rootfs %s: %s/rootfs/%s", digest, s->path, hex);
                if (theirs >= 0) {
                        r = lock_tree(theirs);
                        if (r < 0)
                                return error_set(err, r, "rootfs %s: lock %s/rootfs/%s", digest, s->path, hex);
                        if (!same_inode(s->rootfs_fd, hex, theirs))
                                continue; /* replaced meanwhile: look again */
                        r = tree_matches(s, theirs, hex, NULL, &why);
                        if (r < 0)
                                return error_set(err, r, "rootfs %s: check %s/rootfs/%s", digest, s->path, hex);
                        if (r > 0) {
                                store_drop_tmp(s, tmpname);
                                snprintf(s->verified, sizeof(s->verified), "%s", hex);
                                return 0;
                        }
                } else
                        why = "it is not a directory";
                log_msg(KM_LOG_WARNING, "store %s: rootfs/%s: %s: replaced by a new unpack", s->path, hex, why);
                if (renameat2(s->tmp_fd, tmpname, s->rootfs_fd, hex, RENAME_EXCHANGE) == 0) {
                        r = seal(s, ours, hex, digest, err);
                        /* The old tree is now tmp/TMPNAME: on failure it goes with tmp/ at the next exclusive open. */
                        (void)retire(s, s->tmp_fd, tmpname, hex, digest, NULL);
                        return r;
                }
                if (errno != EINVAL && errno != ENOSYS)
                        return error_set(err, -errno, "rootfs %s: exchange with %s/rootfs/%s", digest, s->path, hex);
                /* No RENAME_EXCHANGE here: the old one aside first, then ours in its place. */
                r = retire(s, s->rootfs_fd, hex, hex, digest, err);
                if (r < 0)
                        return r;
        }
        return error_set_plain(err, -EBUSY, "rootfs %s: %s/rootfs/%s keeps changing", digest, s->path, hex);
}

/* ---- the calls ---- */

int store_rootfs_begin(struct store *s, char **ret_tmpname, int *ret_fd, struct km_error *err) {
        int fd = store_make_tmp(s, "rootfs-", true, ret_tmpname, err);

        if (fd >= 0)
                *ret_fd = fd;
        return fd < 0 ? fd : 0;
}

int store_rootfs_commit(struct store *s, const char *tmpname, const char *manifest_digest, struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!store_tmp_name_is_valid(tmpname, "rootfs-"))
                return error_set_plain(err, -EINVAL, "rootfs: invalid temp dir name");
        if (!digest_is_valid(manifest_digest))
                r = store_invalid(err, "rootfs digest", manifest_digest);
        else if ((fd = openat(s->tmp_fd, tmpname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                r = error_set(err, -errno, "rootfs %s: temp dir %s", manifest_digest, tmpname);
        /* Everything unpacked is on disk before the tree can be seen as a result. */
        else if (syncfs(fd) < 0)
                r = error_set(err, -errno, "rootfs %s: syncfs", manifest_digest);
        /* Nobody else knows the temp dir yet: at once.  Held until its record is written. */
        else if ((r = lock_tree(fd)) < 0)
                r = error_set(err, r, "rootfs %s: lock", manifest_digest);
        else
                r = rootfs_place(s, fd, tmpname, manifest_digest, err);
        if (r < 0)
                store_drop_tmp(s, tmpname);
        return r;
}

void store_rootfs_abort(struct store *s, const char *tmpname) {
        if (store_tmp_name_is_valid(tmpname, "rootfs-"))
                store_drop_tmp(s, tmpname);
}

/* rootfs/HEX, opened: the fd, -ENOENT with err saying why it is not there, or -errno. */
static int open_tree(struct store *s, const char *manifest_digest, struct km_error *err) {
        const char *hex;
        int fd;

        if (!digest_is_valid(manifest_digest))
                return store_invalid(err, "rootfs digest", manifest_digest);
        hex = hex_of(manifest_digest);
        fd = openat(s->rootfs_fd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return error_set_plain(err, -ENOENT, "rootfs %s: not unpacked", manifest_digest);
        if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
                return error_set_plain(err, -ENOENT, "rootfs %s/rootfs/%s: not a directory", s->path, hex);
        if (fd < 0)
                return error_set(err, -errno, "rootfs %s: %s/rootfs/%s", manifest_digest, s->path, hex);
        return fd;
}

int store_rootfs_check_visit(struct store *s, const char *manifest_digest, const struct tree_visitor *v,
                             struct km_error *err) {
        _cleanup_close_ int fd = -EBADF;
        const char *why = NULL;
        int r;

        if (!v && digest_is_valid(manifest_digest) && streq(s->verified, hex_of(manifest_digest)))
                return 1;
        fd = open_tree(s, manifest_digest, err);
        if (fd == -ENOENT && err)
                err->code = 0; /* not there: unpack it, as for a tree that differs */
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        r = tree_matches(s, fd, hex_of(manifest_digest), v, &why);
        if (r < 0)
                return error_set(err, r, "rootfs %s: check %s/rootfs/%s", manifest_digest, s->path,
                                 hex_of(manifest_digest));
        if (r == 0)
                return error_set_plain(err, 0, "rootfs %s/rootfs/%s: %s", s->path, hex_of(manifest_digest), why);
        snprintf(s->verified, sizeof(s->verified), "%s", hex_of(manifest_digest));
        return 1;
}

int store_rootfs_check(struct store *s, const char *manifest_digest, struct km_error *err) {
        return store_rootfs_check_visit(s, manifest_digest, NULL, err);
}

int store_rootfs_identity(struct store *s, const char *manifest_digest, struct stat *ret_root,
                          char ret_sum[DIGEST_STRING_MAX], struct km_error *err) {
        _cleanup_(json_decrefp) json_t *rec = NULL;
        _cleanup_close_ int fd = open_tree(s, manifest_digest, err);
        const char *sum;
        int r;

        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        if (fstat(fd, ret_root) < 0)
                return error_set(err, -errno, "rootfs %s/rootfs/%s", s->path, hex_of(manifest_digest));
        r = read_json_file(s->sums_fd, hex_of(manifest_digest), &rec, NULL);
        if (r == -ENOENT || r == -EBADMSG)
                return error_set_plain(err, 0, "rootfs %s/rootfs/%s: %s", s->path, hex_of(manifest_digest),
                                       r == -ENOENT ? "it has no record" : "its record is damaged");
        if (r < 0)
                return error_set(err, r, "rootfs %s: record %s/sums/%s", manifest_digest, s->path,
                                 hex_of(manifest_digest));
        sum = json_string_value(json_object_get(rec, "tree"));
        if (!sum || strlen(sum) >= DIGEST_STRING_MAX)
                return error_set_plain(err, 0, "rootfs %s/rootfs/%s: its record is damaged", s->path,
                                       hex_of(manifest_digest));
        snprintf(ret_sum, DIGEST_STRING_MAX, "%s", sum);
        return 1;
}

char *store_rootfs_path_unchecked(struct store *s, const char *manifest_digest) {
        char *p;

        if (!digest_is_valid(manifest_digest) ||
            asprintf(&p, "%s/rootfs/%s", streq(s->path, "/") ? "" : s->path, hex_of(manifest_digest)) < 0)
                return NULL;
        return p;
}

char *store_rootfs_path(struct store *s, const char *manifest_digest) {
        return store_rootfs_check(s, manifest_digest, NULL) > 0 ? store_rootfs_path_unchecked(s, manifest_digest)
                                                                : NULL;
}
