/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mount table's internal side (mounttable.c): what the library's own users need beyond kubemount.h. */
#pragma once

#include <sys/types.h>

#include "util.h"

DEFINE_CLEANUP(struct km_mount_table, km_mount_table_free)

/* The mount table of the calling thread's namespace (mountinfo NULL: /proc/thread-self/mountinfo) or of a file. */
int mount_table_load(const char *mountinfo, struct km_mount_table **ret, struct km_error *err);

/* The device (major:minor) a mount table entry shows. */
dev_t mount_devno(const struct km_mount *m);
