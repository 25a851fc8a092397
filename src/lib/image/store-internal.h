/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Between the parts of the store: store.c (blobs, references, gc) and store-rootfs.c (root filesystems). */
#pragma once

#include "digest.h"
#include "store.h"

#define HEX_LEN 64
/* rootfs/HEX.old-XXXXXX: a replaced tree, kept while containers of the image live (store-rootfs.c). */
#define ROOTFS_OLD_MARK ".old-"

struct store {
        char *path; /* absolute, without control characters: used in messages as it is */
        int fd, blobs_fd, refs_fd, rootfs_fd, sums_fd, tmp_fd, lock_fd;
        char verified[HEX_LEN + 1]; /* the last rootfs found to match its record through this handle */
};

static inline const char *hex_of(const char *digest) {
        return digest + strlen(DIGEST_SHA256_PREFIX);
}

static inline void keep_first(int *r, int q) {
        if (q < 0 && *r >= 0)
                *r = q;
}

/* -EINVAL, "WHAT: invalid: 'VALUE'". */
int store_invalid(struct km_error *err, const char *what, const char *value);
/* fsync of a directory; the first error into *r. */
void store_fsync_dir(int fd, int *r);
/* Whether NAME is PREFIX and 6 characters of a temp name: nothing else is ever taken for one. */
bool store_tmp_name_is_valid(const char *name, const char *prefix);
/* A new tmp/PREFIXXXXXXX, a file (O_RDWR) or a directory (O_DIRECTORY, 0755); its fd, the name in *ret_name. */
int store_make_tmp(struct store *s, const char *prefix, bool dir, char **ret_name, struct km_error *err);
/* Removes tmp/NAME; what cannot go now goes at the next exclusive open or gc. */
void store_drop_tmp(struct store *s, const char *name);
