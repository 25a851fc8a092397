/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One unmount of a held target: umount2(2) directly (a host umount.TYPE
 * helper through libmount when one exists for the type), and escalation
 * normal -> force -> lazy on a timeout or a busy mount.  A mount is unmounted
 * where it was found - a held parent directory and a name, checked by mount
 * ID - never by walking its path again (THREATS 33).
 */
#include <dirent.h>
#include <fcntl.h>
#include "libmount-dl.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "mount-identity.h"
#include "mounttable.h"
#include "options.h"
#include "resolve.h"
#include "syscalls.h"
#include "umount-internal.h"
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

/* Whether dir has an entry umount.*, stopping at the first (what glob("DIR/umount.*") would find). */
static bool dir_has_umount_helper(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        bool r = false;

        if (!d)
                return false;
        while (!r && (de = readdir(d)))
                r = startswith(de->d_name, "umount.");
        closedir(d);
        return r;
}

/*
 * True when the host has any umount.TYPE helper; then the type matters.
 * Reading the directories costs a one-shot `kubemount umount` ~0.1 ms, so
 * /sbin is read once when it is /usr/sbin (merged /usr), and the answer is
 * kept while neither directory changes (a namespace with another /sbin has
 * another stamp).  A directory changed in the last 2 s is not trusted,
 * since its mtime could still change within the same clock tick.
 */
bool have_umount_helpers(void) {
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static struct dir_stamp cached[2];
        static bool cached_valid, cached_value;
        struct dir_stamp stamp[2];
        struct timespec now;
        bool r, same;

        dir_stamp_get("/sbin", &stamp[0]);
        dir_stamp_get("/usr/sbin", &stamp[1]);
        pthread_mutex_lock(&lock);
        if (cached_valid && memcmp(stamp, cached, sizeof(stamp)) == 0) {
                r = cached_value;
                pthread_mutex_unlock(&lock);
                return r;
        }
        pthread_mutex_unlock(&lock);

        same = stamp[0].ino != 0 && stamp[0].dev == stamp[1].dev && stamp[0].ino == stamp[1].ino;
        r = dir_has_umount_helper("/sbin") || (!same && dir_has_umount_helper("/usr/sbin"));

        clock_gettime(CLOCK_REALTIME, &now);
        pthread_mutex_lock(&lock);
        cached_valid = stamp[0].mtime.tv_sec + 2 < now.tv_sec && stamp[1].mtime.tv_sec + 2 < now.tv_sec;
        memcpy(cached, stamp, sizeof(stamp));
        cached_value = r;
        pthread_mutex_unlock(&lock);
        return r;
}

bool umount_helpers_matter(void) {
        /* With statmount the type costs two syscalls, less than reading /sbin to see whether any helper is there. */
        return feature_available(KM_FEATURE_STATX_MNT) || have_umount_helpers();
}

/*
 * The type of the filesystem mounted at target in O(1) (statx + statmount),
 * or NULL when that cannot tell (old kernel, not a mount point, corrupted
 * mount): then the caller reads the table.  DONT_SYNC: no round trip to a
 * hung NFS server.
 */
static char *fstype_at(int dirfd, const char *name) {
        _cleanup_free_ struct sys_statmount *sm = NULL;
        struct statx stx;

        if (!feature_available(KM_FEATURE_STATX_MNT) ||
            statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID_UNIQUE, &stx) < 0)
                return NULL;
        if (!(stx.stx_mask & STATX_MNT_ID_UNIQUE) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
            !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                return NULL;
        if (sys_statmount(stx.stx_mnt_id, KM_STATMOUNT_FS_TYPE, &sm) < 0 || !(sm->mask & KM_STATMOUNT_FS_TYPE))
                return NULL;
        return strdup(sm->str + sm->fs_type);
}

static int umount_with_helper(const char *target, int mnt_flags, struct km_error *err) {
        _cleanup_(sym_mnt_free_contextp) struct libmnt_context *cxt = NULL;
        char msg[KM_ERROR_MAX] = "";
        int rc;

        if (dlopen_libmount() < 0)
                return error_set(err, -EOPNOTSUPP, "umount: %s: cannot load libmount", target);
        cxt = sym_mnt_new_context();
        if (!cxt || sym_mnt_context_set_target(cxt, target) < 0)
                return error_set(err, -ENOMEM, "umount: %s", target);
        sym_mnt_context_disable_mtab(cxt, 1);
        if (mnt_flags & MNT_FORCE)
                sym_mnt_context_enable_force(cxt, 1);
        if (mnt_flags & MNT_DETACH)
                sym_mnt_context_enable_lazy(cxt, 1);
        rc = sym_mnt_context_umount(cxt);
        if (sym_mnt_context_get_excode(cxt, rc, msg, sizeof(msg)) == MNT_EX_SUCCESS)
                return 0;
        rc = sym_mnt_context_syscall_called(cxt) ? -sym_mnt_context_get_syscall_errno(cxt) : -EIO;
        return error_set_plain(err, rc, "umount: %s: %s", target, msg);
}

