/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The body of the opaque struct km_mount_spec, for the library's own users. */
#pragma once

#include "util.h"

struct km_mount_spec {
        char *source, *target, *fstype;
        char *options;         /* shown as given, with sensitive keys masked */
        char *sensitive;       /* never shown */
        char *confine;         /* targets below it may not cross symlinks */
        bool confine_required; /* confine is a default nobody named: targets outside it are refused */
        unsigned flags;
        bool has_propagation, propagation_recursive;
        enum km_propagation_kind propagation;
};

/* Who made a mount, for its event: a VCS container of an image (each may be NULL). */
struct mount_by {
        const char *container, *image, *digest;
};
/*
 * The audit trail (sd-protocol.h's MESSAGE_IDs): s mounted (r >= 0), or
 * refused by the confinement (-EPERM, -ELOOP: a symlink, "..", outside the
 * kubelet dir; err's message); sources and options masked.  Returns r.
 */
int mount_spec_event(const struct km_mount_spec *s, int r, const struct km_error *err, const struct mount_by *by);

/* Propagation of the mount at fd (O_PATH of its root); shown names it in messages. */
int propagation_set_fd(int fd, const char *shown, enum km_propagation_kind kind, bool recursive, struct km_error *err);

/*
 * A type whose client keeps running while mounted (every FUSE type,
 * glusterfs, ceph-fuse): on the host its helper runs in cgroups of its own,
 * routed it keeps its container.  false for NULL.
 */
bool fstype_keeps_daemon(const char *fstype);
/* A bind, a remount or only a propagation change: no mount.TYPE helper runs. */
bool mount_spec_is_bind_or_remount(const struct km_mount_spec *s);

/*
 * For a mount made elsewhere (a VCS container): the target walked as
 * km_mount() walks it, in the calling thread's namespace, and the same
 * "already mounted" check.  *ret_usage: refused as outside a default kubelet
 * dir (mount(8)'s usage status).
 */
int mount_spec_check_target(const struct km_mount_spec *s, bool *ret_usage, struct km_error *err);
/*
 * mount(8)'s own command line for s: "mount -t TYPE -o OPTIONS SOURCE
 * TARGET", the sensitive options included (the command goes to a helper,
 * never to a log), extra (may be NULL) after them.  km_strv_free() it;
 * NULL: out of memory.
 */
char **mount_spec_argv(const struct km_mount_spec *s, const char *extra);
