/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller's own view, where the broker performs its calls: the caller's
 * mount namespace (which host root owns), so that the propagation of the
 * bind a mount lands on decides which namespaces it reaches (the host and
 * pods for an rshared bind, the container alone for an rslave or private
 * one), and the caller always sees what it mounted; and the caller's paths,
 * through its binds, as the kernel would walk them there.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "broker-policy.h"
#include "resolve.h"

/* A trapped call (broker.h): who made it, which, with what. */
struct broker_notif {
        uint64_t id;
        pid_t pid; /* the caller, in the listener's pid namespace */
        int nr;    /* the syscall */
        uint64_t args[6];
};

/* What the container sees of the host: a bind of host path source at destination. */
struct broker_bind {
        const char *destination, *source;
};

/* The container's view of the host, for broker_serve. */
struct broker_view {
        const struct broker_bind *binds; /* a target (or bind source) is translated through the deepest bind */
        size_t n_binds;                  /* holding it; one below none is refused */
        const dev_t *devices;            /* the block devices the container was given (st_rdev) */
        const char *const *device_paths; /* each one's host path (the name mountinfo shows), or NULL */
        size_t n_devices;
        bool fuse_device; /* /dev/fuse is one of its devices: a trapped open of it gets the host's */
};

/*
 * The bind of view that holds the caller's absolute path: the deepest
 * (components compared whole; a bind at "/" holds every path).  Its index,
 * or -EPERM for a path in none of them.
 */
int view_bind_of(const struct broker_view *view, const char *path);

/*
 * The host's path of the caller's *path, through view_bind_of(): replaces
 * *path (malloc'ed).  0, -EPERM (in no bind) or -ENOMEM.
 */
int view_translate(const struct broker_view *view, char **path);

/*
 * A relative *path of the caller's (mount.cifs mounts on "." after a
 * chdir into the target) made absolute with its cwd, as its own mount
 * namespace names it (/proc/PID/cwd): replaces *path.  0 (also for an
 * absolute, empty or NULL path, and, leaving it relative, for a cwd that
 * names nothing there), -errno.  The caller re-checks the notification id
 * after.
 */
int caller_absolute(pid_t pid, char **path);

/*
 * Enters the mount namespace of n's caller, its call still pending on
 * listener, and keeps this process's root and cwd at the host's, so that
 * the host's paths (/proc/self/fd/N, /dev/fuse, the bind sources) name
 * what they did.  *ret_root: an O_PATH fd of the caller's root.  For the
 * broker's worker only: it never comes back.
 */
int caller_enter(int listener, const struct broker_notif *n, int *ret_root);

/*
 * Where the caller's absolute path is in its view, caller_enter()'s root:
 * the destination of its bind (view_bind_of()) walked from root without a
 * symlink, and found to be that bind (the inode of its source, resolved on
 * the host below p->kubelet_dir without a symlink, or a mount the broker
 * recorded for it there); the rest walked below it without a symlink or
 * "..".  Fills *at (parent directory and name: openat(O_PATH|O_NOFOLLOW)
 * of them finds what is mounted there); release with resolved_done().
 * -EPERM with why filled for a path not where its bind is; -errno else.
 */
int caller_resolve(int root, const struct broker_view *view, const struct broker_policy *p, const char *path,
                   struct resolved *at, char *why, size_t why_size);
