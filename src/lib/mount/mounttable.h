/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount table of the calling thread's namespace, or of a file (mounttable.c). */
#pragma once

#include "util.h"

/* mountinfo: NULL for /proc/thread-self/mountinfo. */
int mount_table_load(const char *mountinfo, struct km_mount_table **ret, struct km_error *err);
