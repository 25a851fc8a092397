/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container's own writable layer over an image's root filesystem: an
 * overlay whose lowerdir is the store's unpacked tree (never written: the
 * store keeps what the image's digest says), with upperdir and workdir in
 * the container's state directory, OVERLAY_LAYER_DIR/{upper,work}, which
 * goes with the container (state_container_remove).
 *
 * Options, besides the three directories: index=off (the upper dir is never
 * reused with another lower, and a store tree that is rebuilt must not make
 * the next mount fail on a stale index), metacopy=off and
 * redirect_dir=nofollow (the lower tree comes from an image: no xattr in it
 * may send a lookup elsewhere; renaming a directory of the image then gives
 * EXDEV, which mv(1) handles by copying), xino left to the kernel.  runc
 * leaves layers to containerd, whose overlay snapshotter sets index=off as
 * Docker's overlay2 driver does; neither asks for metacopy or redirects.
 *
 * The directories go to the kernel as /proc/self/fd/N of fds held here, so
 * that no path is resolved twice and none needs escaping (':' and ',').
 */
#pragma once

#include "util.h"

#define OVERLAY_LAYER_DIR "layer"

struct overlay_dirs {
        int lower, upper, work; /* O_PATH directory fds */
        int layer;              /* O_PATH of upper's and work's parent, OVERLAY_LAYER_DIR */
        char *lower_path;       /* for messages */
};
#define OVERLAY_DIRS_INIT                                                                                              \
        { .lower = -EBADF, .upper = -EBADF, .work = -EBADF, .layer = -EBADF }
void overlay_dirs_done(struct overlay_dirs *d);

/*
 * Opens lower_path and makes (or reuses) STATE_DIR_FD/layer/{upper,work},
 * upper with the mode and owner of the lower root (it becomes the root of
 * the merged tree).  Refuses, with a message that says why, a state
 * directory on a filesystem that cannot hold an upper dir (overlayfs).
 */
int overlay_dirs_open(const char *lower_path, int state_dir_fd, struct overlay_dirs *ret, struct km_error *err);

/*
 * For a container in a user namespace: the lower tree becomes an idmapped
 * clone (through userns_fd, Linux 5.19 for overlay layers and 6.3 for a
 * store on tmpfs), so the image's root-owned files are its root's, and the
 * upper root is chowned to match; what the container writes is on disk
 * with its mapped ids.  -EOPNOTSUPP (or another -errno) when the kernel or
 * the store's filesystem cannot idmap: d is unchanged.
 */
int overlay_dirs_idmap(struct overlay_dirs *d, int userns_fd);

/*
 * The overlay as a detached mount (fsopen/fsconfig/fsmount, Linux 5.2; the
 * kernels before 6.5 take the options through their legacy interface, which
 * is why they are plain strings), to be attached with move_mount.  -ENOSYS
 * when the new mount API is missing (or disabled: KUBEMOUNT_COMPAT).  The
 * kernel's own reason ("overlay: filesystem on ... not supported as
 * upperdir") is in the message.
 */
int overlay_fsmount(const struct overlay_dirs *d, struct km_error *err);

/*
 * The same for a kernel that takes as layers only mounts of the caller's
 * mount namespace (Debian 12's 6.1: "overlayfs: failed to clone lowerpath"
 * for a detached idmapped tree).  First, where d was opened,
 * overlay_dirs_detach_layer() makes d->layer a detached clone of the layer
 * dir (upper and work must be on one mount).  Then, in a private namespace
 * (the container's copy of the template), overlay_fsmount_attached()
 * attaches d's idmapped lower tree on LOWER_AT and that clone on LAYER_AT
 * and makes the overlay from those paths (that namespace has no /proc).
 */
int overlay_dirs_detach_layer(struct overlay_dirs *d);
int overlay_fsmount_attached(struct overlay_dirs *d, const char *lower_at, const char *layer_at, struct km_error *err);

/* The same with mount(2) on target (a path), for kernels without the new API. */
int overlay_mount(const struct overlay_dirs *d, const char *target, struct km_error *err);

/* The option string (lowerdir=/proc/self/fd/N,...), for the tests; free(). */
char *overlay_options(const struct overlay_dirs *d);
