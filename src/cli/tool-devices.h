/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "util.h"

struct km_mount_table;

/*
 * Whether path may be given to a multi-call tool as a device (tool-devices.c):
 * 0, or -EPERM, -EBUSY, -ENOTBLK or -errno with err naming the path and why.
 * writes: the tool writes to it (mkfs, fsck, repair).  table: the host's.
 */
int tool_device_check(const char *path, bool writes, const char *kubelet_dir, const struct km_mount_table *table,
                      struct km_error *err);
