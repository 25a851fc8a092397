/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The image store (default /var/lib/kubemount, --store-dir): content-
 * addressed blobs verified by sha256, references, and one read-only root
 * filesystem per image for the launcher.
 *
 *   STORE/blobs/sha256/HEX      blobs, 0444, written tmp -> verify -> rename
 *   STORE/refs/HEX-OF-REF.json  {"ref": "...", "manifest": "sha256:...", "config": ..., "rootfs": "HEX"}
 *   STORE/rootfs/HEX            unpacked (HEX of the manifest digest), renamed into place when complete
 *   STORE/sums/HEX              its record: a fingerprint of every entry, written when it was put in place
 *   STORE/tmp/                  work in progress; anything here at open is removed
 *   STORE/lock                  flock: shared by writers, exclusive by gc
 *
 * Concurrent writers of one blob or rootfs both succeed: the second rename
 * finds the first's result (same content) and drops its own.  A killed
 * writer leaves only tmp/ entries, which are never visible as results.
 * A root filesystem is handed out only while it matches its record
 * (store-rootfs.c); one that differs is unpacked again and swapped in.
 */
#pragma once

#include "jansson-dl.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "digest.h"
#include "util.h"

#define STORE_DIR_DEFAULT "/var/lib/kubemount"

struct store;

int store_open(const char *dir, struct store **ret, struct km_error *err);
void store_close(struct store *s);
DEFINE_CLEANUP(struct store, store_close)
const char *store_path(const struct store *s);

/* A new empty file in tmp/ for writing a blob (fd O_RDWR), with its name for store_blob_commit. */
int store_blob_begin(struct store *s, char **ret_tmpname, struct km_error *err);
/*
 * Verifies the tmp file (sha256 and, if expected_size >= 0, size) against
 * digest and moves it to blobs/.  On mismatch the tmp file is removed and
 * -EBADMSG returned naming the digest.  The tmp file is consumed either way.
 */
int store_blob_commit(struct store *s, const char *tmpname, const char *digest, int64_t expected_size,
                      struct km_error *err);
/* Whether the blob is there (0/1). */
int store_blob_exists(struct store *s, const char *digest);
/* O_RDONLY fd of a blob; -ENOENT if absent. */
int store_blob_open(struct store *s, const char *digest, struct km_error *err);
/* Reads a small blob (<= max) whole (malloc'ed, NUL-terminated). */
int store_blob_read(struct store *s, const char *digest, size_t max, char **ret, size_t *ret_size,
                    struct km_error *err);
/* Stores bytes already in memory (a manifest): verified like the others. */
int store_blob_put(struct store *s, const char *digest, const void *data, size_t size, struct km_error *err);

/* A new directory in tmp/ to unpack into (fd and name); store_rootfs_commit renames it to rootfs/HEX. */
int store_rootfs_begin(struct store *s, char **ret_tmpname, int *ret_fd, struct km_error *err);
/*
 * Puts the tree in place with its record, unless a tree that matches its own
 * record is there already (then ours goes); one that does not match is
 * replaced (renameat2 RENAME_EXCHANGE) and set aside as rootfs/HEX.old-XXXXXX,
 * which gc removes once no container of the image is left (keep_rootfs).  The
 * tmp dir is consumed either way: on failure it is removed (the caller's fd
 * then shows a deleted dir).
 */
int store_rootfs_commit(struct store *s, const char *tmpname, const char *manifest_digest, struct km_error *err);
/* Removes a tmp/ rootfs that will not be committed (a failed unpack). */
void store_rootfs_abort(struct store *s, const char *tmpname);
/*
 * Whether rootfs/HEX is there and matches its record: 1 yes; 0 no, with err
 * saying why (not unpacked, no record, differs: unpack again); -errno.
 */
int store_rootfs_check(struct store *s, const char *manifest_digest, struct km_error *err);
/*
 * Told of each entry of a tree just before the check looks at it: dirfd and
 * the entry's name in it, or "" for dirfd itself (the tree's root).  What
 * changes after that is no longer in the check's view (tree-watch.h).
 */
struct tree_visitor {
        void (*visit)(void *userdata, int dirfd, const char *name);
        void *userdata;
};
/* store_rootfs_check, telling v of every entry (never answered from the handle's last check). */
int store_rootfs_check_visit(struct store *s, const char *manifest_digest, const struct tree_visitor *v,
                             struct km_error *err);
/*
 * What identifies rootfs/HEX without walking it: its directory's stat and
 * the sum its record holds.  1; 0 with err saying why (not unpacked, no
 * record); -errno.
 */
int store_rootfs_identity(struct store *s, const char *manifest_digest, struct stat *ret_root,
                          char ret_sum[DIGEST_STRING_MAX], struct km_error *err);
/* Absolute path of rootfs/HEX for a manifest digest (malloc'ed), or NULL if not unpacked or not matching its record. */
char *store_rootfs_path(struct store *s, const char *manifest_digest);
/* The same path, the tree neither looked at nor checked (the agent checks it: tree-watch.h); NULL: no memory. */
char *store_rootfs_path_unchecked(struct store *s, const char *manifest_digest);

/*
 * References: name -> manifest digest (+ what else the caller records: config, size, created).
 * set: record must be an object with a valid "manifest" digest (-EINVAL otherwise); a copy with
 * "ref" added is written, replacing whatever junk was there.  get: -EBADMSG for junk (pull again).
 */
int store_ref_set(struct store *s, const char *ref, json_t *record, struct km_error *err);
int store_ref_get(struct store *s, const char *ref, json_t **ret, struct km_error *err); /* -ENOENT */
int store_ref_remove(struct store *s, const char *ref, struct km_error *err);
/* All records (array, each with "ref"), in a stable order; junk files are skipped. */
int store_ref_list(struct store *s, json_t **ret, struct km_error *err);

/*
 * Removes blobs and rootfs dirs (with their records) that no reference
 * reaches and whose rootfs path is not in keep (root paths of live
 * containers; a replaced HEX.old-XXXXXX goes with HEX's keep paths only);
 * returns bytes freed.
 * -EBUSY ("the store is in use") when other handles, in any process, keep the
 * store open for about a second; tmp/ is emptied too.
 */
int store_gc(struct store *s, char *const *keep_rootfs, uint64_t *ret_freed, struct km_error *err);
