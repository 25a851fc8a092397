/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the mount broker lets an unprivileged VCS container mount: pure
 * decisions on one trapped mount(2) or umount2(2), its strings already
 * copied out of the caller, its paths translated to the host's.  The broker
 * (broker.h) then resolves the caller's own paths without symlinks and
 * performs the verdict in its mount namespace (caller-view.h); nothing here
 * touches the kernel.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct mount_ident;

#define BROKER_MAX_MOUNTS_DEFAULT 16
#define BROKER_TARGETS_MAX 16 /* a run container's --mount-target paths */

/* A container's policy, from its spec's annotations (broker_policy_from_*). */
struct broker_policy {
        const char *kubelet_dir; /* absolute, simplified: targets and bind sources below it */
        char *const *targets;    /* NULL-terminated (NULL: none): its scope, each and, if below kubelet_dir, below it */
        char *const *types;      /* NULL-terminated: the fstypes it may mount ("fuse.sshfs", "tmpfs", ...) */
        uid_t host_uid;          /* the container's id map: its 0 is host_uid, count ids */
        gid_t host_gid;
        uint32_t id_count;
        bool keep_suid_dev;                    /* false: MS_NOSUID|MS_NODEV forced on every mount */
        unsigned max_mounts;                   /* its brokered mounts alive at once */
        char *const *mounted;                  /* NULL-terminated: the targets it mounted and has not unmounted */
        const struct mount_ident *mounted_ids; /* NULL, or beside each of mounted: the mount made there (0s: unknown) */
};

enum broker_op { BROKER_OP_MOUNT, BROKER_OP_UMOUNT };

/* One trapped call; any string may be NULL (a NULL pointer in the call). */
struct broker_call {
        enum broker_op op;
        const char *source, *target, *fstype, *data;
        unsigned long flags; /* mount: MS_*; umount2: MNT_FORCE, MNT_DETACH, UMOUNT_NOFOLLOW */
};

enum broker_action {
        BROKER_DENY,
        BROKER_DO_MOUNT,  /* mount(source, target, fstype, flags, data) */
        BROKER_DO_BIND,   /* a bind (MS_BIND, maybe MS_REC) of source, below the kubelet dir */
        BROKER_DO_FUSE,   /* a FUSE mount: the broker opens /dev/fuse, data gets "fd=ITS_FD," in front */
        BROKER_DO_UMOUNT, /* umount2(target, flags) */
};

struct broker_verdict {
        enum broker_action action;
        int error;     /* DENY: the errno the caller gets (EPERM; EINVAL for a malformed call; see below) */
        char why[512]; /* DENY: one line for the log, with no option value in it */
        /* To pass on: MS_NOSUID|MS_NODEV added unless keep_suid_dev; umount: UMOUNT_NOFOLLOW added. */
        unsigned long flags;
        char *data;  /* to pass on (malloc'ed, may be NULL); FUSE: without fd=, ids mapped, allow_other */
        int fuse_fd; /* FUSE: the caller's fd=N, where the broker installs its /dev/fuse fd */
};

/*
 * Decides one call.  Refuses (DENY, EPERM, a reason) unless:
 *  - target is absolute, has no "." or ".." component and no "//", and is
 *    one of p->targets (a routed container's target, a run container's
 *    --mount-target) or, when that is below the kubelet dir, below it;
 *  - mount: fstype is in p->types, or is "fuse" with a "subtype=X" option
 *    and "fuse.X" in p->types; MS_REMOUNT, MS_MOVE and propagation
 *    changes (MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE) are refused;
 *    MS_BIND (with MS_REC or not) needs a source below the kubelet dir,
 *    under the same rules as target, and fstype is ignored; fewer than
 *    p->max_mounts are in p->mounted;
 *  - FUSE (fstype "fuse", "fuse.*", "fuseblk"): data has exactly one fd=N
 *    (N >= 0); user_id=U and group_id=G are below p->id_count and become
 *    host_uid + U, host_gid + G; allow_other is added; fd= is removed;
 *  - umount: target is in p->mounted; flags only MNT_FORCE, MNT_DETACH,
 *    UMOUNT_NOFOLLOW.
 * The errno of a refusal: EPERM for what the policy forbids (paths, types,
 * MS_REMOUNT, MS_MOVE, propagation, MS_MANDLOCK, the count); EINVAL for
 * what the kernel would not take either (unknown flags, malformed options,
 * FUSE's fd=, user_id=, group_id=, subtype=); EFAULT for a NULL target
 * or bind source; ENAMETOOLONG for a path or source of PATH_MAX bytes or more.
 * v->why names the rule, never an option value nor a bind source.
 * Returns 0 (v filled, the DENY case included) or -ENOMEM (v a DENY too).
 */
int broker_decide(const struct broker_policy *p, const struct broker_call *c, struct broker_verdict *v);

/*
 * The refusals broker_decide() makes from the flags alone, before any
 * string (MS_REMOUNT, MS_MOVE, propagation changes, MS_MANDLOCK, flags
 * the kernel would not take): true with v a DENY, else false (v cleared).
 * The agent answers these in its loop, with no worker and nothing read.
 */
bool broker_refuse_by_flags(enum broker_op op, unsigned long flags, struct broker_verdict *v);

/*
 * Whether target may be a run container's mount target (--mount-target):
 * absolute, simplified (no ".", "..", "//" nor a trailing "/"), below
 * kubelet_dir and none of the kubelet's own: not a direct child of it (its
 * files, pods/, plugins/, pki/ ...), nothing in pki/, plugins_registry/,
 * device-plugins/, pod-resources/ or checkpoints/; in pods/ only a volume,
 * pods/UID/volumes/PLUGIN/NAME, or below it; in plugins/ only below a
 * plugin's own dir, plugins/NAME/X.  0, or -EINVAL with *ret_why.
 */
int broker_target_check(const char *kubelet_dir, const char *target, const char **ret_why);

/* Whether paths a and b are the same, or one is below the other (targets that would share mounts). */
bool broker_targets_overlap(const char *a, const char *b);
void broker_verdict_done(struct broker_verdict *v);

/*
 * One line for the log about the call and its verdict, option values that
 * may be secrets masked (options_mask()), the source's password too
 * (secret_mask_source()), control characters as \xNN:
 * "mount -t fuse.sshfs u@h:/ on /var/lib/... (nosuid,nodev,user_id=1879048192,
 * ...,allow_other): allowed", "mount --bind SRC on TARGET: ...",
 * "umount TARGET: refused: WHY".  An allowed call shows the verdict's flags
 * and data, a refused one the call's.  malloc'ed, or NULL.
 */
char *broker_describe(const struct broker_call *c, const struct broker_verdict *v);
