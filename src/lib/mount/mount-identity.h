/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A mount named by identity, not by path: the mount ID of a held fd, and the
 * place a held parent directory and a name give (THREATS 2, 33).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct km_mount;

/* The mount ID (mountinfo's first field) of what fd is open on: statx STATX_MNT_ID, else fdinfo (mountpoint.c). */
int fd_mount_id(int fd, unsigned *ret);

/*
 * Which mount a record names: mountinfo's ID, which the kernel gives again
 * once the mount is gone, and the 64-bit one it never reuses (statx
 * STATX_MNT_ID_UNIQUE, Linux 6.8, probed per call; 0 where it has none).
 */
struct mount_ident {
        unsigned id;
        uint64_t unique;
};

/* Both IDs of what fd is open on (cached attributes only: no FUSE daemon is asked). */
int fd_mount_ident(int fd, struct mount_ident *ret);
/* The unique one alone (0: the kernel has none). */
uint64_t fd_mount_unique_id(int fd);

/*
 * Whether the mount now is the one recorded: by the unique ID where both
 * have one, else by mountinfo's; a record with neither (an older agent's)
 * cannot tell, and is taken for it.
 */
bool mount_ident_same(const struct mount_ident *recorded, const struct mount_ident *now);

/*
 * What is mounted at PARENT/NAME now (the topmost mount there, or the plain
 * entry): an O_PATH fd of it, never through a symlink, and its mount ID
 * (umount.c).
 */
int mount_top_at(int parent_fd, const char *name, unsigned *ret_id);

/* The same ID without keeping an fd (statx where it can). */
int mount_id_at(int parent_fd, const char *name, unsigned *ret_id);

/*
 * umount2() of the topmost mount at PARENT/NAME, through
 * "/proc/self/fd/PARENT/NAME" and UMOUNT_NOFOLLOW: the held directory and a
 * name that may not be a symlink, so no path walk can send it elsewhere.
 * Returns 0 or a negative errno (-EINVAL: nothing mounted there).
 */
int umount_at(int parent_fd, const char *name, int mnt_flags);

/*
 * The parent directory of an absolute path from the mount table, opened
 * without following any symlink; *ret_name points to the last component in
 * path.  For undoing a mount found in the table.
 */
int open_parent_nofollow(const char *path, const char **ret_name);
