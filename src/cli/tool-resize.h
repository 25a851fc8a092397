/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "util.h"

/*
 * Grows the ext4 on dev, mounted at mount_point, to the device's size, as
 * `resize2fs dev` does online (tool-resize.c); prints resize2fs's lines.
 * 0, or -errno with err saying why.
 */
int tool_resize_online(const char *dev, const char *mount_point, struct km_error *err);
