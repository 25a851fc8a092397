/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trees below an unpacked root (unpack-tree.c), under the unpacking of a
 * layer (unpack.c): the set of names this layer made, and removing a tree
 * or pruning a directory of what lower layers put there (an opaque marker).
 * Also the two helpers the store and the import use: unpack_remove_tree()
 * and unpack_open_file().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util.h"

/* Removes a directory tree below dirfd (no symlink followed, no mount crossed). */
int unpack_remove_tree(int dirfd, const char *name);
/*
 * A regular file below dirfd opened for reading: no symlink on the way or at
 * the end (-ELOOP), never above dirfd (-EXDEV), never blocking on a FIFO or
 * device, which is refused like any other non-regular file (-EBADMSG).
 */
int unpack_open_file(int dirfd, const char *path);

/* Recorded with a directory's (dev, ino): it holds only this layer's entries.  Never an entry's name. */
#define CLEAN_MARK "/"

/* The set of names this layer made: (parent dev, parent ino, name). */
struct made_slot {
        uint64_t hash, dev, ino;
        char *name; /* NULL: empty slot */
};

struct made_set {
        struct made_slot *slots;
        size_t cap, n;
};

/* Whether name in the directory dir is in s (NULL: the empty set). */
bool made_has(const struct made_set *s, const struct stat *dir, const char *name);
/* 0 (also when it is there already), or -ENOMEM. */
int made_add(struct made_set *s, const struct stat *dir, const char *name);
void made_clear(struct made_set *s);

/*
 * Empties the directory fd (owned: closed here) of what is not in keep,
 * keeping the directories above what is; marks what it emptied CLEAN_MARK.
 */
int unpack_prune(int fd, struct made_set *keep);
