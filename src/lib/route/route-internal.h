/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Routing's parts that status and tests look at (route.c). */
#pragma once

#include "vcs-map.h"

struct km_router {
        struct km_host *host; /* a copy; NULL: the calling thread's namespace */
        char *kubelet_dir, *state_dir;
        bool kubelet_dir_named;
        const struct km_image_options *image_options;
        char **command_line;
        size_t n_command_line;
        struct vcs_map *map; /* built at first use */
};

/* "mount-" + up to 40 characters of the target's last component + "-" + 16 hex digits. */
#define ROUTE_NAME_MAX 72

enum route_kind { ROUTE_HOST, ROUTE_CONTAINER };
const char *route_kind_to_string(enum route_kind k); /* "host", "container" */

struct route_decision {
        enum route_kind route;
        enum vcs_policy policy;
        const struct vcs_entry *entry; /* the table's (the router's) */
        char reason[256];              /* "policy auto: the host has no mount.glusterfs" */
};

struct route_mount {
        const struct km_mount_spec *spec;
        char *kubelet_dir; /* the router's: the walk of the target is confined to it */
        struct route_decision decision;
        bool usage; /* refused as outside an unnamed kubelet dir */
};

/* The router's table, built at first use from its command line, the environment's sources and the defaults. */
int router_map(struct km_router *r, const struct vcs_map **ret, struct km_error *err);
/* Who mounts type (NULL: a bind, a remount, a probed type: the host). */
int route_decide(struct km_router *r, const char *type, struct route_decision *d, struct km_error *err);
/*
 * The container that serves target: named after its last component, made
 * unique by a hash of the whole path, so that two mounts of one target meet
 * at one name (the second is refused) and umount finds it again.
 */
void route_container_name(const char *target, char ret[ROUTE_NAME_MAX]);
/*
 * The fstypes the mount broker makes for a container that serves type, a
 * NULL-terminated list (km_strv_free() it): type itself; for a type that is
 * not FUSE, also "fuse.TYPE" (glusterfs's client mounts fuse.glusterfs); for
 * "fuse.SUB" also "fuse" and for "fuseblk.SUB" "fuseblk" (libfuse falls back
 * to the bare type with subtype=SUB); for nfs/nfs4 and cifs/smb3 the other
 * name (mount.nfs4 calls mount(2) with "nfs4").  -ENOMEM.
 */
int route_mount_types(const char *type, char ***ret);
