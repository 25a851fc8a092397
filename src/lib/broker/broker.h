/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mount broker: serves the mount(2) and umount2(2) calls an
 * unprivileged container's seccomp filter traps (seccomp-notify.h).  The
 * agent's loop receives each notification (broker_recv); a forked worker
 * serves it (broker_serve): copies the call's strings out of the caller's
 * memory through /proc/PID/mem, re-checking the notification id after the
 * read (seccomp_unotify(2)), decides (broker-policy.h) on the host's paths
 * of the caller's, performs the verdict in the caller's mount namespace on
 * its own paths resolved without symlinks (caller-view.h), and answers the
 * caller (0 or an errno).
 * A FUSE mount is made with a /dev/fuse fd the broker opened (the kernel
 * accepts only a fd opened in the user namespace that owns the mount),
 * whose connection the caller's own /dev/fuse file, at the fd= it named,
 * then joins (FUSE_DEV_IOC_CLONE).  Where that clone does not cross user
 * namespaces (Linux 6.1, fuse-probe.h), the filter traps the caller's open
 * of /dev/fuse instead and hands it one of ours (SECCOMP_IOCTL_NOTIF_ADDFD),
 * with which the mount is then made as it is.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "broker-policy.h"
#include "caller-view.h" /* struct broker_notif, struct broker_view */
#include "mount-identity.h"

/* The next notification on listener (readable): 0, -ENOENT if its caller is gone already, or -errno. */
int broker_recv(int listener, struct broker_notif *ret);

/*
 * Hands each call over on one CPU (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux
 * 6.6): the supervisor is woken on the caller's CPU and the caller on the
 * answerer's, as a blocking call switches, instead of on a CPU that may be
 * idle (a vCPU woken from halt: 0.1-0.6 ms measured).  -EINVAL before 6.6.
 */
int broker_sync_wakeup(int listener);

/* Answers the caller: 0 or a positive errno (what the syscall returns). */
int broker_answer(int listener, uint64_t id, int error);
/* Lets the caller's call go on as it made it (a trapped open that is no business of ours). */
int broker_continue(int listener, uint64_t id);
/* Whether n is a trapped open (seccomp-notify.h), not a mount or umount. */
bool broker_notif_is_open(const struct broker_notif *n);

/* What broker_serve did, for the agent's table and the container's log. */
struct broker_outcome {
        int error;                /* what the caller got: 0 or an errno */
        bool mounted;             /* target now has a mount it made */
        bool unmounted;           /* target's mount it made is gone */
        bool answered;            /* a trapped open: broker_serve answered the caller itself */
        struct mount_ident mount; /* mounted: the mount it made (0s: unknown) */
        char target[4096];        /* the call's target, as the caller gave it (for mounted/unmounted) */
        char line[1024];          /* for the log: broker_describe(), or what failed */
};

/*
 * Serves n (received on listener) with policy p (a trapped open: answers
 * it itself, out->answered; see seccomp-notify.h), whose paths are the
 * host's: the call's paths are translated through view's binds first.
 * Fills *out; the caller answers (broker_answer(out->error)) once it has
 * recorded the outcome, so that the container's next call (an umount of
 * what it just mounted) finds it recorded.
 */
void broker_serve(int listener, const struct broker_notif *n, const struct broker_policy *p,
                  const struct broker_view *view, struct broker_outcome *out);
