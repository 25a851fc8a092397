/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trees below an unpacked root (unpack-tree.c), under the unpacking of a
 * layer (unpack.c): the set of names this layer made, and removing a tree
 * or pruning a directory of what lower layers put there (an opaque marker).
 * unpack_remove_tree() and unpack_open_file() of unpack.h live here too.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util.h"

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
