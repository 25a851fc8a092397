/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "overlay.h"
#include "spec.h"
#include "syscalls.h"
#include "util.h"

/* Where the root filesystem is attached in the template, before pivot_root. */
#define STAGE "/r"
/* Where a kernel that takes only attached overlay layers gets them (overlay_fsmount_attached). */
#define LOWER_AT "/l"
#define LAYER_AT "/u"

/* path below root, resolved there: no way out, no magic link. */
static inline int rootfs_openat2(int root, const char *path, int flags) {
        return sys_openat2(root, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/*
 * Trees cloned in the host namespace: the root filesystem first, then one
 * per bind mount of the spec (-EBADF for the others).
 */
struct trees {
        int root;                    /* -EBADF while the overlay below waits for PID 1 */
        struct overlay_dirs overlay; /* an idmapped overlay the kernel takes only from attached layers */
        int *binds;
        size_t n;
        bool keep_root; /* a spare's root that is the caller's directory: no mount point is made on it */
};
void trees_done(struct trees *t);

/* Whether the spec mount is a bind (type "bind", or a "bind"/"rbind" option). */
bool launch_is_bind(const struct spec_mount *m);

/*
 * In PID 1, in its copy of the template: the container's mount namespace from
 * t's trees (the root, then one per bind of s), ending in pivot_root into it.
 */
int rootfs_setup(const struct container_spec *s, struct trees *t, struct km_error *err);
/* new_root becomes "/" (pivot_root, the old root detached). */
int rootfs_pivot_into(int new_root, struct km_error *err);
