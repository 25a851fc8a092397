/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Wrappers for mount-API system calls that glibc 2.36 and the 6.1 UAPI headers
 * lack, and the feature switches that force the old-kernel fallbacks.
 */
#pragma once

#include <linux/mount.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "util.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif
#ifndef __NR_statmount
#define __NR_statmount 457
#endif

/* struct mnt_id_req / struct statmount of the Linux UAPI (fields up to 6.12). */
struct mnt_id_req {
        uint32_t size;
        uint32_t spare;
        uint64_t mnt_id;
        uint64_t param;
};
struct sys_statmount {
        uint32_t size;
        uint32_t mnt_opts;
        uint64_t mask;
        uint32_t sb_dev_major, sb_dev_minor;
        uint64_t sb_magic;
        uint32_t sb_flags;
        uint32_t fs_type;
        uint64_t mnt_id;
        uint64_t mnt_parent_id;
        uint32_t mnt_id_old;
        uint32_t mnt_parent_id_old;
        uint64_t mnt_attr;
        uint64_t mnt_propagation;
        uint64_t mnt_peer_group;
        uint64_t mnt_master;
        uint64_t propagate_from;
        uint32_t mnt_root;
        uint32_t mnt_point;
        uint64_t mnt_ns_id;  /* 6.11 */
        uint32_t fs_subtype; /* 6.12, [str] */
        uint32_t sb_source;  /* 6.12, [str] */
        uint32_t opt_num, opt_array, opt_sec_num, opt_sec_array;
        uint64_t __spare2[46];
        char str[];
};
#define KM_STATMOUNT_MNT_BASIC 0x00000002U
#define KM_STATMOUNT_MNT_POINT 0x00000010U
#define KM_STATMOUNT_FS_TYPE 0x00000020U
#define KM_STATMOUNT_FS_SUBTYPE 0x00000100U

/* Feature switches (syscalls.c). */
bool feature_available(unsigned feature);

/*
 * statmount(2) into a buffer that grows as needed; *ret is malloc'ed.
 * -ENOSYS when unavailable or disabled.
 */
int sys_statmount(uint64_t mnt_id, uint64_t mask, struct sys_statmount **ret);
int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr);
int sys_open_tree(int dfd, const char *path, unsigned flags);
/*
 * openat2(2) (5.6) with O_CLOEXEC added, retried on EAGAIN (a rename or mount
 * raced with a RESOLVE_* lookup); returns the fd or -errno (-ENOSYS before 5.6).
 */
int sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve);
int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags);
int sys_fsopen(const char *fstype, unsigned flags);
int sys_fsconfig(int fsfd, unsigned cmd, const char *key, const char *value);
int sys_fsmount(int fsfd, unsigned flags, unsigned attr_flags);
/*
 * fstat() through statx(AT_EMPTY_PATH) with sync flags: AT_STATX_FORCE_SYNC
 * asks the filesystem (a dead FUSE daemon answers ENOTCONN), AT_STATX_DONT_SYNC
 * uses cached attributes (a hung server cannot block).  Fills dev, ino, mode.
 */
int fstat_sync(int fd, int sync_flag, struct stat *ret);
/* The mount id of an fd from /proc/self/fdinfo (works on every kernel). */
int fdinfo_mnt_id(int fd, unsigned *ret);
