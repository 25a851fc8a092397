/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unmounting: umount2(2) directly (a host umount.TYPE helper through libmount
 * when one exists for the type), escalation normal -> force -> lazy on a
 * timeout or busy mount, and recursive unmount from one table snapshot.
 */
#include <glob.h>
#include <libmount.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "options.h"
#include "util.h"

DEFINE_CLEANUP(struct libmnt_context, mnt_free_context)

/* True when the host has any umount.TYPE helper; then the type matters. */
static bool have_umount_helpers(void) {
        glob_t g;
        bool r = glob("/{sbin,usr/sbin}/umount.*", GLOB_NOSORT | GLOB_BRACE, NULL, &g) == 0;
        if (r)
                globfree(&g);
        return r;
}

static int umount_with_helper(const char *target, int mnt_flags, struct km_error *err) {
        _cleanup_(mnt_free_contextp) struct libmnt_context *cxt = mnt_new_context();
        char msg[KM_ERROR_MAX] = "";
        int rc;

        if (!cxt || mnt_context_set_target(cxt, target) < 0)
                return km_error_set(err, -ENOMEM, "umount %s", target);
        mnt_context_disable_mtab(cxt, 1);
        if (mnt_flags & MNT_FORCE)
                mnt_context_enable_force(cxt, 1);
        if (mnt_flags & MNT_DETACH)
                mnt_context_enable_lazy(cxt, 1);
        rc = mnt_context_umount(cxt);
        if (mnt_context_get_excode(cxt, rc, msg, sizeof(msg)) == MNT_EX_SUCCESS)
                return 0;
        rc = mnt_context_syscall_called(cxt) ? -mnt_context_get_syscall_errno(cxt) : -EIO;
        if (err) {
                err->code = rc;
                snprintf(err->message, sizeof(err->message), "umount: %s", msg);
        }
        return rc;
}

/* One unmount attempt in this process. */
static int umount_once(const char *target, int mnt_flags, bool helpers, struct km_error *err) {
        if (helpers) {
                struct km_mount_table *t = NULL;
                const struct km_mount *m;
                char helper[2][300] = { "", "" };

                if (km_mount_table_load(NULL, &t, NULL) == 0 && (m = km_mount_table_find_target(t, target)) &&
                    km_mount_fstype(m)) {
                        snprintf(helper[0], sizeof(helper[0]), "/sbin/umount.%s", km_mount_fstype(m));
                        snprintf(helper[1], sizeof(helper[1]), "/usr/sbin/umount.%s", km_mount_fstype(m));
                }
                km_mount_table_free(t);
                if ((*helper[0] && access(helper[0], X_OK) == 0) || (*helper[1] && access(helper[1], X_OK) == 0))
                        return umount_with_helper(target, mnt_flags, err);
        }
        if (umount2(target, mnt_flags | UMOUNT_NOFOLLOW) < 0) {
                int r = -errno;
                if (r == -EINVAL)
                        return km_error_set_plain(err, r, "umount: %s: not mounted", target);
                return km_error_set(err, r, "umount %s", target);
        }
        return 0;
}

/*
 * One attempt in a child so that a hung filesystem cannot hang us: 0 done,
 * -ETIMEDOUT when the child did not finish in time (it is killed and left
 * to be reaped), else the child's negative errno.
 */
static int umount_once_timed(const char *target, int mnt_flags, bool helpers, int timeout_ms,
                             struct km_error *err) {
        int pidfd, status = 0, r;
        pid_t pid;

        pid = fork();
        if (pid < 0)
                return km_error_set(err, -errno, "umount %s: fork", target);
        if (pid == 0) {
                r = umount_once(target, mnt_flags, helpers, NULL);
                _exit(r < 0 ? (-r & 0xff) : 0);
        }
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd >= 0) {
                struct pollfd p = { .fd = pidfd, .events = POLLIN };
                r = poll(&p, 1, timeout_ms);
                close(pidfd);
                if (r == 0) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, WNOHANG);
                        return km_error_set(err, -ETIMEDOUT, "umount %s: no answer after %d ms", target, timeout_ms);
                }
        }
        if (waitpid(pid, &status, 0) < 0)
                return km_error_set(err, -errno, "umount %s: wait", target);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        r = WIFEXITED(status) ? -WEXITSTATUS(status) : -EINTR;
        if (r == -EINVAL)
                return km_error_set_plain(err, r, "umount: %s: not mounted", target);
        return km_error_set(err, r, "umount %s", target);
}

