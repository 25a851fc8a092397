/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unmounting a path (km_umount): the target resolved to a held fd, confined
 * below the kubelet dir, then one mount (umount-once.c) or everything below it
 * from one table snapshot (umount-tree.c).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "libmount-dl.h"
#include "hostns.h"
#include "mount-identity.h"
#include "mounttable.h"
#include "options.h"
#include "resolve.h"
#include "sd-protocol.h"
#include "syscalls.h"
#include "umount-internal.h"
#include "util.h"

/*
 * The target as a held fd and where it was found.  Below confine no symlink
 * or ".." is followed; elsewhere symlinks are, as umount(8) canonicalizes.
 */
static int open_target(const char *target, const char *confine, struct resolved *where, struct km_error *err) {
        char component[256] = "";
        const char *why;
        int fd;

        fd = resolve_confined_at(target, confine, where, &why, component, sizeof(component));
        if (fd >= 0)
                return fd;
        if (why)
                return error_set_plain(err, fd, "umount: %s: '%s' %s %s", target, component, why, confine);
        if (fd == -ENOENT)
                return error_set_plain(err, fd, "umount: %s: not mounted", target);
        return error_set(err, fd, "umount: %s", target);
}

/* Whether fd (a path's O_PATH fd) is the root of a mount: its mount is not its parent's (parent_fd). */
static bool is_mount_root(int fd, int parent_fd) {
        unsigned id, parent;

        /* Unknown counts as mounted: the confinement's refusal follows. */
        return parent_fd < 0 || fd_mount_id(fd, &id) < 0 || fd_mount_id(parent_fd, &parent) < 0 || id != parent;
}

/* km_umount() in the calling thread's namespace. */
static int umount_here(const char *target, const char *confine, unsigned flags, int timeout_ms, int *excode,
                       struct km_error *err) {
        _cleanup_(resolved_done) struct resolved where = { .parent_fd = -EBADF };
        _cleanup_free_ char *abs = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *why;
        bool helpers;
        int r, dummy;

        if (!excode)
                excode = &dummy;
        *excode = MNT_EX_USAGE;
        if (argument_validate("target", target, &why) < 0)
                return error_set(err, -EINVAL, "umount: target '%s' %s", target ? target : "", why);
        if (!(abs = path_absolute(target)))
                return error_set(err, -ENOMEM, "umount: %s", target);
        target = abs;
        *excode = MNT_EX_FAIL;
        fd = open_target(target, confine, &where, err);
        if (fd < 0)
                return fd;
        /*
         * A default kubelet dir nobody named: a target outside it would not be confined (fail closed) -- unless
         * nothing is mounted there, which umount(8)'s answer says (mount-utils' safe-not-mounted probe runs
         * umount on a fresh directory of $TMPDIR and looks for "not mounted").
         */
        if ((flags & KM_UMOUNT_CONFINE_REQUIRED) && !where.inside) {
                if (!is_mount_root(fd, where.parent_fd))
                        return error_set_plain(err, -EINVAL, "umount: %s: not mounted.", target);
                *excode = MNT_EX_USAGE;
                return error_set_plain(err, -EPERM,
                                       "umount: %s: outside the kubelet dir %s, the default, so not confined; "
                                       "name the kubelet's root dir (kubemount --kubelet-dir=DIR or "
                                       "KUBEMOUNT_KUBELET_DIR=DIR)",
                                       target, confine ? confine : "(none)");
        }
        if (where.parent_fd < 0 && !streq(target, "/"))
                return error_set_plain(err, -EINVAL, "umount: %s: a target ending in '..' is not unmounted", target);
        helpers = flags & KM_UMOUNT_RECURSIVE ? have_umount_helpers() : umount_helpers_matter();
        if (flags & KM_UMOUNT_RECURSIVE)
                r = umount_recursive(target, &fd, &where, flags, timeout_ms, helpers, err);
        else {
                unsigned id;
                r = fd_mount_id(fd, &id);
                closep(&fd); /* it would keep the mount busy */
                if (r < 0)
                        return error_set(err, r, "umount: %s: mount ID", target);
                struct utarget t = { target, where.parent_fd, where.name, id };
                r = umount_escalating(&t, flags, timeout_ms, helpers, NULL, err);
        }
        *excode = r == 0 ? MNT_EX_SUCCESS : r == -ENOMEM ? MNT_EX_SYSERR : MNT_EX_FAIL;
        if (r == 0)
                log_msg(KM_LOG_INFO, "unmounted %s", target);
        return r;
}

struct host_umount {
        const char *target, *confine;
        unsigned flags;
        int timeout_ms;
        int *excode;
};

static int umount_cb(void *userdata, struct km_error *err) {
        struct host_umount *u = userdata;
        return umount_here(u->target, u->confine, u->flags, u->timeout_ms, u->excode, err);
}

/* The audit trail: an unmount made, or refused by the confinement. */
static int umount_event(const char *target, int r, const struct km_error *err) {
        const char *pairs[] = { "KUBEMOUNT_TARGET", target, NULL };

        if (r >= 0)
                log_event(KM_LOG_NOTICE, MESSAGE_ID_UMOUNT, pairs, "umount: %s unmounted", target);
        else if (r == -EPERM || r == -ELOOP)
                log_event(KM_LOG_WARNING, MESSAGE_ID_REFUSED, pairs, "%s",
                          err && err->code ? err->message : "umount: refused");
        return r;
}

KM_EXPORT int km_umount(const struct km_host *h, const char *target, const char *confine, unsigned flags,
                        int timeout_ms, int *excode, struct km_error *err) {
        int dummy = MNT_EX_SYSERR;
        _cleanup_free_ char *abs = NULL;
        struct host_umount u = { target, confine, flags, timeout_ms, excode ? excode : &dummy };

        if (!h)
                return umount_event(target, umount_here(target, confine, flags, timeout_ms, excode, err), err);
        /* Relative to the caller's directory, which the switch would change. */
        if (target && target[0] != '-' && (abs = path_absolute(target)))
                u.target = abs;
        *u.excode = MNT_EX_SYSERR; /* until the switch is made */
        return umount_event(u.target, km_host_run(h, umount_cb, &u, err), err);
}
