/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unmounting: umount2(2) directly (a host umount.TYPE helper through libmount
 * when one exists for the type), escalation normal -> force -> lazy on a
 * timeout or busy mount, and recursive unmount from one table snapshot.
 */
#include <fcntl.h>
#include <glob.h>
#include "libmount-dl.h"
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "options.h"
#include "resolve.h"
#include "syscalls.h"
#include "util.h"


/* Identity and mtime of a helper directory: adding or removing an entry changes it. */
struct dir_stamp {
        dev_t dev;
        ino_t ino;
        struct timespec mtime;
};

static void dir_stamp_get(const char *dir, struct dir_stamp *ret) {
        struct stat st;

        memset(ret, 0, sizeof(*ret));
        if (stat(dir, &st) == 0)
                *ret = (struct dir_stamp){ st.st_dev, st.st_ino, st.st_mtim };
}

/*
 * True when the host has any umount.TYPE helper; then the type matters.
 * The glob reads both directories (~0.2 ms), so its answer is kept while
 * neither directory changes (a namespace with another /sbin has another
 * stamp).  A directory changed in the last 2 s is not trusted, since its
 * mtime could still change within the same clock tick.
 */
static bool have_umount_helpers(void) {
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static struct dir_stamp cached[2];
        static bool cached_valid, cached_value;
        struct dir_stamp stamp[2];
        struct timespec now;
        glob_t g;
        bool r;

        dir_stamp_get("/sbin", &stamp[0]);
        dir_stamp_get("/usr/sbin", &stamp[1]);
        pthread_mutex_lock(&lock);
        if (cached_valid && memcmp(stamp, cached, sizeof(stamp)) == 0) {
                r = cached_value;
                pthread_mutex_unlock(&lock);
                return r;
        }
        pthread_mutex_unlock(&lock);

        r = glob("/{sbin,usr/sbin}/umount.*", GLOB_NOSORT | GLOB_BRACE, NULL, &g) == 0;
        if (r)
                globfree(&g);

        clock_gettime(CLOCK_REALTIME, &now);
        pthread_mutex_lock(&lock);
        cached_valid = stamp[0].mtime.tv_sec + 2 < now.tv_sec && stamp[1].mtime.tv_sec + 2 < now.tv_sec;
        memcpy(cached, stamp, sizeof(stamp));
        cached_value = r;
        pthread_mutex_unlock(&lock);
        return r;
}

/*
 * The type of the filesystem mounted at target in O(1) (statx + statmount),
 * or NULL when that cannot tell (old kernel, not a mount point, corrupted
 * mount): then the caller reads the table.  DONT_SYNC: no round trip to a
 * hung NFS server.
 */
