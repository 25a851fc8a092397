/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Layer unpacking with libarchive (tar, tar+gzip, tar+zstd) into a root
 * directory, as an OCI runtime's snapshotter would: whiteouts (.wh.NAME)
 * delete, opaque markers (.wh..wh..opq) empty a directory of what lower layers
 * put there, ownership and modes are kept (setuid/setgid bits dropped).
 * Every entry is confined to the root: paths are resolved below a held root
 * fd with openat2(RESOLVE_IN_ROOT), absolute paths name entries inside it,
 * ".." and hard links out of the root are refused, device nodes are skipped.
 * Limits stop bombs.
 */
#pragma once

#include <stdint.h>

#include "util.h"

struct unpack_limits {
        uint64_t max_bytes;   /* total bytes written (default 8 GiB) */
        uint64_t max_entries; /* default 1,000,000 */
        uint64_t max_file;    /* one file (default 4 GiB) */
        /* The image's budget, counted like max_bytes over all its layers (0: none), and what the layers before used. */
        uint64_t max_image_bytes, image_bytes_before;
};

struct unpack_stats {
        uint64_t entries, bytes, skipped; /* skipped: device nodes, refused entries in lenient mode */
};

/*
 * Applies the layer read from layer_fd (any of the compressions, detected)
 * onto root_fd.  On error the caller removes root (a half-applied layer is
 * not usable); err names the entry.  limits may be NULL (defaults).
 */
int unpack_layer(int layer_fd, int root_fd, const struct unpack_limits *limits, struct unpack_stats *stats,
                 struct km_error *err);