static int umount_escalating(const char *target, unsigned flags, int timeout_ms, bool helpers,
                             struct km_error *err) {
        int r;

        if (flags & KM_UMOUNT_LAZY)
                return umount_once(target, MNT_DETACH, helpers, err);
        if (timeout_ms <= 0)
                return umount_once(target, (flags & KM_UMOUNT_FORCE) ? MNT_FORCE : 0, helpers, err);

        if (!(flags & KM_UMOUNT_FORCE)) {
                r = umount_once_timed(target, 0, helpers, timeout_ms, err);
                if (r != -ETIMEDOUT && r != -EBUSY)
                        return r;
                km_log(KM_LOG_WARNING, "umount %s: %s, retrying with force", target,
                       r == -EBUSY ? "busy" : "timed out");
        }
        r = umount_once_timed(target, MNT_FORCE, helpers, timeout_ms, err);
        if (r != -ETIMEDOUT && r != -EBUSY)
                return r;
        km_log(KM_LOG_WARNING, "umount %s: forced unmount %s, detaching lazily", target,
               r == -EBUSY ? "busy" : "timed out");
        return umount_once(target, MNT_DETACH, false, err);
}

struct victim {
        const char *target;
        size_t depth, order;
};

static int victim_cmp(const void *a, const void *b) {
        const struct victim *x = a, *y = b;
        if (x->depth != y->depth)
                return x->depth < y->depth ? 1 : -1; /* deepest first */
        return x->order < y->order ? 1 : -1;         /* then the latest mounted */
}

static size_t path_depth(const char *p) {
        size_t d = 0;
        for (; *p; p++)
                d += *p == '/' && p[1] && p[1] != '/';
        return d;
}

/* Everything at or below target, from one snapshot of the table. */
static int umount_recursive(const char *target, unsigned flags, int timeout_ms, bool helpers,
                            struct km_error *err) {
        struct km_mount_table *t = NULL;
        _cleanup_free_ struct victim *v = NULL;
        size_t n = 0, done = 0;
        int r;

        r = km_mount_table_load(NULL, &t, err);
        if (r < 0)
                return r;
        v = calloc(km_mount_table_size(t) + 1, sizeof(*v));
        if (!v) {
                km_mount_table_free(t);
                return km_error_set(err, -ENOMEM, "umount -R %s", target);
        }
        for (size_t i = 0; i < km_mount_table_size(t); i++) {
                const char *mp = km_mount_target(km_mount_table_at(t, i));
                if (mp && path_is_below(mp, target))
                        v[n++] = (struct victim){ mp, path_depth(mp), i };
        }
        if (n == 0) {
                km_mount_table_free(t);
                return km_error_set_plain(err, -EINVAL, "umount: %s: not mounted", target);
        }
        qsort(v, n, sizeof(*v), victim_cmp);

        r = 0;
        for (size_t i = 0; i < n; i++) {
                struct km_error e = { 0 };
                int k = umount_escalating(v[i].target, flags & ~KM_UMOUNT_RECURSIVE, timeout_ms, helpers, &e);
                /* Gone already: propagation from a peer took it, or it was stacked. */
                if (k == -EINVAL || k == -ENOENT)
                        continue;
                if (k < 0 && r == 0) {
                        r = k;
                        if (err)
                                *err = e;
                }
                done += k == 0;
        }
        km_log(KM_LOG_INFO, "unmounted %zu of %zu mounts under %s", done, n, target);
        km_mount_table_free(t);
        return r;
}

KM_EXPORT int km_umount(const char *target, unsigned flags, int timeout_ms, int *excode, struct km_error *err) {
        const char *why;
        bool helpers;
        int r, dummy;

        if (!excode)
                excode = &dummy;
        *excode = MNT_EX_USAGE;
        if (argument_validate("target", target, &why) < 0)
                return km_error_set(err, -EINVAL, "umount: target '%s' %s", target ? target : "", why);
        helpers = have_umount_helpers();
        if (flags & KM_UMOUNT_RECURSIVE) {
                /* The table holds canonical paths; a corrupted target cannot be resolved. */
                _cleanup_free_ char *canonical = realpath(target, NULL);
                r = umount_recursive(canonical ? canonical : target, flags, timeout_ms, helpers, err);
        } else
                r = umount_escalating(target, flags, timeout_ms, helpers, err);
        *excode = r == 0 ? MNT_EX_SUCCESS : r == -ENOMEM ? MNT_EX_SYSERR : MNT_EX_FAIL;
        if (r == 0)
                km_log(KM_LOG_INFO, "unmounted %s", target);
        return r;
}

struct host_umount {
        const char *target;
        unsigned flags;
        int timeout_ms;
        int *excode;
};

static int umount_cb(void *userdata, struct km_error *err) {
        struct host_umount *u = userdata;
        return km_umount(u->target, u->flags, u->timeout_ms, u->excode, err);
}

KM_EXPORT int km_umount_in_host(const char *ns_path, const char *target, unsigned flags, int timeout_ms,
                                int *excode, struct km_error *err) {
        int dummy = MNT_EX_SYSERR;
        struct host_umount u = { target, flags, timeout_ms, excode ? excode : &dummy };

        *u.excode = MNT_EX_SYSERR;
        return km_hostns_run(ns_path, umount_cb, &u, err);
}