static char *fstype_at(const char *target) {
        _cleanup_free_ struct km_statmount *sm = NULL;
        struct statx stx;

        if (!km_feature(KM_FEATURE_STATX_MNT) ||
            statx(AT_FDCWD, target, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID_UNIQUE,
                  &stx) < 0)
                return NULL;
        if (!(stx.stx_mask & STATX_MNT_ID_UNIQUE) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
            !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                return NULL;
        if (km_statmount(stx.stx_mnt_id, KM_STATMOUNT_FS_TYPE, &sm) < 0 || !(sm->mask & KM_STATMOUNT_FS_TYPE))
                return NULL;
        return strdup(sm->str + sm->fs_type);
}

static int umount_with_helper(const char *target, int mnt_flags, struct km_error *err) {
        _cleanup_(sym_mnt_free_contextp) struct libmnt_context *cxt = NULL;
        char msg[KM_ERROR_MAX] = "";
        int rc;

        if (dlopen_libmount() < 0)
                return km_error_set(err, -EOPNOTSUPP, "umount: %s: cannot load libmount", target);
        cxt = sym_mnt_new_context();
        if (!cxt || sym_mnt_context_set_target(cxt, target) < 0)
                return km_error_set(err, -ENOMEM, "umount: %s", target);
        sym_mnt_context_disable_mtab(cxt, 1);
        if (mnt_flags & MNT_FORCE)
                sym_mnt_context_enable_force(cxt, 1);
        if (mnt_flags & MNT_DETACH)
                sym_mnt_context_enable_lazy(cxt, 1);
        rc = sym_mnt_context_umount(cxt);
        if (sym_mnt_context_get_excode(cxt, rc, msg, sizeof(msg)) == MNT_EX_SUCCESS)
                return 0;
        rc = sym_mnt_context_syscall_called(cxt) ? -sym_mnt_context_get_syscall_errno(cxt) : -EIO;
        if (err) {
                err->code = rc;
                snprintf(err->message, sizeof(err->message), "umount: %s: %s", target, msg);
        }
        return rc;
}

/*
 * One unmount attempt in this process.  helpers: the host has umount.*
 * helpers, so the type matters.  fstype: the type from a table snapshot
 * (umount -R) or NULL; then statmount gives it in O(1), and only where it
 * cannot (old kernel, corrupted mount) is the table read.  The target is
 * not looked at without helpers, nor for a forced or lazy unmount (the
 * cases of a hung NFS server, where a path walk may wait for it).
 */
static int umount_once(const char *target, int mnt_flags, bool helpers, const char *fstype, struct km_error *err) {
        if (helpers) {
                _cleanup_free_ char *type = fstype || mnt_flags ? NULL : fstype_at(target);
                bool helper;

                if (fstype || type)
                        helper = host_helper_exists("umount", fstype ? fstype : type);
                else {
                        struct km_mount_table *t = NULL;
                        const struct km_mount *m;

                        helper = km_mount_table_load(NULL, &t, NULL) == 0 &&
                                 (m = km_mount_table_find_target(t, target)) && host_helper_exists("umount", km_mount_fstype(m));
                        km_mount_table_free(t);
                }
                if (helper)
                        return umount_with_helper(target, mnt_flags, err);
        }
        if (umount2(target, mnt_flags | UMOUNT_NOFOLLOW) < 0) {
                int r = -errno;
                if (r == -EINVAL)
                        return km_error_set_plain(err, r, "umount: %s: not mounted", target);
                return km_error_set(err, r, "umount: %s", target);
        }
        return 0;
}

/*
 * One attempt in a worker process so that a hung filesystem cannot hang us:
 * 0 done, -ETIMEDOUT when the worker did not answer in time (it is killed),
 * else its negative errno.  The worker is a grandchild, orphaned at once, so
 * a worker stuck in the kernel never leaves a zombie in the caller.
 */
static int umount_once_timed(const char *target, int mnt_flags, bool helpers, const char *fstype, int timeout_ms,
                             struct km_error *err) {
        _cleanup_close_ int rd = -EBADF, worker_fd = -EBADF;
        struct pollfd p;
        int fds[2], status, r;
        int32_t answer;
        pid_t pid, worker;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return km_error_set(err, -errno, "umount: %s: pipe", target);
        rd = fds[0];
        pid = fork();
        if (pid < 0) {
                close(fds[1]);
                return km_error_set(err, -errno, "umount: %s: fork", target);
        }
        if (pid == 0) {
                /* Only the worker writes: its pid, then its answer. */
                pid_t w = fork();
                if (w != 0)
                        _exit(w < 0);
                w = getpid();
                if (write(fds[1], &w, sizeof(w)) != sizeof(w))
                        _exit(1);
                answer = umount_once(target, mnt_flags, helpers, fstype, NULL);
                _exit(write(fds[1], &answer, sizeof(answer)) != sizeof(answer));
        }
        close(fds[1]);
        /* The middle child exits right after forking the worker. */
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (read(rd, &worker, sizeof(worker)) != sizeof(worker))
                return km_error_set(err, -ECHILD, "umount: %s: worker did not start", target);
        worker_fd = (int)syscall(SYS_pidfd_open, worker, 0); /* to signal it safely later */

        p = (struct pollfd){ .fd = rd, .events = POLLIN };
        r = poll(&p, 1, timeout_ms);
        if (r == 0) {
                if (worker_fd >= 0)
                        syscall(SYS_pidfd_send_signal, worker_fd, SIGKILL, NULL, 0);
                return km_error_set(err, -ETIMEDOUT, "umount: %s: no answer after %d ms", target, timeout_ms);
        }
        if (r < 0 || read(rd, &answer, sizeof(answer)) != sizeof(answer) || answer > 0)
                return km_error_set(err, -EIO, "umount: %s: worker died", target);
        if (answer == 0)
                return 0;
        if (answer == -EINVAL)
                return km_error_set_plain(err, answer, "umount: %s: not mounted", target);
        return km_error_set(err, answer, "umount: %s", target);
}

static int umount_escalating(const char *target, unsigned flags, int timeout_ms, bool helpers, const char *fstype,
                             struct km_error *err) {
        int r;

        if (flags & KM_UMOUNT_LAZY)
                return umount_once(target, MNT_DETACH, helpers, fstype, err);
        if (timeout_ms <= 0)
                return umount_once(target, (flags & KM_UMOUNT_FORCE) ? MNT_FORCE : 0, helpers, fstype, err);

        if (!(flags & KM_UMOUNT_FORCE)) {
                r = umount_once_timed(target, 0, helpers, fstype, timeout_ms, err);
                if (r != -ETIMEDOUT && r != -EBUSY)
                        return r;
                km_log(KM_LOG_WARNING, "umount %s: %s, retrying with force", target,
                       r == -EBUSY ? "busy" : "timed out");
        }
        r = umount_once_timed(target, MNT_FORCE, helpers, fstype, timeout_ms, err);
        if (r != -ETIMEDOUT && r != -EBUSY)
                return r;
        km_log(KM_LOG_WARNING, "umount %s: forced unmount %s, detaching lazily", target,
               r == -EBUSY ? "busy" : "timed out");
        return umount_once(target, MNT_DETACH, false, NULL, err);
}

struct victim {
        const char *target, *fstype;
        size_t depth, order;
        bool helper; /* has a umount.TYPE helper: unmounted by the calling thread */
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

/*
 * One level (same depth) of a recursive unmount, shared by the threads.
 * Each umount2(2) waits for an RCU grace period in the kernel (~0.15 ms
 * here) after it has dropped the namespace lock, so unmounts of mounts of
 * the same depth - none can be the parent of another - overlap well:
 * 20,000 mounts took 2.8 s one by one, 0.5 s with 8 threads, 0.4 s with 16
 * (docs/benchmarks.md, P4).
 */
struct level {
        struct victim *v;
        size_t n, next;
        int mnt_flags;
        pthread_mutex_t lock;
        size_t done, first_error; /* index of the first failed victim, n if none */
        int r;
        struct km_error err;
};

static void level_record(struct level *l, size_t i, int k, const struct km_error *e) {
        /* Gone already: propagation from a peer took it, or it was stacked. */
        if (k == -EINVAL || k == -ENOENT)
                return;
        pthread_mutex_lock(&l->lock);
        l->done += k == 0;
        if (k < 0 && i < l->first_error) {
                l->first_error = i;
                l->r = k;
                l->err = *e;
        }
        pthread_mutex_unlock(&l->lock);
}

static void level_work(struct level *l) {
        for (;;) {
                size_t i = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
                struct km_error e = { 0 };
                int k;

                if (i >= l->n)
                        return;
                if (l->v[i].helper)
                        continue; /* done by the calling thread */
                k = umount_once(l->v[i].target, l->mnt_flags, false, NULL, &e);
                level_record(l, i, k, &e);
        }
}

static void *level_thread(void *userdata) {
        /*
         * Stop sharing the caller's fs_struct right away: km_hostns_run's
         * setns() back needs it unshared, and a joined thread may not have
         * released it yet (exit_fs runs after the join wake-up).
         */
        if (unshare(CLONE_FS) == 0)
                level_work(userdata);
        return NULL;
}

#define UMOUNT_THREADS_MAX 16
#define UMOUNT_PER_THREAD 32

/* Unmounts v[0..n) (one depth) in parallel; helpers and escalation stay serial. */
static void umount_level(struct level *l, unsigned flags) {
        pthread_t threads[UMOUNT_THREADS_MAX];
        pthread_attr_t attr;
        size_t want = l->n / UMOUNT_PER_THREAD, started = 0;

        l->mnt_flags = (flags & KM_UMOUNT_LAZY) ? MNT_DETACH : (flags & KM_UMOUNT_FORCE) ? MNT_FORCE : 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->v[i].helper) {
                        struct km_error e = { 0 };
                        int k = umount_once(l->v[i].target, l->mnt_flags, true, l->v[i].fstype, &e);
                        level_record(l, i, k, &e);
                }
        if (want > UMOUNT_THREADS_MAX)
                want = UMOUNT_THREADS_MAX;
        if (want > 1 && pthread_attr_init(&attr) == 0) {
                pthread_attr_setstacksize(&attr, 256 * 1024);
                /* New threads are in the calling thread's mount namespace (km_hostns_run). */
                for (; started < want - 1; started++)
                        if (pthread_create(&threads[started], &attr, level_thread, l) != 0)
                                break;
                pthread_attr_destroy(&attr);
        }
        level_work(l); /* the calling thread works too, alone if no thread started */
        for (size_t i = 0; i < started; i++)
                pthread_join(threads[i], NULL);
}

/* Everything at or below target, from one snapshot of the table, deepest first. */
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
                const struct km_mount *m = km_mount_table_at(t, i);
                const char *mp = km_mount_target(m);
                if (mp && path_is_below(mp, target))
                        v[n++] = (struct victim){ mp, km_mount_fstype(m), path_depth(mp), i,
                                                  helpers && host_helper_exists("umount", km_mount_fstype(m)) };
        }
        if (n == 0) {
                km_mount_table_free(t);
                return km_error_set_plain(err, -EINVAL, "umount: %s: not mounted", target);
        }
        qsort(v, n, sizeof(*v), victim_cmp);

        r = 0;
        if (timeout_ms <= 0) {
                /* Level by level; a level is finished before its parents start. */
                for (size_t i = 0, j; i < n; i = j) {
                        struct level l = { .v = v + i, .lock = PTHREAD_MUTEX_INITIALIZER };
                        for (j = i; j < n && v[j].depth == v[i].depth; j++)
                                ;
                        l.n = l.first_error = j - i;
                        umount_level(&l, flags);
                        done += l.done;
                        if (l.r < 0 && r == 0) {
                                r = l.r;
                                if (err)
                                        *err = l.err;
                        }
                }
        } else
                /* With a timeout each attempt runs in a child process: one by one. */
                for (size_t i = 0; i < n; i++) {
                        struct km_error e = { 0 };
                        int k = umount_escalating(v[i].target, flags & ~KM_UMOUNT_RECURSIVE, timeout_ms, helpers,
                                                  v[i].fstype, &e);
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

/*
 * A target below confine must not pass through a symlink or "..": checked by
 * a walk.  The fd is not kept (it would keep the mount busy), so the unmount
 * goes by path: a symlink swapped in between is the race THREATS 2 names.
 */
static int check_confined(const char *target, const char *confine, struct km_error *err) {
        char component[256] = "";
        const char *why;
        int fd;

        if (!confine || !path_is_below(target, confine))
                return 0;
        fd = resolve_confined(target, confine, &why, component, sizeof(component));
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        if (why)
                return km_error_set_plain(err, fd, "umount: %s: '%s' %s %s", target, component, why, confine);
        if (fd == -ENOENT)
                return km_error_set_plain(err, fd, "umount: %s: not mounted", target);
        return km_error_set(err, fd, "umount: %s", target);
}

KM_EXPORT int km_umount(const char *target, const char *confine, unsigned flags, int timeout_ms, int *excode,
                        struct km_error *err) {
        _cleanup_free_ char *abs = NULL;
        const char *why;
        bool helpers;
        int r, dummy;

        if (!excode)
                excode = &dummy;
        *excode = MNT_EX_USAGE;
        if (argument_validate("target", target, &why) < 0)
                return km_error_set(err, -EINVAL, "umount: target '%s' %s", target ? target : "", why);
        if (!(abs = path_absolute(target)))
                return km_error_set(err, -ENOMEM, "umount: %s", target);
        target = abs;
        *excode = MNT_EX_FAIL;
        r = check_confined(target, confine, err);
        if (r < 0)
                return r;
        helpers = have_umount_helpers();
        if (flags & KM_UMOUNT_RECURSIVE) {
                /* The table holds canonical paths; a corrupted target cannot be resolved. */
                _cleanup_free_ char *canonical = realpath(target, NULL);
                r = umount_recursive(canonical ? canonical : target, flags, timeout_ms, helpers, err);
        } else
                r = umount_escalating(target, flags, timeout_ms, helpers, NULL, err);
        *excode = r == 0 ? MNT_EX_SUCCESS : r == -ENOMEM ? MNT_EX_SYSERR : MNT_EX_FAIL;
        if (r == 0)
                km_log(KM_LOG_INFO, "unmounted %s", target);
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
        return km_umount(u->target, u->confine, u->flags, u->timeout_ms, u->excode, err);
}

KM_EXPORT int km_umount_in_host(const char *ns_path, const char *target, const char *confine, unsigned flags,
                                int timeout_ms, int *excode, struct km_error *err) {
        int dummy = MNT_EX_SYSERR;
        /* Relative to the caller's directory, which the switch would change. */
        _cleanup_free_ char *abs = target && target[0] != '-' ? path_absolute(target) : NULL;
        struct host_umount u = { abs ? abs : target, confine, flags, timeout_ms, excode ? excode : &dummy };

        *u.excode = MNT_EX_SYSERR;
        return km_hostns_run(ns_path, umount_cb, &u, err);
}
