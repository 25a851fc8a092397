/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every raw system call of the project, wrapped once: the mount API, pidfds,
 * openat2, clone3, close_range, execveat, pivot_root and seccomp; the
 * fallbacks for kernels that lack them (Linux 5.4 must work), and the feature
 * switches that force those fallbacks.  Wrappers return >= 0 or -errno.
 */
#pragma once

#include <linux/mount.h>
#ifndef RESOLVE_IN_ROOT
#include <linux/openat2.h> /* RESOLVE_* for sys_openat2() */
#endif
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kubemount.h"
#include "macro.h"

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

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/*
 * Feature switches (syscalls.c): the public KM_FEATURE_* bits and these
 * internal ones, which km_features_disable() and KUBEMOUNT_COMPAT ("old-kernel"
 * includes close_range; "close_range", "clone3", "execveat", "detached-layers",
 * "fuse-clone-userns", "af-alg", "clone-into-cgroup" by name) set too.
 */
enum {
        FEATURE_CLOSE_RANGE = 1u << 8, /* close_range(2) (5.9; CLOSE_RANGE_CLOEXEC 5.11) */
        FEATURE_CLONE3 = 1u << 9,      /* clone3(2) (5.3) */
        FEATURE_EXECVEAT = 1u << 10,   /* execveat(2) (3.19) */
        /* What a kernel accepts, probed where it is used (the first refusal turns it off for the process). */
        FEATURE_DETACHED_LAYERS = 1u << 11,   /* a detached (idmapped) mount as an overlay layer (not 6.1) */
        FEATURE_FUSE_CLONE_USERNS = 1u << 12, /* FUSE_DEV_IOC_CLONE onto a /dev/fuse of another userns (not 6.1) */
        FEATURE_AF_ALG = 1u << 13, /* the kernel's sha256 (AF_ALG, algif_hash) for short digests (digest.c) */
        /* clone3's CLONE_INTO_CGROUP, as far as the child lives (cgroup_fork_into probes it) */
        FEATURE_CLONE_INTO_CGROUP = 1u << 14,
};
bool feature_available(unsigned feature);
/* Turns an internal feature off for this process: the kernel refused it. */
void feature_refused(unsigned feature);

/*
 * statmount(2) into a buffer that grows as needed; *ret is malloc'ed.
 * -ENOSYS when unavailable or disabled.
 */
int sys_statmount(uint64_t mnt_id, uint64_t mask, struct sys_statmount **ret);
int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr);
int sys_open_tree(int dfd, const char *path, unsigned flags);
/*
 * openat2(2) (5.6) with O_CLOEXEC added, retried on EAGAIN (a rename or mount
 * raced with a RESOLVE_* lookup; not with RESOLVE_CACHED, where EAGAIN means
 * the walk needed more than the cache); returns the fd or -errno (-ENOSYS
 * before 5.6).
 */
int sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve);
int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags);
int sys_fsopen(const char *fstype, unsigned flags);
int sys_fsconfig(int fsfd, unsigned cmd, const char *key, const char *value);
int sys_fsmount(int fsfd, unsigned flags, unsigned attr_flags);
/* pidfd_open(2) (5.3) and pidfd_send_signal(2) (5.1): every supported kernel has them. */
int sys_pidfd_open(pid_t pid, unsigned flags);
int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags);
/* pidfd_getfd(2) (5.6): a copy of another process's fd (O_CLOEXEC); -ENOSYS before. */
int sys_pidfd_getfd(int pidfd, int targetfd);
/*
 * close_range(2); without it (before 5.9, CLOSE_RANGE_CLOEXEC before 5.11)
 * each open fd in the range that /proc/self/fd lists, or every possible one
 * when /proc is not there, is closed or marked close-on-exec.  Only system
 * calls: safe between fork() and exec.  CLOSE_RANGE_UNSHARE has no fallback.
 */
int sys_close_range(unsigned first, unsigned last, unsigned flags);
/*
 * clone3(2) with args of sizeof(struct clone_args) (<linux/sched.h>); the
 * child gets 0.  Without it (or when seccomp says ENOSYS) clone(2) as fork()
 * when only flags (the low 32 bits) and exit_signal are set, else -ENOSYS.
 */
struct clone_args;
pid_t sys_clone3(const struct clone_args *args);
/*
 * execveat(2); returns only on failure.  Without it the fd's /proc/self/fd
 * link is executed, as fexecve() does, for AT_EMPTY_PATH with path "".
 */
int sys_execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);
int sys_pivot_root(const char *new_root, const char *put_old);
/* seccomp(2) (3.17), or prctl(PR_SET_SECCOMP) for SECCOMP_SET_MODE_FILTER without flags. */
int sys_seccomp(unsigned op, unsigned flags, void *args);
/*
 * fstat() through statx(AT_EMPTY_PATH) with sync flags: AT_STATX_FORCE_SYNC
 * asks the filesystem (a dead FUSE daemon answers ENOTCONN), AT_STATX_DONT_SYNC
 * uses cached attributes (a hung server cannot block).  Fills dev, ino, mode.
 */
int fstat_sync(int fd, int sync_flag, struct stat *ret);
/* The mount id of an fd from /proc/self/fdinfo (works on every kernel). */
int fdinfo_mnt_id(int fd, unsigned *ret);
