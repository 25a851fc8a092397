/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libarchive, loaded on first use: libarchive brings libxml2 and ICU, a cost every
 * kubemount exec would pay; only unpacking needs it.
 * Prototypes come from <archive.h>, so every call is still type-checked.
 */
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include "dl.h"

#define KM_LIBARCHIVE_SYMBOLS(X)                                                                                       \
        X(archive_entry_atime)                                                                                         \
        X(archive_entry_atime_is_set)                                                                                  \
        X(archive_entry_atime_nsec)                                                                                    \
        X(archive_entry_filetype)                                                                                      \
        X(archive_entry_gid)                                                                                           \
        X(archive_entry_hardlink)                                                                                      \
        X(archive_entry_mtime)                                                                                         \
        X(archive_entry_mtime_is_set)                                                                                  \
        X(archive_entry_mtime_nsec)                                                                                    \
        X(archive_entry_pathname)                                                                                      \
        X(archive_entry_perm)                                                                                          \
        X(archive_entry_size)                                                                                          \
        X(archive_entry_size_is_set)                                                                                   \
        X(archive_entry_sparse_count)                                                                                  \
        X(archive_entry_symlink)                                                                                       \
        X(archive_entry_uid)                                                                                           \
        X(archive_errno)                                                                                               \
        X(archive_error_string)                                                                                        \
        X(archive_read_data_block)                                                                                     \
        X(archive_read_free)                                                                                           \
        X(archive_read_new)                                                                                            \
        X(archive_read_next_header)                                                                                    \
        X(archive_read_open_fd)                                                                                        \
        X(archive_read_support_filter_gzip)                                                                            \
        X(archive_read_support_filter_zstd)                                                                            \
        X(archive_read_support_format_empty)                                                                           \
        X(archive_read_support_format_tar)

#define KM_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
KM_LIBARCHIVE_SYMBOLS(KM_DECLARE_SYM)
#undef KM_DECLARE_SYM

/* 0 once libarchive is loaded (thread-safe, once), else -EOPNOTSUPP. */
int dlopen_libarchive(void);
