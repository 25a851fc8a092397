/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Trees below an unpacked root (see unpack-tree.h): what a layer made, removing and pruning. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "syscalls.h"
#include "unpack-tree.h"

/* Levels of directories held open at once while removing; deeper ones are moved up. */
#define MAX_WALK_DEPTH 128

/* ---- the set of names this layer made: (parent dev, parent ino, name) ---- */

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

bool made_has(const struct made_set *s, const struct stat *dir, const char *name) {
        return s && s->cap &&
               made_find(s, made_hash(dir->st_dev, dir->st_ino, name), dir->st_dev, dir->st_ino, name)->name;
}

int made_add(struct made_set *s, const struct stat *dir, const char *name) {
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

void made_clear(struct made_set *s) {
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

int unpack_prune(int fd, struct made_set *keep) {
        struct walk w = { .keep = keep, .topfd = -EBADF };
        bool empty;

        return walk_dir(&w, fd, 0, &empty);
}
