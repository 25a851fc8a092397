/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record check of the store's trees, done once per tree and kept while
 * nothing changes it (the agent's: one per process that lives on).  A tree
 * found to match its record is watched with inotify, every entry of it, each
 * watch added just before the check looks at the entry; any event on any of
 * them (a write, a close after writing, a chmod, chown, xattr or link count
 * change, an entry made, removed or renamed, the filesystem unmounted) or a
 * lost event (the queue overflowed) forgets it, and the next use checks it
 * in full again.  A use also compares the tree's directory (device, inode)
 * and its record's sum with what was checked, so a tree replaced or sealed
 * again is checked again.  Where a watch cannot be added (the user's inotify
 * limits), the tree is checked in full at every use.
 *
 * Out of its view, as of the full check's: a rewrite of the disk under the
 * filesystem; and beyond it, a shared writable mapping of a tree's file made
 * before the check and written through after it (inotify reports no writes
 * through a mapping; the full check saw the file's times change).
 */
#pragma once

#include "util.h"

struct tree_watch;

int tree_watch_new(struct tree_watch **ret);
void tree_watch_free(struct tree_watch *w);
/*
 * Whether rootfs/HEX of manifest_digest in the store at store_dir matches its
 * record, as store_rootfs_check: 1 yes; 0 no, err saying why (not unpacked,
 * no record, differs: the caller unpacks it again); -errno.  With w NULL
 * (no inotify), checked in full.  root_path (or NULL): the path a container
 * is to run from, which must be that tree's (-EINVAL otherwise).  ret_kept
 * (or NULL): on 1, which kept check vouches for the tree, the same number
 * at every use until something changes it (each check its own, never
 * reused); 0 when the tree is not kept (checked in full, unwatched).
 */
int tree_watch_check(struct tree_watch *w, const char *store_dir, const char *manifest_digest, const char *root_path,
                     uint64_t *ret_kept, struct km_error *err);
/* How many trees are kept as checked, and how many full checks were made (tests, the benchmark). */
struct tree_watch_stats {
        size_t kept, walks;
};
struct tree_watch_stats tree_watch_stats(struct tree_watch *w);
