/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user namespace of unprivileged containers.  One is made per id map
 * and kept by the caller (the agent): its fd idmaps the image's tree
 * (overlay_dirs_idmap) and the container's command enters it last, after
 * every mount of its setup, so the mount, pid and network namespaces stay
 * owned by the host's root and the container holds no capability over them.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "util.h"

/* A new user namespace whose 0..count-1 are host_uid.. and host_gid..: an fd of it, or -errno with err set. */
int userns_create(uid_t host_uid, gid_t host_gid, uint32_t count, struct km_error *err);
