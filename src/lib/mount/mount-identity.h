/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A mount named by identity, not by path: the mount ID of a held fd, and the
 * place a held parent directory and a name give (THREATS 2, 33).
 */
#pragma once

#include <sys/types.h>

#include "util.h"

struct km_mount;

/* The mount ID (mountinfo's first field) of what fd is open on: statx STATX_MNT_ID, else fdinfo (mountpoint.c). */
int fd_mount_id(int fd, unsigned *ret);

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
