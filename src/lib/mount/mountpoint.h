/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mount-point queries in the calling thread's namespace (mountpoint.c); the public calls take a host. */
#pragma once

#include <stdint.h>

#include "util.h"

/* The body of the opaque struct km_mount_info. */
struct km_mount_info {
        uint64_t mount_id;    /* the id mountinfo shows (field 1) */
        unsigned propagation; /* KM_PROPAGATION_* */
        unsigned peer_group;
        unsigned master;
        bool is_mount_point; /* path itself is the mount point */
        char target[4096];   /* mount point of the holding mount */
};

/* 1: path is a mount point, 0: not, negative errno (-ENOENT for a missing path). */
int is_mount_point(const char *path, struct km_error *err);
/* What the mount that holds path looks like (the deepest one). */
int mount_info_of(const char *path, struct km_mount_info *ret, struct km_error *err);
