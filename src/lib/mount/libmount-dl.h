/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmount, loaded on first use.  Loading it (and libblkid, libselinux and
 * libpcre2 behind it) costs ~0.5 ms per exec, which a kubelet pays on every
 * mount; the plain mount and umount paths do not need it.  Prototypes come
 * from <libmount.h>, so every call is still type-checked.
 */
#pragma once

#include <libmount.h>

#include "dl.h"

#define KM_LIBMOUNT_SYMBOLS(X)                                                                                         \
        X(mnt_context_disable_canonicalize)                                                                            \
        X(mnt_context_disable_mtab)                                                                                    \
        X(mnt_context_enable_fake)                                                                                     \
        X(mnt_context_enable_force)                                                                                    \
        X(mnt_context_enable_lazy)                                                                                     \
        X(mnt_context_enable_verbose)                                                                                  \
        X(mnt_context_get_excode)                                                                                      \
        X(mnt_context_get_syscall_errno)                                                                               \
        X(mnt_context_mount)                                                                                           \
        X(mnt_context_set_fstype)                                                                                      \
        X(mnt_context_set_options)                                                                                     \
        X(mnt_context_set_source)                                                                                      \
        X(mnt_context_set_target)                                                                                      \
        X(mnt_context_syscall_called)                                                                                  \
        X(mnt_context_umount)                                                                                          \
        X(mnt_free_context)                                                                                            \
        X(mnt_free_iter)                                                                                               \
        X(mnt_fs_get_devno)                                                                                            \
        X(mnt_fs_get_fs_options)                                                                                       \
        X(mnt_fs_get_fstype)                                                                                           \
        X(mnt_fs_get_id)                                                                                               \
        X(mnt_fs_get_optional_fields)                                                                                  \
        X(mnt_fs_get_parent_id)                                                                                        \
        X(mnt_fs_get_propagation)                                                                                      \
        X(mnt_fs_get_root)                                                                                             \
        X(mnt_fs_get_source)                                                                                           \
        X(mnt_fs_get_target)                                                                                           \
        X(mnt_fs_get_vfs_options)                                                                                      \
        X(mnt_fs_strdup_options)                                                                                       \
        X(mnt_new_context)                                                                                             \
        X(mnt_new_iter)                                                                                                \
        X(mnt_new_table)                                                                                               \
        X(mnt_table_get_nents)                                                                                         \
        X(mnt_table_get_userdata)                                                                                      \
        X(mnt_table_next_fs)                                                                                           \
        X(mnt_table_parse_file)                                                                                        \
        X(mnt_table_set_parser_errcb)                                                                                  \
        X(mnt_table_set_userdata)                                                                                      \
        X(mnt_unref_table)

#define KM_DECLARE_SYM(f) extern __typeof__(f) *sym_##f;
KM_LIBMOUNT_SYMBOLS(KM_DECLARE_SYM)
#undef KM_DECLARE_SYM

DEFINE_CLEANUP(struct libmnt_context, sym_mnt_free_context)

/* 0 once libmount is loaded (thread-safe, once), else -EOPNOTSUPP. */
int dlopen_libmount(void);
