/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

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
