/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Removing a directory tree that someone else filled (a container's writable layer). */
#pragma once

#include "util.h"

/*
 * Removes DIRFD/NAME and everything below it.  Never follows a symlink, never
 * leaves the filesystem NAME is on (a mount point below it stops the removal
 * with -EBUSY), and holds at most a few fds however deep the tree: it climbs
 * back through ".." and checks that it arrived where it came from (-ESTALE
 * otherwise).  Stops at the first entry it cannot remove and returns that
 * error (ret_what, if given, names it: up to size bytes).  0 if NAME is absent;
 * a NAME that is not a directory is unlinked.
 */
int rm_rf_at(int dirfd, const char *name, char *ret_what, size_t size);
