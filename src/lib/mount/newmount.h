/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mounts through the new mount API (open_tree / fsopen, mount_setattr,
 * move_mount): flags are set before the mount is attached, so the copies
 * that propagation makes are identical, and the mount lands on a held fd.
 * Every function returns -ENOSYS when it cannot take the request (an option
 * only libmount knows, an old kernel); the caller then goes through libmount.
 */
#pragma once

#include "util.h"

/* A bind (rbind with recursive) of the held source_fd onto target_fd with options such as ro,nosuid. */
int newmount_bind(int source_fd, const char *source, const char *options, bool recursive, int target_fd,
                  const char *target, struct km_error *err);
/* A new filesystem of fstype; options go to the filesystem (fsconfig). */
int newmount_fs(const char *fstype, const char *source, const char *options, int target_fd, const char *target,
                struct km_error *err);