int mount_top_at(int parent_fd, const char *name, unsigned *ret_id) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!*name || streq(name, ".") || streq(name, "..") || strchr(name, '/'))
                return -EINVAL;
        fd = openat(parent_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = fd_mount_id(fd, ret_id);
        return r < 0 ? r : TAKE_FD(fd);
}

int mount_id_at(int parent_fd, const char *name, unsigned *ret_id) {
        _cleanup_close_ int fd = -EBADF;
        struct statx stx;

        if (!*name || streq(name, ".") || streq(name, "..") || strchr(name, '/'))
                return -EINVAL;
        /* No fd to open and close (a shared fd table is a point of contention for the threads of umount -R). */
        if (feature_available(KM_FEATURE_STATX_MNT)) {
                if (statx(parent_fd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
                        return -errno;
                if (stx.stx_mask & STATX_MNT_ID) {
                        *ret_id = (unsigned)stx.stx_mnt_id;
                        return 0;
                }
        }
        fd = mount_top_at(parent_fd, name, ret_id);
        return fd < 0 ? fd : 0;
}

int umount_at(int parent_fd, const char *name, int mnt_flags) {
        char path[64 + NAME_MAX];

        if (!*name || streq(name, ".") || streq(name, "..") || strchr(name, '/'))
                return -EINVAL;
        snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", parent_fd, name);
        return umount2(path, mnt_flags | UMOUNT_NOFOLLOW) < 0 ? -errno : 0;
}

int open_parent_nofollow(const char *path, const char **ret_name) {
        _cleanup_close_ int root = -EBADF;
        _cleanup_free_ char *dir = NULL;
        const char *slash = path ? strrchr(path, '/') : NULL;

        if (!slash || path[0] != '/' || !slash[1])
                return -EINVAL;
        dir = strndup(path + 1, slash - path - (slash > path));
        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (!dir || root < 0)
                return dir ? -errno : -ENOMEM;
        *ret_name = slash + 1;
        return resolve_beneath(root, dir);
}

/* Still the mount that was checked?  Gone (-ENOENT) or another one (-ESTALE) is not unmounted. */
static int utarget_check(const struct utarget *t) {
        unsigned id;
        int r;

        if (t->parent_fd < 0 || !t->expect_id)
                return 0;
        r = mount_id_at(t->parent_fd, t->name, &id);
        if (r < 0)
                return r;
        return id == t->expect_id ? 0 : -ESTALE;
}

/*
 * One unmount attempt in this process.  helpers: the host may have umount.*
 * helpers, so the type matters (umount_helpers_matter()).  fstype: the type from a table snapshot
 * (umount -R) or NULL; then statmount gives it in O(1), and only where it
 * cannot (old kernel, corrupted mount) is the table read.  The target is
 * not looked at without helpers, nor for a forced or lazy unmount (the
 * cases of a hung NFS server, where a path walk may wait for it).
 */
int umount_once(const struct utarget *t, int mnt_flags, bool helpers, const char *fstype, struct km_error *err) {
        const char *target = t->shown;
        int r;

        r = utarget_check(t);
        if (r == -ESTALE)
                return error_set_plain(err, r, "umount: %s: another mount took its place; not unmounted", target);
        if (r < 0)
                return error_set(err, r, "umount: %s", target);
        if (helpers) {
                _cleanup_free_ char *type = fstype || mnt_flags ? NULL
                                            : t->parent_fd >= 0 ? fstype_at(t->parent_fd, t->name)
                                                                : fstype_at(AT_FDCWD, target);
                bool helper;

                if (fstype || type)
                        helper = host_helper_exists("umount", fstype ? fstype : type);
                else if (!have_umount_helpers())
                        helper = false; /* no type to be had in O(1), and no helper of any type */
                else {
                        struct km_mount_table *tb = NULL;
                        const struct km_mount *m;

                        helper = mount_table_load(NULL, &tb, NULL) == 0 &&
                                 (m = km_mount_table_find_target(tb, target)) &&
                                 host_helper_exists("umount", km_mount_fstype(m));
                        km_mount_table_free(tb);
                }
                /* A helper needs the path: it walks it again (umount.nfs, umount.cifs ...). */
                if (helper)
                        return umount_with_helper(target, mnt_flags, err);
        }
        r = t->parent_fd >= 0                                  ? umount_at(t->parent_fd, t->name, mnt_flags)
            : umount2(target, mnt_flags | UMOUNT_NOFOLLOW) < 0 ? -errno
                                                               : 0;
        if (r == -EINVAL)
                return error_set_plain(err, r, "umount: %s: not mounted", target);
        if (r < 0)
                return error_set(err, r, "umount: %s", target);
        return 0;
}

/*
 * One attempt in a worker process so that a hung filesystem cannot hang us:
 * 0 done, -ETIMEDOUT when the worker did not answer in time (it is killed),
 * else its negative errno.  The worker is a grandchild, orphaned at once, so
 * a worker stuck in the kernel never leaves a zombie in the caller.
 */
static int umount_once_timed(const struct utarget *t, int mnt_flags, bool helpers, const char *fstype, int timeout_ms,
                             struct km_error *err) {
        const char *target = t->shown;
        _cleanup_close_ int rd = -EBADF, worker_fd = -EBADF;
        struct pollfd p;
        int fds[2], status, r;
        int32_t answer;
        pid_t pid, worker;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return error_set(err, -errno, "umount: %s: pipe", target);
        rd = fds[0];
        pid = fork();
        if (pid < 0) {
                close(fds[1]);
                return error_set(err, -errno, "umount: %s: fork", target);
        }
        if (pid == 0) {
                /* Only the worker writes: its pid, then its answer. */
                pid_t w = fork();
                if (w != 0)
                        _exit(w < 0);
                w = getpid();
                if (write(fds[1], &w, sizeof(w)) != sizeof(w))
                        _exit(1);
                answer = umount_once(t, mnt_flags, helpers, fstype, NULL);
                _exit(write(fds[1], &answer, sizeof(answer)) != sizeof(answer));
        }
        close(fds[1]);
        /* The middle child exits right after forking the worker. */
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (read(rd, &worker, sizeof(worker)) != sizeof(worker))
                return error_set(err, -ECHILD, "umount: %s: worker did not start", target);
        worker_fd = sys_pidfd_open(worker, 0); /* to signal it safely later */

        p = (struct pollfd){ .fd = rd, .events = POLLIN };
        r = poll(&p, 1, timeout_ms);
        if (r == 0) {
                if (worker_fd >= 0)
                        (void)sys_pidfd_send_signal(worker_fd, SIGKILL, NULL, 0);
                return error_set(err, -ETIMEDOUT, "umount: %s: no answer after %d ms", target, timeout_ms);
        }
        if (r < 0 || read(rd, &answer, sizeof(answer)) != sizeof(answer) || answer > 0)
                return error_set(err, -EIO, "umount: %s: worker died", target);
        if (answer == 0)
                return 0;
        if (answer == -EINVAL)
                return error_set_plain(err, answer, "umount: %s: not mounted", target);
        if (answer == -ESTALE)
                return error_set_plain(err, answer, "umount: %s: another mount took its place; not unmounted", target);
        return error_set(err, answer, "umount: %s", target);
}

int umount_escalating(const struct utarget *t, unsigned flags, int timeout_ms, bool helpers, const char *fstype,
                      struct km_error *err) {
        const char *target = t->shown;
        int r;

        if (flags & KM_UMOUNT_LAZY)
                return umount_once(t, MNT_DETACH, helpers, fstype, err);
        if (timeout_ms <= 0)
                return umount_once(t, (flags & KM_UMOUNT_FORCE) ? MNT_FORCE : 0, helpers, fstype, err);

        if (!(flags & KM_UMOUNT_FORCE)) {
                r = umount_once_timed(t, 0, helpers, fstype, timeout_ms, err);
                if (r != -ETIMEDOUT && r != -EBUSY)
                        return r;
                log_msg(KM_LOG_WARNING, "umount %s: %s, retrying with force", target,
                        r == -EBUSY ? "busy" : "timed out");
        }
        r = umount_once_timed(t, MNT_FORCE, helpers, fstype, timeout_ms, err);
        if (r != -ETIMEDOUT && r != -EBUSY)
                return r;
        log_msg(KM_LOG_WARNING, "umount %s: forced unmount %s, detaching lazily", target,
                r == -EBUSY ? "busy" : "timed out");
        return umount_once(t, MNT_DETACH, false, NULL, err);
}
