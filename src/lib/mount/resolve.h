/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <limits.h>

#include "util.h"

/*
 * Opens the absolute path one component at a time (O_PATH).  Symlinks are
 * followed, by this walk, only until the walk enters the directory confine
 * (compared by device and inode, so a link to it is caught too); below it a
 * symlink or ".." is refused with -ELOOP / -EPERM and *ret_why set.  confine
 * may be NULL.  Returns the fd or a negative errno.
 */
int resolve_confined(const char *path, const char *confine, const char **ret_why, char *ret_component,
                     size_t component_size);

/* Where a resolved path was found: for checking it, or unmounting it, again without a path walk. */
struct resolved {
        int parent_fd;           /* O_PATH of the directory holding it; -EBADF for "/" or a path ending in ".." */
        char name[NAME_MAX + 1]; /* its name there */
        bool inside;             /* the walk entered confine (by device and inode) */
};

/*
 * resolve_confined() that also fills *ret (always: release with
 * resolved_done()).  openat(ret->parent_fd, ret->name, O_PATH|O_NOFOLLOW)
 * finds what is mounted on the result now; "/proc/self/fd/PARENT/NAME" names
 * it for umount2(UMOUNT_NOFOLLOW), whatever the path's symlinks do meanwhile.
 */
int resolve_confined_at(const char *path, const char *confine, struct resolved *ret, const char **ret_why,
                        char *ret_component, size_t component_size);
void resolved_done(struct resolved *r);

/*
 * Opens rel (relative, "" for dirfd itself) below dirfd, O_PATH, crossing
 * mounts but no symlink and no "..": openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), or a walk of its own where openat2 is missing.
 */
int resolve_beneath(int dirfd, const char *rel);
