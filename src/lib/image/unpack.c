/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Layer unpacking (see unpack.h).  Choices worth knowing:
 *
 * - Paths: leading slashes, "./" and "." components and repeated slashes
 *   are dropped, so an absolute name ("/etc/x", umoci's "/" for the root)
 *   names the same entry inside the root as its relative form, as containerd
 *   and umoci read it; hard link targets likewise.  A ".." component or an
 *   empty name is refused.  The parent is opened with
 *   openat2(RESOLVE_IN_ROOT), so a symlink of the image is followed but
 *   always inside the root; the last component is never followed.  A
 *   directory entry for the root itself ("./", "/") is ignored.
 * - Opaque markers are applied where they appear.  This layer's entries are
 *   recorded as (parent dev, parent ino, name); the marker removes everything
 *   below its directory that is not recorded, keeping directories that still
 *   hold a recorded entry (an implicit parent of one of this layer's files).
 * - Directory modes and times are set after the whole layer (children change
 *   a directory's mtime; a 0555 directory would stop an unprivileged run).
 * - Regular files: max_file bounds a file's size, holes included; max_bytes
 *   bounds the data written plus the data of entries that are skipped, and
 *   max_image_bytes the same counted over all the layers of an image.
 * - Not kept: xattrs and ACLs (security.capability would give file
 *   capabilities), device nodes and sockets (skipped and counted).
 * - Linux 5.6 (openat2) is required, as it is by the launcher; so is it for
 *   unpack_remove_tree (RESOLVE_NO_XDEV sees bind mounts, which st_dev does not).
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "libarchive-dl.h"
#include "syscalls.h"
#include "unpack.h"

#ifndef RESOLVE_IN_ROOT
#include <linux/openat2.h>

DEFINE_DLOPEN(libarchive, "libarchive.so.13", KM_LIBARCHIVE_SYMBOLS)
#endif

#define DEFAULT_MAX_BYTES (8ULL << 30)
#define DEFAULT_MAX_ENTRIES 1000000ULL
#define DEFAULT_MAX_FILE (4ULL << 30)
#define READ_BLOCK (64 * 1024)
/* Levels of directories held open at once while removing; deeper ones are moved up. */
#define MAX_WALK_DEPTH 128
#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"
/* Recorded with a directory's (dev, ino): it holds only this layer's entries.  Never an entry's name. */
#define CLEAN_MARK "/"

/* ---- the set of names this layer made: (parent dev, parent ino, name) ---- */

struct made_slot {
        uint64_t hash, dev, ino;
        char *name; /* NULL: empty slot */
};

struct made_set {
        struct made_slot *slots;
        size_t cap, n;
};

static uint64_t made_hash(uint64_t dev, uint64_t ino, const char *name) {
        uint64_t h = 0xcbf29ce484222325ULL;

        h = (h ^ dev) * 0x100000001b3ULL;
        h = (h ^ ino) * 0x100000001b3ULL;
        for (const unsigned char *p = (const unsigned char *)name; *p; p++)
                h = (h ^ *p) * 0x100000001b3ULL;
        return h ^ (h >> 29);
}

static struct made_slot *made_find(const struct made_set *s, uint64_t h, uint64_t dev, uint64_t ino, const char *name) {
        for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
                struct made_slot *slot = &s->slots[i];
                if (!slot->name || (slot->hash == h && slot->dev == dev && slot->ino == ino && streq(slot->name, name)))
                        return slot;
        }
}

static bool made_has(const struct made_set *s, const struct stat *dir, const char *name) {
        return s && s->cap &&
               made_find(s, made_hash(dir->st_dev, dir->st_ino, name), dir->st_dev, dir->st_ino, name)->name;
}

static int made_add(struct made_set *s, const struct stat *dir, const char *name) {
        uint64_t h = made_hash(dir->st_dev, dir->st_ino, name);
        struct made_slot *slot;

        if ((s->n + 1) * 2 > s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 1024;
                struct made_slot *slots = calloc(cap, sizeof(*slots)), *old = s->slots;

                if (!slots)
                        return -ENOMEM;
                s->slots = slots;
                for (size_t i = 0; i < s->cap; i++)
                        if (old[i].name)
                                *made_find(&(struct made_set){ slots, cap, 0 }, old[i].hash, old[i].dev, old[i].ino,
                                           old[i].name) = old[i];
                s->cap = cap;
                free(old);
        }
        slot = made_find(s, h, dir->st_dev, dir->st_ino, name);
        if (slot->name)
                return 0;
        *slot = (struct made_slot){ h, dir->st_dev, dir->st_ino, strdup(name) };
        return slot->name ? (s->n++, 0) : -ENOMEM;
}

static void made_clear(struct made_set *s) {
        for (size_t i = 0; i < s->cap; i++)
                free(s->slots[i].name);
        free(s->slots);
        *s = (struct made_set){};
}

/* ---- removing trees (and pruning under opaque markers) ---- */

int unpack_open_file(int dirfd, const char *path) {
        int r, fd = sys_openat2(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

        if (fd < 0)
                return fd;
        r = fd_regular_blocking(fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

/* A child directory opened for reading: never through a symlink, never onto another mount. */
static int open_child_dir(int dirfd, const char *name) {
        return sys_openat2(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
                           RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
}

struct walk {
        struct made_set *keep; /* NULL: remove everything */
        int topfd;             /* where too deep directories are moved (removal only) */
        unsigned moved;
};

/*
 * Removes what is below the directory fd (owned: closed here).  Entries in
 * w->keep stay, with the directories above them; *ret_empty tells whether
 * anything stayed.  Below MAX_WALK_DEPTH levels a directory is moved up to
 * w->topfd for a later pass, so that a tree of any depth goes with a bounded
 * number of open fds.
 */
static int walk_dir(struct walk *w, int fd, unsigned depth, bool *ret_empty) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        struct stat self;
        bool empty = true;

        if (fstat(fd, &self) < 0 || !(d = fdopendir(fd))) {
                int r = -errno;
                close(fd);
                return r;
        }
        /* Made by this layer or emptied before: only this layer's entries are below. */
        if (w->keep && made_has(w->keep, &self, CLEAN_MARK)) {
                *ret_empty = false;
                return 0;
        }
        /* Our own directory without u+wx (an image's 0555 dir) cannot be emptied by an unprivileged run otherwise. */
        if (!w->keep && (self.st_mode & 0300) != 0300 && self.st_uid == geteuid())
                (void)fchmod(dirfd(d), (self.st_mode & 07777) | 0700);
        while ((errno = 0, de = readdir(d))) {
                const char *name = de->d_name;
                bool keep = made_has(w->keep, &self, name), is_dir = de->d_type == DT_DIR, child_empty;
                struct stat st;
                int cfd, r;

                if (streq(name, ".") || streq(name, ".."))
                        continue;
                if (de->d_type == DT_UNKNOWN) {
                        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                return -errno;
                        is_dir = S_ISDIR(st.st_mode);
                }
                if (!is_dir) {
                        if (keep)
                                empty = false;
                        else if (unlinkat(dirfd(d), name, 0) < 0 && errno != ENOENT)
                                return -errno;
                        continue;
                }
                if (depth >= MAX_WALK_DEPTH) {
                        char tmp[64];

                        if (w->keep || w->topfd < 0)
                                return -ELOOP;
                        for (unsigned i = 0;; i++) {
                                snprintf(tmp, sizeof(tmp), ".km-deep-%u-%u", w->moved, i);
                                if (renameat2(dirfd(d), name, w->topfd, tmp, RENAME_NOREPLACE) == 0)
                                        break;
                                if (errno != EEXIST)
                                        return -errno;
                        }
                        w->moved++;
                        continue;
                }
                cfd = open_child_dir(dirfd(d), name);
                if (cfd < 0)
                        return cfd;
                r = walk_dir(w, cfd, depth + 1, &child_empty);
                if (r < 0)
                        return r;
                if (keep || !child_empty)
                        empty = false;
                else if (unlinkat(dirfd(d), name, AT_REMOVEDIR) < 0)
                        return -errno;
        }
        if (errno != 0)
                return -errno;
        *ret_empty = empty;
        return w->keep ? made_add(w->keep, &self, CLEAN_MARK) : 0;
}

int unpack_remove_tree(int dirfd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        struct walk w = { .keep = NULL };
        struct stat st;
        bool empty;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
        fd = open_child_dir(dirfd, name);
        if (fd < 0)
                return fd;
        w.topfd = fd;
        do {
                /* A new open file description each pass: a dup would share the old one's position. */
                int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

                if (dfd < 0)
                        return -errno;
                w.moved = 0;
                r = walk_dir(&w, dfd, 1, &empty);
                if (r < 0)
                        return r;
        } while (w.moved > 0);
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* ---- unpacking ---- */

struct dir_meta {
        char *path;
        mode_t mode;
        dev_t dev;
        ino_t ino;
        struct timespec times[2];
};

struct unpack {
        struct archive *a;
        int root;
        struct unpack_limits lim;
        struct unpack_stats st;
        bool chown;
        struct made_set made;
        struct dir_meta *dirs;
        size_t n_dirs, cap_dirs;
        char path[PATH_MAX];                      /* the entry, normalized */
        char parent[PATH_MAX];                    /* its parent directory */
        char target[PATH_MAX], tparent[PATH_MAX]; /* a hard link's target and its parent */
        char shown[256];                          /* the entry as given, printable, for messages */
        bool tail_missing; /* the archive ended right after the last file's data, without padding */
        struct km_error *err;
};

/* "layer: entry 'NAME': what", with ": strerror" unless a refusal, whose reason says it all. */
static int entry_error(struct unpack *u, int r, bool refusal, const char *fmt, ...) _printf_(4, 5);
static int entry_error(struct unpack *u, int r, bool refusal, const char *fmt, ...) {
        char what[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return (refusal ? error_set_plain : error_set)(u->err, r, "layer: entry '%s': %s", u->shown, what);
}
#define entry_fail(u, r, ...) entry_error(u, r, false, __VA_ARGS__)
#define entry_refuse(u, r, ...) entry_error(u, r, true, __VA_ARGS__)

/*
 * "./a//b/." and "/a/b" -> "a/b" into buf; "" names the root.  ".." is
 * refused (-EPERM), as is an empty name (-EINVAL).
 */
static int normalize(const char *in, char *buf, size_t size, const char **why) {
        size_t n = 0;

        if (!*in)
                return *why = "empty name", -EINVAL;
        if (strlen(in) >= size)
                return *why = "name longer than PATH_MAX", -ENAMETOOLONG;
        for (const char *p = in; *p;) {
                size_t len = strcspn(p, "/");

                if (len == 2 && p[0] == '.' && p[1] == '.')
                        return *why = "'..' refused", -EPERM;
                if (len > 0 && !(len == 1 && p[0] == '.')) {
                        if (n > 0)
                                buf[n++] = '/';
                        memcpy(buf + n, p, len);
                        n += len;
                }
                p += len;
                p += *p == '/';
        }
        buf[n] = '\0';
        return 0;
}

/* The parent of path ("" for the root) into parent (PATH_MAX bytes); returns the last component. */
static const char *split_path(const char *path, char *parent) {
        const char *slash = strrchr(path, '/');
        size_t n = slash ? (size_t)(slash - path) : 0;

        memcpy(parent, path, n);
        parent[n] = '\0';
        return slash ? slash + 1 : path;
}

static int open_in_root(struct unpack *u, const char *path, int flags) {
        return sys_openat2(u->root, *path ? path : ".", flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* Marks a directory this layer made, or already emptied of lower layers' entries. */
static int mark_clean(struct unpack *u, int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        return made_add(&u->made, &st, CLEAN_MARK);
}

/*
 * One step of the walk that makes missing parents: the child directory name
 * of cur, whose path from the root is prefix.  A directory is entered without
 * following anything, a missing one is made (0755, like other unpackers), a
 * symlink is resolved from the root.  Each step costs O(1), not O(depth).
 */
static int parent_step(struct unpack *u, int cur, const char *name, const char *prefix) {
        struct stat st;
        bool made = false;
        int fd;

        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT || fstat(cur, &st) < 0 || mkdirat(cur, name, 0755) < 0)
                        return entry_fail(u, -errno, "cannot create parent '%s'", prefix);
                if (made_add(&u->made, &st, name) < 0)
                        return entry_fail(u, -ENOMEM, "record");
                made = true;
        } else if (S_ISLNK(st.st_mode)) {
                fd = open_in_root(u, prefix, O_PATH | O_DIRECTORY);
                /* A symlink to nothing in the root: it is not followed out to create its target. */
                if (fd == -ENOENT)
                        return entry_refuse(u, fd, "parent '%s' is a dangling symlink", prefix);
                return fd < 0 ? entry_fail(u, fd, "parent '%s'", prefix) : fd;
        }
        fd = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return entry_fail(u, -errno, "parent '%s'", prefix);
        if (made) {
                int r = fchmod(fd, 0755) < 0 ? -errno : mark_clean(u, fd); /* exactly 0755, whatever the umask */
                if (r < 0)
                        return close(fd), entry_fail(u, r, "parent '%s'", prefix);
        }
        return fd;
}

/*
 * The parent directory of an entry (O_PATH), made when missing one component
 * at a time; *ret_st is its stat.  Returns the fd, or a negative errno
 * (-ENOENT without create) with u->err set if create.
 */
static int open_parent(struct unpack *u, char *parent, bool create, struct stat *ret_st) {
        _cleanup_close_ int fd = open_in_root(u, parent, O_PATH | O_DIRECTORY);

        if (fd == -ENOENT && create) {
                char *p = parent, *slash = strrchr(parent, '/');

                /* Mostly only the last component is missing: start from its parent if it is there. */
                if (slash) {
                        *slash = '\0';
                        fd = open_in_root(u, parent, O_PATH | O_DIRECTORY);
                        *slash = '/';
                        p = fd >= 0 ? slash + 1 : parent;
                }
                if (p == parent)
                        fd = open_in_root(u, "", O_PATH | O_DIRECTORY);
                while (fd >= 0 && *p) {
                        char *end = p + strcspn(p, "/"), saved = *end;
                        int next;

                        *end = '\0';
                        next = parent_step(u, fd, p, parent);
                        *end = saved;
                        if (next < 0)
                                return next;
                        closep(&fd);
                        fd = next;
                        p = *end ? end + 1 : end;
                }
        }
        if (fd < 0)
                return create ? entry_fail(u, fd, "parent '%s'", parent) : fd;
        if (fstat(fd, ret_st) < 0)
                return entry_fail(u, -errno, "stat of parent");
        return TAKE_FD(fd);
}

/* Makes room for a new entry: removes what is there, unless keep_dir and it is a directory (returns 1). */
static int make_room(struct unpack *u, int pfd, const char *name, bool keep_dir) {
        struct stat st;
        int r;

        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : entry_fail(u, -errno, "stat");
        if (S_ISDIR(st.st_mode)) {
                if (keep_dir)
                        return 1;
                r = unpack_remove_tree(pfd, name);
        } else
                r = unlinkat(pfd, name, 0) < 0 ? -errno : 0;
        return r < 0 ? entry_fail(u, r, "replacing the existing entry") : 0;
}

/* What the image may still take: its total budget less the layers before and this one so far. */
static uint64_t image_room(const struct unpack *u) {
        uint64_t used = u->lim.image_bytes_before + u->st.bytes;

        if (!u->lim.max_image_bytes)
                return UINT64_MAX;
        return used >= u->lim.image_bytes_before && used <= u->lim.max_image_bytes ? u->lim.max_image_bytes - used : 0;
}

/* Counts bytes written or skipped against max_bytes and the image's budget. */
static int count_bytes(struct unpack *u, uint64_t more) {
        if (more > u->lim.max_bytes - u->st.bytes)
                return entry_refuse(u, -EFBIG, "layer larger than max_bytes (%llu)",
                                    (unsigned long long)u->lim.max_bytes);
        if (more > image_room(u))
                return entry_refuse(u, -EFBIG, "the image unpacks to more than its limit of %llu bytes",
                                    (unsigned long long)u->lim.max_image_bytes);
        u->st.bytes += more;
        return 0;
}

static void entry_times(struct archive_entry *e, struct timespec ts[2]) {
        ts[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
        if (sym_archive_entry_mtime_is_set(e))
                ts[1] = (struct timespec){ sym_archive_entry_mtime(e), sym_archive_entry_mtime_nsec(e) };
        ts[0] = ts[1];
        if (sym_archive_entry_atime_is_set(e))
                ts[0] = (struct timespec){ sym_archive_entry_atime(e), sym_archive_entry_atime_nsec(e) };
        for (int i = 0; i < 2; i++)
                if (ts[i].tv_nsec != UTIME_OMIT && (ts[i].tv_nsec < 0 || ts[i].tv_nsec >= 1000000000L))
                        ts[i].tv_nsec = 0;
}

/*
 * Setuid and setgid bits are dropped: the rootfs lives on the host, where a
 * setuid-root binary could be run by any host user who reaches it; inside,
 * volume clients run as root and do not need them.  The sticky bit stays.
 */
static mode_t entry_mode(struct archive_entry *e) {
        return sym_archive_entry_perm(e) & (S_ISVTX | 0777);
}

static int chown_entry(struct unpack *u, struct archive_entry *e, int pfd, const char *name, int fd) {
        int64_t uid = sym_archive_entry_uid(e), gid = sym_archive_entry_gid(e);

        if (!u->chown)
                return 0;
        if (uid < 0 || uid >= UINT32_MAX || gid < 0 || gid >= UINT32_MAX)
                return entry_refuse(u, -EINVAL, "owner %lld:%lld out of range", (long long)uid, (long long)gid);
        if ((fd >= 0 ? fchown(fd, uid, gid) : fchownat(pfd, name, uid, gid, AT_SYMLINK_NOFOLLOW)) < 0)
                return entry_fail(u, -errno, "chown");
        return 0;
}

static int write_file(struct unpack *u, struct archive_entry *e, int pfd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        int64_t size = sym_archive_entry_size(e);
        uint64_t end = 0;
        struct timespec ts[2];
        int r;

        if (size < 0 || (uint64_t)size > u->lim.max_file)
                return entry_refuse(u, -EFBIG, "file larger than max_file (%llu)", (unsigned long long)u->lim.max_file);
        /* Caught before any work when the file has no holes (count_bytes then fails); else block by block. */
        if (sym_archive_entry_sparse_count(e) == 0 &&
            ((uint64_t)size > u->lim.max_bytes - u->st.bytes || (uint64_t)size > image_room(u)))
                return count_bytes(u, size);
        /* 0600 until complete: no partial file is ever readable by others, nor setuid. */
        fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return entry_fail(u, -errno, "create");
        for (;;) {
                const void *buf;
                size_t len;
                la_int64_t off;

                r = sym_archive_read_data_block(u->a, &buf, &len, &off);
                if (r == ARCHIVE_EOF)
                        break;
                /*
                 * Every byte of the file arrived, only the tar padding after it (and the end
                 * blocks) did not: umoci writes such layers, and Go's readers (containerd,
                 * umoci) take them.  The layer's digest was verified: take the file, stop here.
                 */
                if (r == ARCHIVE_FATAL && end == (uint64_t)size && size > 0) {
                        u->tail_missing = true;
                        break;
                }
                if (r != ARCHIVE_OK)
                        return entry_refuse(u, sym_archive_errno(u->a) > 0 ? -sym_archive_errno(u->a) : -EBADMSG,
                                            "read: %s", sym_archive_error_string(u->a) ?: "damaged archive");
                if (off < 0 || (uint64_t)off > u->lim.max_file || len > u->lim.max_file - (uint64_t)off)
                        return entry_refuse(u, -EFBIG, "file larger than max_file (%llu)",
                                            (unsigned long long)u->lim.max_file);
                r = count_bytes(u, len);
                if (r < 0)
                        return r;
                /* pwrite at the block's offset: what lies between blocks stays a hole. */
                for (size_t done = 0; done < len;) {
                        ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + done);
                        if (n < 0)
                                return entry_fail(u, -errno, "write");
                        done += n;
                }
                if ((uint64_t)off + len > end)
                        end = off + len;
        }
        if ((uint64_t)size > end && ftruncate(fd, size) < 0)
                return entry_fail(u, -errno, "truncate");
        r = chown_entry(u, e, pfd, name, fd);
        if (r < 0)
                return r;
        if (fchmod(fd, entry_mode(e)) < 0)
                return entry_fail(u, -errno, "chmod");
        entry_times(e, ts);
        if (futimens(fd, ts) < 0)
                return entry_fail(u, -errno, "set times");
        return 0;
}

static int defer_dir(struct unpack *u, struct archive_entry *e, int pfd, const char *name, bool made) {
        struct dir_meta *m;
        struct stat st;

        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return entry_fail(u, -errno, "stat");
        if (made && made_add(&u->made, &st, CLEAN_MARK) < 0)
                return entry_fail(u, -ENOMEM, "record");
        if (u->n_dirs == u->cap_dirs) {
                size_t cap = u->cap_dirs ? u->cap_dirs * 2 : 64;
                struct dir_meta *dirs = reallocarray(u->dirs, cap, sizeof(*dirs));
                if (!dirs)
                        return entry_fail(u, -ENOMEM, "record");
                u->dirs = dirs;
                u->cap_dirs = cap;
        }
        m = &u->dirs[u->n_dirs];
        *m = (struct dir_meta){ .path = strdup(u->path), .mode = entry_mode(e), .dev = st.st_dev, .ino = st.st_ino };
        if (!m->path)
                return entry_fail(u, -ENOMEM, "record");
        entry_times(e, m->times);
        u->n_dirs++;
        return 0;
}

/* Modes and times of the layer's directories, now that their contents are complete. */
static int finish_dirs(struct unpack *u) {
        for (size_t i = 0; i < u->n_dirs; i++) {
                struct dir_meta *m = &u->dirs[i];
                const char *name = split_path(m->path, u->parent);
                _cleanup_close_ int pfd = open_in_root(u, u->parent, O_PATH | O_DIRECTORY), fd = -EBADF;
                struct stat st;

                if (pfd >= 0)
                        fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                /* Gone or replaced later in the layer: nothing to do. */
                if (pfd < 0 || fd < 0 || fstat(fd, &st) < 0 || st.st_dev != m->dev || st.st_ino != m->ino)
                        continue;
                if (fchmod(fd, m->mode) < 0 || futimens(fd, m->times) < 0)
                        return error_set(u->err, -errno, "layer: directory '%s': set mode and times", m->path);
        }
        return 0;
}

static int whiteout(struct unpack *u, char *parent, const char *base) {
        _cleanup_close_ int pfd = -EBADF;
        const char *victim = base + strlen(WH_PREFIX);
        struct stat st;
        int r;

        if (streq(base, WH_OPAQUE)) {
                struct walk w = { .keep = &u->made, .topfd = -EBADF };
                bool empty;

                r = open_in_root(u, parent, O_RDONLY | O_DIRECTORY);
                if (r == -ENOENT || r == -ENOTDIR) /* nothing below to hide */
                        return 0;
                if (r < 0)
                        return entry_fail(u, r, "opaque directory");
                r = walk_dir(&w, r, 0, &empty);
                return r < 0 ? entry_fail(u, r, "emptying the opaque directory") : 0;
        }
        if (startswith(base, WH_PREFIX WH_PREFIX) || !*victim || streq(victim, ".") || streq(victim, ".."))
                return entry_refuse(u, -EINVAL, "invalid whiteout");
        pfd = open_parent(u, parent, false, &st);
        if (pfd == -ENOENT || pfd == -ENOTDIR)
                return 0;
        if (pfd < 0)
                return entry_fail(u, pfd, "parent");
        r = unpack_remove_tree(pfd, victim);
        return r < 0 && r != -ENOENT ? entry_fail(u, r, "whiteout") : 0;
}

static int link_entry(struct unpack *u, const char *target, int pfd, const char *name) {
        _cleanup_close_ int tpfd = -EBADF;
        const char *why = NULL, *tname;
        struct stat st;
        int r = normalize(target, u->target, sizeof(u->target), &why);

        if (r < 0)
                return entry_refuse(u, r, "hard link target: %s", why);
        if (!*u->target)
                return entry_refuse(u, -EPERM, "hard link to the root refused");
        tname = split_path(u->target, u->tparent);
        tpfd = open_parent(u, u->tparent, false, &st);
        if (tpfd < 0 || fstatat(tpfd, tname, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return entry_fail(u, tpfd < 0 ? tpfd : -errno, "hard link target");
        if (S_ISDIR(st.st_mode))
                return entry_refuse(u, -EPERM, "hard link to a directory refused");
        r = make_room(u, pfd, name, false);
        if (r < 0)
                return r;
        /* Flags 0: a link to a symlink links the symlink itself. */
        if (linkat(tpfd, tname, pfd, name, 0) < 0)
                return entry_fail(u, -errno, "hard link");
        return 0;
}

static int apply_entry(struct unpack *u, struct archive_entry *e) {
        const char *raw = sym_archive_entry_pathname(e), *link = sym_archive_entry_hardlink(e), *why = NULL, *base,
                   *target;
        _cleanup_close_ int pfd = -EBADF;
        mode_t type = sym_archive_entry_filetype(e);
        int64_t size = sym_archive_entry_size_is_set(e) ? sym_archive_entry_size(e) : 0;
        struct timespec ts[2];
        struct stat pst;
        int r;

        str_printable(raw ?: "", u->shown, sizeof(u->shown));
        if (!raw)
                return entry_refuse(u, -EINVAL, "no name");
        r = normalize(raw, u->path, sizeof(u->path), &why);
        if (r < 0)
                return entry_refuse(u, r, "%s", why);
        /* The data of anything but a regular file is read and dropped: it counts too. */
        if ((link || type != AE_IFREG) && size > 0 && (r = count_bytes(u, size)) < 0)
                return r;
        if (!*u->path) {
                if (type == AE_IFDIR && !link)
                        return 0; /* "./" or "/": the root's own metadata is the caller's */
                return entry_refuse(u, -EPERM, "names the root");
        }
        base = split_path(u->path, u->parent);
        if (startswith(base, WH_PREFIX))
                return whiteout(u, u->parent, base);
        if (!link && (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFSOCK)) {
                u->st.skipped++;
                return 0;
        }
        if (!link && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK && type != AE_IFIFO)
                return entry_refuse(u, -EINVAL, "unsupported file type 0%o", (unsigned)type);
        pfd = open_parent(u, u->parent, true, &pst);
        if (pfd < 0)
                return pfd;
        r = link ? link_entry(u, link, pfd, base) : make_room(u, pfd, base, type == AE_IFDIR);
        if (r < 0)
                return r;
        entry_times(e, ts);
        switch (link ? 0 : type) {
        case 0: /* linked above */
                break;
        case AE_IFREG:
                r = write_file(u, e, pfd, base);
                break;
        case AE_IFDIR: {
                bool made = r == 0; /* 1: an existing directory is kept */

                /* 0700 until finish_dirs() sets the mode: an unprivileged run can still fill it. */
                if (made && mkdirat(pfd, base, 0700) < 0)
                        return entry_fail(u, -errno, "mkdir");
                r = chown_entry(u, e, pfd, base, -EBADF);
                if (r >= 0)
                        r = defer_dir(u, e, pfd, base, made);
                break;
        }
        case AE_IFLNK:
                target = sym_archive_entry_symlink(e);
                if (!target || !*target || strlen(target) >= PATH_MAX)
                        return entry_refuse(u, -EINVAL, "symlink target empty or longer than PATH_MAX");
                /* Kept as given, never followed here: it is resolved in the container's root at run time. */
                if (symlinkat(target, pfd, base) < 0)
                        return entry_fail(u, -errno, "symlink");
                r = chown_entry(u, e, pfd, base, -EBADF);
                if (r >= 0 && utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW) < 0)
                        r = entry_fail(u, -errno, "set times");
                break;
        case AE_IFIFO: {
                _cleanup_close_ int fd = -EBADF;

                if (mkfifoat(pfd, base, 0600) < 0)
                        return entry_fail(u, -errno, "mkfifo");
                /* Opening a FIFO for reading without blocking succeeds at once: fchmod then needs no /proc. */
                fd = openat(pfd, base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return entry_fail(u, -errno, "open fifo");
                r = chown_entry(u, e, pfd, base, fd);
                if (r >= 0 && (fchmod(fd, entry_mode(e)) < 0 || futimens(fd, ts) < 0))
                        r = entry_fail(u, -errno, "set mode and times");
                break;
        }
        }
        if (r < 0)
                return r;
        return made_add(&u->made, &pst, base) < 0 ? entry_fail(u, -ENOMEM, "record") : 0;
}

static int archive_fail(struct unpack *u, struct archive *a, const char *what) {
        int r = sym_archive_errno(a) > 0 ? -sym_archive_errno(a) : -EBADMSG;

        return error_set_plain(u->err, r, "layer: %s: %s", what, sym_archive_error_string(a) ?: "damaged archive");
}

static int unpack_run(struct unpack *u, int layer_fd) {
        _cleanup_close_ int probe = -EBADF;
        struct archive_entry *e;
        int r;

        probe = open_in_root(u, "", O_PATH | O_DIRECTORY);
        if (probe == -ENOSYS)
                return error_set_plain(u->err, probe, "layer: openat2() is missing (Linux 5.6 or later needed)");
        if (probe < 0)
                return error_set(u->err, probe, "layer: root directory");
        u->a = sym_archive_read_new();
        if (!u->a)
                return error_set(u->err, -ENOMEM, "layer");
        /* ARCHIVE_WARN would mean an external gzip/zstd program: not from a privileged library. */
        if (sym_archive_read_support_filter_gzip(u->a) != ARCHIVE_OK ||
            sym_archive_read_support_filter_zstd(u->a) != ARCHIVE_OK)
                return error_set_plain(u->err, -EOPNOTSUPP, "layer: libarchive lacks built-in gzip or zstd");
        /* tar covers ustar, pax and GNU tar; "empty" accepts a zero-length layer. */
        if (sym_archive_read_support_format_tar(u->a) != ARCHIVE_OK ||
            sym_archive_read_support_format_empty(u->a) != ARCHIVE_OK)
                return archive_fail(u, u->a, "setup");
        if (sym_archive_read_open_fd(u->a, layer_fd, READ_BLOCK) != ARCHIVE_OK)
                return archive_fail(u, u->a, "open");
        for (;;) {
                r = sym_archive_read_next_header(u->a, &e);
                if (r == ARCHIVE_EOF)
                        break;
                /* WARN: e.g. a name not convertible to the locale; the bytes are used as they are. */
                if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
                        return archive_fail(u, u->a, "read");
                if (++u->st.entries > u->lim.max_entries) {
                        str_printable(sym_archive_entry_pathname(e) ?: "", u->shown, sizeof(u->shown));
                        return entry_refuse(u, -EFBIG, "more than max_entries (%llu) entries",
                                            (unsigned long long)u->lim.max_entries);
                }
                r = apply_entry(u, e);
                if (r < 0)
                        return r;
                if (u->tail_missing)
                        break;
        }
        return finish_dirs(u);
}

int unpack_layer(int layer_fd, int root_fd, const struct unpack_limits *limits, struct unpack_stats *stats,
                 struct km_error *err) {
        struct unpack u = {
                .root = root_fd,
                .lim = limits ? *limits : (struct unpack_limits){},
                .chown = geteuid() == 0,
                .err = err,
        };
        int r;

        if (dlopen_libarchive() < 0)
                return error_set_plain(err, -EOPNOTSUPP, "layer: cannot load libarchive (libarchive.so.13)");
        /* A zero limit means its default. */
        u.lim.max_bytes = u.lim.max_bytes ?: DEFAULT_MAX_BYTES;
        u.lim.max_entries = u.lim.max_entries ?: DEFAULT_MAX_ENTRIES;
        u.lim.max_file = u.lim.max_file ?: DEFAULT_MAX_FILE;
        r = unpack_run(&u, layer_fd);
        if (stats)
                *stats = u.st;
        if (u.a)
                sym_archive_read_free(u.a);
        made_clear(&u.made);
        for (size_t i = 0; i < u.n_dirs; i++)
                free(u.dirs[i].path);
        free(u.dirs);
        return r;
}
