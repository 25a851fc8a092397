/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a container's start takes from the host, opened ahead: its root
 * directory (unless an overlay's) and each bind's source.  A spare
 * container (agent-spare.h) is set up from these very objects
 * (launch_request.pinned_fds), not from their paths, and is claimed later
 * only while its paths still lead to them and nothing moved in the
 * directories of its root that its mounts go on.  So a run served by a
 * spare gets what a start of its own would: a rootfs whose /proc became a
 * symlink since (THREATS 19), a root or a bind source replaced or mounted
 * over, drop the spare instead.
 *
 * Once the start has cloned them the fds are closed (start_pins_release):
 * a kept fd would make their mounts busy for umount(8).  What stays is each
 * one's device, inode, mount and mount flags, and inotify watches, which
 * keep no mount busy: on the root and the directories its mounts pass
 * (names added, removed or moved there), and on each source itself (deleted
 * or moved, so its inode number cannot be given to another meanwhile).
 * The inotify instance is the caller's, kept and used again: closing one
 * waits for an RCU grace period (17 ms measured), removing a watch does not.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mount-identity.h"
#include "spec-def.h"

struct start_pin {
        int fd; /* O_PATH until start_pins_release; -EBADF: none (not a bind, an overlay's root) */
        bool used;
        dev_t dev;
        ino_t ino;
        struct mount_ident mount;
        unsigned long mount_flags; /* statfs f_flags: a mount of the same ID again but read-only differs */
};

struct start_pins {
        size_t n;              /* 1 + the spec's mounts */
        struct start_pin *pin; /* [0] the root, [1 + i] the source of mounts[i] */
        int *fds;              /* their fds, for launch_request.pinned_fds */
        int inotify_fd;        /* the caller's; -EBADF: nothing watched */
        int *wds;              /* its watches there */
        size_t n_wds;
        bool changed; /* an event of one of them was read */
};

#define START_PINS_INIT ((struct start_pins){ .inotify_fd = -EBADF })

/*
 * Opens and records what a start of s resolves in the current mount
 * namespace (bind sources as launch_open_source() does, below confine) and
 * sets the watches: for a root that is not an overlay, on it and on every
 * directory of it that a mount's destination (or a masked or read-only
 * path's) passes, up to the first that another mount covers.  -ENOTDIR when
 * such a directory is a symlink (a start resolves it in the root; a watch
 * cannot follow it there), or -errno, with err set.  inotify_fd: an
 * instance (IN_NONBLOCK) of the caller's that no other pins use meanwhile.
 */
int start_pins_open(struct start_pins *p, const struct container_spec *s, const char *confine, int inotify_fd,
                    struct km_error *err);

/* Closes the fds, once the start took its trees from them; the records and watches stay. */
void start_pins_release(struct start_pins *p);

/*
 * Whether a start of s now would take what p recorded: no watch had an
 * event, the root's path and each source's lead to the same device, inode,
 * mount and mount flags.  1 when so, else 0.  On a kernel without unique
 * mount IDs (before 6.8) a bind source's mount removed and made again alike
 * at its path, under the same ID, passes for the same.
 */
int start_pins_hold(struct start_pins *p, const struct container_spec *s, const char *confine);

/* The fds closed and the watches removed (the inotify instance stays the caller's). */
void start_pins_done(struct start_pins *p);
